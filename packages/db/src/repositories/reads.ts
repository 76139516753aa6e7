import { unitKeyOfId, unitResolverUrl, type Cursor, type UnitStatus } from '@mint/domain';
import { sql } from 'kysely';
import type { StoredPackProfile } from '../entities/activity.ts';
import type { Em } from '../orm.ts';
import { prepare, preparedRows, rows } from './kysely.ts';
import { unitKeysOfSerialsSql } from './serial-keys.ts';
import { unitIdOfRow } from './units.ts';

/**
 * Keyset reads of the list operations. Every list is newest first by (time, id) descending and
 * continues strictly after the cursor, so rows inserted while a client pages never shift or repeat
 * the rows that existed when it started. Each query reads at most `take` index entries of the
 * brand's (brand_id, time, id) index before joining, whatever the depth of the cursor.
 */

/** A unit as the read side shows it, with the SKU of its batch's product (null when the product is gone). */
export interface UnitRecord {
  readonly id: string;
  readonly mintBatchId: string;
  readonly seq: number;
  readonly serial: string;
  readonly resolverUrl: string;
  readonly status: UnitStatus;
  readonly gtin: string | null;
  readonly createdAt: Date;
  readonly activatedAt: Date | null;
  readonly productSku: string | null;
}

/** Optional parts of a unit read: one serial, or a batch's units in seq order above `afterSeq`. */
export interface UnitListOptions {
  readonly serial?: string | null;
  readonly afterSeq?: number | null;
}

/**
 * Up to `take` units of the brand (of one batch when `mintBatchId` is set) strictly after `cursor`,
 * newest first by (created_at, id); with `afterSeq` (and a batch), those above that seq in seq
 * order, read from the (brand_id, mint_batch_id, seq) primary key; with `serial`, only that unit
 * (the (brand_id, serial) unique index). The page is cut from the index first; the batch and
 * product are joined to the page only, and give each unit its GTIN and resolver URL (the batch's, as
 * every unit's was written).
 *
 * The order compares columns, never a derived id: (created_at, id) for units that store their id,
 * (created_at, mint_batch_id, seq) for units whose id is derived, which is the same order as their
 * ids (unitIdOf keeps a batch's id bytes and puts the seq last). Units of both kinds sharing a
 * created_at (a batch minted before ids were derived, written in the same millisecond as a new
 * one) list the stored ids first.
 *
 * A cursor at a unit with a derived id continues inside its chunk from the primary key: the units
 * after it at the same created_at are its batch's lower seqs (a chunk is a run of seqs sharing one
 * created_at), so the next `take` of them are a window of `take` seqs below the cursor's, a read of
 * `take` index entries. Only a page that reaches the start of the cursor's chunk (or a page without
 * a cursor, or after a unit minted before) continues from the (brand_id[, mint_batch_id],
 * created_at) index, which holds no id: its range comes in created_at order and the tie-break sorts
 * one chunk's units (incremental sort), however deep the cursor and however many units the brand has.
 */
export async function listUnits(
  em: Em,
  brandId: string,
  take: number,
  cursor: Cursor | null,
  mintBatchId: string | null,
  options: UnitListOptions = {},
): Promise<UnitRecord[]> {
  const afterSeq = options.afterSeq ?? null;
  const serial = options.serial ?? null;
  if (afterSeq !== null && mintBatchId !== null) return unitPage(em, brandId, take, { kind: 'seq', afterSeq }, mintBatchId, serial);
  if (cursor === null) return unitPage(em, brandId, take, { kind: 'first' }, mintBatchId, serial);
  const key = unitKeyOfId(cursor.id);
  if (key !== null && serial === null && (mintBatchId === null || mintBatchId === key.mintBatchId)) {
    // One statement in the common case: the window, empty when the cursor's id is a stored one.
    const seqFrom = Math.max(key.seq - take, 0);
    const inChunk = await unitPage(
      em,
      brandId,
      take,
      { kind: 'window', at: cursor.at, cursorId: cursor.id, mintBatchId: key.mintBatchId, seqFrom, seqBelow: key.seq },
      mintBatchId,
      null,
    );
    if (inChunk.length === take) return inChunk;
    if (inChunk.length === 0 && (await isStoredId(em, brandId, cursor.id)))
      return unitPage(em, brandId, take, { kind: 'stored', at: cursor.at, id: cursor.id }, mintBatchId, null);
    // The chunk's start is within the window: the rest comes after the window's bottom.
    const rest = await unitPage(
      em,
      brandId,
      take - inChunk.length,
      { kind: 'derived', at: cursor.at, mintBatchId: key.mintBatchId, seq: seqFrom },
      mintBatchId,
      null,
    );
    return [...inChunk, ...rest];
  }
  if (key === null || (await isStoredId(em, brandId, cursor.id)))
    return unitPage(em, brandId, take, { kind: 'stored', at: cursor.at, id: cursor.id }, mintBatchId, serial);
  return unitPage(em, brandId, take, { kind: 'derived', at: cursor.at, mintBatchId: key.mintBatchId, seq: key.seq }, mintBatchId, serial);
}

