// Passports: a product's content at three levels (model, lot, unit), edited as a draft and
// published into immutable, numbered versions; the credentials a brand issues for an access
// class; and the resolver's read of an item's published passport (inherited unit -> lot -> model,
// restricted sections only for a credential of their class, each such read audited).

import {
  appendEvents,
  passportPresence,
  findPassportAccessKeyForAuth,
  findPassportDraft,
  findPassportProduct,
  findPassportVersion,
  findPublishedPassportLevels,
  insertPassportAccessKey,
  insertPassportVersion,
  latestPassportVersion,
  listPassportAccessKeys,
  listPassportVersions as listVersionRows,
  revokePassportAccessKey as revokeKeyRow,
  savePassportDraft,
  updateBrandPassportStyle,
  notifyPassportPublished,
  findBrandForPassport,
  listPublishedPassportLots,
  type PassportAccessKeyRow,
  type PassportKey,
  type PassportVersionRow,
  unitOfWork,
  transaction,
} from '@mint/db';
import {
  assertValid,
  ConflictError,
  generateApiKey,
  hashApiKeySecret,
  IllegalStateError,
  inheritPassport,
  InvalidInputError,
  isUuid,
  normalizeGtin,
  NotFoundError,
  parseApiKey,
  passportDigest,
  passportKeyPrefix,
  passportKeyViolations,
  passportLevelOf,
  readPassportContent,
  restrictedPassportClasses,
  visiblePassport,
  type FieldViolation,
  type PassportAccessClass,
  type PassportContent,
  type PassportLevel,
  type PassportSection,
} from '@mint/domain';
import { randomUUID, timingSafeEqual } from 'node:crypto';
import type { Actor, UseCaseContext } from '../context.ts';

/** Names a passport level: a product of the brand, and a lot or a unit's serial of it (neither: the model). */
export interface PassportKeyInput {
  readonly brandId: string;
  readonly productId: string;
  /** Lot code (AI 10) of a lot's passport; null or '' otherwise. */
  readonly lot: string | null;
  /** Serial (AI 21) of a unit's passport; null or '' otherwise. */
  readonly serial: string | null;
}

/** A draft as the API shows it. */
export interface PassportDraftView {
  readonly content: PassportContent;
  readonly revision: number;
  readonly updatedBy: string;
  readonly updatedAt: Date;
}

/** A published version as the API shows it. */
export interface PassportVersionView {
  readonly id: string;
  readonly productId: string;
  readonly level: PassportLevel;
  readonly lot: string;
  readonly serial: string;
  readonly version: number;
  readonly content: PassportContent;
  /** Lower-case hex SHA-256 of the content's RFC 8785 canonical JSON. */
  readonly sha256: string;
  readonly publishedBy: string;
  readonly publishedAt: Date;
  /** The version this one superseded; null for version 1. */
  readonly predecessorId: string | null;
  /** Its entry in the brand's Bitstring Status List (revoked once a successor supersedes it). */
  readonly statusIndex: number;
}

/** A level's passport: its draft and latest version, either possibly absent. */
export interface PassportView {
  readonly productId: string;
  readonly level: PassportLevel;
  readonly lot: string;
  readonly serial: string;
  readonly draft: PassportDraftView | null;
  readonly latest: PassportVersionView | null;
}

const toVersionView = (v: PassportVersionRow): PassportVersionView => ({
  id: v.id,
  productId: v.productId,
  level: passportLevelOf(v.lot, v.serial),
  lot: v.lot,
  serial: v.serial,
  version: v.version,
  content: v.content as PassportContent,
  sha256: v.sha256,
  publishedBy: v.publishedBy,
  publishedAt: v.publishedAt,
  predecessorId: v.predecessorId,
  statusIndex: v.statusIndex,
});

/** Checks the key (naming each bad field) and that the product is the brand's (NotFound otherwise). */
async function keyOf(ctx: UseCaseContext, input: PassportKeyInput): Promise<PassportKey> {
  return (await keyAndGtinOf(ctx, input)).key;
}

/** {@link keyOf} with the product's GTIN (null for a product without one). */
async function keyAndGtinOf(ctx: UseCaseContext, input: PassportKeyInput): Promise<{ key: PassportKey; gtin: string | null }> {
  const lot = input.lot ?? '';
  const serial = input.serial ?? '';
  const v: FieldViolation[] = [];
  if (!isUuid(input.brandId)) v.push({ field: 'brand_id', message: 'must be a uuid' });
  if (!isUuid(input.productId)) v.push({ field: 'product_id', message: 'must be a uuid' });
  v.push(...passportKeyViolations(lot, serial));
  assertValid(v);
  const product = await findPassportProduct(unitOfWork(ctx.db), input.brandId, { id: input.productId });
  if (product === null) throw new NotFoundError(`product ${input.productId} not found`);
  return { key: { brandId: input.brandId, productId: input.productId, lot, serial }, gtin: product.gtin };
}

