import { sql } from 'kysely';
import type { Em } from '../orm.ts';
import { changed, first, rows } from './kysely.ts';

/**
 * Passports: drafts, published versions and access credentials. Every statement of drafts and
 * versions names its brand, so on Citus it is routed to the brand's shard; access keys are found
 * by lookup id (a reference table).
 */

/** The level a passport row is written at: a product, optionally a lot ('' otherwise) or one unit's serial ('' otherwise). */
export interface PassportKey {
  readonly brandId: string;
  readonly productId: string;
  readonly lot: string;
  readonly serial: string;
}

/** A stored draft. */
export interface PassportDraftRow {
  readonly content: Record<string, unknown>;
  readonly revision: number;
  readonly updatedBy: string;
  readonly updatedAt: Date;
}

/** A stored version. */
export interface PassportVersionRow {
  readonly id: string;
  readonly productId: string;
  readonly lot: string;
  readonly serial: string;
  readonly version: number;
  readonly content: Record<string, unknown>;
  readonly sha256: string;
  readonly publishedBy: string;
  readonly publishedAt: Date;
  readonly predecessorId: string | null;
  /** Its entry in the brand's status list (set by {@link insertPassportVersion}; -1 before). */
  readonly statusIndex: number;
}

const date = (v: string | Date): Date => (v instanceof Date ? v : new Date(v));
const json = (v: unknown): Record<string, unknown> => (typeof v === 'string' ? (JSON.parse(v) as Record<string, unknown>) : (v as Record<string, unknown>));

/** The draft of a level, or null when none was written. */
export async function findPassportDraft(em: Em, key: PassportKey): Promise<PassportDraftRow | null> {
  const row = await first(em, (db) =>
    db
      .selectFrom('passport_drafts')
      .select(['content', 'revision', 'updated_by', 'updated_at'])
      .where('brand_id', '=', key.brandId)
      .where('product_id', '=', key.productId)
      .where('lot', '=', key.lot)
      .where('serial', '=', key.serial),
  );
  return row === undefined ? null : { content: json(row.content), revision: row.revision, updatedBy: row.updated_by, updatedAt: date(row.updated_at) };
}

/**
 * Writes a level's draft. `expectedRevision` null: create or replace whatever is there; 0: create
 * only (none may exist); n: replace only revision n (compare-and-set). Resolves to the new
 * revision, or null when the expected revision was not the stored one.
 */
export async function savePassportDraft(
  em: Em,
  key: PassportKey,
  content: Record<string, unknown>,
  expectedRevision: number | null,
  actor: string,
  at: Date,
): Promise<number | null> {
  const text = JSON.stringify(content);
  if (expectedRevision !== null && expectedRevision > 0) {
    const updated = await first(em, (db) =>
      db
        .updateTable('passport_drafts')
        .set((eb) => ({ content: text, revision: eb('revision', '+', 1), updated_by: actor, updated_at: at }))
        .where('brand_id', '=', key.brandId)
        .where('product_id', '=', key.productId)
        .where('lot', '=', key.lot)
        .where('serial', '=', key.serial)
        .where('revision', '=', expectedRevision)
        .returning('revision'),
    );
    return updated?.revision ?? null;
  }
  const insert = (db: Parameters<Parameters<typeof first>[1]>[0]) =>
    db.insertInto('passport_drafts').values({
      brand_id: key.brandId,
      product_id: key.productId,
      lot: key.lot,
      serial: key.serial,
      content: text,
      revision: 1,
      updated_by: actor,
      updated_at: at,
    });
  const written = await first(em, (db) =>
    (expectedRevision === 0
      ? insert(db).onConflict((oc) => oc.columns(['brand_id', 'product_id', 'lot', 'serial']).doNothing())
      : insert(db).onConflict((oc) =>
          oc
            .columns(['brand_id', 'product_id', 'lot', 'serial'])
            .doUpdateSet((eb) => ({ content: text, revision: eb('passport_drafts.revision', '+', 1), updated_by: actor, updated_at: at })),
        )
    ).returning('revision'),
  );
  return written?.revision ?? null;
}

const versionColumns = [
  'id',
  'product_id',
  'lot',
  'serial',
  'version',
  'content',
  'sha256',
  'published_by',
  'published_at',
  'predecessor_id',
  'status_index',
] as const;
type VersionSelect = {
  id: string;
  product_id: string;
  lot: string;
  serial: string;
  version: number;
  content: unknown;
  sha256: string;
  published_by: string;
  published_at: string | Date;
  predecessor_id: string | null;
  status_index: number;
};
const toVersion = (r: VersionSelect): PassportVersionRow => ({
  id: r.id,
  productId: r.product_id,
  lot: r.lot,
  serial: r.serial,
  version: r.version,
  content: json(r.content),
  sha256: r.sha256,
  publishedBy: r.published_by,
  publishedAt: date(r.published_at),
  predecessorId: r.predecessor_id,
  statusIndex: r.status_index,
});

