// The Connect side of the one error mapping: the shared table (@mint/http) gives each domain
// error its code, and the interceptor applies it so handlers (and use cases) simply throw.

import { Code, ConnectError, type Interceptor } from '@connectrpc/connect';
import { RateLimitedError, isUnavailableError, unavailableRetryAfter } from '@mint/domain';
import { errorKindOf, internalErrorMessage, unavailableMessage } from '../errors.ts';
import { observeResponse } from './stream.ts';

/**
 * Maps any thrown value to the ConnectError a client sees. Domain errors keep their message
 * (bad input names every field); a ConnectError passes unchanged; anything else becomes Internal
 * with the generic message "internal error" and the original as `cause`, for the log only.
 */
export function toConnectError(err: unknown): ConnectError {
  if (err instanceof ConnectError) return err;
  const kind = errorKindOf(err);
  if (err instanceof RateLimitedError)
    return new ConnectError(err.message, Code.ResourceExhausted, { 'retry-after': String(err.retryAfterSeconds) }, undefined, err);
  if (isUnavailableError(err))
    return new ConnectError(unavailableMessage, Code.Unavailable, { 'retry-after': String(unavailableRetryAfter(err)) }, undefined, err);
  if (kind !== undefined) return new ConnectError((err as Error).message, kind.connect, undefined, undefined, err);
  if (err instanceof Error && err.name === 'AbortError') return new ConnectError('the call was canceled', Code.Canceled, undefined, undefined, err);
  return new ConnectError(internalErrorMessage, Code.Internal, undefined, undefined, err);
}

/** Applies {@link toConnectError} to every error of a call, including errors raised while a response streams. */
export const errorInterceptor: Interceptor = (next) => async (req) => {
  try {
    const res = await next(req);
    return res.stream ? observeResponse(res, { mapError: toConnectError }) : res;
  } catch (err) {
    throw toConnectError(err);
  }
};
