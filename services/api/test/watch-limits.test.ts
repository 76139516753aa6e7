// WatchMintJob's limits: a watch ends on a status no executor will move (PREFLIGHTED included),
// ends cleanly after its maximum duration, and one caller may hold only so many streams at once.

import { Code, type Client } from '@connectrpc/connect';
import { ActivationMode, type CatalogService, IdentityMode, MintJobStatus, type MintService, ProductionBatchStatus } from '@mint/contract';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { setupUseCases, type SeededBrand, type UseCaseBundle } from '../../../test/support/usecases.ts';
import { bearer, codeOf, errorOf, inProcessApi } from './support.ts';

let app: UseCaseBundle;
let brand: SeededBrand;
let other: SeededBrand;
let mint: Client<typeof MintService>;
let catalog: Client<typeof CatalogService>;
const maxDurationMs = 600;
const maxStreamsPerCaller = 3;

beforeAll(async () => {
  app = await setupUseCases();
  ({ mint, catalog } = inProcessApi(app, { watch: { maxDurationMs, maxStreamsPerCaller } }));
  brand = await app.seedBrand();
  other = await app.seedBrand();
});

afterAll(async () => {
  await app?.close();
});

/** A job left QUEUED: no executor runs in these tests, so only the watch's limits end its watch. */
async function queuedJob(of: SeededBrand): Promise<string> {
  const submitted = await mint.submitMintRequest(
    {
      brandId: of.brandId,
      productId: of.productId,
      requestedQuantity: 5,
      identityMode: IdentityMode.SERIAL,
      activationMode: ActivationMode.ACTIVE_AT_MINT,
    },
    bearer(of.token),
  );
  return submitted.mintJobId!;
}

/** Every update of a watch until it ends; `opened` is called on the first (the stream holds its slot by then). */
async function collect(of: SeededBrand, mintJobId: string, signal?: AbortSignal, client = mint, opened?: () => void) {
  const seen = [];
  for await (const update of client.watchMintJob({ brandId: of.brandId, mintJobId }, { ...bearer(of.token), ...(signal ? { signal } : {}) })) {
    if (seen.length === 0) opened?.();
    seen.push(update);
  }
  return seen;
}

describe('WatchMintJob limits', () => {
  it('ends at once on a PREFLIGHTED job, which only a caller moves on', async () => {
    const { productionBatch } = await catalog.upsertProductionBatch(
      { brandId: brand.brandId, productId: brand.productId, code: 'PB-W', status: ProductionBatchStatus.READY, quantity: 100 },
      bearer(brand.token),
    );
    const { preflight } = await mint.preflightMintBatch(
      { brandId: brand.brandId, productId: brand.productId, batchId: productionBatch!.id, requestedQuantity: 10 },
      bearer(brand.token),
    );
    const started = Date.now();
    const seen = await collect(brand, preflight!.mintJobId!);
    expect(Date.now() - started).toBeLessThan(maxDurationMs);
    expect(seen).toHaveLength(1);
    expect(seen[0]).toMatchObject({ status: MintJobStatus.PREFLIGHTED, done: false });
  });

  it('ends cleanly after the maximum duration on a job still waiting for an executor', async () => {
    const jobId = await queuedJob(brand);
    const started = Date.now();
    const seen = await collect(brand, jobId);
    const took = Date.now() - started;
    expect(took).toBeGreaterThanOrEqual(maxDurationMs - 50);
    expect(took).toBeLessThan(maxDurationMs + 2_000);
    expect(seen).toHaveLength(1);
    expect(seen[0]).toMatchObject({ status: MintJobStatus.QUEUED, done: false });
  });

  it("refuses a caller's stream beyond the cap with ResourceExhausted, frees the slot when a stream ends, and leaves other callers alone", async () => {
    // Streams that outlive the test unless aborted, so the cap is reached however slow the machine is.
    const { mint: patient } = inProcessApi(app, { watch: { maxDurationMs: 60_000, maxStreamsPerCaller } });
    /** Opens a stream of `of` on `jobId` and resolves once it holds its slot (its first update came), with its end's code to come when `abort` fires. */
    const held = async (of: SeededBrand, jobId: string, abort: AbortController) => {
      const opened = Promise.withResolvers<void>();
      const ended = codeOf(collect(of, jobId, abort.signal, patient, opened.resolve));
      await Promise.race([opened.promise, ended]);
      return { ended };
    };
    const jobId = await queuedJob(brand);
    const abort = new AbortController();
    const open = await Promise.all(Array.from({ length: maxStreamsPerCaller }, () => held(brand, jobId, abort)));
    const refused = await errorOf(collect(brand, jobId, undefined, patient));
    expect(refused.code).toBe(Code.ResourceExhausted);
    expect(refused.rawMessage).toMatch(/at most 3 per caller/);
    // Another caller has streams of its own.
    const otherAbort = new AbortController();
    const otherStream = await held(other, await queuedJob(other), otherAbort);
    otherAbort.abort();
    expect(await otherStream.ended).toBe(Code.Canceled);
    abort.abort();
    expect(await Promise.all(open.map((stream) => stream.ended))).toEqual(Array(maxStreamsPerCaller).fill(Code.Canceled));
    // The ended streams gave their slots back: a new one is held (not refused) until aborted.
    const again = new AbortController();
    const stream = await held(brand, jobId, again);
    again.abort();
    expect(await stream.ended).toBe(Code.Canceled);
  });
});