/** The latest published version of a level, or null when none was published. */
export async function latestPassportVersion(em: Em, key: PassportKey): Promise<PassportVersionRow | null> {
  const row = await first(em, (db) =>
    db
      .selectFrom('passport_versions')
      .select(versionColumns)
      .where('brand_id', '=', key.brandId)
      .where('product_id', '=', key.productId)
      .where('lot', '=', key.lot)
      .where('serial', '=', key.serial)
      .orderBy('version', 'desc')
      .limit(1),
  );
  return row === undefined ? null : toVersion(row);
}

/** Version `version` of a level, or null. */
export async function findPassportVersion(em: Em, key: PassportKey, version: number): Promise<PassportVersionRow | null> {
  const row = await first(em, (db) =>
    db
      .selectFrom('passport_versions')
      .select(versionColumns)
      .where('brand_id', '=', key.brandId)
      .where('product_id', '=', key.productId)
      .where('lot', '=', key.lot)
      .where('serial', '=', key.serial)
      .where('version', '=', version),
  );
  return row === undefined ? null : toVersion(row);
}

/** A page of a level's versions, newest first, below version `before` (none: from the latest). */
export async function listPassportVersions(em: Em, key: PassportKey, limit: number, before: number | null): Promise<PassportVersionRow[]> {
  const found = await rows(em, (db) => {
    let q = db
      .selectFrom('passport_versions')
      .select(versionColumns)
      .where('brand_id', '=', key.brandId)
      .where('product_id', '=', key.productId)
      .where('lot', '=', key.lot)
      .where('serial', '=', key.serial);
    if (before !== null) q = q.where('version', '<', before);
    return q.orderBy('version', 'desc').limit(limit);
  });
  return found.map(toVersion);
}

/**
 * Inserts a version with the brand's next status list entry; resolves to its entry, or null when
 * its number or entry is already taken (another publish won the race: the caller reports a lost
 * compare-and-set). Runs in the caller's transaction.
 */
export async function insertPassportVersion(em: Em, brandId: string, v: PassportVersionRow): Promise<number | null> {
  const next = await first(em, (db) =>
    db
      .selectFrom('passport_versions')
      .select((eb) => eb.fn.max('status_index').as('top'))
      .where('brand_id', '=', brandId),
  );
  const statusIndex = next?.top === null || next?.top === undefined ? 0 : Number(next.top) + 1;
  const n = await changed(em, (db) =>
    db
      .insertInto('passport_versions')
      .values({
        brand_id: brandId,
        id: v.id,
        product_id: v.productId,
        lot: v.lot,
        serial: v.serial,
        version: v.version,
        content: JSON.stringify(v.content),
        sha256: v.sha256,
        published_by: v.publishedBy,
        published_at: v.publishedAt,
        predecessor_id: v.predecessorId,
        status_index: statusIndex,
      })
      .onConflict((oc) => oc.doNothing()),
  );
  return n === 1 ? statusIndex : null;
}

/** The status list entries of the brand's superseded versions (those with a successor): the bits a status list sets. */
export async function supersededStatusIndexes(em: Em, brandId: string): Promise<number[]> {
  const found = await rows(em, (db) =>
    db
      .selectFrom('passport_versions as v')
      .select('v.status_index')
      .where('v.brand_id', '=', brandId)
      .where((eb) =>
        eb.exists(eb.selectFrom('passport_versions as n').select('n.id').where('n.brand_id', '=', brandId).whereRef('n.predecessor_id', '=', 'v.id')),
      ),
  );
  return found.map((r) => r.status_index);
}

/** The brand with this slug (id and name), for its status list; null when unknown. */
export async function findBrandBySlug(em: Em, slug: string): Promise<{ id: string; name: string } | null> {
  return (await first(em, (db) => db.selectFrom('brands').select(['id', 'name']).where('slug', '=', slug))) ?? null;
}

/** The brand with this id (slug and name), for the credentials signed at publish; null when unknown. */
export async function findBrandForPassport(em: Em, brandId: string): Promise<{ slug: string; name: string } | null> {
  return (await first(em, (db) => db.selectFrom('brands').select(['slug', 'name']).where('id', '=', brandId))) ?? null;
}

