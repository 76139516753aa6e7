import type { JobProgressUpdate, ProgressFeed } from '@mint/bus';
import { isTerminalJobStatus, jobStatuses, type JobStatus } from '@mint/domain';

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

/**
 * One API process's fan-out of pushed job progress: a single subscription to the feed, and in
 * memory the watchers of each job. Watchers register before their first read, so no update
 * published after that read is missed.
 */
export interface ProgressHub {
  /** Calls `listener` with every pushed update of the brand's job until the returned function is called. */
  listen(brandId: string, jobId: string, listener: (progress: JobProgress) => void): () => void;
  /** Watchers registered now (for tests and metrics). */
  readonly listeners: number;
  /**
   * Runs `read` for the brand's job, or shares a read of the same job started less than a second
   * ago: the safety-net reads of many watchers of one job cost one query.
   */
  shared<T>(brandId: string, jobId: string, read: () => Promise<T>): Promise<T>;
  /** Drops the feed's subscription; registered watchers hear nothing more (their safety-net reads go on). */
  close(): void;
}

/** How long a safety-net read of a job is shared with the job's other watchers. */
const sharedReadMs = 1_000;

const knownStatuses: ReadonlySet<string> = new Set(jobStatuses);

/** The domain's view of a pushed update; undefined for a status this code does not know. */
function toProgress(update: JobProgressUpdate): JobProgress | undefined {
  if (!knownStatuses.has(update.status)) return undefined;
  const status = update.status as JobStatus;
  return {
    mintJobId: update.mintJobId,
    status,
    mintedQuantity: update.mintedQuantity,
    requestedQuantity: update.requestedQuantity,
    done: isTerminalJobStatus(status),
    failureReason: status === 'FAILED' ? (update.failureReason ?? 'failed') : null,
  };
}

/** Subscribes once to `feed` and fans updates out to the watchers of each job. */
export function createProgressHub(feed: Pick<ProgressFeed, 'subscribeProgress'>): ProgressHub {
  const byJob = new Map<string, Set<(progress: JobProgress) => void>>();
  const reads = new Map<string, { readonly at: number; readonly result: Promise<unknown> }>();
  let count = 0;
  const unsubscribe = feed.subscribeProgress((update) => {
    const listeners = byJob.get(`${update.brandId}/${update.mintJobId}`);
    if (listeners === undefined) return;
    const progress = toProgress(update);
    if (progress === undefined) return;
    for (const listener of listeners) listener(progress);
  });
  return {
    listen(brandId, jobId, listener) {
      const key = `${brandId}/${jobId}`;
      let listeners = byJob.get(key);
      if (listeners === undefined) byJob.set(key, (listeners = new Set()));
      // A wrapper per registration, so the same function registered twice is two watchers.
      const own = (progress: JobProgress) => listener(progress);
      listeners.add(own);
      count += 1;
      return () => {
        if (!listeners.delete(own)) return;
        count -= 1;
        if (listeners.size === 0) byJob.delete(key);
      };
    },
    get listeners() {
      return count;
    },
    shared<T>(brandId: string, jobId: string, read: () => Promise<T>): Promise<T> {
      const key = `${brandId}/${jobId}`;
      const now = Date.now();
      const recent = reads.get(key);
      if (recent !== undefined && now - recent.at < sharedReadMs) return recent.result as Promise<T>;
      for (const [k, r] of reads) if (now - r.at >= sharedReadMs) reads.delete(k);
      const result = read();
      reads.set(key, { at: now, result });
      result.catch(() => reads.delete(key));
      return result;
    },
    close: unsubscribe,
  };
}

/** Publishes a job's progress after a commit (the executor's side of the hub). */
export function publishJobProgress(feed: Pick<ProgressFeed, 'publishProgress'>, brandId: string, progress: Omit<JobProgress, 'done'>): void {
  feed.publishProgress({
    brandId,
    mintJobId: progress.mintJobId,
    status: progress.status,
    mintedQuantity: progress.mintedQuantity,
    requestedQuantity: progress.requestedQuantity,
    failureReason: progress.failureReason,
  });
}
