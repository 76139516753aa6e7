import type { ProgressFeed } from './progress.ts';

/**
 * What the bus carries: a kind, a job id and its brand. Every kind has its own subject
 * and its own consumer, so a slow import never holds up mint jobs.
 */
export type JobKind =
  /** A mint job; the executor runs processing cycles until the job is done or failed. */
  | 'mint'
  /** A product CSV import; the executor parses and writes the file, then acks. */
  | 'import';

/** Every JobKind, in a stable order (for creating one consumer per kind). */
export const JOB_KINDS: readonly JobKind[] = ['mint', 'import'];

/**
 * A reference to a job row; the row itself (status, lease, progress) lives in the
 * database, so a message only says "look at this job". The body on the wire is JSON
 * `{"id", "brandId"}`; the kind is the subject it travels on.
 */
export interface JobRef {
  /** Which consumer runs it. */
  kind: JobKind;
  /** The job's uuid; also the deduplication key together with the kind. */
  id: string;
  /** The owning brand workspace's uuid. */
  brandId: string;
}

/**
 * One delivery of a job to a handler. The handler settles it with exactly one of
 * `ack`, `nak` or `term`; calls after the first are ignored.
 */
export interface JobMessage {
  /** The job this delivery is about. */
  readonly job: JobRef;
  /** 1 on the first delivery, 2 on the first redelivery, and so on. */
  readonly deliveryCount: number;
  /**
   * True when `deliveryCount` has reached the bus's `maxDeliver`: a nak or an expired
   * ack deadline will not bring this message back, so the handler should record the
   * job as failed and then `term()` (or `ack()`) it rather than leave it stuck.
   */
  readonly lastDelivery: boolean;
  /** Extends the ack deadline while a long job runs; call it well within every ack wait. */
  working(): void;
  /**
   * Marks the job done; call it only after the database commit. Resolves once the
   * bus confirmed the ack, rejects with a JobBusError when that could not be confirmed
   * (the job may then be redelivered, so handlers must be idempotent).
   */
  ack(): Promise<void>;
  /**
   * Asks for a redelivery after `delayMs` (immediately when omitted or 0). On the last
   * delivery it acts as `term()`, since no redelivery would follow.
   */
  nak(delayMs?: number): void;
  /** Drops the message for good: it is never redelivered. */
  term(): void;
}

/** Options for {@link JobBus.publish}. */
export interface PublishOptions {
  /**
   * Marks a deliberate republish (the sweeper's, for a job whose message was lost), e.g. the
   * sweep window it belongs to: publishes of one job with the same tag are deduplicated with
   * each other, but not with the original publish.
   */
  republish?: string;
}

/** Options for {@link JobBus.subscribe}. */
export interface SubscribeOptions {
  /** How many handlers may run at once in this subscription; default 1. */
  concurrency?: number;
  /** Redelivery delay used when a handler throws or returns unsettled; default 1000 ms. */
  retryDelayMs?: number;
  /**
   * Receives every error the subscription swallows: a handler that threw or returned
   * without settling, an undecodable message (which is termed), and transport errors
   * while fetching (then `job` is undefined). The bus itself logs nothing.
   */
  onError?: (error: unknown, job: JobRef | undefined) => void;
}

/** A running subscription. */
export interface JobSubscription {
  /**
   * Stops fetching new messages and resolves once every in-flight handler has
   * returned. Idempotent.
   */
  stop(): Promise<void>;
}

/** The job handler: it must settle the message with exactly one of ack, nak or term. */
export type JobHandler = (msg: JobMessage) => Promise<void>;

/**
 * Carries "run this job" messages from the outbox relay to executor daemons, at least
 * once: a job can be delivered again after a crash or an expired ack deadline, so
 * handlers check the job row before doing work.
 */
export interface JobBus extends ProgressFeed {
  /**
   * Enqueues a job. A second publish of the same kind and id is dropped while the
   * first is deduplicated (see each implementation for how long); a deliberate
   * republish names itself with `options.republish` so it is not mistaken for a retry.
   * Rejects with an InvalidJobError for a malformed ref and a JobBusError when the bus
   * is unreachable.
   */
  publish(job: JobRef, options?: PublishOptions): Promise<void>;
  /**
   * Hands a job to the bus without waiting for the server's acknowledgement, deduplicated with
   * `publish` of the same job: for a publish whose loss something else makes up for (the API's
   * publish right after a submit's commit; the outbox relay publishes the job again). Costs the
   * caller no reply and no timer; the JetStream bus sends the jobs announced in one turn of the
   * event loop together, in one write to the connection, at the end of that turn. Never throws: a
   * malformed ref or a closed or disconnected bus drops the job silently.
   */
  announce(job: JobRef): void;
  /**
   * Starts delivering jobs of one kind to `handler`, up to `concurrency` at a time.
   * A handler that throws, or returns without settling, gets its message nakked with
   * `retryDelayMs` and the error passed to `onError`.
   */
  subscribe(kind: JobKind, handler: JobHandler, options?: SubscribeOptions): JobSubscription;
  /**
   * Messages of this kind not yet delivered to any handler (for metrics). Messages
   * in flight or waiting for a redelivery are not counted.
   */
  pending(kind: JobKind): Promise<number>;
  /** Resolves when the bus is reachable and usable, rejects with a JobBusError otherwise. */
  ping(): Promise<void>;
  /** Stops every subscription (waiting for in-flight handlers), then closes the bus. Idempotent. */
  close(): Promise<void>;
}