/** The lots of a product that have a published passport of their own (each lot once). */
export async function listPublishedPassportLots(em: Em, brandId: string, productId: string): Promise<string[]> {
  const found = await rows(em, (db) =>
    db
      .selectFrom('passport_versions')
      .select('lot')
      .distinct()
      .where('brand_id', '=', brandId)
      .where('product_id', '=', productId)
      .where('lot', '<>', '')
      .where('serial', '=', '')
      .orderBy('lot'),
  );
  return found.map((r) => r.lot);
}

/** A signing key as stored. */
export interface PassportSigningKeyRow {
  readonly kid: string;
  readonly publicJwk: Record<string, unknown>;
  readonly privateSealed: string;
  readonly createdAt: Date;
  readonly retiredAt: Date | null;
}

/** Every signing key, newest first. */
export async function listPassportSigningKeys(em: Em): Promise<PassportSigningKeyRow[]> {
  const found = await rows(em, (db) =>
    db
      .selectFrom('passport_signing_keys')
      .select(['kid', 'public_jwk', 'private_sealed', 'created_at', 'retired_at'])
      .orderBy('created_at', 'desc')
      .orderBy('kid', 'desc'),
  );
  return found.map((r) => ({
    kid: r.kid,
    publicJwk: json(r.public_jwk),
    privateSealed: r.private_sealed,
    createdAt: date(r.created_at),
    retiredAt: r.retired_at === null ? null : date(r.retired_at),
  }));
}

/** Stores a new signing key; with `retireOthers`, every other current key is retired at `at` (a rotation). */
export async function insertPassportSigningKey(em: Em, k: PassportSigningKeyRow, retireOthers: boolean): Promise<void> {
  if (retireOthers) await changed(em, (db) => db.updateTable('passport_signing_keys').set({ retired_at: k.createdAt }).where('retired_at', 'is', null));
  await changed(em, (db) =>
    db.insertInto('passport_signing_keys').values({
      kid: k.kid,
      public_jwk: JSON.stringify(k.publicJwk),
      private_sealed: k.privateSealed,
      created_at: k.createdAt,
      retired_at: null,
    }),
  );
}

/**
 * The latest published version of each of an item's levels, in one statement: the model's (lot
 * and serial ''), the lot's (`lot`, when not null) and the unit's (`serial`, when not null).
 */
export async function findPublishedPassportLevels(
  em: Em,
  brandId: string,
  productId: string,
  lot: string | null,
  serial: string | null,
): Promise<{ model: PassportVersionRow | null; lot: PassportVersionRow | null; unit: PassportVersionRow | null }> {
  const keys: [string, string][] = [['', '']];
  if (lot !== null && lot !== '') keys.push([lot, '']);
  if (serial !== null && serial !== '') keys.push(['', serial]);
  const found = await rows(em, (db) =>
    db
      .selectFrom('passport_versions')
      .select(versionColumns)
      .distinctOn(['lot', 'serial'])
      .where('brand_id', '=', brandId)
      .where('product_id', '=', productId)
      .where((eb) => eb.or(keys.map(([l, s]) => eb.and([eb('lot', '=', l), eb('serial', '=', s)]))))
      .orderBy('lot')
      .orderBy('serial')
      .orderBy('version', 'desc'),
  );
  const of = (l: string, s: string) => {
    const r = found.find((x) => x.lot === l && x.serial === s);
    return r === undefined ? null : toVersion(r);
  };
  return {
    model: of('', ''),
    lot: lot === null || lot === '' ? null : of(lot, ''),
    unit: serial === null || serial === '' ? null : of('', serial),
  };
}

/** The product of the brand with this id or GTIN-14, or null. */
export async function findPassportProduct(
  em: Em,
  brandId: string,
  by: { readonly id: string } | { readonly gtin: string },
): Promise<{ id: string; name: string; gtin: string | null } | null> {
  const row = await first(em, (db) => {
    const q = db.selectFrom('products').select(['id', 'name', 'gtin']).where('brand_id', '=', brandId);
    return 'id' in by ? q.where('id', '=', by.id) : q.where('gtin', '=', by.gtin);
  });
  return row ?? null;
}

/** A passport access credential as stored. */
export interface PassportAccessKeyRow {
  readonly id: string;
  readonly brandId: string;
  readonly name: string;
  readonly accessClass: string;
  readonly expiresAt: Date;
  readonly revokedAt: Date | null;
  readonly createdAt: Date;
}

