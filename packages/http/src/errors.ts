// The one table from domain errors to transport codes: each error kind's Connect code and, for
// plain HTTP, its status and stable error code, with when it happens (the /v1 OpenAPI document and
// its reference page are written from it). The Connect error interceptor and the plain HTTP error
// mapper both read it, so an error kind answers alike on every transport. The error bodies, one
// per surface: Connect and gRPC carry the code and message as their protocols do; /v1 answers
// `{ok:false, error:{code, message[, details]}, meta:{request_id}}` (submit + kick keeps the
// spec's own `{ok:false, ..., error_code, error_message}`); every other plain route answers
// `{ok:false, error, message}` (plainErrorBody).

import { Code } from '@connectrpc/connect';
import { DomainError, InvalidInputError, isUnavailableError, type ErrorKind, type FieldViolation } from '@mint/domain';

/** How one kind of domain error travels: its Connect code, HTTP status and stable error code, and when it is answered. */
export interface ErrorCodes {
  readonly connect: Code;
  readonly status: number;
  readonly code: string;
  /** When it happens, in one sentence for the docs. */
  readonly when: string;
}

/**
 * Every error kind's codes (the type makes the table exhaustive: a new kind without a row does not
 * compile). Bad input -> InvalidArgument / 400; no or bad credentials -> Unauthenticated / 401;
 * missing permission -> PermissionDenied / 403; missing or foreign row -> NotFound / 404; illegal
 * state move -> FailedPrecondition / 409; lost compare-and-set -> Aborted / 409; an idempotency key
 * reused with a different request -> AlreadyExists / 422 (a retry of the same request would be
 * answered, this one never is); over a rate limit -> ResourceExhausted / 429 (with `Retry-After`);
 * the database unreachable -> Unavailable / 503 (with `Retry-After`; nothing was written).
 */
export const errorCodes: { readonly [K in ErrorKind]: ErrorCodes } = {
  invalid: {
    connect: Code.InvalidArgument,
    status: 400,
    code: 'invalid_request',
    when: 'Malformed JSON, a wrong type, an unknown or missing field, query parameter or header, a value breaking a rule, a tampered cursor or bad CSV: the message names each field and details.violations lists them; nothing is written.',
  },
  unauthenticated: {
    connect: Code.Unauthenticated,
    status: 401,
    code: 'unauthenticated',
    when: 'No credentials, a missing bearer token or API key where both are needed, an invalid or expired token, an unknown or revoked key.',
  },
  forbidden: {
    connect: Code.PermissionDenied,
    status: 403,
    code: 'forbidden',
    when: "The role or the API key's scopes do not grant the action on the workspace, the key belongs to another workspace, or the workspace has no API access.",
  },
  not_found: {
    connect: Code.NotFound,
    status: 404,
    code: 'not_found',
    when: "No such resource in the workspace (another workspace's rows are reported the same way).",
  },
  illegal_state: {
    connect: Code.FailedPrecondition,
    status: 409,
    code: 'failed_precondition',
    when: "The entity's state does not allow the move (e.g. create_mint_batch_from_job on a job that has a batch).",
  },
  conflict: {
    connect: Code.Aborted,
    status: 409,
    code: 'conflict',
    when: 'A concurrent change won (e.g. process_mint_job_batch while an executor holds the job); retry.',
  },
  idempotency_key_reused: {
    connect: Code.AlreadyExists,
    status: 422,
    code: 'idempotency_key_reused',
    when: "The idempotency key was used with a different request; the first one's job stays as it is.",
  },
  rate_limited: {
    connect: Code.ResourceExhausted,
    status: 429,
    code: 'rate_limited',
    when: 'Over a rate limit (per credential, or too many failed authentications from the address); Retry-After says when to try again.',
  },
  unavailable: {
    connect: Code.Unavailable,
    status: 503,
    code: 'unavailable',
    when: 'The service cannot reach its database (an outage, a failover); nothing was written, Retry-After says when to try again. The resolver still answers the identities it has answered before.',
  },
};

/** The answers only plain HTTP gives (routes, methods, sizes, media types, keyed requests), with their status and code. */
export const transportErrors: readonly Omit<ErrorCodes, 'connect'>[] = [
  { status: 404, code: 'not_found', when: 'No such route or named operation.' },
  { status: 405, code: 'method_not_allowed', when: 'Known path, other method (Allow lists the methods).' },
  { status: 409, code: 'idempotency_request_in_progress', when: 'A request with the same Idempotency-Key is still running (Retry-After: 1).' },
  { status: 413, code: 'payload_too_large', when: "The body exceeds the route's limit (checked on Content-Length and while streaming)." },
  { status: 415, code: 'unsupported_media_type', when: "The Content-Type is not the route's (application/json, or text/csv for the CSV upload)." },
  { status: 422, code: 'submit_blocked', when: 'Preflight blocked a mint request; details.blocking_reasons lists why.' },
  { status: 500, code: 'internal', when: 'Anything else; the message is always "internal error", the cause only in the server log.' },
];

/**
 * The codes of a domain error's kind, those of `unavailable` for a driver's error saying the
 * database cannot be reached, or undefined for anything else (an internal error).
 */
export function errorKindOf(err: unknown): ErrorCodes | undefined {
  if (err instanceof DomainError) return errorCodes[err.kind];
  return isUnavailableError(err) ? errorCodes.unavailable : undefined;
}

/** The message of every 503 for an unreachable database (the driver's words go to the log only). */
export const unavailableMessage = 'the service cannot reach its database; nothing was written, try again shortly';

/** The message clients see for any error that is not a known one; the original goes to the log only. */
export const internalErrorMessage = 'internal error';

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

/**
 * The message of a 405: the method refused, where, and the methods to use instead
 * (`DELETE is not allowed on /healthz: use GET or HEAD`), as the `Allow` header lists them.
 */
export function methodNotAllowedMessage(method: string | undefined, path: string, allowed: readonly string[]): string {
  const use = allowed.length <= 1 ? allowed.join('') : `${allowed.slice(0, -1).join(', ')} or ${allowed.at(-1)}`;
  return `${method ?? 'this method'} is not allowed on ${path}: use ${use}`;
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
  const message = isUnavailableError(err) ? unavailableMessage : (err as Error).message;
  if (err instanceof InvalidInputError) return { status: kind.status, code: kind.code, message, details: { violations: violationsOf(err.violations) } };
  return { status: kind.status, code: kind.code, message };
}

function violationsOf(violations: readonly FieldViolation[]): { field: string; message: string }[] {
  return violations.map((v) => ({ field: v.field, message: v.message }));
}
