import { setTimeout as sleep } from 'node:timers/promises';
import { findBatchOfJob, MintJob, query } from '@mint/db';
import { isTerminalJobStatus, NotFoundError, type JobStatus } from '@mint/domain';
import type { UseCaseContext } from './context.ts';

/** A job's progress. */
export interface JobProgress {
  readonly mintJobId: string;
  readonly status: JobStatus;
  readonly mintedQuantity: number;
  readonly requestedQuantity: number;
  /** True when the job is COMPLETED or FAILED. */
  readonly done: boolean;
  readonly failureReason: string | null;
}

/** The current progress of a job of the brand; NotFoundError when missing or another brand's. */
export async function getJobProgress(ctx: UseCaseContext, brandId: string, jobId: string): Promise<JobProgress> {
  const em = ctx.db.em.fork();
  const job = await em.findOne(MintJob, { brandId, id: jobId });
  if (!job) throw new NotFoundError(`mint job ${jobId} not found`);
  const batch = await findBatchOfJob(em, brandId, jobId);
  const status = job.status as JobStatus;
  return {
    mintJobId: jobId, status, mintedQuantity: batch?.mintedQuantity ?? 0, requestedQuantity: job.requestedQuantity,
    done: isTerminalJobStatus(status), failureReason: status === 'FAILED' ? (job.lastError ?? 'failed') : null,
  };
}

/**
 * Yields the job's progress now and on every change (polled every `intervalMs`) until it is
 * terminal or `signal` aborts.
 */
export async function* watchMintJob(ctx: UseCaseContext, brandId: string, jobId: string, signal: AbortSignal, intervalMs = 250): AsyncGenerator<JobProgress> {
  let last = '';
  while (!signal.aborted) {
    const progress = await getJobProgress(ctx, brandId, jobId);
    const key = `${progress.status}:${progress.mintedQuantity}`;
    if (key !== last) {
      last = key;
      yield progress;
    }
    if (progress.done) return;
    try {
      await sleep(intervalMs, undefined, { signal });
    } catch {
      return;
    }
  }
}

/**
 * Unfinished jobs nobody has touched for `idleMs` (QUEUED, RESERVED or PROCESSING with neither
 * the job nor its batch updated since), oldest first: the sweeper republishes them so a lost or
 * dropped message never leaves a job stuck.
 */
export async function findIdleJobs(ctx: UseCaseContext, idleMs: number, limit = 100): Promise<{ id: string; brandId: string }[]> {
  const before = new Date(ctx.clock().getTime() - idleMs);
  const rows = await query<{ id: string; brand_id: string }>(
    ctx.db.em.fork(),
    `select j.id, j.brand_id from mint_jobs j
     join mint_batches b on b.brand_id = j.brand_id and b.mint_job_id = j.id
     where j.status in ('QUEUED', 'RESERVED', 'PROCESSING') and j.updated_at < ? and b.updated_at < ?
     order by j.updated_at limit ?`,
    [before, before, limit],
  );
  return rows.map((r) => ({ id: r.id, brandId: r.brand_id }));
}
