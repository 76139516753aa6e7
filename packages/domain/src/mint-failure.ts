/**
 * The failure policy of a mint job delivery, decided in one place: what went wrong (or why the
 * delivery cannot run now) goes in, and out comes whether to retry after a delay, fail the job
 * with a reason, or drop the message. The executor carries the decision out; randomness is passed in.
 */
import { isDomainError } from './errors.ts';
import { isLeaseLostError } from './lease.ts';
import { attemptsExhausted, mintJobRetry, retryDelayMs } from './retry.ts';

/** Longest a delivery waits before asking again about a job someone else holds (a kick holds it only briefly). */
const maxHeldRetryMs = 5_000;

/** Why a delivery of a mint job did not finish it. */
export type MintSetback =
  /** The executor is shutting down: the lease was released, another executor continues at once. */
  | { readonly kind: 'stopping' }
  /** Another live worker holds the job's lease, which lapses in `retryInMs`. */
  | { readonly kind: 'held'; readonly retryInMs: number }
  /** Another executor took the job over (the late chunk wrote nothing); it ran under leases of `leaseMs`. */
  | { readonly kind: 'lease_lost'; readonly leaseMs: number }
  /** The job does not exist or cannot run (no batch yet): nothing will make this message succeed. */
  | { readonly kind: 'cannot_run' }
  /** The job moved concurrently (a chunk or a status move collided); nothing was written twice. */
  | { readonly kind: 'conflict' }
  /** An error that will fail again however often it is retried (bad data, a violated constraint). */
  | { readonly kind: 'permanent'; readonly message: string }
  /** Any other error; it counts one more failed attempt of the job before the decision. */
  | { readonly kind: 'transient'; readonly message: string };

/** What to do with the delivery after a {@link MintSetback}. */
export type MintFailureDecision =
  /**
   * Deliver the message again after `delayMs`, leaving the job as it is. On the bus's last
   * delivery the bus drops it instead and the sweeper republishes the job once it is idle.
   */
  | { readonly kind: 'retry'; readonly delayMs: number }
  /** Mark the job FAILED with `reason` (and a mint_job_failed event), then acknowledge the message. */
  | { readonly kind: 'fail'; readonly reason: string }
  /** Drop the message without touching the job. */
  | { readonly kind: 'drop' };

/**
 * True when a database error with SQLSTATE `code` will fail again however often it is retried
 * (bad data, a violated check or not-null constraint, a programming error), so the job fails at
 * once. Unique violations (a repeated chunk, a serial collision), lost connections, lock and
 * serialization failures and unknown errors are transient.
 */
export function isPermanentSqlState(code: string | undefined): boolean {
  if (code === undefined || code.length !== 5) return false;
  const cls = code.slice(0, 2);
  if (cls === '22' || cls === '42') return true;
  return cls === '23' && code !== '23505';
}

/**
 * Names the setback of an `error` thrown while running a job under leases of `leaseMs`, given its
 * SQLSTATE (if any) and whether the lease turned out to be gone: a paused holder's transaction
 * ended by PostgreSQL surfaces as a connection error, but it is a lost lease, not a failed attempt.
 */
export function classifyMintError(error: unknown, sqlState: string | undefined, leaseGone: boolean, leaseMs: number): MintSetback {
  if (isLeaseLostError(error) || leaseGone) return { kind: 'lease_lost', leaseMs };
  if (isDomainError(error, 'not_found') || isDomainError(error, 'illegal_state')) return { kind: 'cannot_run' };
  if (isDomainError(error, 'conflict')) return { kind: 'conflict' };
  const message = error instanceof Error ? error.message : String(error);
  if (isPermanentSqlState(sqlState)) return { kind: 'permanent', message };
  return { kind: 'transient', message };
}

/** Where a delivery stands when a setback is decided. */
export interface MintDeliveryState {
  /** The job's consecutive failed attempts, including a transient setback's own (0 for other setbacks). */
  readonly attempts: number;
  /** True when the bus will not deliver the message again. */
  readonly lastDelivery: boolean;
}

/**
 * Decides what happens after `setback`. Permanent errors fail the job at once; transient ones
 * retry with the {@link mintJobRetry} backoff until its attempts or the bus's deliveries run out,
 * then fail it. Shutdown, held and lost-lease hand-backs and conflicts retry without failing the
 * job, even on the last delivery; a job that cannot run is dropped.
 */
export function decideMintFailure(setback: MintSetback, delivery: MintDeliveryState, random: number): MintFailureDecision {
  switch (setback.kind) {
    case 'stopping':
      return { kind: 'retry', delayMs: 0 };
    case 'held':
      return { kind: 'retry', delayMs: Math.min(setback.retryInMs, maxHeldRetryMs) + Math.round(random * 250) };
    case 'lease_lost':
      return { kind: 'retry', delayMs: setback.leaseMs };
    case 'cannot_run':
      return { kind: 'drop' };
    case 'conflict':
      return { kind: 'retry', delayMs: 100 };
    case 'permanent':
      return { kind: 'fail', reason: `permanent error: ${setback.message}` };
    case 'transient':
      if (attemptsExhausted(mintJobRetry, delivery.attempts) || delivery.lastDelivery) {
        return { kind: 'fail', reason: `gave up after ${delivery.attempts} failed attempts: ${setback.message}` };
      }
      return { kind: 'retry', delayMs: retryDelayMs(mintJobRetry, delivery.attempts, random) };
  }
}
