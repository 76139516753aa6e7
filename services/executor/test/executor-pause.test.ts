import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { submitSerial } from '../../../test/support/usecases.ts';
import { jobState, setupExecutorProcesses, unitFacts, waitUntil, type ExecutorProcesses } from './executor-process.ts';

let executors: ExecutorProcesses;
beforeAll(async () => {
  executors = await setupExecutorProcesses();
});
afterAll(() => executors?.close());

describe('executor paused past its lease', () => {
  it('rejects the late chunk of a SIGSTOPped executor after another took over, and the counts stay exact', async () => {
    const { app, brand } = executors;
    const n = 150_000;
    const { mintJobId, mintBatchId } = await submitSerial(app.ctx, brand, n);
    const a = await executors.start();
    await waitUntil('progress', async () => (await jobState(app.db, mintJobId)).minted >= 3000);
    a.signal('SIGSTOP');
    const paused = await jobState(app.db, mintJobId);
    const _b = await executors.start();
    // B gets the redelivered message once A's ack deadline passed and takes the lapsed lease over.
    await waitUntil('takeover', async () => (await jobState(app.db, mintJobId)).token > paused.token, 25_000);
    expect((await jobState(app.db, mintJobId)).status).toBe('PROCESSING');
    a.signal('SIGCONT');
    // A's write after the pause is refused: its chunk fails the fencing check, or PostgreSQL has
    // already ended its session idling inside the chunk transaction and A finds its lease gone.
    await waitUntil('A rejected', async () => a.lines.some((l) => l.includes('lease lost')), 10_000);
    await waitUntil('completion', async () => (await jobState(app.db, mintJobId)).status === 'COMPLETED', 30_000);
    expect(await unitFacts(app.db, mintBatchId)).toEqual({ units: n, serials: n, minSeq: 1, maxSeq: n, minted: n, evented: n });
  }, 55_000);
});
