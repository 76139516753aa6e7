// The /v1 error body. The mapping from thrown values to status and code is the shared one
// (`toHttpError` in @mint/http); this only lays it out the /v1 way.

import type { HttpError } from '@mint/http';

/** The one /v1 error body: `{ ok: false, error: { code, message[, details] }, meta: { request_id } }`. */
export function errorBody(error: HttpError, requestId: string): Record<string, unknown> {
  return {
    ok: false,
    error: { code: error.code, message: error.message, ...(error.details ? { details: error.details } : {}) },
    meta: { request_id: requestId },
  };
}
