// The /v1 bodies. The mapping from thrown values to status and code is the shared one
// (`toHttpError` in @mint/http); this only lays them out the /v1 way.

import { sendJson, type ErrorWriter, type HttpError, type RouteCall } from '@mint/http';

/** The request id the server assigned (echoed in `x-request-id`). */
export function requestIdOf(call: RouteCall): string {
  const id = call.res.getHeader('x-request-id');
  return typeof id === 'string' ? id : '';
}

/** The one /v1 error body: `{ ok: false, error: { code, message[, details] }, meta: { request_id } }`. */
export function errorBody(error: HttpError, requestId: string): Record<string, unknown> {
  return {
    ok: false,
    error: { code: error.code, message: error.message, ...(error.details ? { details: error.details } : {}) },
    meta: { request_id: requestId },
  };
}

/** Answers an error in the /v1 error body. */
export const sendErrorBody: ErrorWriter = (call, error) => sendJson(call.req, call.res, error.status, errorBody(error, requestIdOf(call)));

/** The one /v1 success body: `{ ok: true, data, meta: { ...meta, request_id } }`. */
export function okBody(data: unknown, requestId: string, meta: Record<string, unknown> = {}): Record<string, unknown> {
  return { ok: true, data, meta: { ...meta, request_id: requestId } };
}