const entityOf = (key: PassportKey) => `${key.productId} ${key.lot} ${key.serial}`;

/** A level's draft and latest published version (both null when nothing was written); a product the brand does not have is NotFound. */
export async function getPassport(ctx: UseCaseContext, input: PassportKeyInput): Promise<PassportView> {
  const key = await keyOf(ctx, input);
  const em = unitOfWork(ctx.db);
  const [draft, latest] = await Promise.all([findPassportDraft(em, key), latestPassportVersion(em, key)]);
  return {
    productId: key.productId,
    level: passportLevelOf(key.lot, key.serial),
    lot: key.lot,
    serial: key.serial,
    draft: draft === null ? null : { ...draft, content: draft.content as PassportContent },
    latest: latest === null ? null : toVersionView(latest),
  };
}

/** An UpdatePassportDraft call. */
export interface UpdatePassportDraftInput extends PassportKeyInput {
  /** The whole content of the level (parsed JSON); replaces the draft's. */
  readonly content: unknown;
  /** The revision the edit was made on (a compare-and-set: Aborted when the draft moved on); 0: the draft must not exist yet; null: replace whatever is there. */
  readonly expectedRevision: number | null;
}

/**
 * Replaces a level's draft with `content`, checked field by field (every bad field named, nothing
 * written), with a `passport_draft_updated` event, in one transaction. Published versions are
 * untouched until the next publish.
 */
export async function updatePassportDraft(ctx: UseCaseContext, actor: Actor, input: UpdatePassportDraftInput): Promise<PassportDraftView> {
  const key = await keyOf(ctx, input);
  const read = readPassportContent(input.content);
  if ('violations' in read) throw new InvalidInputError(read.violations);
  if (input.expectedRevision !== null && (!Number.isInteger(input.expectedRevision) || input.expectedRevision < 0)) {
    throw new InvalidInputError([{ field: 'expected_revision', message: 'must be an integer of at least 0' }]);
  }
  const now = ctx.clock();
  return transaction(ctx.db, async (em) => {
    const revision = await savePassportDraft(em, key, read.content as Record<string, unknown>, input.expectedRevision, actor.id, now);
    if (revision === null) throw new ConflictError(`the passport draft is no longer at revision ${input.expectedRevision}; read it again`);
    await appendEvents(em, now, [
      {
        brandId: key.brandId,
        eventType: 'passport_draft_updated',
        entityType: 'passport',
        entityId: entityOf(key),
        actor: actor.id,
        payload: { product_id: key.productId, lot: key.lot, serial: key.serial, revision },
      },
    ]);
    return { content: read.content, revision, updatedBy: actor.id, updatedAt: now };
  });
}

/** What a publish did. */
export interface PublishPassportOutcome {
  readonly version: PassportVersionView;
  /** False when the draft was already the latest version (same digest): nothing was written. */
  readonly published: boolean;
}

/**
 * Publishes a level's draft as its next version: numbered latest + 1, with the SHA-256 of its
 * canonical JSON, the publisher, the time and the predecessor, and a `passport_published` event,
 * in one transaction. Safe to repeat: a draft whose digest is the latest version's publishes
 * nothing and answers that version. `expectedRevision` (optional) makes it a compare-and-set on
 * the draft. No draft is FailedPrecondition; a concurrent publish of the same level is Aborted.
 * Costs O(1) in the number of units: an item's passport is derived when it is read. The publish
 * is announced on the resolvers' link-change feed at commit, so every replica and a caching proxy
 * in front forget the product's answers.
 */