const keyColumns = ['id', 'brand_id', 'name', 'access_class', 'expires_at', 'revoked_at', 'created_at'] as const;
const toKey = (r: {
  id: string;
  brand_id: string;
  name: string;
  access_class: string;
  expires_at: string | Date;
  revoked_at: string | Date | null;
  created_at: string | Date;
}): PassportAccessKeyRow => ({
  id: r.id,
  brandId: r.brand_id,
  name: r.name,
  accessClass: r.access_class,
  expiresAt: date(r.expires_at),
  revokedAt: r.revoked_at === null ? null : date(r.revoked_at),
  createdAt: date(r.created_at),
});

/** Stores a new access credential. */
export async function insertPassportAccessKey(
  em: Em,
  k: PassportAccessKeyRow & { readonly lookupId: string; readonly secretHash: string; readonly createdBy: string },
): Promise<void> {
  await changed(em, (db) =>
    db.insertInto('passport_access_keys').values({
      id: k.id,
      brand_id: k.brandId,
      lookup_id: k.lookupId,
      name: k.name,
      access_class: k.accessClass,
      secret_hash: k.secretHash,
      expires_at: k.expiresAt,
      revoked_at: null,
      created_by: k.createdBy,
      created_at: k.createdAt,
    }),
  );
}

/** The credential with this lookup id and its secret's hash, for authentication; null when unknown. */
export async function findPassportAccessKeyForAuth(em: Em, lookupId: string): Promise<(PassportAccessKeyRow & { readonly secretHash: string }) | null> {
  const row = await first(em, (db) =>
    db
      .selectFrom('passport_access_keys')
      .select([...keyColumns, 'secret_hash'])
      .where('lookup_id', '=', lookupId),
  );
  return row === undefined ? null : { ...toKey(row), secretHash: row.secret_hash };
}

/** The brand's access credentials, newest first (at most 1,000). */
export async function listPassportAccessKeys(em: Em, brandId: string): Promise<PassportAccessKeyRow[]> {
  const found = await rows(em, (db) =>
    db.selectFrom('passport_access_keys').select(keyColumns).where('brand_id', '=', brandId).orderBy('created_at', 'desc').orderBy('id', 'desc').limit(1_000),
  );
  return found.map(toKey);
}

/** Revokes the brand's credential at `at`; resolves to the credential (revoked now or before), or null when the brand has none with this id. */
export async function revokePassportAccessKey(em: Em, brandId: string, id: string, at: Date): Promise<PassportAccessKeyRow | null> {
  await changed(em, (db) =>
    db.updateTable('passport_access_keys').set({ revoked_at: at }).where('brand_id', '=', brandId).where('id', '=', id).where('revoked_at', 'is', null),
  );
  const row = await first(em, (db) => db.selectFrom('passport_access_keys').select(keyColumns).where('brand_id', '=', brandId).where('id', '=', id));
  return row === undefined ? null : toKey(row);
}

/**
 * Whether a product has any published passport version, and the serials of its units that have
 * one of their own (at most `maxUnits + 1` listed: beyond `maxUnits` the resolver asks per unit),
 * so a scan of a unit without one shares its product's cached levels.
 */
export async function passportPresence(
  em: Em,
  brandId: string,
  productId: string,
  maxUnits = 10_000,
): Promise<{ readonly any: boolean; readonly units: readonly string[] }> {
  const any = await first(em, (db) =>
    db.selectFrom('passport_versions').select('id').where('brand_id', '=', brandId).where('product_id', '=', productId).limit(1),
  );
  if (any === undefined) return { any: false, units: [] };
  const units = await rows(em, (db) =>
    db
      .selectFrom('passport_versions')
      .select('serial')
      .distinct()
      .where('brand_id', '=', brandId)
      .where('product_id', '=', productId)
      .where('serial', '<>', '')
      .limit(maxUnits + 1),
  );
  return { any: true, units: units.map((r) => r.serial) };
}

/** Sets the brand's passport page logo and colour (null: none); resolves to whether the brand exists. */
export async function updateBrandPassportStyle(em: Em, brandId: string, logoUrl: string | null, colour: string | null): Promise<boolean> {
  return (await changed(em, (db) => db.updateTable('brands').set({ passport_logo_url: logoUrl, passport_colour: colour }).where('id', '=', brandId))) === 1;
}

/**
 * Announces a published passport on the resolvers' link-change feed (`{brand_id} {gtin}`, or the
 * brand alone for a product without GTIN), at commit: every API replica forgets what it cached of
 * the product's answers, and a caching proxy in front is purged of them.
 */
export async function notifyPassportPublished(em: Em, brandId: string, gtin: string | null): Promise<void> {
  await rows(em, (db) => db.selectNoFrom(sql<string>`pg_notify('resolver_links', ${gtin === null ? brandId : `${brandId} ${gtin}`})::text`.as('notified')));
}
