/**
 * A job's progress as the executor publishes it after each commit, so API replicas can push it to
 * their watchers without reading the database. Progress messages are plain (not JetStream)
 * messages: a lost one is covered by the watchers' slow safety-net read, never by a redelivery.
 */
export interface JobProgressUpdate {
  /** The owning brand workspace's uuid. */
  readonly brandId: string;
  /** The mint job's uuid. */
  readonly mintJobId: string;
  /** The job's status after the commit (a JobStatus of the domain; the bus does not interpret it). */
  readonly status: string;
  /** Units minted so far. */
  readonly mintedQuantity: number;
  /** Units the job asked for. */
  readonly requestedQuantity: number;
  /** Why the job failed, when its status is FAILED; null otherwise. */
  readonly failureReason: string | null;
}

/** Receives every progress update published by any process on the bus. */
export type ProgressHandler = (update: JobProgressUpdate) => void;

/**
 * Carries job progress from executors to API processes: at most once, fire and forget. One
 * subscription per process is enough; the process fans updates out in memory.
 */
export interface ProgressFeed {
  /** Publishes one update on the job's own subject; never throws (a lost update is tolerated). */
  publishProgress(update: JobProgressUpdate): void;
  /** Delivers every job's updates to `handler` until the returned function is called. */
  subscribeProgress(handler: ProgressHandler): () => void;
}

/** The subject of one job's progress: `${subjectPrefix}.progress.${brandId}.${mintJobId}`. */
export function progressSubject(subjectPrefix: string, brandId: string, mintJobId: string): string {
  return `${subjectPrefix}.progress.${brandId}.${mintJobId}`;
}

/** The wildcard an API process subscribes to: every job's progress. */
export function allProgressSubject(subjectPrefix: string): string {
  return `${subjectPrefix}.progress.>`;
}

/** The wire form of an update (JSON). */
export function encodeProgress(update: JobProgressUpdate): Uint8Array {
  return new TextEncoder().encode(
    JSON.stringify({
      brandId: update.brandId,
      mintJobId: update.mintJobId,
      status: update.status,
      mintedQuantity: update.mintedQuantity,
      requestedQuantity: update.requestedQuantity,
      failureReason: update.failureReason,
    }),
  );
}

/** Decodes an update; undefined for anything malformed (it is dropped: the safety-net read covers it). */
export function decodeProgress(data: Uint8Array): JobProgressUpdate | undefined {
  try {
    const v = JSON.parse(new TextDecoder().decode(data)) as Record<string, unknown>;
    if (
      typeof v.brandId !== 'string' ||
      typeof v.mintJobId !== 'string' ||
      typeof v.status !== 'string' ||
      !Number.isInteger(v.mintedQuantity) ||
      !Number.isInteger(v.requestedQuantity) ||
      (v.failureReason !== null && typeof v.failureReason !== 'string')
    )
      return undefined;
    return {
      brandId: v.brandId,
      mintJobId: v.mintJobId,
      status: v.status,
      mintedQuantity: v.mintedQuantity as number,
      requestedQuantity: v.requestedQuantity as number,
      failureReason: v.failureReason as string | null,
    };
  } catch {
    return undefined;
  }
}