export async function publishPassport(
  ctx: UseCaseContext,
  actor: Actor,
  input: PassportKeyInput & { readonly expectedRevision?: number | null },
): Promise<PublishPassportOutcome> {
  const { key, gtin } = await keyAndGtinOf(ctx, input);
  const now = ctx.clock();
  return transaction(ctx.db, async (em) => {
    const draft = await findPassportDraft(em, key);
    if (draft === null) throw new IllegalStateError('the passport has no draft to publish; write one with UpdatePassportDraft first');
    if (input.expectedRevision != null && draft.revision !== input.expectedRevision) {
      throw new ConflictError(`the passport draft is at revision ${draft.revision}, not ${input.expectedRevision}`);
    }
    const content = draft.content as PassportContent;
    const sha256 = passportDigest(content);
    const latest = await latestPassportVersion(em, key);
    if (latest !== null && latest.sha256 === sha256) return { version: toVersionView(latest), published: false };
    const row: PassportVersionRow = {
      id: randomUUID(),
      productId: key.productId,
      lot: key.lot,
      serial: key.serial,
      version: (latest?.version ?? 0) + 1,
      content: draft.content,
      sha256,
      publishedBy: actor.id,
      publishedAt: now,
      predecessorId: latest?.id ?? null,
      statusIndex: -1,
    };
    const statusIndex = await insertPassportVersion(em, key.brandId, row);
    if (statusIndex === null) throw new ConflictError(`version ${row.version} of this passport was published concurrently`);
    await appendEvents(em, now, [
      {
        brandId: key.brandId,
        eventType: 'passport_published',
        entityType: 'passport',
        entityId: entityOf(key),
        actor: actor.id,
        payload: { product_id: key.productId, lot: key.lot, serial: key.serial, version: row.version, sha256, predecessor_id: row.predecessorId },
      },
    ]);
    await notifyPassportPublished(em, key.brandId, gtin);
    return { version: toVersionView({ ...row, statusIndex }), published: true };
  });
}

/** A page of versions, newest first. */
export interface PassportVersionPage {
  readonly versions: readonly PassportVersionView[];
  /** Pass as `before` for the next page; null on the last. */
  readonly nextBefore: number | null;
}

/** A level's published versions, newest first: `limit` 1..100 (default 20), below version `before` (none: from the latest). */
export async function listPassportVersions(
  ctx: UseCaseContext,
  input: PassportKeyInput & { readonly limit: number | null; readonly before: number | null },
): Promise<PassportVersionPage> {
  const v: FieldViolation[] = [];
  if (input.limit !== null && (!Number.isInteger(input.limit) || input.limit < 1 || input.limit > 100)) v.push({ field: 'limit', message: 'must be 1..100' });
  if (input.before !== null && (!Number.isInteger(input.before) || input.before < 1))
    v.push({ field: 'before', message: 'must be a version number of at least 1' });
  assertValid(v);
  const key = await keyOf(ctx, input);
  const limit = input.limit ?? 20;
  const found = await listVersionRows(unitOfWork(ctx.db), key, limit + 1, input.before);
  const page = found.slice(0, limit).map(toVersionView);
  return { versions: page, nextBefore: found.length > limit ? page[page.length - 1]!.version : null };
}

/** Version `version` of a level; NotFound when it was never published. */
export async function getPassportVersion(ctx: UseCaseContext, input: PassportKeyInput & { readonly version: number }): Promise<PassportVersionView> {
  assertValid(Number.isInteger(input.version) && input.version >= 1 ? [] : [{ field: 'version', message: 'must be a version number of at least 1' }]);
  const key = await keyOf(ctx, input);
  const found = await findPassportVersion(unitOfWork(ctx.db), key, input.version);
  if (found === null) throw new NotFoundError(`version ${input.version} of this passport not found`);
  return toVersionView(found);
}

/** One entry of a passport import: a level, named by product id or GTIN, and its content. */
export interface PassportImportEntry {
  readonly productId: string | null;
  readonly gtin: string | null;
  readonly lot: string | null;
  readonly serial: string | null;
  readonly content: unknown;
}

/** Largest number of entries of one import. */
export const maxPassportImportEntries = 1_000;

/**
 * Imports passport content (a JSON document of entries, each a level named by product id or GTIN
 * with its whole content) as drafts, and publishes each when `publish` is set: all or nothing in
 * one transaction; every bad entry is named (`entries[3].content.materials[0].massFraction`) and
 * nothing is written. Resolves to the drafts written and versions published (an entry whose
 * content is already its latest version publishes nothing).
 */
