// The one access rule: who is calling (a bearer session, an API key, or both) and whether they
// may act on a brand. The transports extract the credentials and call these; they throw domain
// errors only (UnauthenticatedError, ForbiddenError), which the one error mapping turns into
// Unauthenticated / PermissionDenied (HTTP 401 / 403).

import { ForbiddenError, roleGrants, scopesGrant, UnauthenticatedError, type Permission } from '@mint/domain';
import { authenticateBearer, recordApiKeyUse, roleOnBrand, verifyApiKey, type ApiKeyPrincipal } from './auth.ts';
import type { UseCaseContext } from '../context.ts';
import { listMembershipsOfUser, unitOfWork } from '@mint/db';

/** The credentials a request carries; null when the header is absent. Never log them. */
export interface Credentials {
  readonly bearer: string | null;
  readonly apiKey: string | null;
}

/** actorId = userId ?? apiKeyId, for the audit trail. */
export interface Caller {
  readonly userId: string | null;
  readonly apiKeyId: string | null;
  readonly actorId: string;
  /** The partner of a partner key: its moves are limited to the serials allocated to it. Null for the brand's own callers. */
  readonly partnerId: string | null;
}

/** What an operation allows beside its permission. */
export interface OperationAccess {
  /** A partner key may call it (the proto's `(mint.v1.partner_access)`); every other operation refuses partner keys. */
  readonly partnerAccess?: boolean;
}

/** The refusal of a partner key on an operation not marked for partners. */
export const partnerKeyRefusal =
  'a partner key may only request, report, pack and return the serials allocated to it (AllocateSerials, GetPartnerAllocation, MoveSerials, GetSerialMove, ReturnUnusedSerials, MintContainers, PackContainer, UnpackContainer, GetContainer, POST /epcis/capture, GET /epcis/events)';

/** Credentials that verified, before any brand is looked at. */
export interface Authenticated {
  /** The session's user, when a bearer token was given. */
  readonly user: { readonly userId: string } | null;
  /** The API key, when one was given. */
  readonly apiKey: ApiKeyPrincipal | null;
}

/** Options of {@link authenticate} and {@link authorize}. */
export interface AuthorizeOptions {
  /** The spec's /v1 endpoints need both `Authorization` and `x-api-key`; a missing one is Unauthenticated naming it. */
  readonly requireSessionAndKey?: boolean;
}

/** The message of a request without credentials (the only thing an anonymous caller learns). */
export const missingCredentialsMessage = 'missing bearer token (Authorization: Bearer <token>) or API key (x-api-key)';

/**
 * Verifies every credential given, without looking at a brand: a bearer token must be a valid
 * session token, an API key must be well-formed, known, unrevoked and of a workspace with API
 * access (early access; ForbiddenError otherwise). No credentials is UnauthenticatedError, as is a
 * missing header named by `requireSessionAndKey`.
 */
export async function authenticate(ctx: UseCaseContext, credentials: Credentials, options: AuthorizeOptions = {}): Promise<Authenticated> {
  const { bearer, apiKey } = credentials;
  if (options.requireSessionAndKey === true) {
    if (bearer === null) throw new UnauthenticatedError('missing bearer token (Authorization: Bearer <token>)');
    if (apiKey === null) throw new UnauthenticatedError('missing API key (x-api-key header)');
  }
  if (bearer === null && apiKey === null) throw new UnauthenticatedError(missingCredentialsMessage);
  const user = bearer === null ? null : await authenticateBearer(ctx, bearer);
  const key = apiKey === null ? null : await verifyApiKey(ctx, apiKey);
  return { user, apiKey: key };
}

/**
 * Checks verified credentials against `brandId`: the session's user needs a role on the brand
 * that grants `permission`; the API key must belong to the brand (the message never says whether
 * the brand exists) and carry `permission` as a scope. Both given: both must pass. Records the
 * key's last_used_at once everything passed. A partner key is refused every operation whose
 * `access` does not allow partners. Throws ForbiddenError otherwise.
 */
export async function authorizeAuthenticated(
  ctx: UseCaseContext,
  authenticated: Authenticated,
  brandId: string,
  permission: Permission,
  access: OperationAccess = {},
): Promise<Caller> {
  const { user, apiKey } = authenticated;
  if (user === null && apiKey === null) throw new UnauthenticatedError(missingCredentialsMessage);
  if (user !== null) {
    const role = await roleOnBrand(ctx, user.userId, brandId);
    if (role === null) throw new ForbiddenError(`no role on brand ${brandId}`);
    if (!roleGrants(role, permission)) throw new ForbiddenError(`role ${role} does not grant ${permission} on brand ${brandId}`);
  }
  if (apiKey !== null) {
    if (apiKey.brandId !== brandId) throw new ForbiddenError(`the API key does not grant access to brand ${brandId}`);
    if (!scopesGrant(apiKey.scopes, permission)) throw new ForbiddenError(`the API key lacks the ${permission} scope`);
    if (apiKey.partnerId !== null && access.partnerAccess !== true) throw new ForbiddenError(partnerKeyRefusal);
    await recordApiKeyUse(ctx, apiKey);
  }
  const userId = user?.userId ?? null;
  const apiKeyId = apiKey?.keyId ?? null;
  return { userId, apiKeyId, actorId: (userId ?? apiKeyId)!, partnerId: apiKey?.partnerId ?? null };
}

/**
 * No credentials → UnauthenticatedError; a bearer token must verify and the user's role on brandId must grant `permission`; an API key must verify, belong to brandId (else ForbiddenError, never confirming the other brand) and its scopes grant `permission`; both given → both must pass; with requireSessionAndKey (the spec's /v1 endpoints need both headers) a missing one is UnauthenticatedError naming the header. Throws domain UnauthenticatedError / ForbiddenError only.
 */
export async function authorize(
  ctx: UseCaseContext,
  credentials: Credentials,
  brandId: string,
  permission: Permission,
  options?: { requireSessionAndKey?: boolean },
): Promise<Caller> {
  return authorizeAuthenticated(ctx, await authenticate(ctx, credentials, options), brandId, permission);
}

/** One brand workspace of the session's user (see {@link listMyMemberships}). */
export interface MembershipView {
  readonly brandId: string;
  readonly brandName: string;
  readonly brandSlug: string;
  readonly role: string;
}

/**
 * The brands the session's user is a member of, with the role on each, by brand name. Needs a
 * session: an API key alone names one brand and no user, so it is refused (ForbiddenError); no
 * credentials at all is UnauthenticatedError.
 */
export async function listMyMemberships(ctx: UseCaseContext, authenticated: Authenticated): Promise<{ userId: string; memberships: MembershipView[] }> {
  if (authenticated.user === null) {
    if (authenticated.apiKey === null) throw new UnauthenticatedError(missingCredentialsMessage);
    throw new ForbiddenError('memberships belong to a user: call with a session token (Authorization: Bearer <token>), not an API key alone');
  }
  const { userId } = authenticated.user;
  return { userId, memberships: await listMembershipsOfUser(unitOfWork(ctx.db), userId) };
}
