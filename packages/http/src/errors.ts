// The one table from domain errors to transport codes: the Connect code and, for plain HTTP, the
// status and stable error code. The Connect error interceptor and the plain HTTP error mapper
// both read it, so an error kind answers alike on every transport.

import { Code } from '@connectrpc/connect';
import {
  isConflictError, isForbiddenError, isIdempotencyKeyReusedError, isIllegalStateError, isInvalidInputError, isNotFoundError, isRateLimitedError, isUnauthenticatedError, isUnavailableError,
  type FieldViolation,
} from '@mint/domain';

/** How one kind of domain error travels: its Connect code, HTTP status and stable error code. */
export interface ErrorKind {
  readonly connect: Code;
  readonly status: number;
  readonly code: string;
}

/**
 * Bad input -> InvalidArgument / 400 invalid_request; no or bad credentials -> Unauthenticated /
 * 401; missing permission -> PermissionDenied / 403; missing or foreign row -> NotFound / 404;
 * illegal state move -> FailedPrecondition / 409; lost compare-and-set -> Aborted / 409 conflict;
 * an idempotency key reused with a different request -> AlreadyExists / 422 idempotency_key_reused
 * (the key already made a job; a retry of the same request would be answered, this one never is);
 * over a rate limit -> ResourceExhausted / 429 rate_limited (with `Retry-After`); the database
 * unreachable -> Unavailable / 503 unavailable (with `Retry-After`; nothing was written).
 */
const errorKinds: readonly (readonly [(e: unknown) => boolean, ErrorKind])[] = [
  [isInvalidInputError, { connect: Code.InvalidArgument, status: 400, code: 'invalid_request' }],
  [isUnauthenticatedError, { connect: Code.Unauthenticated, status: 401, code: 'unauthenticated' }],
  [isForbiddenError, { connect: Code.PermissionDenied, status: 403, code: 'forbidden' }],
  [isNotFoundError, { connect: Code.NotFound, status: 404, code: 'not_found' }],
  [isIllegalStateError, { connect: Code.FailedPrecondition, status: 409, code: 'failed_precondition' }],
  [isConflictError, { connect: Code.Aborted, status: 409, code: 'conflict' }],
  [isRateLimitedError, { connect: Code.ResourceExhausted, status: 429, code: 'rate_limited' }],
  [isIdempotencyKeyReusedError, { connect: Code.AlreadyExists, status: 422, code: 'idempotency_key_reused' }],
  [isUnavailableError, { connect: Code.Unavailable, status: 503, code: 'unavailable' }],
];

/** The kind of a domain error, or undefined for anything else (an internal error). */
export function errorKindOf(err: unknown): ErrorKind | undefined {
  for (const [is, kind] of errorKinds) if (is(err)) return kind;
  return undefined;
}

/** The message clients see for any error that is not a known one; the original goes to the log only. */
export const internalErrorMessage = 'internal error';

/** The message of every 503 for an unreachable database. */
export const unavailableMessage = 'the service cannot reach its database; nothing was written, try again shortly';

/** A condition only the HTTP transport knows (route, method, size limit, media type, idempotency). */
export class HttpProblem extends Error {
  override readonly name = 'HttpProblem';
  readonly status: number;
  readonly code: string;
  readonly details: Readonly<Record<string, unknown>> | undefined;
  constructor(status: number, code: string, message: string, options?: ErrorOptions & { details?: Record<string, unknown> }) {
    super(message, options);
    this.status = status;
    this.code = code;
    this.details = options?.details;
  }
}

/** True for {@link HttpProblem}. */
export const isHttpProblem = (e: unknown): e is HttpProblem => e instanceof HttpProblem;

/** What a plain HTTP client sees of an error: status, stable code, message, optional details. */
export interface HttpError {
  readonly status: number;
  readonly code: string;
  readonly message: string;
  /** Extra machine-readable facts: `violations` (bad input), `blocking_reasons` (blocked submit). */
  readonly details?: Readonly<Record<string, unknown>>;
}

/** The plain error body of HTTP answers outside a family with a body of its own: `{ ok: false, error, message }`. */
export function plainErrorBody(error: HttpError): { ok: false; error: string; message: string } {
  return { ok: false, error: error.code, message: error.message };
}

/**
 * Maps any thrown value to the plain HTTP error: transport conditions as they say, domain errors
 * through the shared table (bad input carries its violations), anything else 500 internal.
 */
export function toHttpError(err: unknown): HttpError {
  if (isHttpProblem(err)) return { status: err.status, code: err.code, message: err.message, ...(err.details ? { details: err.details } : {}) };
  const kind = errorKindOf(err);
  if (kind === undefined) return { status: 500, code: 'internal', message: internalErrorMessage };
  // The driver's words about the connection are for the log, not the caller.
  const message = isUnavailableError(err) ? unavailableMessage : (err as Error).message;
  if (isInvalidInputError(err)) return { status: kind.status, code: kind.code, message, details: { violations: violationsOf(err.violations) } };
  return { status: kind.status, code: kind.code, message };
}

function violationsOf(violations: readonly FieldViolation[]): { field: string; message: string }[] {
  return violations.map((v) => ({ field: v.field, message: v.message }));
}
