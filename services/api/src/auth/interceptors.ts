// Authentication and authorization of every RPC through the use cases' access rule:
// a bearer session, or a standalone API key (`x-api-key`) of a workspace with API access, or
// both. Public services (the allow-list in ./public-paths.ts) skip both.

import type { DescMethod, Message } from '@bufbuild/protobuf';
import { createContextKey, type ContextValues, type Interceptor, type StreamRequest, type UnaryRequest } from '@connectrpc/connect';
import { ForbiddenError, UnauthenticatedError, type Permission } from '@mint/domain';
import { checkEachRequest } from '@mint/http';
import {
  authenticate,
  authorizeAuthenticated,
  type Authenticated,
  type Caller,
  type Credentials,
  type OperationAccess,
  type UseCaseContext,
} from '@mint/usecases';
import { principalKey } from '../context.ts';
import { credentialsFrom } from './credentials.ts';
import { operationAccessOf } from '@mint/wire';
import { permissionFor, type AccessOptions } from './permissions.ts';

/** What the auth interceptors check credentials with: the use cases' access rule bound to a use-case context. */
export interface Authenticator {
  /** Verifies the credentials given (see `authenticate` in @mint/usecases). */
  authenticate(credentials: Credentials): Promise<Authenticated>;
  /** Checks verified credentials against a brand and permission (see `authorizeAuthenticated`); `access` says whether a partner key may call the operation. */
  authorize(authenticated: Authenticated, brandId: string, permission: Permission, access?: OperationAccess): Promise<Caller>;
}

/** The use cases' access rule on `ctx`. */
export function contextAuthenticator(ctx: UseCaseContext): Authenticator {
  return {
    authenticate: (credentials) => authenticate(ctx, credentials),
    authorize: (authenticated, brandId, permission, access) => authorizeAuthenticated(ctx, authenticated, brandId, permission, access),
  };
}

/** Verified credentials of the call, between the header check and the interceptors; null for public RPCs, undefined until checked. */
const authenticatedKey = createContextKey<Authenticated | null | undefined>(undefined, { description: 'verified credentials' });

/**
 * The verified credentials of a call that passed the auth interceptors (for the account RPCs,
 * which act for the session's user rather than on a brand); throws UnauthenticatedError otherwise.
 */
export function authenticatedOf(contextValues: ContextValues): Authenticated {
  const authenticated = contextValues.get(authenticatedKey);
  if (authenticated === null || authenticated === undefined) throw new UnauthenticatedError('authentication required');
  return authenticated;
}

/** True when the call's credentials were verified (the auth-failure lockout then lets them through for a while). */
export function hasVerifiedCredentials(contextValues: ContextValues): boolean {
  const authenticated = contextValues.get(authenticatedKey);
  return authenticated !== null && authenticated !== undefined;
}

/**
 * The header check the Connect adapter runs before reading any body byte: verifies the
 * credentials of every RPC that is not public (a JWT is checked from the header alone, an API key
 * with one indexed query), so an anonymous or badly credentialed call is answered Unauthenticated
 * without its body being read or inflated.
 */
export function authenticateHeaders(
  authenticator: Authenticator,
  access: AccessOptions = {},
): (method: DescMethod, header: Headers, contextValues: ContextValues) => Promise<void> {
  return async (method, header, contextValues) => {
    if (permissionFor(method, access) === 'public') return;
    contextValues.set(authenticatedKey, await authenticator.authenticate(credentialsFrom(header)));
  };
}

/**
 * Verifies the credentials of every RPC that is not public (a bearer token, an API key, or both)
 * before the request is validated, so anonymous callers and bad credentials learn nothing but
 * Unauthenticated; calls whose headers the adapter already checked ({@link authenticateHeaders})
 * are not checked twice. Credentials never appear in an error or a log line.
 */
export function authenticationInterceptor(authenticator: Authenticator, access: AccessOptions = {}): Interceptor {
  const check = authenticateHeaders(authenticator, access);
  return (next) => async (req) => {
    if (req.contextValues.get(authenticatedKey) === undefined) await check(req.method, req.header, req.contextValues);
    return next(req);
  };
}

/**
 * Checks, for every RPC that is not public, that the verified caller may act on the request's
 * `brand_id` with the RPC's permission, and stores the caller (`principalKey`) for the handlers.
 * An account or reflection RPC (`'authenticated'`) names no brand: verified credentials are all it needs here.
 * An RPC without a (mint.v1.permission) option is always refused (deny by default). Runs
 * after validation, so `brand_id` is a well-formed uuid here; for client streams every message
 * is checked.
 */
export function authorizationInterceptor(authenticator: Authenticator, access: AccessOptions = {}): Interceptor {
  return (next) => async (req) => {
    const permission = permissionFor(req.method, access);
    if (permission === 'public') return next(req);
    if (permission === 'authenticated') {
      // No brand to check: verified credentials are all it needs (an account RPC acts for the session's user alone; reflection describes the contract).
      authenticatedOf(req.contextValues);
      return next(req);
    }
    const check = async (message: Message): Promise<void> => {
      if (permission === undefined) throw new ForbiddenError('this RPC declares no permission and is refused');
      const authenticated = req.contextValues.get(authenticatedKey);
      if (authenticated === null || authenticated === undefined) throw new UnauthenticatedError('authentication required');
      const brandId = brandIdOf(message);
      if (brandId === undefined) throw new ForbiddenError('the request names no brand');
      req.contextValues.set(principalKey, await authenticator.authorize(authenticated, brandId, permission, operationAccessOf(req.method)));
    };
    if (!req.stream) {
      await check((req as UnaryRequest).message);
      return next(req);
    }
    return next(checkEachRequest(req as StreamRequest, check));
  };
}

/** The request's brand_id, or undefined when the message has no such field or it is empty. */
function brandIdOf(message: Message): string | undefined {
  const value: unknown = (message as Message & { brandId?: unknown }).brandId;
  return typeof value === 'string' && value !== '' ? value : undefined;
}