export async function importPassports(
  ctx: UseCaseContext,
  actor: Actor,
  input: { readonly brandId: string; readonly entries: readonly PassportImportEntry[]; readonly publish: boolean },
): Promise<{ readonly drafts: number; readonly published: number }> {
  const v: FieldViolation[] = [];
  if (!isUuid(input.brandId)) v.push({ field: 'brand_id', message: 'must be a uuid' });
  if (input.entries.length === 0 || input.entries.length > maxPassportImportEntries)
    v.push({ field: 'entries', message: `must have 1..${maxPassportImportEntries} entries` });
  assertValid(v);
  const em = unitOfWork(ctx.db);
  const keys: PassportKey[] = [];
  const contents: PassportContent[] = [];
  for (const [i, e] of input.entries.entries()) {
    const at = `entries[${i}]`;
    const lot = e.lot ?? '';
    const serial = e.serial ?? '';
    v.push(...passportKeyViolations(lot, serial).map((x) => ({ field: `${at}.${x.field}`, message: x.message })));
    let productId: string | null = null;
    if ((e.productId ?? '') !== '') {
      if (!isUuid(e.productId!)) v.push({ field: `${at}.product_id`, message: 'must be a uuid' });
      else productId = (await findPassportProduct(em, input.brandId, { id: e.productId! }))?.id ?? null;
      if (productId === null && isUuid(e.productId!)) v.push({ field: `${at}.product_id`, message: 'names no product of the brand' });
    } else if ((e.gtin ?? '') !== '') {
      const gtin = normalizeGtin(e.gtin!);
      if (gtin === null) v.push({ field: `${at}.gtin`, message: 'must be a GTIN-8, -12, -13 or -14 with a valid check digit' });
      else productId = (await findPassportProduct(em, input.brandId, { gtin }))?.id ?? null;
      if (gtin !== null && productId === null) v.push({ field: `${at}.gtin`, message: 'names no product of the brand' });
    } else {
      v.push({ field: `${at}.product_id`, message: 'an entry names its product by product_id or gtin' });
    }
    const read = readPassportContent(e.content, `${at}.content`);
    if ('violations' in read) v.push(...read.violations);
    else contents.push(read.content);
    if (productId !== null) keys.push({ brandId: input.brandId, productId, lot, serial });
  }
  const seen = new Set<string>();
  for (const [i, k] of keys.entries()) {
    const id = entityOf(k);
    if (seen.has(id)) v.push({ field: `entries[${i}]`, message: 'names a level another entry already names' });
    seen.add(id);
  }
  assertValid(v);
  const now = ctx.clock();
  return transaction(ctx.db, async (tx) => {
    let published = 0;
    for (const [i, key] of keys.entries()) {
      const revision = await savePassportDraft(tx, key, contents[i] as Record<string, unknown>, null, actor.id, now);
      await appendEvents(tx, now, [
        {
          brandId: key.brandId,
          eventType: 'passport_draft_updated',
          entityType: 'passport',
          entityId: entityOf(key),
          actor: actor.id,
          payload: { product_id: key.productId, lot: key.lot, serial: key.serial, revision },
        },
      ]);
      if (!input.publish) continue;
      const sha256 = passportDigest(contents[i]!);
      const latest = await latestPassportVersion(tx, key);
      if (latest !== null && latest.sha256 === sha256) continue;
      const row: PassportVersionRow = {
        id: randomUUID(),
        productId: key.productId,
        lot: key.lot,
        serial: key.serial,
        version: (latest?.version ?? 0) + 1,
        content: contents[i] as Record<string, unknown>,
        sha256,
        publishedBy: actor.id,
        publishedAt: now,
        predecessorId: latest?.id ?? null,
        statusIndex: -1,
      };
      if ((await insertPassportVersion(tx, key.brandId, row)) === null)
        throw new ConflictError(`entries[${i}]: version ${row.version} was published concurrently`);
      await appendEvents(tx, now, [
        {
          brandId: key.brandId,
          eventType: 'passport_published',
          entityType: 'passport',
          entityId: entityOf(key),
          actor: actor.id,
          payload: { product_id: key.productId, lot: key.lot, serial: key.serial, version: row.version, sha256, predecessor_id: row.predecessorId },
        },
      ]);
      published++;
      const product = await findPassportProduct(tx, key.brandId, { id: key.productId });
      await notifyPassportPublished(tx, key.brandId, product?.gtin ?? null);
    }
    return { drafts: keys.length, published };
  });
}

/** A passport access credential as the API shows it (never its secret). */
export interface PassportAccessKeyView {
  readonly id: string;
  readonly name: string;
  readonly accessClass: Exclude<PassportAccessClass, 'public'>;
  readonly expiresAt: Date;
  readonly revokedAt: Date | null;
  readonly createdAt: Date;
}

const toKeyView = (k: PassportAccessKeyRow): PassportAccessKeyView => ({
  id: k.id,
  name: k.name,
  accessClass: k.accessClass as PassportAccessKeyView['accessClass'],
  expiresAt: k.expiresAt,
  revokedAt: k.revokedAt,
  createdAt: k.createdAt,
});

/** Longest life of a passport access credential: one year. */
export const maxPassportKeyLifetimeMs = 366 * 86_400_000;

