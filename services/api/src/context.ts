// Per-call values the transport puts into Connect's context: the request id, the logger bound
// to it, and the authenticated principal. Handlers read them through the helpers below.

import { Code, ConnectError, createContextKey, type HandlerContext } from '@connectrpc/connect';
import type { Logger } from '@mint/runtime';

/** The caller an RPC runs for, set by the authentication interceptor. */
export interface Principal {
  /** The user's id; use cases receive it as `actor.id` for the audit trail. */
  readonly userId: string;
}

/** The request id of the call (from `x-request-id`, or generated); empty outside a request. */
export const requestIdKey = createContextKey<string>('', { description: 'request id' });

/** A logger whose lines carry the call's request id; undefined outside a request. */
export const loggerKey = createContextKey<Logger | undefined>(undefined, { description: 'request logger' });

/** The authenticated caller; null until the authentication interceptor has run (and for public RPCs). */
export const principalKey = createContextKey<Principal | null>(null, { description: 'authenticated principal' });

/**
 * The authenticated caller of an RPC. Throws Unauthenticated when there is none, which only
 * happens when a handler of a public service asks for it.
 */
export function principalOf(context: Pick<HandlerContext, 'values'>): Principal {
  const principal = context.values.get(principalKey);
  if (principal === null) throw new ConnectError('authentication required', Code.Unauthenticated);
  return principal;
}
