// Pushed job progress: an executor publishes progress on NATS as chunks commit, and an API process
// with one subscription fans it out to its WatchMintJob streams; the database is read once per
// stream and then only by the slow safety-net read.

import { connectJetStreamBus, type JobBus } from '@mint/bus';
import { ActivationMode, IdentityMode, MintJobStatus, type MintService } from '@mint/contract';
import { createProgressHub, failMintJob, type ProgressHub } from '@mint/usecases';
import type { Client } from '@connectrpc/connect';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testInfra } from '../../../test/support/context.ts';
import { setupUseCases, type SeededBrand, type UseCaseBundle } from '../../../test/support/usecases.ts';
import { startInProcessExecutor, type InProcessExecutor } from '../../executor/test/executor-process.ts';
import { bearer, inProcessApi } from './support.ts';

let app: UseCaseBundle;
let brand: SeededBrand;
let executor: InProcessExecutor;
let apiBus: JobBus;
let hub: ProgressHub;
let mint: Client<typeof MintService>;
let slowMint: Client<typeof MintService>;

beforeAll(async () => {
  app = await setupUseCases();
  brand = await app.seedBrand();
  executor = await startInProcessExecutor(app, testInfra().natsUrl, { chunkSize: 500, writers: 1 });
  // The API's own connection, as in another process: only progress crosses it.
  apiBus = await connectJetStreamBus({ url: testInfra().natsUrl, ...executor.names });
  hub = createProgressHub(apiBus);
  // A safety-net read far beyond the test's length: whatever the stream sees after its first read was pushed.
  ({ mint } = inProcessApi(app, { watch: { progress: hub, safetyIntervalMs: 600_000, updateIntervalMs: 20 } }));
  ({ mint: slowMint } = inProcessApi(app, { watch: { progress: createProgressHub({ subscribeProgress: () => () => undefined }), safetyIntervalMs: 300 } }));
});

afterAll(async () => {
  hub?.close();
  await apiBus?.close();
  await executor?.stop();
  await app?.close();
});

const submit = async (requestedQuantity: number) =>
  (
    await mint.submitMintRequest(
      {
        brandId: brand.brandId,
        productId: brand.productId,
        requestedQuantity,
        identityMode: IdentityMode.SERIAL,
        activationMode: ActivationMode.ACTIVE_AT_MINT,
      },
      bearer(brand.token),
    )
  ).mintJobId!;

describe('WatchMintJob with pushed progress', () => {
  it('follows a job chunk by chunk to COMPLETED from published progress alone, and releases its registration', async () => {
    const jobId = await submit(5_000);
    const seen = [];
    for await (const update of mint.watchMintJob({ brandId: brand.brandId, mintJobId: jobId }, bearer(brand.token))) {
      seen.push(update);
      expect(hub.listeners).toBe(1);
    }
    const last = seen.at(-1)!;
    expect(last).toMatchObject({ status: MintJobStatus.COMPLETED, done: true, mintedQuantity: 5_000, requestedQuantity: 5_000 });
    // Several chunk commits were pushed between the first read and the end, never going backwards.
    const counts = seen.map((u) => u.mintedQuantity);
    expect(new Set(counts).size).toBeGreaterThan(2);
    expect(counts).toEqual([...counts].sort((a, b) => a - b));
    expect(hub.listeners).toBe(0);
  }, 30_000);

  it('sees a change nobody published through the safety-net read', async () => {
    // Stop the executor from taking it: a job moved to FAILED directly, with no progress message.
    await executor.executor.stop();
    const jobId = await submit(10);
    const seen: MintJobStatus[] = [];
    const watching = (async () => {
      for await (const update of slowMint.watchMintJob({ brandId: brand.brandId, mintJobId: jobId }, bearer(brand.token))) seen.push(update.status);
    })();
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(await failMintJob(app.ctx, brand.brandId, jobId, 'stopped by an operator')).toBe(true);
    const started = Date.now();
    await watching;
    expect(Date.now() - started).toBeLessThan(2_000);
    expect(seen).toEqual([MintJobStatus.QUEUED, MintJobStatus.FAILED]);
  }, 15_000);

  it("shares the safety-net reads of one job's watchers: 15 open streams cost about one read a second", async () => {
    const jobId = await submit(10);
    let jobReads = 0;
    let opened = 0;
    const original = pg.Client.prototype.query;
    pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
      const first = args[0] as string | { text?: string } | undefined;
      const text = typeof first === 'string' ? first : first?.text;
      if (typeof text === 'string' && /^select .* from "mint_jobs"/s.test(text)) jobReads++;
      return (original as (...a: unknown[]) => unknown).apply(this, args);
    } as typeof original;
    const abort = new AbortController();
    try {
      // 15 streams: one caller may hold 20 on a process.
      const watching = Array.from({ length: 15 }, () =>
        (async () => {
          try {
            for await (const _update of slowMint.watchMintJob({ brandId: brand.brandId, mintJobId: jobId }, { ...bearer(brand.token), signal: abort.signal }))
              opened++;
          } catch {
            /* aborted */
          }
        })(),
      );
      while (opened < 15) await new Promise((resolve) => setTimeout(resolve, 20));
      const before = jobReads;
      const started = Date.now();
      await new Promise((resolve) => setTimeout(resolve, 2_000));
      const reads = jobReads - before;
      const seconds = (Date.now() - started) / 1000;
      abort.abort();
      await Promise.all(watching);
      // Unshared, 15 streams reading every 300 ms would make ~50 reads a second.
      expect(reads).toBeGreaterThan(0);
      expect(reads / seconds).toBeLessThan(4);
    } finally {
      pg.Client.prototype.query = original;
    }
  }, 30_000);
});
