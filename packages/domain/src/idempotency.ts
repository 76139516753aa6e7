import type { FieldViolation } from './errors.ts';

/**
 * Idempotency-Key handling of the HTTP API (IETF draft "The Idempotency-Key HTTP Header Field"):
 * the first request with a key runs and its response is kept; a repeat is decided here.
 */

/** How long a key and its response are kept (24 hours); afterwards the key may run again. */
export const idempotencyRetentionMs = 24 * 60 * 60 * 1000;
/** An in_progress record older than this belongs to a request that died; a retry takes it over. */
export const idempotencyStaleMs = 60 * 1000;
/** Longest Idempotency-Key accepted. */
export const maxIdempotencyKeyLength = 255;

/** State of a kept key. */
export type IdempotencyState =
  /** The first request is running; a repeat gets 409 until it is completed (or goes stale). */
  | 'in_progress'
  /** The response is stored; a repeat with the same body replays it until the record expires. */
  | 'completed';

/** What is known of an existing key when a request arrives with it. */
export interface KeptKey {
  readonly route: string;
  readonly requestHash: string;
  readonly state: IdempotencyState;
  readonly createdAt: Date;
  readonly expiresAt: Date;
}

/** What a request with an already-used key must do. */
export type IdempotencyDecision =
  /** Answer with the stored response. */
  | 'replay'
  /** The key was used with another body or route: 422. */
  | 'mismatch'
  /** The first request still runs: 409. */
  | 'in_progress'
  /** The record expired, or its request died: claim it again (compare-and-set) and run. */
  | 'take_over';

/** Decides a repeated key: expiry first, then the body fingerprint, then the state. */
export function decideIdempotency(kept: KeptKey, request: { readonly route: string; readonly requestHash: string }, now: Date): IdempotencyDecision {
  if (kept.expiresAt.getTime() <= now.getTime()) return 'take_over';
  if (kept.route !== request.route || kept.requestHash !== request.requestHash) return 'mismatch';
  if (kept.state === 'completed') return 'replay';
  return now.getTime() - kept.createdAt.getTime() >= idempotencyStaleMs ? 'take_over' : 'in_progress';
}

/** Violations of an Idempotency-Key header value: 1 to 255 visible ASCII characters. */
export function idempotencyKeyViolations(key: string | null, field = 'Idempotency-Key'): FieldViolation[] {
  if (key === null || key === '') return [{ field, message: 'is required' }];
  if (key.length > maxIdempotencyKeyLength || !/^[\x21-\x7e]+$/.test(key)) {
    return [{ field, message: `must be 1 to ${maxIdempotencyKeyLength} visible ASCII characters` }];
  }
  return [];
}
