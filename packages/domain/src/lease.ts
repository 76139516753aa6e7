/**
 * Leases on mint jobs: who may write a job's chunks, until when, and under which fencing token.
 * A claim bumps the token; every chunk of the holder is applied only where the row still has the
 * holder's owner and token, so a paused holder whose lease was taken over writes nothing.
 * Clocks are passed in.
 */
import { ConflictError } from './errors.ts';
import { claimJob, isTerminalJobStatus, type JobMove, type JobStatus } from './job-status.ts';

/** Default lease of an executor on a job; renewed by every chunk. */
export const defaultLeaseMs = 30_000;

/** The lease columns of a job as last read. */
export interface LeaseState {
  readonly status: JobStatus;
  /** Holder, or null when nobody holds the job. */
  readonly owner: string | null;
  /** When the holder's lease lapses; null when nobody holds the job. */
  readonly expiresAt: Date | null;
  /** Fencing token of the current (or last) holder. */
  readonly token: number;
}

/** A lease held by one worker; `token` fences its writes. */
export interface Lease {
  readonly brandId: string;
  readonly jobId: string;
  readonly owner: string;
  readonly token: number;
}

/** What a worker may do with a job it wants to run. */
export type ClaimDecision =
  /** Take the lease (with a new token); `move` is the status move that goes with it (QUEUED -> RESERVED), or null. */
  | { readonly kind: 'claim'; readonly move: JobMove | null }
  /** Someone else holds a live lease; ask again in `retryInMs`. */
  | { readonly kind: 'held'; readonly retryInMs: number }
  /** The job is COMPLETED or FAILED: nothing to do. */
  | { readonly kind: 'finished' }
  /** The job is PREFLIGHTED: it has no batch and cannot run. */
  | { readonly kind: 'not_ready' };

/** When a lease taken or renewed at `now` lapses. */
export function leaseExpiry(now: Date, leaseMs: number): Date {
  return new Date(now.getTime() + leaseMs);
}

/** True when nobody holds the job at `now`: no owner, or the owner's lease has lapsed. */
export function isLeaseFree(state: Pick<LeaseState, 'owner' | 'expiresAt'>, now: Date): boolean {
  return state.owner === null || state.expiresAt === null || state.expiresAt.getTime() <= now.getTime();
}

/**
 * Decides whether a worker may claim a job at `now`. A QUEUED job is claimed with the move to
 * RESERVED; a RESERVED or PROCESSING job whose lease is free (released, or expired because its
 * holder died or paused) is taken over without a status move.
 */
export function decideClaim(state: LeaseState, now: Date): ClaimDecision {
  if (isTerminalJobStatus(state.status)) return { kind: 'finished' };
  if (state.status === 'PREFLIGHTED') return { kind: 'not_ready' };
  if (!isLeaseFree(state, now)) {
    return { kind: 'held', retryInMs: Math.max(1, state.expiresAt!.getTime() - now.getTime()) };
  }
  return { kind: 'claim', move: state.status === 'QUEUED' ? claimJob() : null };
}

/**
 * The holder's lease was taken over (or released) since it was claimed: its write was rejected
 * and nothing was written. A ConflictError (same name), so it maps to Aborted.
 */
export class LeaseLostError extends ConflictError {}

/** True for {@link LeaseLostError}. */
export const isLeaseLostError = (e: unknown): e is LeaseLostError => e instanceof LeaseLostError;
