// Per-call values the transport puts into Connect's context: the request id, the logger bound
// to it, and the authorized caller. Handlers read them through the helpers below.

import { Code, ConnectError, createContextKey, type HandlerContext } from '@connectrpc/connect';
import type { CallLogOptions } from '@mint/http';
import type { Logger } from '@mint/runtime';
import type * as UseCases from '@mint/usecases';
import type { Caller, UseCaseContext } from '@mint/usecases';

/** The request id of the call (from `x-request-id`, or generated); empty outside a request. */
export const requestIdKey = createContextKey<string>('', { description: 'request id' });

/** The client's address (the TCP peer, or the forwarded client behind a trusted proxy), for the per-address rate limits; '' when unknown (in-process calls). */
export const clientAddressKey = createContextKey<string>('', { description: 'client address' });

/**
 * The call's logger (its lines carry the request id), created on first use: most calls never log
 * a line at the configured level, and a pino child with redaction cost about 4 % of the API's CPU
 * per submit. Undefined outside a request.
 */
export const loggerKey = createContextKey<(() => Logger) | undefined>(undefined, { description: 'request logger' });

/** Where the RPC log line finds the call's logger and user. */
export const callLog: CallLogOptions = { loggerOf: (values) => values.get(loggerKey)?.(), userIdOf: (values) => values.get(principalKey)?.userId };

/**
 * The caller an RPC runs for (a session's user, an API key, or both), set by the authorization interceptor; null until it
 * has run (and for public RPCs). Use cases receive its `actorId` (the user, else the key) as `actor.id` for the audit trail.
 */
export const principalKey = createContextKey<Caller | null>(null, { description: 'authenticated principal' });

/** What a service's handlers need: the use-case context every call runs with, and the use cases they call (`@mint/usecases` itself). */
export interface HandlerDeps<U = typeof UseCases> {
  readonly ctx: UseCaseContext;
  readonly useCases: U;
}

/**
 * The authenticated caller of an RPC. Throws Unauthenticated when there is none, which only
 * happens when a handler of a public service asks for it.
 */
export function principalOf(context: Pick<HandlerContext, 'values'>): Caller {
  const principal = context.values.get(principalKey);
  if (principal === null) throw new ConnectError('authentication required', Code.Unauthenticated);
  return principal;
}

/** The actor a use case records for the call: the caller's id (its user, else its API key) and, for a partner's key, its partner. */
export function actorOf(context: Pick<HandlerContext, 'values'>): { id: string; partnerId: string | null } {
  const principal = principalOf(context);
  return { id: principal.actorId, partnerId: principal.partnerId };
}
