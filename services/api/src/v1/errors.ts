// The /v1 error body and the one mapping from thrown values (domain errors and the few transport
// conditions below) to an HTTP status and a stable error code.

import {
  isConflictError, isForbiddenError, isIllegalStateError, isInvalidInputError, isNotFoundError, isUnauthenticatedError,
  type FieldViolation,
} from '@mint/domain';

/** A condition only the HTTP transport knows (size limit, media type, route, idempotency). */
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

/** What a client sees of an error: HTTP status, stable code, message, optional details. */
export interface V1Error {
  readonly status: number;
  readonly code: string;
  readonly message: string;
  /** Extra machine-readable facts: `violations` (bad input), `blocking_reasons` (blocked submit). */
  readonly details?: Readonly<Record<string, unknown>>;
}

/** The message of every error that is not a known one; the original goes to the log only. */
export const internalMessage = 'internal error';

/**
 * Maps any thrown value to the /v1 error: bad input 400 invalid_request (with the violations),
 * no or bad credentials 401 unauthenticated, missing permission 403 forbidden, missing or foreign
 * row 404 not_found, illegal state move 409 failed_precondition, lost compare-and-set 409
 * conflict, transport conditions as they say, anything else 500 internal.
 */
export function toV1Error(err: unknown): V1Error {
  if (isHttpProblem(err)) return { status: err.status, code: err.code, message: err.message, ...(err.details ? { details: err.details } : {}) };
  if (isInvalidInputError(err)) return { status: 400, code: 'invalid_request', message: err.message, details: { violations: violationsOf(err.violations) } };
  if (isUnauthenticatedError(err)) return { status: 401, code: 'unauthenticated', message: err.message };
  if (isForbiddenError(err)) return { status: 403, code: 'forbidden', message: err.message };
  if (isNotFoundError(err)) return { status: 404, code: 'not_found', message: err.message };
  if (isIllegalStateError(err)) return { status: 409, code: 'failed_precondition', message: err.message };
  if (isConflictError(err)) return { status: 409, code: 'conflict', message: err.message };
  return { status: 500, code: 'internal', message: internalMessage };
}

function violationsOf(violations: readonly FieldViolation[]): { field: string; message: string }[] {
  return violations.map((v) => ({ field: v.field, message: v.message }));
}

/** The one /v1 error body: `{ ok: false, error: { code, message[, details] }, meta: { request_id } }`. */
export function errorBody(error: V1Error, requestId: string): Record<string, unknown> {
  return {
    ok: false,
    error: { code: error.code, message: error.message, ...(error.details ? { details: error.details } : {}) },
    meta: { request_id: requestId },
  };
}