/**
 * Whether `id` is a unit's stored id (its partial index, one probe): a version 8 id of a batch
 * minted before ids were derived decodes like a derived one (unitKeyOfId), but is stored.
 */
async function isStoredId(em: Em, brandId: string, id: string): Promise<boolean> {
  const stored = await rows(em, (db) =>
    db.selectFrom('mint_units').select('seq').where('brand_id', '=', brandId).where('id', '=', id).where('id', 'is not', null).limit(1),
  );
  return stored.length > 0;
}

/** Where a page starts. */
type PageStart =
  | { readonly kind: 'first' }
  /** A batch's units above a seq, in seq order. */
  | { readonly kind: 'seq'; readonly afterSeq: number }
  /** After a unit with a stored id. */
  | { readonly kind: 'stored'; readonly at: Date; readonly id: string }
  /** After the unit (batch, seq) with a derived id. */
  | { readonly kind: 'derived'; readonly at: Date; readonly mintBatchId: string; readonly seq: number }
  /**
   * The units with derived ids of one chunk's window: created_at `at`, seqFrom <= seq < seqBelow;
   * none when `cursorId` is a stored id (a cursor at a unit minted before).
   */
  | {
      readonly kind: 'window';
      readonly at: Date;
      readonly cursorId: string;
      readonly mintBatchId: string;
      readonly seqFrom: number;
      readonly seqBelow: number;
    };

/** Newest first: created_at, then stored ids, then derived ids as (batch, seq). */
const newestFirst = sql`created_at desc, id desc nulls last, mint_batch_id desc, seq desc`;

async function unitPage(em: Em, brandId: string, take: number, start: PageStart, mintBatchId: string | null, serial: string | null): Promise<UnitRecord[]> {
  // A serial filter names at most one unit: decoded first (unitKeysOfSerialsSql), then its primary key.
  const serialKeys = serial === null ? null : await unitKeysOfSerialsSql(em, brandId, [serial]);
  const found = await rows(em, (db) => {
    const page = db
      .selectFrom('mint_units as u')
      .selectAll('u')
      .where('u.brand_id', '=', brandId)
      .$if(mintBatchId !== null, (q) => q.where('u.mint_batch_id', '=', mintBatchId!))
      .$if(serialKeys !== null, (q) =>
        q.where(sql<boolean>`(u.mint_batch_id, u.seq, u.serial) in (select k.mint_batch_id, k.seq, k.serial from ${serialKeys!} as k)`),
      )
      .$call((q) => {
        switch (start.kind) {
          case 'first':
            return q;
          case 'seq':
            return q.where('u.seq', '>', start.afterSeq);
          case 'stored':
            return q
              .where('u.created_at', '<=', start.at)
              .where(sql<boolean>`(u.created_at < ${start.at}::timestamptz or u.id < ${start.id}::uuid or u.id is null)`);
          case 'derived':
            return q
              .where('u.created_at', '<=', start.at)
              .where(
                sql<boolean>`(u.created_at < ${start.at}::timestamptz or (u.id is null and (u.mint_batch_id, u.seq) < (${start.mintBatchId}::uuid, ${start.seq}::int)))`,
              );
          case 'window':
            return q
              .where('u.mint_batch_id', '=', start.mintBatchId)
              .where('u.seq', '>=', start.seqFrom)
              .where('u.seq', '<', start.seqBelow)
              .where('u.created_at', '=', start.at)
              .where('u.id', 'is', null)
              .where(
                sql<boolean>`not exists (select 1 from mint_units s where s.brand_id = ${brandId}::uuid and s.id = ${start.cursorId}::uuid and s.id is not null)`,
              );
        }
      })
      .orderBy(start.kind === 'seq' ? sql`seq asc` : start.kind === 'window' ? sql`seq desc` : newestFirst)
      .limit(take);
    return db
      .selectFrom(page.as('u'))
      .leftJoin('mint_batches as b', (join) => join.onRef('b.brand_id', '=', 'u.brand_id').onRef('b.id', '=', 'u.mint_batch_id'))
      .leftJoin('products as p', (join) => join.onRef('p.brand_id', '=', 'b.brand_id').onRef('p.id', '=', 'b.product_id'))
      .select([
        'u.id',
        'u.mint_batch_id',
        'u.seq',
        'u.serial',
        'u.status',
        'b.gtin',
        'b.resolver_base_url',
        'u.created_at',
        'u.activated_at',
        'p.sku as product_sku',
      ])
      .orderBy(
        start.kind === 'seq'
          ? sql`u.seq asc`
          : start.kind === 'window'
            ? sql`u.seq desc`
            : sql`u.created_at desc, u.id desc nulls last, u.mint_batch_id desc, u.seq desc`,
      );
  });
  return found.map((r) => ({
    id: unitIdOfRow(r),
    mintBatchId: r.mint_batch_id,
    seq: r.seq,
    serial: r.serial,
    resolverUrl: unitResolverUrl(r.resolver_base_url ?? '', r.gtin, r.serial),
    status: r.status as UnitStatus,
    gtin: r.gtin,
    createdAt: new Date(r.created_at),
    activatedAt: r.activated_at === null ? null : new Date(r.activated_at),
    productSku: r.product_sku,
  }));
}

