// Authentication (a bearer JWT on every protected RPC) and authorization (the caller's role on
// the request's brand must grant the RPC's permission). Public services skip both.

import type { Message } from '@bufbuild/protobuf';
import { Code, ConnectError, type Interceptor, type StreamRequest, type UnaryRequest } from '@connectrpc/connect';
import { roleGrants, type Role } from '@mint/domain';
import { principalKey, type Principal } from '../context.ts';
import { checkEachRequest } from '../interceptors/stream.ts';
import { permissionFor } from './permissions.ts';

/** What the auth interceptors need from the use cases, bound to a use-case context. */
export interface Authenticator {
  /** The user a bearer token identifies; throws UnauthenticatedError for a bad or expired token. */
  authenticate(token: string): Promise<Principal>;
  /** The user's role on the brand, or null when they have none (or the brand does not exist). */
  roleOnBrand(userId: string, brandId: string): Promise<Role | null>;
}

/**
 * The token of an `Authorization: Bearer <token>` header; throws Unauthenticated when the header
 * is missing or has another scheme. The token itself never appears in an error or a log line.
 */
export function bearerToken(header: Headers): string {
  const value = header.get('authorization');
  if (value === null || value.trim() === '') throw new ConnectError('missing bearer token (Authorization: Bearer <token>)', Code.Unauthenticated);
  const match = /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(value);
  if (match === null) throw new ConnectError('the Authorization header must be "Bearer <token>"', Code.Unauthenticated);
  return match[1]!;
}

/**
 * Verifies the bearer token of every RPC that is not public and stores the caller in the call's
 * context values (`principalKey`). Runs before validation, so anonymous callers learn nothing
 * but Unauthenticated.
 */
export function authenticationInterceptor(authenticator: Authenticator): Interceptor {
  return (next) => async (req) => {
    if (permissionFor(req.method) === 'public') return next(req);
    const principal = await authenticator.authenticate(bearerToken(req.header));
    req.contextValues.set(principalKey, principal);
    return next(req);
  };
}

/**
 * Checks, for every RPC that is not public, that the authenticated caller has a role on the
 * request's `brand_id` and that the role grants the RPC's permission; PermissionDenied otherwise.
 * An RPC without an entry in the permission table is always refused. Runs after validation, so
 * `brand_id` is a well-formed uuid here.
 */
export function authorizationInterceptor(authenticator: Authenticator): Interceptor {
  return (next) => async (req) => {
    const permission = permissionFor(req.method);
    if (permission === 'public') return next(req);
    const authorize = async (message: Message): Promise<void> => {
      if (permission === undefined) throw new ConnectError('this RPC has no permission entry and is refused', Code.PermissionDenied);
      const principal = req.contextValues.get(principalKey);
      if (principal === null) throw new ConnectError('authentication required', Code.Unauthenticated);
      const brandId = brandIdOf(message);
      if (brandId === undefined) throw new ConnectError('the request names no brand', Code.PermissionDenied);
      const role = await authenticator.roleOnBrand(principal.userId, brandId);
      if (role === null) throw new ConnectError(`no role on brand ${brandId}`, Code.PermissionDenied);
      if (!roleGrants(role, permission)) throw new ConnectError(`role ${role} does not grant ${permission} on brand ${brandId}`, Code.PermissionDenied);
    };
    if (!req.stream) {
      await authorize((req as UnaryRequest).message);
      return next(req);
    }
    return next(checkEachRequest(req as StreamRequest, authorize));
  };
}

/** The request's brand_id, or undefined when the message has no such field or it is empty. */
function brandIdOf(message: Message): string | undefined {
  const value: unknown = (message as Message & { brandId?: unknown }).brandId;
  return typeof value === 'string' && value !== '' ? value : undefined;
}
