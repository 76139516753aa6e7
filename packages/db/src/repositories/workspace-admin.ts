import type { Cursor } from '@mint/domain';
import type { Em } from '../orm.ts';
import { changed, first, rows } from './kysely.ts';

/**
 * A workspace's administration: its API keys (over the api_keys columns as they are) and its
 * members (memberships joined to users). Every change is a compare-and-set on the row's
 * current state, so a lost race shows as zero rows changed.
 */

const time = (value: string | Date | null): Date | null => (value === null ? null : new Date(value));
/** text[] as the driver returns it: an array, or `{a,b}` text when its type parser is unknown. */
const textArray = (value: string[] | string): string[] =>
  Array.isArray(value)
    ? value
    : value === '{}'
      ? []
      : value
          .slice(1, -1)
          .split(',')
          .map((s) => s.replace(/^"|"$/g, ''));

/** An API key without its secret hash. */
export interface ApiKeyRecord {
  readonly brandId: string;
  readonly id: string;
  readonly lookupId: string;
  readonly name: string;
  readonly scopes: readonly string[];
  readonly createdAt: Date;
  readonly revokedAt: Date | null;
  readonly lastUsedAt: Date | null;
}

type ApiKeyRow = {
  brand_id: string;
  id: string;
  lookup_id: string;
  name: string;
  scopes: string[] | string;
  created_at: string | Date;
  revoked_at: string | Date | null;
  last_used_at: string | Date | null;
};

const apiKeyColumns = ['brand_id', 'id', 'lookup_id', 'name', 'scopes', 'created_at', 'revoked_at', 'last_used_at'] as const;

function apiKey(r: ApiKeyRow): ApiKeyRecord {
  return {
    brandId: r.brand_id,
    id: r.id,
    lookupId: r.lookup_id,
    name: r.name,
    scopes: textArray(r.scopes),
    createdAt: new Date(r.created_at),
    revokedAt: time(r.revoked_at),
    lastUsedAt: time(r.last_used_at),
  };
}

/** Up to `take` of the brand's keys, newest first by (created_at, id), strictly after `cursor`. */
export async function listApiKeysPage(em: Em, brandId: string, take: number, cursor: Cursor | null): Promise<ApiKeyRecord[]> {
  return (
    await rows(em, (db) =>
      db
        .selectFrom('api_keys')
        .select(apiKeyColumns)
        .where('brand_id', '=', brandId)
        .$if(cursor !== null, (q) => q.where((eb) => eb(eb.refTuple('created_at', 'id'), '<', eb.tuple(cursor!.at, cursor!.id))))
        .orderBy('created_at', 'desc')
        .orderBy('id', 'desc')
        .limit(take),
    )
  ).map((r) => apiKey(r as ApiKeyRow));
}

/** One key of the brand, or null (another brand's key is null too). */
export async function findApiKeyOfBrand(em: Em, brandId: string, id: string): Promise<ApiKeyRecord | null> {
  const row = await first(em, (db) => db.selectFrom('api_keys').select(apiKeyColumns).where('brand_id', '=', brandId).where('id', '=', id));
  return row === undefined ? null : apiKey(row as ApiKeyRow);
}

/** Writes a new key (only the hash of its secret); a partner's key names its partner. */
export async function insertApiKey(
  em: Em,
  row: Omit<ApiKeyRecord, 'revokedAt' | 'lastUsedAt'> & { readonly secretHash: string; readonly partnerId?: string },
): Promise<void> {
  await changed(em, (db) =>
    db.insertInto('api_keys').values({
      brand_id: row.brandId,
      id: row.id,
      lookup_id: row.lookupId,
      name: row.name,
      secret_hash: row.secretHash,
      scopes: [...row.scopes],
      revoked_at: null,
      last_used_at: null,
      created_at: row.createdAt,
      ...(row.partnerId === undefined ? {} : { partner_id: row.partnerId }),
    }),
  );
}

/** Sets revoked_at of a key still in force (compare-and-set on `revoked_at IS NULL`); returns whether it changed. */
export async function revokeApiKeyRow(em: Em, brandId: string, id: string, at: Date): Promise<boolean> {
  return (
    (await changed(em, (db) =>
      db.updateTable('api_keys').set({ revoked_at: at }).where('brand_id', '=', brandId).where('id', '=', id).where('revoked_at', 'is', null),
    )) === 1
  );
}

/** Whether programmatic (API key) access of the brand is on; false for an unknown brand. */
export async function brandApiAccessEnabled(em: Em, brandId: string): Promise<boolean> {
  const row = await first(em, (db) => db.selectFrom('brands').select('api_access_enabled').where('id', '=', brandId));
  return row?.api_access_enabled ?? false;
}

/** A member of a brand: the membership with its user. */
export interface BrandMemberRecord {
  readonly brandId: string;
  readonly userId: string;
  readonly email: string;
  readonly name: string;
  readonly role: string;
  readonly createdAt: Date;
}

type MemberRow = { brand_id: string; user_id: string; email: string; name: string; role: string; created_at: string | Date };

