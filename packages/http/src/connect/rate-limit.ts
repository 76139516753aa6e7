// The rate limits on the two sides of one server: the RPC check the Connect adapter runs on the
// headers (with an interceptor for the calls it did not check), and the guard of the route table.

import { Code, ConnectError, createContextKey, type ContextValues, type Interceptor } from '@connectrpc/connect';
import type { DescMethod } from '@bufbuild/protobuf';
import { isDomainError } from '@mint/domain';
import type { RateLimits } from '../rate-limits.ts';
import type { Route, RouteCall } from '../router.ts';
import type { HttpRequest } from '../types.ts';

/** The RPC side of the rate limits: the check the adapter runs on the headers, and the interceptor. */
export interface RpcRateLimit {
  /** Refuses a caller past its failed-authentication or per-credential limit (RateLimitedError); once per call. */
  check(method: DescMethod, header: Headers, contextValues: ContextValues): Promise<void>;
  /** Runs the check for calls the adapter did not check (client and bidirectional streams) and counts failed authentications. */
  readonly interceptor: Interceptor;
}

/** What the RPC limits need to know of the server's calls. */
export interface RpcRateLimitOptions {
  /** True for a method served without credentials (never limited, never counted as a failure). */
  readonly isPublic: (method: DescMethod) => boolean;
  /** The call's client address. */
  readonly addressOf: (contextValues: ContextValues) => string;
  /** True once the call's credentials were verified. */
  readonly verified: (contextValues: ContextValues) => boolean;
}

/** Whether {@link RpcRateLimit.check} already ran for a call. */
const rateCheckedKey = createContextKey(false, { description: 'rate limits checked' });

/** The per-credential and failed-authentication limits of RPCs. */
export function rpcRateLimit(limits: RateLimits, options: RpcRateLimitOptions): RpcRateLimit {
  const credentialsOf = (header: Headers) => [header.get('authorization') ?? undefined, header.get('x-api-key') ?? undefined] as const;
  const check = async (method: DescMethod, header: Headers, contextValues: ContextValues): Promise<void> => {
    if (contextValues.get(rateCheckedKey) || options.isPublic(method)) return;
    contextValues.set(rateCheckedKey, true);
    await limits.authAllowed(options.addressOf(contextValues), ...credentialsOf(header));
    await limits.credential(...credentialsOf(header));
  };
  return {
    check,
    interceptor: (next) => async (req) => {
      await check(req.method, req.header, req.contextValues);
      try {
        return await next(req);
      } catch (error) {
        const unauthenticated = isDomainError(error, 'unauthenticated') || (error instanceof ConnectError && error.code === Code.Unauthenticated);
        if (unauthenticated && !options.isPublic(req.method)) limits.authFailed(options.addressOf(req.contextValues));
        throw error;
      } finally {
        if (!options.isPublic(req.method) && options.verified(req.contextValues)) limits.authSucceeded(...credentialsOf(req.header));
      }
    },
  };
}

/** Which limit a plain HTTP route counts against: an address's resolver or download limit, none, or the caller's credential. */
export type RouteLimit = 'resolver' | 'download' | 'public' | 'credential';

/**
 * The route table's guard: counts a request against the limit `limitOf` names. A credentialed
 * route checks the address's failed-authentication lockout and the credential's limit, and a
 * response below 400 marks the credentials as working.
 */
export function routeRateGuard(
  limits: RateLimits,
  addressOf: (req: HttpRequest) => string,
  limitOf: (call: RouteCall, route: Route) => RouteLimit,
): (call: RouteCall, route: Route) => void | Promise<void> {
  return (call, route) => {
    const { req, res } = call;
    const limit = limitOf(call, route);
    if (limit === 'resolver') return limits.resolver(addressOf(req));
    if (limit === 'download') return limits.download(addressOf(req));
    if (limit === 'public') return undefined;
    const header = req.headers['x-api-key'];
    const apiKey = typeof header === 'string' ? header : undefined;
    res.once('finish', () => {
      if (res.statusCode < 400) limits.authSucceeded(req.headers.authorization, apiKey);
    });
    return limits.authAllowed(addressOf(req), req.headers.authorization, apiKey).then(() => limits.credential(req.headers.authorization, apiKey));
  };
}
