import type { Em } from '../orm.ts';
import { changed, prepare, preparedRows } from './kysely.ts';

/**
 * The lookups of the authorization path, as plain queries: every authorized call makes them, and
 * the entity manager's findOne costs several times the query itself.
 */

/** The read of {@link findMembershipRole}, compiled once. */
const membershipRole = prepare('membership_role', (db, p: { brandId: string; userId: string }) =>
  db.selectFrom('memberships').select('role').where('brand_id', '=', p.brandId).where('user_id', '=', p.userId),
);

/** The user's role on the brand, or null; one primary-key read. */
export async function findMembershipRole(em: Em, brandId: string, userId: string): Promise<string | null> {
  const [row] = await preparedRows(em, membershipRole, { brandId, userId });
  return row?.role ?? null;
}

/** An API key as its verification needs it, with its workspace's early-access flag. */
export interface ApiKeyForAuth {
  readonly id: string;
  readonly brandId: string;
  readonly secretHash: string;
  readonly scopes: readonly string[];
  readonly revokedAt: Date | null;
  readonly lastUsedAt: Date | null;
  readonly apiAccessEnabled: boolean;
  /** The partner of a partner key; null for a brand key. */
  readonly partnerId: string | null;
}

/** The read of {@link findApiKeyForAuth}, compiled once. */
const apiKeyForAuth = prepare('api_key_for_auth', (db, p: { lookupId: string }) =>
  db
    .selectFrom('api_keys as k')
    .innerJoin('brands as b', 'b.id', 'k.brand_id')
    .select(['k.id', 'k.brand_id', 'k.secret_hash', 'k.scopes', 'k.revoked_at', 'k.last_used_at', 'b.api_access_enabled', 'k.partner_id'])
    .where('k.lookup_id', '=', p.lookupId),
);

/** The key with this lookup id, or null; one query. */
export async function findApiKeyForAuth(em: Em, lookupId: string): Promise<ApiKeyForAuth | null> {
  const [row] = await preparedRows(em, apiKeyForAuth, { lookupId });
  if (row === undefined) return null;
  const time = (value: Date | string | null) => (value === null || value instanceof Date ? value : new Date(value));
  return {
    id: row.id,
    brandId: row.brand_id,
    secretHash: row.secret_hash,
    scopes: row.scopes,
    revokedAt: time(row.revoked_at),
    lastUsedAt: time(row.last_used_at),
    apiAccessEnabled: row.api_access_enabled,
    partnerId: row.partner_id ?? null,
  };
}

/** Sets the key's last_used_at to `at` unless it is already `notBefore` or later (a concurrent call recorded it). */
export async function touchApiKey(em: Em, brandId: string, keyId: string, at: Date, notBefore: Date): Promise<void> {
  await changed(em, (db) =>
    db
      .updateTable('api_keys')
      .set({ last_used_at: at })
      .where('brand_id', '=', brandId)
      .where('id', '=', keyId)
      .where((eb) => eb.or([eb('last_used_at', 'is', null), eb('last_used_at', '<', notBefore)])),
  );
}

/** One brand workspace of a user, as {@link listMembershipsOfUser} reads it. */
export interface UserMembership {
  readonly brandId: string;
  readonly brandName: string;
  readonly brandSlug: string;
  readonly role: string;
}

/** The read of {@link listMembershipsOfUser}, compiled once. */
const membershipsOfUser = prepare('memberships_of_user', (db, p: { userId: string }) =>
  db
    .selectFrom('memberships as m')
    .innerJoin('brands as b', 'b.id', 'm.brand_id')
    .select(['m.brand_id as brandId', 'b.name as brandName', 'b.slug as brandSlug', 'm.role as role'])
    .where('m.user_id', '=', p.userId)
    .orderBy('b.name')
    .orderBy('m.brand_id'),
);

/** The brands the user is a member of with the role on each, by brand name then id (the memberships' user index). */
export async function listMembershipsOfUser(em: Em, userId: string): Promise<UserMembership[]> {
  return preparedRows(em, membershipsOfUser, { userId });
}