function member(r: MemberRow): BrandMemberRecord {
  return { brandId: r.brand_id, userId: r.user_id, email: r.email, name: r.name, role: r.role, createdAt: new Date(r.created_at) };
}

/** Up to `take` of the brand's members, oldest membership first by (created_at, user_id), strictly after `cursor`. */
export async function listBrandMembersPage(em: Em, brandId: string, take: number, cursor: Cursor | null): Promise<BrandMemberRecord[]> {
  return (
    await rows(em, (db) =>
      db
        .selectFrom('memberships as m')
        .innerJoin('users as u', 'u.id', 'm.user_id')
        .select(['m.brand_id', 'm.user_id', 'u.email', 'u.name', 'm.role', 'm.created_at'])
        .where('m.brand_id', '=', brandId)
        .$if(cursor !== null, (q) => q.where((eb) => eb(eb.refTuple('m.created_at', 'm.user_id'), '>', eb.tuple(cursor!.at, cursor!.id))))
        .orderBy('m.created_at')
        .orderBy('m.user_id')
        .limit(take),
    )
  ).map((r) => member(r as MemberRow));
}

/** One member of the brand, or null. */
export async function findBrandMember(em: Em, brandId: string, userId: string): Promise<BrandMemberRecord | null> {
  const row = await first(em, (db) =>
    db
      .selectFrom('memberships as m')
      .innerJoin('users as u', 'u.id', 'm.user_id')
      .select(['m.brand_id', 'm.user_id', 'u.email', 'u.name', 'm.role', 'm.created_at'])
      .where('m.brand_id', '=', brandId)
      .where('m.user_id', '=', userId),
  );
  return row === undefined ? null : member(row as MemberRow);
}

/**
 * How many owners the brand has, counted under the brand row's lock (FOR NO KEY UPDATE, held to
 * the end of the transaction), so two changes racing to demote or remove the last two owners are
 * serialised; null when the brand does not exist.
 */
export async function countBrandOwnersLocked(em: Em, brandId: string): Promise<number | null> {
  const brand = await rows(em, (db) => db.selectFrom('brands').select('id').where('id', '=', brandId).forNoKeyUpdate());
  if (brand.length === 0) return null;
  const row = await first(em, (db) =>
    db
      .selectFrom('memberships')
      .select((eb) => eb.fn.countAll<string>().as('n'))
      .where('brand_id', '=', brandId)
      .where('role', '=', 'owner'),
  );
  return Number(row?.n ?? 0);
}

/** Writes a membership unless the user already has one on the brand; returns whether it was written. */
export async function insertMembership(em: Em, row: { brandId: string; userId: string; role: string; createdAt: Date }): Promise<boolean> {
  return (
    (await changed(em, (db) =>
      db
        .insertInto('memberships')
        .values({ brand_id: row.brandId, user_id: row.userId, role: row.role, created_at: row.createdAt })
        .onConflict((oc) => oc.columns(['brand_id', 'user_id']).doNothing()),
    )) === 1
  );
}

/** Moves a member's role from `expected` to `role` (compare-and-set); returns whether it changed. */
export async function setMembershipRole(em: Em, brandId: string, userId: string, expected: string, role: string): Promise<boolean> {
  return (
    (await changed(em, (db) =>
      db.updateTable('memberships').set({ role }).where('brand_id', '=', brandId).where('user_id', '=', userId).where('role', '=', expected),
    )) === 1
  );
}

/** Deletes a membership still holding `expected` (compare-and-set); returns whether it was deleted. */
export async function deleteMembership(em: Em, brandId: string, userId: string, expected: string): Promise<boolean> {
  return (
    (await changed(em, (db) => db.deleteFrom('memberships').where('brand_id', '=', brandId).where('user_id', '=', userId).where('role', '=', expected))) === 1
  );
}

/** A user as the membership screens need one. */
export interface UserRecord {
  readonly id: string;
  readonly email: string;
  readonly name: string;
}

/** The user with this id, or null. */
export async function findUserById(em: Em, id: string): Promise<UserRecord | null> {
  return (await first(em, (db) => db.selectFrom('users').select(['id', 'email', 'name']).where('id', '=', id))) ?? null;
}

/** The user with this e-mail address (compared without regard to case), or null. */
export async function findUserByEmail(em: Em, email: string): Promise<UserRecord | null> {
  return (
    (await first(em, (db) =>
      db
        .selectFrom('users')
        .select(['id', 'email', 'name'])
        .where((eb) => eb(eb.fn('lower', ['email']), '=', email.toLowerCase()))
        .orderBy('created_at')
        .limit(1),
    )) ?? null
  );
}

/** Writes a user unless the address is taken (`users_email_unique`); returns whether it was written. */
export async function insertUserIfNew(em: Em, row: { id: string; email: string; name: string; createdAt: Date }): Promise<boolean> {
  return (
    (await changed(em, (db) =>
      db
        .insertInto('users')
        .values({ id: row.id, email: row.email, name: row.name, created_at: row.createdAt })
        .onConflict((oc) => oc.column('email').doNothing()),
    )) === 1
  );
}
