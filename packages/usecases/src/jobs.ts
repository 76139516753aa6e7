import { setTimeout as sleep } from 'node:timers/promises';
import { findBatchOfJob, findJobsToSweep as findJobsToSweepRows, MintJob } from '@mint/db';
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
 * Jobs the sweeper (the spec's background scheduler) republishes, oldest first: QUEUED jobs nobody
 * holds and nobody touched for `idleMs` (their message was lost or dropped), and RESERVED or
 * PROCESSING jobs whose lease was released or has lapsed and that saw no write for `idleMs`
 * (their executor died or paused and no redelivery came).
 */
export async function findJobsToSweep(ctx: UseCaseContext, idleMs: number, limit = 100): Promise<{ id: string; brandId: string }[]> {
  const now = ctx.clock();
  return findJobsToSweepRows(ctx.db.em.fork(), now, new Date(now.getTime() - idleMs), limit);
}
