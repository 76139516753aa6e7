import type { JobMessage } from '@mint/bus';

/**
 * What a worker sees of a delivery: the job, where the delivery stands, and `working()` to extend
 * the ack deadline while a long job runs. The settling verbs are left out, so only
 * {@link settle} acknowledges.
 */
export type Delivery = Pick<JobMessage, 'job' | 'deliveryCount' | 'lastDelivery' | 'working'>;

/** How one delivery of a job ended, decided by the worker and applied by {@link settle}. */
export type Outcome =
  /** The job is terminal and committed: remove the message. */
  | { readonly kind: 'done' }
  /** A transient problem or a shutdown: deliver again after `delayMs`. */
  | { readonly kind: 'retry'; readonly delayMs: number }
  /** Nothing will ever make this message succeed (unknown job, job without a batch): drop it. */
  | { readonly kind: 'drop' };

/**
 * The one place an outcome becomes an acknowledgement: ack after commit, nak(delay) when
 * retryable, term when not. Before that, while the job runs, the worker calls `working()`
 * through its {@link Delivery}.
 */
export async function settle(msg: JobMessage, outcome: Outcome): Promise<void> {
  switch (outcome.kind) {
    case 'done':
      return msg.ack();
    case 'retry':
      return msg.nak(outcome.delayMs);
    case 'drop':
      return msg.term();
  }
}
