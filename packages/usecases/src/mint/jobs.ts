import { findJobRecord, findJobsToSweep as findJobsToSweepRows, type JobRecord, unitOfWork } from '@mint/db';
import { InvalidInputError, isSettledJobStatus, isTerminalJobStatus, isUuid, NotFoundError } from '@mint/domain';
import type { UseCaseContext } from '../context.ts';
import type { JobProgress, ProgressHub } from './progress.ts';

/** The current progress of a job of the brand; NotFoundError when missing or another brand's. */
export async function getJobProgress(ctx: UseCaseContext, brandId: string, jobId: string): Promise<JobProgress> {
  const job = await findJobRecord(unitOfWork(ctx.db), brandId, jobId);
  if (!job) throw new NotFoundError(`mint job ${jobId} not found`);
  return {
    mintJobId: jobId,
    status: job.status,
    mintedQuantity: job.mintedQuantity,
    requestedQuantity: job.requestedQuantity,
    done: isTerminalJobStatus(job.status),
    failureReason: job.status === 'FAILED' ? (job.lastError ?? 'failed') : null,
  };
}

/** A job as GetMintJob shows it: the record with its batch and minted quantity, and why it failed (only when FAILED). */
export interface MintJobView extends Omit<JobRecord, 'lastError'> {
  readonly failureReason: string | null;
}

/**
 * One mint job of the brand with its batch id and minted quantity (GetMintJob, GET /v1/mint/jobs/{id}).
 * A job id that is not a uuid is InvalidInputError naming `mint_job_id` and the value; a missing job,
 * or another brand's, is NotFoundError.
 */
export async function getMintJob(ctx: UseCaseContext, brandId: string, jobId: string): Promise<MintJobView> {
  if (!isUuid(jobId)) throw new InvalidInputError([{ field: 'mint_job_id', message: `must be a uuid (got ${JSON.stringify(String(jobId).slice(0, 100))})` }]);
  const job = isUuid(brandId) ? await findJobRecord(unitOfWork(ctx.db), brandId, jobId) : null;
  if (job === null) throw new NotFoundError(`mint job ${jobId} not found`);
  const { lastError, ...record } = job;
  return { ...record, failureReason: job.status === 'FAILED' ? (lastError ?? 'failed') : null };
}

/** Options of {@link watchMintJob}. */
export interface WatchOptions {
  /** How often the job is read when no `progress` hub is given; default 250 ms. */
  readonly intervalMs?: number;
  /** The watch ends (cleanly, so the client watches again) after this long; default no limit. */
  readonly maxDurationMs?: number;
  /**
   * Pushed progress: the job is read once, then updates come from the hub, and the database is
   * read again only every `safetyIntervalMs` (a lost update, or a change no executor published).
   */
  readonly progress?: ProgressHub;
  /** The safety-net read's interval with a `progress` hub; default 5 000 ms. */
  readonly safetyIntervalMs?: number;
  /** With a `progress` hub, pushed updates reach the stream at most this often (the latest wins; a final status at once); default 1 000 ms. */
  readonly updateIntervalMs?: number;
}

/** Default of {@link WatchOptions.safetyIntervalMs}. */
export const defaultWatchSafetyIntervalMs = 5_000;

/**
 * True when `next` moves the watch on from `current`: a different status or count, but never back
 * to fewer units (updates of concurrent chunks can arrive out of order) unless the job settled.
 */
function advances(current: JobProgress, next: JobProgress): boolean {
  if (next.status === current.status && next.mintedQuantity === current.mintedQuantity) return false;
  return isSettledJobStatus(next.status) || next.mintedQuantity >= current.mintedQuantity;
}

/** Default of {@link WatchOptions.updateIntervalMs}. */
export const defaultWatchUpdateIntervalMs = 1_000;

/**
 * Yields the job's progress now and on every change until no executor will move it any more
 * (terminal, or PREFLIGHTED: see `isSettledJobStatus`), until `maxDurationMs` has passed, or until
 * `signal` aborts. Changes come pushed from `options.progress`, at most one per `updateIntervalMs`
 * per stream (the latest), with a safety-net read when nothing was pushed for `safetyIntervalMs` (shared by
 * the job's watchers on the hub); without a hub the job is read every `intervalMs`.
 */
export async function* watchMintJob(
  ctx: UseCaseContext,
  brandId: string,
  jobId: string,
  signal: AbortSignal,
  options: WatchOptions = {},
): AsyncGenerator<JobProgress> {
  const hub = options.progress;
  const intervalMs = hub === undefined ? (options.intervalMs ?? 250) : (options.safetyIntervalMs ?? defaultWatchSafetyIntervalMs);
  const deadline = options.maxDurationMs === undefined ? undefined : AbortSignal.timeout(options.maxDurationMs);
  const stop = deadline === undefined ? signal : AbortSignal.any([signal, deadline]);
  const pushedUpdateIntervalMs = options.updateIntervalMs ?? defaultWatchUpdateIntervalMs;
  const read = () => (hub === undefined ? getJobProgress(ctx, brandId, jobId) : hub.shared(brandId, jobId, () => getJobProgress(ctx, brandId, jobId)));
  let pushed: JobProgress | undefined;
  let lastHeard = Date.now();
  let wake: (() => void) | undefined;
  // Registered before the first read, so nothing published after it is missed.
  const unlisten = hub?.listen(brandId, jobId, (progress) => {
    lastHeard = Date.now();
    pushed = pushed === undefined || advances(pushed, progress) ? progress : pushed;
    wake?.();
  });
  const onStop = () => wake?.();
  stop.addEventListener('abort', onStop);
  try {
    let current = await getJobProgress(ctx, brandId, jobId);
    let lastYield = Date.now();
    lastHeard = Math.max(lastHeard, lastYield);
    yield current;
    while (!isSettledJobStatus(current.status) && !stop.aborted) {
      const now = Date.now();
      if (pushed !== undefined && (isSettledJobStatus(pushed.status) || now - lastYield >= pushedUpdateIntervalMs)) {
        const next = pushed;
        pushed = undefined;
        if (advances(current, next)) {
          current = next;
          lastYield = Date.now();
          yield current;
        }
        continue;
      }
      if (pushed === undefined && now - lastHeard >= intervalMs) {
        // The database is the truth: a read replaces whatever was pushed.
        const fresh = await read();
        lastHeard = Date.now();
        if (fresh.status !== current.status || fresh.mintedQuantity !== current.mintedQuantity) {
          current = fresh;
          lastYield = Date.now();
          yield current;
        }
        continue;
      }
      const waitMs = pushed !== undefined ? lastYield + pushedUpdateIntervalMs - now : lastHeard + intervalMs - now;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, Math.max(1, waitMs));
        wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      wake = undefined;
    }
  } finally {
    stop.removeEventListener('abort', onStop);
    unlisten?.();
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
  return findJobsToSweepRows(unitOfWork(ctx.db), now, new Date(now.getTime() - idleMs), limit);
}