/**
 * Issues a credential for a passport access class (`legitimate_interest`: repairers, recyclers,
 * refurbishers; `authority`: market surveillance, customs) that expires at `expiresAt` (within a
 * year), with a `passport_access_key_issued` event. The key is returned once; only its hash is kept.
 */
export async function issuePassportAccessKey(
  ctx: UseCaseContext,
  actor: Actor,
  input: { readonly brandId: string; readonly name: string; readonly accessClass: string; readonly expiresAt: Date | null },
): Promise<{ readonly key: string; readonly credential: PassportAccessKeyView }> {
  const now = ctx.clock();
  const v: FieldViolation[] = [];
  if (!isUuid(input.brandId)) v.push({ field: 'brand_id', message: 'must be a uuid' });
  const name = input.name.trim();
  if (name === '' || name.length > 200) v.push({ field: 'name', message: 'must be 1..200 characters' });
  if (!(restrictedPassportClasses as readonly string[]).includes(input.accessClass))
    v.push({ field: 'access_class', message: `must be one of ${restrictedPassportClasses.join(', ')}` });
  if (input.expiresAt === null || input.expiresAt.getTime() <= now.getTime() || input.expiresAt.getTime() > now.getTime() + maxPassportKeyLifetimeMs) {
    v.push({ field: 'expires_at', message: 'must be in the future and within a year' });
  }
  assertValid(v);
  const generated = generateApiKey(ctx.randomFill, passportKeyPrefix);
  const row: PassportAccessKeyRow = {
    id: randomUUID(),
    brandId: input.brandId,
    name,
    accessClass: input.accessClass,
    expiresAt: input.expiresAt!,
    revokedAt: null,
    createdAt: now,
  };
  await transaction(ctx.db, async (em) => {
    await insertPassportAccessKey(em, { ...row, lookupId: generated.lookupId, secretHash: hashApiKeySecret(generated.secret), createdBy: actor.id });
    await appendEvents(em, now, [
      {
        brandId: input.brandId,
        eventType: 'passport_access_key_issued',
        entityType: 'passport_access_key',
        entityId: row.id,
        actor: actor.id,
        payload: { name, access_class: input.accessClass, expires_at: row.expiresAt.toISOString() },
      },
    ]);
  });
  return { key: generated.key, credential: toKeyView(row) };
}

/** Revokes a credential at once (safe to repeat: a revoked one stays revoked at its first time), with a `passport_access_key_revoked` event; NotFound for another brand's or an unknown id. */
export async function revokePassportAccessKey(
  ctx: UseCaseContext,
  actor: Actor,
  input: { readonly brandId: string; readonly id: string },
): Promise<PassportAccessKeyView> {
  const v: FieldViolation[] = [];
  if (!isUuid(input.brandId)) v.push({ field: 'brand_id', message: 'must be a uuid' });
  if (!isUuid(input.id)) v.push({ field: 'id', message: 'must be a uuid' });
  assertValid(v);
  const now = ctx.clock();
  return transaction(ctx.db, async (em) => {
    const row = await revokeKeyRow(em, input.brandId, input.id, now);
    if (row === null) throw new NotFoundError(`passport access key ${input.id} not found`);
    if (row.revokedAt !== null && row.revokedAt.getTime() === now.getTime()) {
      await appendEvents(em, now, [
        {
          brandId: input.brandId,
          eventType: 'passport_access_key_revoked',
          entityType: 'passport_access_key',
          entityId: row.id,
          actor: actor.id,
          payload: { name: row.name, access_class: row.accessClass },
        },
      ]);
    }
    return toKeyView(row);
  });
}

/** The brand's passport access credentials, newest first. */
export async function listPassportAccessKeysOf(ctx: UseCaseContext, brandId: string): Promise<PassportAccessKeyView[]> {
  assertValid(isUuid(brandId) ? [] : [{ field: 'brand_id', message: 'must be a uuid' }]);
  return (await listPassportAccessKeys(unitOfWork(ctx.db), brandId)).map(toKeyView);
}

/** A reader of restricted passport sections: the brand whose credential it holds and its class. */
export interface PassportReader {
  readonly brandId: string;
  readonly credentialId: string;
  readonly accessClass: Exclude<PassportAccessClass, 'public'>;
}

/**
 * The reader a presented passport credential makes, or null for anything else: malformed,
 * unknown, revoked and expired keys all read as the public (never an error: the public answer
 * is what they get).
 */
