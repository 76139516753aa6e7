/**
 * Domain errors. Each kind maps to exactly one transport code in the API's error mapper:
 * invalid input, an illegal state move, a missing (or foreign) row, a lost compare-and-set,
 * a missing identity and a missing permission.
 */

/** One field that failed validation, named by its request path (e.g. `lots[3].qty`). */
export interface FieldViolation {
  /** Path of the offending field in the request, snake_case as on the wire. */
  readonly field: string;
  /** What is wrong with it. */
  readonly message: string;
}

/** Bad input: names every offending field; nothing was written. */
export class InvalidInputError extends Error {
  override readonly name = 'InvalidInputError';
  readonly violations: readonly FieldViolation[];
  constructor(violations: readonly FieldViolation[], options?: ErrorOptions) {
    super(violations.map((v) => `${v.field}: ${v.message}`).join('; '), options);
    this.violations = violations;
  }
}

/** The entity is in a state from which the requested move is not allowed. */
export class IllegalStateError extends Error {
  override readonly name = 'IllegalStateError';
}

/** The row does not exist for this brand. Foreign rows are reported the same way, so their existence never leaks. */
export class NotFoundError extends Error {
  override readonly name = 'NotFoundError';
}

/** A compare-and-set lost a race: the row moved on since it was read. Safe to retry after re-reading. */
export class ConflictError extends Error {
  override readonly name = 'ConflictError';
}

/**
 * An idempotency key already created a job from a different request: the request is refused, and
 * the key's job stays as it is. The message names the key.
 */
export class IdempotencyKeyReusedError extends Error {
  override readonly name = 'IdempotencyKeyReusedError';
}

/** The caller could not be identified (no or invalid credentials). */
export class UnauthenticatedError extends Error {
  override readonly name = 'UnauthenticatedError';
}

/** The caller is identified but lacks the role or scope the action needs. */
export class ForbiddenError extends Error {
  override readonly name = 'ForbiddenError';
}

/** The caller sent more requests than its limit allows; it may try again after `retryAfterSeconds`. */
export class RateLimitedError extends Error {
  override readonly name = 'RateLimitedError';
  /** Whole seconds until the limit lets the caller through again (at least 1). */
  readonly retryAfterSeconds: number;
  constructor(message: string, retryAfterSeconds: number, options?: ErrorOptions) {
    super(message, options);
    this.retryAfterSeconds = Math.max(1, Math.ceil(retryAfterSeconds));
  }
}

/**
 * A dependency the request needs (the database) cannot be reached; nothing was written, and the
 * caller may try again after `retryAfterSeconds`.
 */
export class UnavailableError extends Error {
  override readonly name = 'UnavailableError';
  /** Whole seconds after which trying again is worthwhile (at least 1). */
  readonly retryAfterSeconds: number;
  constructor(message: string, retryAfterSeconds: number, options?: ErrorOptions) {
    super(message, options);
    this.retryAfterSeconds = Math.max(1, Math.ceil(retryAfterSeconds));
  }
}

/**
 * Error codes of a database that cannot be reached or is going away: the socket's (refused, reset,
 * timed out, unreachable) and PostgreSQL's (57P01-57P03 shutdown and start-up, class 08
 * connection exceptions, 53300 too many connections).
 */
const unreachableCodes = new Set([
  'ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN',
  '57P01', '57P02', '57P03', '08000', '08001', '08003', '08004', '08006', '53300',
]);
/** Messages of the PostgreSQL driver for a connection that ended or never came, which carry no code. */
const unreachableMessage = /^(Connection terminated|connect ECONNREFUSED|Client has encountered a connection error|timeout exceeded when trying to connect|the connection ended while checked out)/;

/**
 * True for {@link UnavailableError}, and for a driver's error (or one whose `cause` chain holds
 * one) saying the database cannot be reached: those answer 503 with Retry-After, never 500. Only
 * the error's shape is read (its `code` and message).
 */
export function isUnavailableError(e: unknown): boolean {
  for (let depth = 0; depth < 5 && e instanceof Error; depth++) {
    if (e instanceof UnavailableError) return true;
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string' && unreachableCodes.has(code)) return true;
    if (unreachableMessage.test(e.message)) return true;
    if (e instanceof AggregateError && e.errors.some((inner) => isUnavailableError(inner))) return true;
    e = e.cause;
  }
  return false;
}

/** Seconds a caller is told to wait (Retry-After) when the database cannot be reached. */
export const unavailableRetryAfterSeconds = 5;

/** The Retry-After of an error {@link isUnavailableError} accepts: its own, else {@link unavailableRetryAfterSeconds}. */
export function unavailableRetryAfter(e: unknown): number {
  return e instanceof UnavailableError ? e.retryAfterSeconds : unavailableRetryAfterSeconds;
}

/** True for {@link RateLimitedError}. */
export const isRateLimitedError = (e: unknown): e is RateLimitedError => e instanceof RateLimitedError;

/** True for {@link InvalidInputError}. */
export const isInvalidInputError = (e: unknown): e is InvalidInputError => e instanceof InvalidInputError;
/** True for {@link IllegalStateError}. */
export const isIllegalStateError = (e: unknown): e is IllegalStateError => e instanceof IllegalStateError;
/** True for {@link NotFoundError}. */
export const isNotFoundError = (e: unknown): e is NotFoundError => e instanceof NotFoundError;
/** True for {@link ConflictError}. */
export const isConflictError = (e: unknown): e is ConflictError => e instanceof ConflictError;
/** True for {@link IdempotencyKeyReusedError}. */
export const isIdempotencyKeyReusedError = (e: unknown): e is IdempotencyKeyReusedError => e instanceof IdempotencyKeyReusedError;
/** True for {@link UnauthenticatedError}. */
export const isUnauthenticatedError = (e: unknown): e is UnauthenticatedError => e instanceof UnauthenticatedError;
/** True for {@link ForbiddenError}. */
export const isForbiddenError = (e: unknown): e is ForbiddenError => e instanceof ForbiddenError;

/** Throws one {@link InvalidInputError} carrying all violations, or returns when there are none. */
export function assertValid(violations: readonly FieldViolation[]): void {
  if (violations.length > 0) throw new InvalidInputError(violations);
}
