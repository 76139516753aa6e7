// A brand workspace's administration as WorkspaceService offers it: API keys (created with scopes,
// the key returned once; listed without secrets; revoked) and members with their roles, each change
// with its audit event in the same transaction. Who may call these is decided before them by the
// access rule (workspace:admin, owners only).

import { randomUUID } from 'node:crypto';
import {
  appendEvents,
  brandApiAccessEnabled,
  countBrandOwnersLocked,
  deleteMembership,
  findApiKeyOfBrand,
  findBrandMember,
  findUserByEmail,
  findUserById,
  insertApiKey,
  insertMembership,
  insertUserIfNew,
  listApiKeysPage,
  listBrandMembersPage,
  revokeApiKeyRow,
  setMembershipRole,
  type ApiKeyRecord,
  type BrandMemberRecord,
  unitOfWork,
  transaction,
} from '@mint/db';
import {
  apiKeyScopes,
  assertValid,
  ConflictError,
  generateApiKey,
  hashApiKeySecret,
  IllegalStateError,
  isRole,
  isUuid,
  lastOwnerRefusal,
  NotFoundError,
  resolvePageSize,
  roles,
  toPage,
  type Cursor,
  type FieldViolation,
  type NewEvent,
  type Page,
  type Role,
} from '@mint/domain';
import type { Actor, UseCaseContext } from '../context.ts';

/** Default page size of {@link listApiKeysOf} and {@link listBrandMembersOf}. */
export const defaultWorkspaceAdminPageSize = 50;

/** An API key as callers see it: never its secret or hash. */
export interface ApiKeyView {
  readonly id: string;
  readonly name: string;
  /** `mk_` and the lookup part: the key's public start. */
  readonly prefix: string;
  readonly scopes: readonly string[];
  readonly createdAt: Date;
  readonly revokedAt: Date | null;
  readonly lastUsedAt: Date | null;
}

function keyView(k: ApiKeyRecord): ApiKeyView {
  return { id: k.id, name: k.name, prefix: `mk_${k.lookupId}`, scopes: k.scopes, createdAt: k.createdAt, revokedAt: k.revokedAt, lastUsedAt: k.lastUsedAt };
}

/** The violations of a new key's name and scopes, each naming its field (`scopes[1]`). */
export function apiKeyInputViolations(input: { readonly name: string; readonly scopes: readonly string[] }): FieldViolation[] {
  const v: FieldViolation[] = [];
  if (input.name.trim() === '') v.push({ field: 'name', message: 'is required: a label to tell the key apart later' });
  else if (input.name.length > 100) v.push({ field: 'name', message: 'must be at most 100 characters' });
  if (input.scopes.length === 0) v.push({ field: 'scopes', message: `must name one or more of ${apiKeyScopes.join(', ')}` });
  input.scopes.forEach((s, i) => {
    if (!(apiKeyScopes as readonly string[]).includes(s)) {
      v.push({
        field: `scopes[${i}]`,
        message: s === 'workspace:admin' ? 'workspace:admin is never given to a key' : `"${s}" is not a scope; must be one of ${apiKeyScopes.join(', ')}`,
      });
    }
  });
  return v;
}

const keyEvent = (k: ApiKeyView, brandId: string, eventType: 'api_key_created' | 'api_key_revoked', actor: Actor): NewEvent => ({
  brandId,
  eventType,
  entityType: 'api_key',
  entityId: k.id,
  actor: actor.id,
  payload: eventType === 'api_key_created' ? { name: k.name, prefix: k.prefix, scopes: k.scopes } : { name: k.name, prefix: k.prefix },
});

/**
 * Creates an API key of the brand with `scopes` and writes api_key_created in the same
 * transaction; the full key is returned this once and only a hash of its secret is stored (never
 * logged, never in the event). Also says whether the brand's API access is on, as a key of a brand
 * without it is refused when used.
 */
export async function createApiKeyOf(
  ctx: UseCaseContext,
  actor: Actor,
  input: { readonly brandId: string; readonly name: string; readonly scopes: readonly string[] },
): Promise<{ apiKey: ApiKeyView; key: string; apiAccessEnabled: boolean }> {
  assertValid(apiKeyInputViolations(input));
  const generated = generateApiKey(ctx.randomFill);
  const now = ctx.clock();
  const record: ApiKeyRecord = {
    brandId: input.brandId,
    id: randomUUID(),
    lookupId: generated.lookupId,
    name: input.name.trim(),
    scopes: [...input.scopes],
    createdAt: now,
    revokedAt: null,
    lastUsedAt: null,
  };
  const apiKey = keyView(record);
  const apiAccessEnabled = await transaction(ctx.db, async (em) => {
    await insertApiKey(em, { ...record, secretHash: hashApiKeySecret(generated.secret) });
    await appendEvents(em, now, [keyEvent(apiKey, input.brandId, 'api_key_created', actor)]);
    return brandApiAccessEnabled(em, input.brandId);
  });
  return { apiKey, key: generated.key, apiAccessEnabled };
}