export async function passportReaderOf(ctx: UseCaseContext, key: string): Promise<PassportReader | null> {
  const parsed = parseApiKey(key, passportKeyPrefix);
  if (parsed === null) return null;
  const row = await findPassportAccessKeyForAuth(unitOfWork(ctx.db), parsed.lookupId);
  const expected = Buffer.from(row?.secretHash ?? '0'.repeat(64), 'hex');
  const actual = Buffer.from(hashApiKeySecret(parsed.secret), 'hex');
  if (row === null || expected.length !== actual.length || !timingSafeEqual(expected, actual)) return null;
  if (row.revokedAt !== null || row.expiresAt.getTime() <= ctx.clock().getTime()) return null;
  return { brandId: row.brandId, credentialId: row.id, accessClass: row.accessClass as PassportReader['accessClass'] };
}

/** An item's published passport as a reader sees it. */
export interface PublishedPassport {
  /** What the reader may see: restricted sections of classes it does not hold removed. */
  readonly content: PassportContent;
  /** The most specific level that has a published version (the one whose versions the answer names). */
  readonly level: PassportLevel;
  /** That level's version shown. */
  readonly version: PassportVersionView;
  /** That level's latest version (the same as `version` unless an earlier one was asked for). */
  readonly latestVersion: number;
  /** The versions of the other levels it inherits from (model, lot), for the record. */
  readonly inherited: readonly PassportVersionView[];
  /** Restricted sections shown to this reader (each such read is audited). */
  readonly restricted: readonly PassportSection[];
  /** Restricted sections withheld from this reader. */
  readonly withheld: readonly PassportSection[];
}

/** The input of a read of an item's published passport. */
export interface PublishedPassportInput {
  readonly brandId: string;
  readonly productId: string;
  /** The lot of the path (AI 10), when it names one. */
  readonly lot: string | null;
  /** The unit's serial, when the path names a unit. */
  readonly serial: string | null;
  /** An earlier version of the most specific published level (its own URL); null: the latest. */
  readonly version: number | null;
  readonly reader: PassportReader | null;
  /** How the answer is sent (html, json, ld+json, vc+jwt), for the audit event. */
  readonly representation: string;
}

/** The latest published versions of an item's levels. */
type Levels = Awaited<ReturnType<typeof findPublishedPassportLevels>>;

/**
 * An item's published passport (unit, then lot, then model, per section) as `reader` may see it;
 * null when no level has a published version (or `version` names none of the most specific level).
 * A reader of another brand reads as the public. When restricted sections are shown, a
 * `passport_restricted_read` event names the credential, the sections and the representation, in
 * its own transaction before the answer is sent.
 */
export async function readPublishedPassport(ctx: UseCaseContext, input: PublishedPassportInput): Promise<PublishedPassport | null> {
  const levels = await findPublishedPassportLevels(unitOfWork(ctx.db), input.brandId, input.productId, input.lot, input.serial);
  return passportOfLevels(ctx, input, levels);
}

/** The public latest passport of levels read once (kept while their levels are cached: the same object). */
const publicOfLevels = new WeakMap<Levels, PublishedPassport | null>();

function passportOfLevels(ctx: UseCaseContext, input: PublishedPassportInput, levels: Levels): PublishedPassport | null | Promise<PublishedPassport | null> {
  const granted = input.reader !== null && input.reader.brandId === input.brandId;
  if (input.version !== null || granted) return readPassportOfLevels(ctx, input, levels);
  // The public's latest passport writes no audit event and depends on the levels alone.
  const kept = publicOfLevels.get(levels);
  if (kept !== undefined) return kept;
  return readPassportOfLevels(ctx, input, levels).then((p) => {
    publicOfLevels.set(levels, p);
    return p;
  });
}

