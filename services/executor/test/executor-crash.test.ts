import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { setTimeout as sleep } from 'node:timers/promises';
import { submitSerial } from '../../../test/support/usecases.ts';
import { jobState, setupExecutorProcesses, unitFacts, waitUntil, type ExecutorProcesses } from './executor-process.ts';

let executors: ExecutorProcesses;
beforeAll(async () => {
  executors = await setupExecutorProcesses();
});
afterAll(() => executors?.close());

const start = (overrides?: Record<string, string>) => executors.start(overrides);
const submit = (requestedQuantity: number) => submitSerial(executors.app.ctx, executors.brand, requestedQuantity);

describe('executor process crashes and shutdowns', () => {
  it('completes a job with exactly N gapless units after SIGKILLs at random points, three in a row', async () => {
    const { app } = executors;
    const n = 60_000;
    const { mintJobId, mintBatchId } = await submit(n);
    const killedAt: number[] = [];
    for (let kill = 0; kill < 3; kill++) {
      const before = (await jobState(app.db, mintJobId)).minted;
      const executor = await start();
      const target = before + 1000 + Math.floor(Math.random() * 6000);
      await waitUntil('progress', async () => (await jobState(app.db, mintJobId)).minted >= Math.min(target, n - 5000));
      await sleep(Math.random() * 30);
      executor.signal('SIGKILL');
      await executor.exited;
      killedAt.push((await jobState(app.db, mintJobId)).minted);
    }
    expect(killedAt.at(-1)).toBeLessThan(n);
    await start();
    await waitUntil('completion', async () => (await jobState(app.db, mintJobId)).status === 'COMPLETED', 40_000);
    expect(await unitFacts(app.db, mintBatchId)).toEqual({ units: n, serials: n, minSeq: 1, maxSeq: n, minted: n, evented: n });
  }, 55_000);

  it('on SIGTERM finishes its chunk, releases the lease and exits, and another executor continues at once', async () => {
    const { app, running } = executors;
    for (const p of running) p.signal('SIGKILL');
    const n = 200_000;
    // A long lease: had A not released it, B would wait 20 s for it to lapse.
    const long = { EXECUTOR_LEASE_MS: '20000', NATS_ACK_WAIT_MS: '30000' };
    const { mintJobId, mintBatchId } = await submit(n);
    const a = await start(long);
    await waitUntil('progress', async () => (await jobState(app.db, mintJobId)).minted >= 5000);
    const b = await start(long);
    await waitUntil('B ready', async () => b.lines.some((l) => l.includes('executor started')), 15_000);
    const stoppedAt = Date.now();
    a.signal('SIGTERM');
    expect(await a.exited).toBe(0);
    expect(Date.now() - stoppedAt).toBeLessThan(10_000);
    expect(a.lines.some((l) => l.includes('lease released'))).toBe(true);
    const after = await jobState(app.db, mintJobId);
    expect(after.status).toBe('PROCESSING');
    // The nakked message goes straight to B, which claims the released lease at once.
    await waitUntil('takeover', async () => (await jobState(app.db, mintJobId)).minted > after.minted, 10_000);
    expect(Date.now() - stoppedAt).toBeLessThan(10_000);
    await waitUntil('completion', async () => (await jobState(app.db, mintJobId)).status === 'COMPLETED', 30_000);
    expect(await unitFacts(app.db, mintBatchId)).toEqual({ units: n, serials: n, minSeq: 1, maxSeq: n, minted: n, evented: n });
    b.signal('SIGTERM');
    expect(await b.exited).toBe(0);
  }, 55_000);
});
