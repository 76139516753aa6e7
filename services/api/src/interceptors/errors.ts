// The one mapping from domain errors to Connect codes, and the interceptor that applies it so
// handlers (and use cases) simply throw.

import { Code, ConnectError, type Interceptor } from '@connectrpc/connect';
import {
  isConflictError,
  isForbiddenError,
  isIllegalStateError,
  isInvalidInputError,
  isNotFoundError,
  isUnauthenticatedError,
} from '@mint/domain';
import { observeResponse } from './stream.ts';

/** The message clients see for any error that is not a known domain error. */
export const internalErrorMessage = 'internal error';

/**
 * Maps any thrown value to the ConnectError a client sees. Domain errors keep their message
 * (bad input names every field); a ConnectError passes unchanged; anything else becomes Internal
 * with the generic message "internal error" and the original as `cause`, for the log only.
 */
export function toConnectError(err: unknown): ConnectError {
  if (err instanceof ConnectError) return err;
  if (isInvalidInputError(err)) return new ConnectError(err.message, Code.InvalidArgument, undefined, undefined, err);
  if (isIllegalStateError(err)) return new ConnectError(err.message, Code.FailedPrecondition, undefined, undefined, err);
  if (isNotFoundError(err)) return new ConnectError(err.message, Code.NotFound, undefined, undefined, err);
  if (isConflictError(err)) return new ConnectError(err.message, Code.Aborted, undefined, undefined, err);
  if (isUnauthenticatedError(err)) return new ConnectError(err.message, Code.Unauthenticated, undefined, undefined, err);
  if (isForbiddenError(err)) return new ConnectError(err.message, Code.PermissionDenied, undefined, undefined, err);
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