async function readPassportOfLevels(ctx: UseCaseContext, input: PublishedPassportInput, levels: Levels): Promise<PublishedPassport | null> {
  const em = unitOfWork(ctx.db);
  const latest = levels.unit ?? levels.lot ?? levels.model;
  if (latest === null) return null;
  // An earlier version of the most specific published level, at its own URL, inherits from the other levels' latest versions.
  const specific =
    input.version === null || input.version === latest.version
      ? latest
      : await findPassportVersion(em, { brandId: input.brandId, productId: input.productId, lot: latest.lot, serial: latest.serial }, input.version);
  if (specific === null) return null;
  const chain = [levels.unit, levels.lot, levels.model].map((l) => (l === latest ? specific : l));
  const item = inheritPassport(chain.map((l) => (l === null ? null : (l.content as PassportContent))));
  const granted = input.reader !== null && input.reader.brandId === input.brandId ? [input.reader.accessClass] : [];
  const visible = visiblePassport(item, granted);
  if (visible.restricted.length > 0 && input.reader !== null) {
    const now = ctx.clock();
    const key: PassportKey = { brandId: input.brandId, productId: input.productId, lot: specific.lot, serial: specific.serial };
    await appendEvents(em, now, [
      {
        brandId: input.brandId,
        eventType: 'passport_restricted_read',
        entityType: 'passport',
        entityId: entityOf(key),
        actor: input.reader.credentialId,
        payload: {
          product_id: input.productId,
          lot: input.lot ?? '',
          serial: input.serial ?? '',
          version: specific.version,
          access_class: input.reader.accessClass,
          credential_id: input.reader.credentialId,
          sections: visible.restricted,
          representation: input.representation,
        },
      },
    ]);
  }
  return {
    content: visible.content,
    level: passportLevelOf(specific.lot, specific.serial),
    version: toVersionView(specific),
    latestVersion: latest.version,
    inherited: [levels.lot, levels.model].filter((l): l is PassportVersionRow => l !== null && l !== latest).map(toVersionView),
    restricted: visible.restricted,
    withheld: visible.withheld,
  };
}

/** A product's published model and lot passports as the public reads them: what is signed at publish. */
export interface PublishedPassportHeads {
  readonly brand: { readonly slug: string; readonly name: string };
  readonly product: { readonly id: string; readonly name: string; readonly gtin: string };
  /** The model's passport (lot null) and each lot's with a version of its own, latest versions, public sections only. */
  readonly levels: readonly { readonly lot: string | null; readonly passport: PublishedPassport }[];
}

/**
 * The latest public model and lot passports of the brand's product with this GTIN (null when the
 * brand or GTIN is unknown or nothing is published): O(1) in the number of units (units are never
 * read), one read per lot with a passport of its own.
 */
export async function publishedPassportHeads(ctx: UseCaseContext, brandId: string, gtin: string): Promise<PublishedPassportHeads | null> {
  const em = unitOfWork(ctx.db);
  const [brand, product] = await Promise.all([findBrandForPassport(em, brandId), findPassportProduct(em, brandId, { gtin })]);
  if (brand === null || product === null || product.gtin === null) return null;
  const lots = await listPublishedPassportLots(em, brandId, product.id);
  const levels: { lot: string | null; passport: PublishedPassport }[] = [];
  for (const lot of [null, ...lots]) {
    const passport = await readPublishedPassport(ctx, {
      brandId,
      productId: product.id,
      lot,
      serial: null,
      version: null,
      reader: null,
      representation: 'vc+jwt',
    });
    if (passport !== null) levels.push({ lot, passport });
  }
  return levels.length === 0 ? null : { brand, product: { id: product.id, name: product.name, gtin: product.gtin }, levels };
}

/** What the resolver keeps of a product's passports: whether it has any, and which units have their own. */
interface Presence {
  readonly any: boolean;
  readonly units: ReadonlySet<string>;
  /** More units have their own than are listed: each unit is asked for. */
  readonly manyUnits: boolean;
}

/** Units with a passport of their own listed per product; beyond it each unit's levels are read on their own. */
const maxUnitList = 10_000;

/** The resolver's reads of published passports, cached; see {@link createPassportReads}. */
export interface PassportReads {
  /**
   * An item's published passport as its reader may see it (see {@link readPublishedPassport}).
   * Answers null synchronously when the product is known (cached) to have no published passport,
   * so a scan of a product without one costs no query.
   */
  read(input: PublishedPassportInput): PublishedPassport | null | Promise<PublishedPassport | null>;
  /** The reader a presented credential makes (see {@link passportReaderOf}). */
  readerOf(key: string): Promise<PassportReader | null>;
  /** Forgets what is cached of a product (this process publishes; other processes forget within `cacheMs`). */
  invalidate(brandId: string, productId: string): void;
  /** Forgets what is cached of a brand's products (a change on the link feed names a brand and GTIN, not a product). */
  invalidateBrand(brandId: string): void;
}

/**
 * Cached reads of published passports for the resolver: per product whether it has any published
 * version (and any at the unit level), and per item key the latest version of each level, each
 * kept at most `cacheMs` (default 1 s: a publish shows on every replica within a second; a
 * publish through this process shows at once). Versions themselves are immutable.
 */