/** An audit event as the read side shows it. */
export interface EventRecord {
  readonly id: string;
  readonly occurredAt: Date;
  readonly eventType: string;
  readonly entityType: string;
  readonly entityId: string;
  readonly payload: Record<string, unknown>;
  /** User or API key id; null for the executor. */
  readonly actor: string | null;
}

/** Optional equality filters of the event list. */
export interface EventFilter {
  readonly eventType: string | null;
  readonly entityType: string | null;
  readonly entityId: string | null;
}

/**
 * Up to `take` events of the brand matching `filter` strictly after `cursor`, newest first by
 * (occurred_at, id). event_type and entity_id filters use their own (brand_id, x, occurred_at, id)
 * index; entity_type alone filters the brand's index.
 */
export async function listEvents(em: Em, brandId: string, take: number, cursor: Cursor | null, filter: EventFilter): Promise<EventRecord[]> {
  const found = await rows(em, (db) =>
    db
      .selectFrom('mint_events as e')
      .select(['e.id', 'e.occurred_at', 'e.event_type', 'e.entity_type', 'e.entity_id', 'e.payload', 'e.actor'])
      .where('e.brand_id', '=', brandId)
      .$if(filter.eventType !== null, (q) => q.where('e.event_type', '=', filter.eventType!))
      .$if(filter.entityType !== null, (q) => q.where('e.entity_type', '=', filter.entityType!))
      .$if(filter.entityId !== null, (q) => q.where('e.entity_id', '=', filter.entityId!))
      .$if(cursor !== null, (q) => q.where((eb) => eb(eb.refTuple('e.occurred_at', 'e.id'), '<', eb.tuple(cursor!.at, cursor!.id))))
      .orderBy('e.occurred_at', 'desc')
      .orderBy('e.id', 'desc')
      .limit(take),
  );
  return found.map((r) => ({
    id: r.id,
    occurredAt: new Date(r.occurred_at),
    eventType: r.event_type,
    entityType: r.entity_type,
    entityId: r.entity_id,
    payload: typeof r.payload === 'string' ? (JSON.parse(r.payload) as Record<string, unknown>) : r.payload,
    actor: r.actor,
  }));
}

/** A payload pack as the read side shows it: its relative storage path, never a URL. */
export interface PackRecord {
  readonly id: string;
  readonly brandId: string;
  readonly mintBatchId: string;
  /** pending, generating, ready or failed. */
  readonly status: string;
  /** Path inside the private store; null while pending. */
  readonly storagePath: string | null;
  /** Units written once ready. */
  readonly unitCount: number | null;
  readonly createdAt: Date;
  readonly updatedAt: Date;
  /** Formats, unit range, symbology and layout. */
  readonly profile: StoredPackProfile;
  /** completion, request or void. */
  readonly purpose: string;
}

