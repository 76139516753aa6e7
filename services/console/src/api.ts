// The API as the console calls it: the Connect protocol with JSON bodies over fetch, on the
// console's own origin (the API serves the console, so no CORS is involved), with the session's
// bearer token on every call.

import { Code, ConnectError, createClient, type Client, type Interceptor, type Transport } from '@connectrpc/connect';
import { createConnectTransport } from '@connectrpc/connect-web';
import { MintService } from '@mint/contract';

/**
 * A Connect JSON transport to this origin that sends `token` as the bearer credential (a function
 * is asked on every call, so a silently renewed token is used at once).
 */
export function createApiTransport(token: string | (() => string)): Transport {
  const bearer: Interceptor = (next) => (req) => {
    req.header.set('authorization', `Bearer ${typeof token === 'function' ? token() : token}`);
    return next(req);
  };
  return createConnectTransport({ baseUrl: window.location.origin, useBinaryFormat: false, interceptors: [bearer] });
}

/** A MintService client on `transport` (for the job watch stream, which TanStack Query does not cover). */
export function mintClient(transport: Transport): Client<typeof MintService> {
  return createClient(MintService, transport);
}

/** The API's own words for a failed call (a ConnectError's message without the code prefix). */
export function errorText(error: unknown): string {
  const e = ConnectError.from(error);
  return e.rawMessage === '' ? (Code[e.code] ?? 'request failed') : e.rawMessage;
}

/** True for a failure worth one more try (the server or the network, never the request or the session). */
export function isTransient(error: unknown): boolean {
  const code = ConnectError.from(error).code;
  return code === Code.Unavailable || code === Code.Unknown || code === Code.DeadlineExceeded;
}

/** True for an error that means the session is no longer valid (sign in again). */
export function isUnauthenticated(error: unknown): boolean {
  return error instanceof ConnectError && error.code === Code.Unauthenticated;
}
