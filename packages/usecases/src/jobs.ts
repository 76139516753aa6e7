import { setTimeout as sleep } from 'node:timers/promises';
import { findBatchOfJob, findJobsToSweep as findJobsToSweepRows, MintJob } from '@mint/db';
import { isSettledJobStatus, isTerminalJobStatus, NotFoundError, type JobStatus } from '@mint/domain';
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

/** Options of {@link watchMintJob}. */
export interface WatchOptions {
  /** How often the job is read; default 250 ms. */
  readonly intervalMs?: number;
  /** The watch ends (cleanly, so the client watches again) after this long; default no limit. */
  readonly maxDurationMs?: number;
}

/**
 * Yields the job's progress now and on every change (polled every `intervalMs`) until no
 * executor will move it any more (terminal, or PREFLIGHTED: see `isSettledJobStatus`), until
 * `maxDurationMs` has passed, or until `signal` aborts.
 */
export async function* watchMintJob(
  ctx: UseCaseContext, brandId: string, jobId: string, signal: AbortSignal, options: WatchOptions = {},
): AsyncGenerator<JobProgress> {
  const intervalMs = options.intervalMs ?? 250;
  const deadline = options.maxDurationMs === undefined ? undefined : AbortSignal.timeout(options.maxDurationMs);
  const stop = deadline === undefined ? signal : AbortSignal.any([signal, deadline]);
  let last = '';
  while (!stop.aborted) {
    const progress = await getJobProgress(ctx, brandId, jobId);
    const key = `${progress.status}:${progress.mintedQuantity}`;
    if (key !== last) {
      last = key;
      yield progress;
    }
    if (isSettledJobStatus(progress.status)) return;
    try {
      await sleep(intervalMs, undefined, { signal: stop });
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
