import type { Cursor, UnitStatus } from '@mint/domain';
import type { Em } from '../orm.ts';
import { query } from './sql.ts';

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

interface UnitRow {
  id: string; mint_batch_id: string; seq: number; serial: string; resolver_url: string; status: UnitStatus;
  gtin: string | null; created_at: Date; activated_at: Date | null; product_sku: string | null;
}

/** The keyset predicate and its parameters, or nothing on the first page. */
function after(alias: string, column: string, cursor: Cursor | null): { sql: string; params: unknown[] } {
  return cursor === null
    ? { sql: '', params: [] }
    : { sql: ` and (${alias}.${column}, ${alias}.id) < (?::timestamptz, ?::uuid)`, params: [cursor.at, cursor.id] };
}

/**
 * Up to `take` units of the brand (of one batch when `mintBatchId` is set) strictly after `cursor`,
 * newest first by (created_at, id). The page is cut from the index first; the batch and product
 * are joined to the page only.
 */
export async function listUnits(em: Em, brandId: string, take: number, cursor: Cursor | null, mintBatchId: string | null): Promise<UnitRecord[]> {
  const page = after('u', 'created_at', cursor);
  const byBatch = mintBatchId === null ? { sql: '', params: [] } : { sql: ' and u.mint_batch_id = ?', params: [mintBatchId] };
  const rows = await query<UnitRow>(
    em,
    `select u.id, u.mint_batch_id, u.seq, u.serial, u.resolver_url, u.status, u.gtin, u.created_at, u.activated_at, p.sku as product_sku
     from (
       select * from mint_units u
       where u.brand_id = ?${byBatch.sql}${page.sql}
       order by u.created_at desc, u.id desc
       limit ?
     ) u
     left join mint_batches b on b.brand_id = u.brand_id and b.id = u.mint_batch_id
     left join products p on p.brand_id = b.brand_id and p.id = b.product_id
     order by u.created_at desc, u.id desc`,
    [brandId, ...byBatch.params, ...page.params, take],
  );
  return rows.map((r) => ({
    id: r.id, mintBatchId: r.mint_batch_id, seq: r.seq, serial: r.serial, resolverUrl: r.resolver_url, status: r.status,
    gtin: r.gtin, createdAt: new Date(r.created_at), activatedAt: r.activated_at === null ? null : new Date(r.activated_at),
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
  const page = after('e', 'occurred_at', cursor);
  const where: string[] = [];
  const params: unknown[] = [];
  if (filter.eventType !== null) { where.push(' and e.event_type = ?'); params.push(filter.eventType); }
  if (filter.entityType !== null) { where.push(' and e.entity_type = ?'); params.push(filter.entityType); }
  if (filter.entityId !== null) { where.push(' and e.entity_id = ?'); params.push(filter.entityId); }
  const rows = await query<{
    id: string; occurred_at: Date; event_type: string; entity_type: string; entity_id: string; payload: Record<string, unknown>; actor: string | null;
  }>(
    em,
    `select e.id, e.occurred_at, e.event_type, e.entity_type, e.entity_id, e.payload, e.actor
     from mint_events e
     where e.brand_id = ?${where.join('')}${page.sql}
     order by e.occurred_at desc, e.id desc
     limit ?`,
    [brandId, ...params, ...page.params, take],
  );
  return rows.map((r) => ({
    id: r.id, occurredAt: new Date(r.occurred_at), eventType: r.event_type, entityType: r.entity_type, entityId: r.entity_id,
    payload: typeof r.payload === 'string' ? (JSON.parse(r.payload) as Record<string, unknown>) : r.payload, actor: r.actor,
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
}

/** Up to `take` payload packs of the brand strictly after `cursor`, newest first by (created_at, id). */
export async function listPacks(em: Em, brandId: string, take: number, cursor: Cursor | null): Promise<PackRecord[]> {
  const page = after('k', 'created_at', cursor);
  const rows = await query<{
    id: string; brand_id: string; mint_batch_id: string; status: string; storage_path: string | null; unit_count: number | null;
    created_at: Date; updated_at: Date;
  }>(
    em,
    `select k.id, k.brand_id, k.mint_batch_id, k.status, k.storage_path, k.unit_count, k.created_at, k.updated_at
     from payload_packs k
     where k.brand_id = ?${page.sql}
     order by k.created_at desc, k.id desc
     limit ?`,
    [brandId, ...page.params, take],
  );
  return rows.map((r) => ({
    id: r.id, brandId: r.brand_id, mintBatchId: r.mint_batch_id, status: r.status, storagePath: r.storage_path, unitCount: r.unit_count,
    createdAt: new Date(r.created_at), updatedAt: new Date(r.updated_at),
  }));
}

/** A brand's dashboard counters. */
export interface KpiRecord {
  readonly totalTokensMinted: number;
  readonly activeTokens: number;
  readonly batchesCreated: number;
  readonly exportedPrinted: number;
}

/** The brand's counters row (one primary-key read); all zeros when the brand has none yet. */
export async function readKpis(em: Em, brandId: string): Promise<KpiRecord> {
  const [row] = await query<{ total_tokens_minted: string; active_tokens: string; batches_created: string; exported_printed: string }>(
    em,
    `select total_tokens_minted, active_tokens, batches_created, exported_printed from mint_kpis where brand_id = ?`,
    [brandId],
  );
  return {
    totalTokensMinted: Number(row?.total_tokens_minted ?? 0),
    activeTokens: Number(row?.active_tokens ?? 0),
    batchesCreated: Number(row?.batches_created ?? 0),
    exportedPrinted: Number(row?.exported_printed ?? 0),
  };
}
