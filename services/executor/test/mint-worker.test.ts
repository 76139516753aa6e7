import { describe, expect, it } from 'vitest';
import pino from 'pino';
import type { JobMessage } from '@mint/bus';
import { query } from '../../../test/support/sql.ts';
import { claimMintJob, type UseCaseContext } from '@mint/usecases';
import { runMintJob } from '../src/mint-worker.ts';
import { submitSerial, useUseCases } from '../../../test/support/usecases.ts';
import { jobState } from './executor-process.ts';

const { app } = useUseCases();

/** A delivery that records how it was settled (the worker returns the outcome; settle applies it). */
function message(job: { jobId: string; brandId: string }, lastDelivery: boolean): JobMessage {
  return {
    job: { kind: 'mint', id: job.jobId, brandId: job.brandId },
    deliveryCount: lastDelivery ? 10 : 1,
    lastDelivery,
    working() {},
    ack: async () => {},
    nak() {},
    term() {},
  };
}
/**
 * A job of a fresh brand: its first serial batch makes the brand's serial key (random bytes) before
 * its first chunk, the step a `failing` context breaks.
 */
async function submit() {
  const fresh = await app.seedBrand();
  return { jobId: (await submitSerial(app.ctx, fresh, 3000)).mintJobId, brandId: fresh.brandId };
}
/** A context whose run fails with `error` before its first chunk. */
function failing(error: unknown): UseCaseContext {
  return {
    ...app.ctx,
    randomFill: () => {
      throw error;
    },
  };
}
const worker = (ctx: UseCaseContext) => ({
  ctx,
  logger: pino({ level: 'silent' }),
  chunkSize: 1000,
  writers: 2,
  leaseMs: 30_000,
  owner: 'test',
  stopping: () => false,
});
async function failedEvents(jobId: string): Promise<{ reason: string }[]> {
  const rows = await query<{ payload: { reason: string } }>(
    app.db.em.fork(),
    `select payload from mint_events where payload->>'mint_job_id' = ? and event_type = 'mint_job_failed'`,
    [jobId],
  );
  return rows.map((r) => r.payload);
}

describe('mint worker failure handling', () => {
  it('retries a transient error with backoff, counting the attempt and releasing the lease', async () => {
    const job = await submit();
    const { jobId } = job;
    const outcome = await runMintJob(worker(failing(new Error('connection reset'))), message(job, false));
    expect(outcome.kind).toBe('retry');
    expect(outcome.kind === 'retry' && outcome.delayMs).toBeGreaterThanOrEqual(500);
    const [row] = await query<{ attempts: number; last_error: string; lease_owner: string | null; status: string }>(
      app.db.em.fork(),
      `select attempts, last_error, lease_owner, status from mint_jobs where id = ?`,
      [jobId],
    );
    // No chunk committed, so the job is still RESERVED (its first chunk moves it to PROCESSING).
    expect(row).toEqual({ attempts: 1, last_error: 'connection reset', lease_owner: null, status: 'RESERVED' });
    // The next delivery, without the fault, completes the job.
    expect(await runMintJob(worker(app.ctx), message(job, false))).toEqual({ kind: 'done' });
    expect((await jobState(app.db, jobId)).status).toBe('COMPLETED');
  });

  it('marks the job FAILED with mint_job_failed when the last delivery fails', async () => {
    const job = await submit();
    const { jobId } = job;
    expect(await runMintJob(worker(failing(new Error('connection reset'))), message(job, true))).toEqual({ kind: 'done' });
    expect((await jobState(app.db, jobId)).status).toBe('FAILED');
    expect((await failedEvents(jobId))[0]?.reason).toMatch(/gave up after 1 failed attempts: connection reset/);
  });

  it('fails the job at once on a permanent error, keeping the reason', async () => {
    const job = await submit();
    const { jobId } = job;
    const permanent = Object.assign(new Error('value too long for type character varying(20)'), { code: '22001' });
    expect(await runMintJob(worker(failing(permanent)), message(job, false))).toEqual({ kind: 'done' });
    expect((await jobState(app.db, jobId)).status).toBe('FAILED');
    expect((await failedEvents(jobId))[0]?.reason).toMatch(/permanent error: value too long/);
  });

  it('hands a job back without writing (and without failing it, even on the last delivery) when another worker holds its lease', async () => {
    const job = await submit();
    const { jobId } = job;
    expect((await claimMintJob(app.ctx, job.brandId, jobId, 'someone-else', 30_000)).kind).toBe('claimed');
    const outcome = await runMintJob(worker(app.ctx), message(job, true));
    expect(outcome.kind).toBe('retry');
    expect(await jobState(app.db, jobId)).toMatchObject({ status: 'RESERVED', minted: 0, owner: 'someone-else' });
  });
});
