/**
 * Domain errors: one type, {@link DomainError}, whose `kind` says what went wrong. Each kind maps
 * to exactly one code per transport in one exhaustive table (`errorCodes` in @mint/http), read by
 * the Connect interceptor and the plain HTTP error mapper alike.
 */
/** One field that failed validation, named by its request path (e.g. `lots[3].qty`). */
export interface FieldViolation {
  /** Path of the offending field in the request, snake_case as on the wire. */
  readonly field: string;
  /** What is wrong with it. */
  readonly message: string;
}

/**
 * What kind of failure a domain error is:
 * - `invalid`: bad input; names every offending field, nothing was written;
 * - `illegal_state`: the entity is in a state from which the requested move is not allowed;
 * - `not_found`: the row does not exist for this brand (a foreign row is reported the same way, so its existence never leaks);
 * - `conflict`: a compare-and-set lost a race (the row moved on since it was read); safe to retry after re-reading;
 * - `idempotency_key_reused`: the key already made a job from a different request, which stays as it is;
 * - `unauthenticated`: the caller could not be identified (no or invalid credentials);
 * - `forbidden`: the caller is identified but lacks the role or scope the action needs;
 * - `rate_limited`: the caller sent more requests than its limit allows;
 * - `unavailable`: the database cannot be reached; nothing was written, the caller may try again.
 */
export type ErrorKind =
  | 'invalid'
  | 'illegal_state'
  | 'not_found'
  | 'conflict'
  | 'idempotency_key_reused'
  | 'unauthenticated'
  | 'forbidden'
  | 'rate_limited'
  | 'unavailable';

/** Every {@link ErrorKind}. */
export const errorKinds: readonly ErrorKind[] = [
  'invalid',
  'illegal_state',
  'not_found',
  'conflict',
  'idempotency_key_reused',
  'unauthenticated',
  'forbidden',
  'rate_limited',
  'unavailable',
];

/**
 * The one domain error type: a `kind` and a message fit for the caller (internals go into
 * `cause`, for the log). The named subclasses below only fix the kind (and carry the violations
 * of bad input, the wait of a rate limit); code asks {@link isDomainError} for the kind.
 */
export class DomainError extends Error {
  override readonly name: string = 'DomainError';
  readonly kind: ErrorKind;
  constructor(kind: ErrorKind, message: string, options?: ErrorOptions) {
    super(message, options);
    this.kind = kind;
  }
}

/** True for a {@link DomainError}, of `kind` when given. */
export function isDomainError(e: unknown, kind?: ErrorKind): e is DomainError {
  return e instanceof DomainError && (kind === undefined || e.kind === kind);
}

/** Bad input (`invalid`): names every offending field; nothing was written. */
export class InvalidInputError extends DomainError {
  override readonly name = 'InvalidInputError';
  readonly violations: readonly FieldViolation[];
  constructor(violations: readonly FieldViolation[], options?: ErrorOptions) {
    super('invalid', violations.map((v) => `${v.field}: ${v.message}`).join('; '), options);
    this.violations = violations;
  }
}

/** An illegal state move (`illegal_state`). */
export class IllegalStateError extends DomainError {
  override readonly name = 'IllegalStateError';
  constructor(message: string, options?: ErrorOptions) {
    super('illegal_state', message, options);
  }
}

/** A missing or foreign row (`not_found`). */
export class NotFoundError extends DomainError {
  override readonly name = 'NotFoundError';
  constructor(message: string, options?: ErrorOptions) {
    super('not_found', message, options);
  }
}

/** A lost compare-and-set (`conflict`). */
export class ConflictError extends DomainError {
  override readonly name: string = 'ConflictError';
  constructor(message: string, options?: ErrorOptions) {
    super('conflict', message, options);
  }
}

/** An idempotency key reused with a different request (`idempotency_key_reused`); the message names the key. */
export class IdempotencyKeyReusedError extends DomainError {
  override readonly name = 'IdempotencyKeyReusedError';
  constructor(message: string, options?: ErrorOptions) {
    super('idempotency_key_reused', message, options);
  }
}

/** No or invalid credentials (`unauthenticated`). */
export class UnauthenticatedError extends DomainError {
  override readonly name = 'UnauthenticatedError';
  constructor(message: string, options?: ErrorOptions) {
    super('unauthenticated', message, options);
  }
}

/** A missing role or scope (`forbidden`). */
export class ForbiddenError extends DomainError {
  override readonly name = 'ForbiddenError';
  constructor(message: string, options?: ErrorOptions) {
    super('forbidden', message, options);
  }
}

/** Over a rate limit (`rate_limited`); the caller may try again after `retryAfterSeconds`. */
export class RateLimitedError extends DomainError {
  override readonly name = 'RateLimitedError';
  /** Whole seconds until the limit lets the caller through again (at least 1). */
  readonly retryAfterSeconds: number;
  constructor(message: string, retryAfterSeconds: number, options?: ErrorOptions) {
    super('rate_limited', message, options);
    this.retryAfterSeconds = Math.max(1, Math.ceil(retryAfterSeconds));
  }
}

/**
 * The database cannot be reached (`unavailable`); nothing was written, and the caller may try
 * again after `retryAfterSeconds`. A driver's own connection error is taken as one too (see
 * {@link isUnavailableError}).
 */
export class UnavailableError extends DomainError {
  override readonly name = 'UnavailableError';
  /** Whole seconds after which trying again is worthwhile (at least 1). */
  readonly retryAfterSeconds: number;
  constructor(message: string, retryAfterSeconds: number, options?: ErrorOptions) {
    super('unavailable', message, options);
    this.retryAfterSeconds = Math.max(1, Math.ceil(retryAfterSeconds));
  }
}

/**
 * Error codes of a database that cannot be reached or is going away: the socket's (refused, reset,
 * timed out, unreachable) and PostgreSQL's (57P01-57P03 shutdown and start-up, class 08
 * connection exceptions, 53300 too many connections).
 */
const unreachableCodes = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
  '57P01',
  '57P02',
  '57P03',
  '08000',
  '08001',
  '08003',
  '08004',
  '08006',
  '53300',
]);
/** Messages of the PostgreSQL driver for a connection that ended or never came, which carry no code. */
const unreachableMessage =
  /^(Connection terminated|connect ECONNREFUSED|Client has encountered a connection error|timeout exceeded when trying to connect|the connection ended while checked out)/;

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

/** Throws one {@link InvalidInputError} carrying all violations, or returns when there are none. */
export function assertValid(violations: readonly FieldViolation[]): void {
  if (violations.length > 0) throw new InvalidInputError(violations);
}