/** The brand's API keys, newest first, keyset paged, without secrets; with whether its API access is on. */
export async function listApiKeysOf(
  ctx: UseCaseContext,
  brandId: string,
  query: { readonly limit: number | null; readonly cursor: Cursor | null },
): Promise<Page<ApiKeyView> & { apiAccessEnabled: boolean }> {
  const size = resolvePageSize(query.limit, defaultWorkspaceAdminPageSize);
  const em = unitOfWork(ctx.db);
  const page = toPage(await listApiKeysPage(em, brandId, size + 1, query.cursor), size, (k) => ({ at: k.createdAt, id: k.id }));
  return { ...page, items: page.items.map(keyView), apiAccessEnabled: await brandApiAccessEnabled(em, brandId) };
}

/**
 * Revokes a key of the brand at once (compare-and-set on its being in force) and writes
 * api_key_revoked; revoking a revoked key changes nothing and answers it as it is. NotFoundError
 * for an unknown or another brand's key.
 */
export async function revokeApiKeyOf(ctx: UseCaseContext, actor: Actor, brandId: string, keyId: string): Promise<ApiKeyView> {
  if (!isUuid(keyId)) throw new NotFoundError(`API key ${keyId} not found`);
  return transaction(ctx.db, async (em) => {
    if ((await findApiKeyOfBrand(em, brandId, keyId)) === null) throw new NotFoundError(`API key ${keyId} not found`);
    const now = ctx.clock();
    const revoked = await revokeApiKeyRow(em, brandId, keyId, now);
    const key = keyView((await findApiKeyOfBrand(em, brandId, keyId))!);
    if (revoked) await appendEvents(em, now, [keyEvent(key, brandId, 'api_key_revoked', actor)]);
    return key;
  });
}

/** A member of a brand as callers see one. */
export interface BrandMemberView {
  readonly userId: string;
  readonly email: string;
  readonly name: string;
  readonly role: string;
  readonly createdAt: Date;
}

const memberView = (m: BrandMemberRecord): BrandMemberView => ({ userId: m.userId, email: m.email, name: m.name, role: m.role, createdAt: m.createdAt });

const memberEvent = (
  brandId: string,
  eventType: 'brand_member_added' | 'brand_member_role_changed' | 'brand_member_removed',
  userId: string,
  actor: Actor,
  payload: Record<string, unknown>,
): NewEvent => ({ brandId, eventType, entityType: 'membership', entityId: userId, actor: actor.id, payload: { user_id: userId, ...payload } });

/** The brand's members with their roles and users, oldest membership first, keyset paged. */
export async function listBrandMembersOf(
  ctx: UseCaseContext,
  brandId: string,
  query: { readonly limit: number | null; readonly cursor: Cursor | null },
): Promise<Page<BrandMemberView>> {
  const size = resolvePageSize(query.limit, defaultWorkspaceAdminPageSize);
  const page = toPage(await listBrandMembersPage(unitOfWork(ctx.db), brandId, size + 1, query.cursor), size, (m) => ({ at: m.createdAt, id: m.userId }));
  return { ...page, items: page.items.map(memberView) };
}

const roleViolations = (role: string): FieldViolation[] => (isRole(role) ? [] : [{ field: 'role', message: `must be one of ${roles.join(', ')}` }]);
const emailPattern = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

/** Who {@link addBrandMember} adds: a known user by id, or a user by e-mail address (made when new). */
export interface NewBrandMember {
  readonly brandId: string;
  /** The user's id (their session tokens' subject); '' when `email` names them. */
  readonly userId: string;
  /** The user's address; '' when `userId` names them. */
  readonly email: string;
  /** Display name of a user made for a new address; the address when ''. */
  readonly name: string;
  readonly role: string;
}

/**
 * Gives a user a role on the brand. Exactly one of `userId` (an existing user) and `email` (an
 * unknown address makes the user, whose id a sign-in provider then puts in its tokens' `sub`).
 * A user who is already a member is a ConflictError naming their role (change it instead).
 */