export function createPassportReads(ctx: UseCaseContext, options: { readonly cacheMs?: number; readonly max?: number } = {}): PassportReads {
  const ttl = options.cacheMs ?? 1_000;
  const max = options.max ?? 10_000;
  const presence = new Map<string, { readonly value: Presence; readonly until: number }>();
  const levels = new Map<string, { readonly value: Levels; readonly until: number }>();
  const remember = <T>(map: Map<string, { value: T; until: number }>, key: string, value: T) => {
    if (map.size >= max) map.clear();
    map.set(key, { value, until: Date.now() + ttl });
    return value;
  };
  const levelsKey = (input: PublishedPassportInput, p: Presence) => {
    // A unit without a passport of its own shares its lot's (or product's) cached levels.
    const own = input.serial !== null && (p.manyUnits || p.units.has(input.serial));
    return { serial: own ? (input.serial ?? '') : '', key: `${input.brandId} ${input.productId} ${input.lot ?? ''} ${own ? (input.serial ?? '') : ''}` };
  };
  const levelsKept = (input: PublishedPassportInput, p: Presence): Levels | undefined => {
    const hit = levels.get(levelsKey(input, p).key);
    return hit !== undefined && hit.until > Date.now() ? hit.value : undefined;
  };
  const levelsOf = async (input: PublishedPassportInput, p: Presence): Promise<Levels> => {
    const { serial, key } = levelsKey(input, p);
    const found = await findPublishedPassportLevels(unitOfWork(ctx.db), input.brandId, input.productId, input.lot, serial === '' ? null : serial);
    return remember(levels, key, found);
  };
  const withPresence = (input: PublishedPassportInput, p: Presence): PublishedPassport | null | Promise<PublishedPassport | null> => {
    if (!p.any) return null;
    const kept = levelsKept(input, p);
    return kept === undefined ? levelsOf(input, p).then((l) => passportOfLevels(ctx, input, l)) : passportOfLevels(ctx, input, kept);
  };
  return {
    read(input) {
      const key = `${input.brandId} ${input.productId}`;
      const hit = presence.get(key);
      if (hit !== undefined && hit.until > Date.now()) return hit.value.any ? withPresence(input, hit.value) : null;
      return passportPresence(unitOfWork(ctx.db), input.brandId, input.productId, maxUnitList).then((p) =>
        withPresence(input, remember(presence, key, { any: p.any, units: new Set(p.units), manyUnits: p.units.length > maxUnitList })),
      );
    },
    readerOf: (key) => passportReaderOf(ctx, key),
    invalidate(brandId, productId) {
      presence.delete(`${brandId} ${productId}`);
      for (const key of levels.keys()) if (key.startsWith(`${brandId} ${productId} `)) levels.delete(key);
    },
    invalidateBrand(brandId) {
      for (const map of [presence, levels]) for (const key of map.keys()) if (key.startsWith(`${brandId} `)) map.delete(key);
    },
  };
}

/**
 * Sets the logo (an https URL) and colour (#rrggbb) the brand's hosted passport pages show, null
 * removing either, with a `passport_style_set` event; the resolver shows them within its brand
 * cache time (10 s).
 */
export async function setPassportStyle(
  ctx: UseCaseContext,
  actor: Actor,
  input: { readonly brandId: string; readonly logoUrl: string | null; readonly colour: string | null },
): Promise<{ readonly logoUrl: string | null; readonly colour: string | null }> {
  const v: FieldViolation[] = [];
  if (!isUuid(input.brandId)) v.push({ field: 'brand_id', message: 'must be a uuid' });
  if (input.logoUrl !== null) {
    let ok = false;
    try {
      ok = new URL(input.logoUrl).protocol === 'https:' && input.logoUrl.length <= 2_000 && /^[\x21-\x7e]+$/.test(input.logoUrl);
    } catch {
      ok = false;
    }
    if (!ok) v.push({ field: 'logo_url', message: 'must be an absolute https URL of at most 2000 ASCII characters' });
  }
  if (input.colour !== null && !/^#[0-9a-f]{6}$/i.test(input.colour)) v.push({ field: 'colour', message: 'must be a colour as #rrggbb' });
  assertValid(v);
  const now = ctx.clock();
  const colour = input.colour === null ? null : input.colour.toLowerCase();
  await transaction(ctx.db, async (em) => {
    if (!(await updateBrandPassportStyle(em, input.brandId, input.logoUrl, colour))) throw new NotFoundError(`brand ${input.brandId} not found`);
    await appendEvents(em, now, [
      {
        brandId: input.brandId,
        eventType: 'passport_style_set',
        entityType: 'brand',
        entityId: input.brandId,
        actor: actor.id,
        payload: { logo_url: input.logoUrl, colour },
      },
    ]);
  });
  return { logoUrl: input.logoUrl, colour };
}
