import { UnsettledJobError } from './errors.ts';
import type { JobHandler, JobMessage, JobRef, SubscribeOptions } from './job-bus.ts';

/** Default redelivery delay after a handler throws or returns unsettled. */
export const DEFAULT_RETRY_DELAY_MS = 1_000;

/**
 * The transport side of one delivery, before the settle-once guard: each bus maps
 * these verbs onto its own acknowledgement mechanism.
 */
export interface DeliveryVerbs {
  working(): void;
  ack(): Promise<void>;
  nak(delayMs: number): void;
  term(): void;
}

/** Subscription options with defaults applied. */
export interface ResolvedSubscribeOptions {
  concurrency: number;
  retryDelayMs: number;
  onError: (error: unknown, job: JobRef | undefined) => void;
}

/**
 * Applies defaults to SubscribeOptions and checks them; throws a RangeError naming
 * the option when `concurrency` is not a positive integer or `retryDelayMs` is negative.
 */
export function resolveSubscribeOptions(options: SubscribeOptions | undefined): ResolvedSubscribeOptions {
  const concurrency = options?.concurrency ?? 1;
  if (!Number.isInteger(concurrency) || concurrency < 1) {
    throw new RangeError(`concurrency must be a positive integer, got ${concurrency}`);
  }
  const retryDelayMs = options?.retryDelayMs ?? DEFAULT_RETRY_DELAY_MS;
  if (!Number.isFinite(retryDelayMs) || retryDelayMs < 0) {
    throw new RangeError(`retryDelayMs must be a non-negative number, got ${retryDelayMs}`);
  }
  const onError = options?.onError;
  return {
    concurrency,
    retryDelayMs,
    // a throwing onError must not break the consume loop
    onError: (error, job) => {
      try {
        onError?.(error, job);
      } catch {
        // ignored: reporting is best effort
      }
    },
  };
}

/**
 * Runs `handler` on one delivery and enforces the contract in one place: only the
 * first of ack/nak/term counts, a nak on the last delivery becomes a term, and a
 * handler that throws or returns unsettled gets the message nakked with `retryDelayMs`
 * and the error reported to `onError`. Never rejects.
 */
export async function runDelivery(
  job: JobRef,
  deliveryCount: number,
  lastDelivery: boolean,
  verbs: DeliveryVerbs,
  handler: JobHandler,
  options: ResolvedSubscribeOptions,
): Promise<void> {
  let settled = false;
  const message: JobMessage = {
    job,
    deliveryCount,
    lastDelivery,
    working() {
      if (!settled) verbs.working();
    },
    ack() {
      if (settled) return Promise.resolve();
      settled = true;
      return verbs.ack();
    },
    nak(delayMs = 0) {
      if (settled) return;
      settled = true;
      // no redelivery will follow; JetStream would keep such a message stored forever
      if (lastDelivery) verbs.term();
      else verbs.nak(Math.max(0, delayMs));
    },
    term() {
      if (settled) return;
      settled = true;
      verbs.term();
    },
  };
  try {
    await handler(message);
    if (!settled) {
      message.nak(options.retryDelayMs);
      options.onError(new UnsettledJobError(`handler returned without ack, nak or term for ${job.kind} job ${job.id}`), job);
    }
  } catch (error) {
    message.nak(options.retryDelayMs);
    options.onError(error, job);
  }
}