export async function addBrandMember(ctx: UseCaseContext, actor: Actor, input: NewBrandMember): Promise<{ member: BrandMemberView; userCreated: boolean }> {
  const email = input.email.trim();
  const v: FieldViolation[] = [];
  if (input.userId === '' && email === '') v.push({ field: 'email', message: 'is required (or user_id): whom to add' });
  if (input.userId !== '' && email !== '') v.push({ field: 'user_id', message: 'cannot be combined with email: name the user one way' });
  if (input.userId !== '' && !isUuid(input.userId)) v.push({ field: 'user_id', message: 'must be a uuid' });
  if (email !== '' && !emailPattern.test(email)) v.push({ field: 'email', message: 'must be an e-mail address (name@example.com)' });
  v.push(...roleViolations(input.role));
  assertValid(v);
  return transaction(ctx.db, async (em) => {
    let user = input.userId !== '' ? await findUserById(em, input.userId) : await findUserByEmail(em, email);
    if (user === null && input.userId !== '') throw new NotFoundError(`user ${input.userId} not found: add them by e-mail address instead`);
    let userCreated = false;
    if (user === null) {
      const id = randomUUID();
      userCreated = await insertUserIfNew(em, { id, email, name: input.name.trim() === '' ? email : input.name.trim(), createdAt: ctx.clock() });
      user = userCreated ? { id, email, name: input.name } : await findUserByEmail(em, email);
    }
    if (!(await insertMembership(em, { brandId: input.brandId, userId: user!.id, role: input.role, createdAt: ctx.clock() }))) {
      const existing = await findBrandMember(em, input.brandId, user!.id);
      throw new ConflictError(`${user!.email} is already a member of this brand as ${existing?.role ?? 'a member'}: change their role instead`);
    }
    const member = memberView((await findBrandMember(em, input.brandId, user!.id))!);
    await appendEvents(em, ctx.clock(), [
      memberEvent(input.brandId, 'brand_member_added', member.userId, actor, { email: member.email, role: member.role, user_created: userCreated }),
    ]);
    return { member, userCreated };
  });
}

/** Loads a member and the brand's owner count under the brand's lock; NotFoundError when they are not a member. */
async function memberUnderLock(
  em: Parameters<typeof findBrandMember>[0],
  brandId: string,
  userId: string,
): Promise<{ member: BrandMemberRecord; owners: number }> {
  const owners = await countBrandOwnersLocked(em, brandId);
  const member = owners === null || !isUuid(userId) ? null : await findBrandMember(em, brandId, userId);
  if (member === null) throw new NotFoundError(`user ${userId} is not a member of this brand`);
  return { member, owners: owners! };
}

/**
 * Changes a member's role (compare-and-set on the role read). The brand's last owner keeps it
 * (IllegalStateError saying to make another member owner first); the same role changes nothing.
 */
export async function setBrandMemberRole(
  ctx: UseCaseContext,
  actor: Actor,
  input: { readonly brandId: string; readonly userId: string; readonly role: string },
): Promise<BrandMemberView> {
  assertValid(roleViolations(input.role));
  return transaction(ctx.db, async (em) => {
    const { member, owners } = await memberUnderLock(em, input.brandId, input.userId);
    if (member.role === input.role) return memberView(member);
    const refusal = lastOwnerRefusal(member.role as Role, input.role as Role, owners);
    if (refusal !== null) throw new IllegalStateError(refusal);
    if (!(await setMembershipRole(em, input.brandId, input.userId, member.role, input.role))) {
      throw new ConflictError(`the role of ${member.email} changed meanwhile; read the members again`);
    }
    await appendEvents(em, ctx.clock(), [
      memberEvent(input.brandId, 'brand_member_role_changed', member.userId, actor, { email: member.email, from: member.role, to: input.role }),
    ]);
    return memberView({ ...member, role: input.role });
  });
}

/** Removes a member from the brand (compare-and-set on the role read); the brand's last owner stays (IllegalStateError). */
export async function removeBrandMember(ctx: UseCaseContext, actor: Actor, input: { readonly brandId: string; readonly userId: string }): Promise<void> {
  await transaction(ctx.db, async (em) => {
    const { member, owners } = await memberUnderLock(em, input.brandId, input.userId);
    const refusal = lastOwnerRefusal(member.role as Role, null, owners);
    if (refusal !== null) throw new IllegalStateError(refusal);
    if (!(await deleteMembership(em, input.brandId, input.userId, member.role))) {
      throw new ConflictError(`the role of ${member.email} changed meanwhile; read the members again`);
    }
    await appendEvents(em, ctx.clock(), [memberEvent(input.brandId, 'brand_member_removed', member.userId, actor, { email: member.email, role: member.role })]);
  });
}