/** The brand's pack as listed, or null when it does not exist for the brand. */
export async function findPackRecord(em: Em, brandId: string, packId: string): Promise<PackRecord | null> {
  const found = await rows(em, (db) =>
    db
      .selectFrom('payload_packs as k')
      .select(['k.id', 'k.brand_id', 'k.mint_batch_id', 'k.status', 'k.storage_path', 'k.unit_count', 'k.created_at', 'k.updated_at', 'k.profile', 'k.purpose'])
      .where('k.brand_id', '=', brandId)
      .where('k.id', '=', packId),
  );
  return found.length === 0 ? null : toPackRecord(found[0]!);
}

type PackRow = {
  id: string;
  brand_id: string;
  mint_batch_id: string;
  status: string;
  storage_path: string | null;
  unit_count: number | null;
  created_at: string | Date;
  updated_at: string | Date;
  profile: unknown;
  purpose: string;
};
const toPackRecord = (r: PackRow): PackRecord => ({
  id: r.id,
  brandId: r.brand_id,
  mintBatchId: r.mint_batch_id,
  status: r.status,
  storagePath: r.storage_path,
  unitCount: r.unit_count,
  createdAt: new Date(r.created_at),
  updatedAt: new Date(r.updated_at),
  profile: r.profile as StoredPackProfile,
  purpose: r.purpose,
});

/**
 * Up to `take` payload packs of the brand strictly after `cursor`, newest first by (created_at, id),
 * only those of `mintBatchId` when given: a range read of the (brand_id, mint_batch_id, created_at, id)
 * index, however many packs the brand's other batches have.
 */
export async function listPacks(em: Em, brandId: string, take: number, cursor: Cursor | null, mintBatchId: string | null = null): Promise<PackRecord[]> {
  const found = await rows(em, (db) =>
    db
      .selectFrom('payload_packs as k')
      .select(['k.id', 'k.brand_id', 'k.mint_batch_id', 'k.status', 'k.storage_path', 'k.unit_count', 'k.created_at', 'k.updated_at', 'k.profile', 'k.purpose'])
      .where('k.brand_id', '=', brandId)
      .$if(mintBatchId !== null, (q) => q.where('k.mint_batch_id', '=', mintBatchId!))
      .$if(cursor !== null, (q) => q.where((eb) => eb(eb.refTuple('k.created_at', 'k.id'), '<', eb.tuple(cursor!.at, cursor!.id))))
      .orderBy('k.created_at', 'desc')
      .orderBy('k.id', 'desc')
      .limit(take),
  );
  return found.map(toPackRecord);
}

/** A brand's dashboard counters. */
export interface KpiRecord {
  readonly totalTokensMinted: number;
  readonly activeTokens: number;
  readonly batchesCreated: number;
  readonly exportedPrinted: number;
}

/** The read of {@link readKpis}, compiled once: every dashboard load and GetMintKpis makes it. */
const kpiSums = prepare('mint_kpis_sums', (db, p: { brandId: string }) =>
  db
    .selectFrom('mint_kpis')
    .select((eb) => [
      eb.fn.sum<string>('total_tokens_minted').as('total_tokens_minted'),
      eb.fn.sum<string>('active_tokens').as('active_tokens'),
      eb.fn.sum<string>('batches_created').as('batches_created'),
      eb.fn.sum<string>('exported_printed').as('exported_printed'),
    ])
    .where('brand_id', '=', p.brandId),
);

/** The brand's counters: the sums over its shard rows (one primary-key range read); all zeros when the brand has none yet. */
export async function readKpis(em: Em, brandId: string): Promise<KpiRecord> {
  const [row] = await preparedRows(em, kpiSums, { brandId });
  return {
    totalTokensMinted: Number(row?.total_tokens_minted ?? 0),
    activeTokens: Number(row?.active_tokens ?? 0),
    batchesCreated: Number(row?.batches_created ?? 0),
    exportedPrinted: Number(row?.exported_printed ?? 0),
  };
}
