// Helpers for interceptors that must see every message of a streaming call.

import type { Message } from '@bufbuild/protobuf';
import type { StreamRequest, StreamResponse, UnaryRequest, UnaryResponse } from '@connectrpc/connect';

/**
 * `req` with `check` run on each input message as the handler reads it: a throwing check ends
 * the call before the handler sees the message. For server-streaming RPCs the single request is
 * read before the implementation is invoked, so the check runs first.
 */
export function checkEachRequest(req: StreamRequest, check: (message: Message) => void | Promise<void>): StreamRequest {
  const input = req.message;
  async function* checked() {
    for await (const message of input) {
      await check(message);
      yield message;
    }
  }
  return { ...req, message: checked() };
}

/**
 * `res` with its output stream passed through `onEnd` exactly once: with no error when the stream
 * completes, with the error when it fails, or with `undefined` and `cancelled` when the consumer
 * stops early. `mapError` may replace an error before it reaches the client.
 */
export function observeResponse(
  res: StreamResponse,
  hooks: { mapError?: (error: unknown) => unknown; onEnd?: (error: unknown, cancelled: boolean) => void },
): StreamResponse {
  const output = res.message;
  async function* observed() {
    let ended = false;
    try {
      yield* output;
      ended = true;
      hooks.onEnd?.(undefined, false);
    } catch (error) {
      ended = true;
      const mapped = hooks.mapError ? hooks.mapError(error) : error;
      hooks.onEnd?.(mapped, false);
      throw mapped;
    } finally {
      if (!ended) hooks.onEnd?.(undefined, true);
    }
  }
  return { ...res, message: observed() };
}

/**
 * Runs the call and reports its end to `onEnd` exactly once: at once for a unary call (with its
 * error, if any), when the output stream ends, fails or is cancelled for a streaming one.
 */
export async function observeCall<R extends UnaryResponse | StreamResponse>(
  next: (req: UnaryRequest | StreamRequest) => Promise<R>,
  req: UnaryRequest | StreamRequest,
  onEnd: (error: unknown, cancelled: boolean) => void,
): Promise<R> {
  let res: R;
  try {
    res = await next(req);
  } catch (error) {
    onEnd(error, false);
    throw error;
  }
  if (!res.stream) {
    onEnd(undefined, false);
    return res;
  }
  return observeResponse(res, { onEnd }) as R;
}
