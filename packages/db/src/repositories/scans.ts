import { sql, type RawBuilder } from 'kysely';
import type { IngestRowError, IngestScan, ScanGroup } from '@mint/domain';
import type { Em } from '../orm.ts';
import { first, rawChanged, rawRows } from './kysely.ts';

/**
 * The scan ledger's ingest and reads. Every statement names one brand, so on Citus it is routed
 * to the brand's shard; the reads range over (brand_id, scanned_at) or walk one identity on
 * (brand_id, gtin, identifier, scanned_at).
 */

/** What an ingest call did (or, replayed, what the first call with the key did). */
export interface IngestOutcome {
  /** Rows written. */
  readonly accepted: number;
  /** Rows refused, with their index, field and reason. */
  readonly rejected: readonly IngestRowError[];
  /** True when the batch key was seen before: nothing was written this time. */
  readonly replayed: boolean;
  /** The scans written that named a serial or token, with what was found of its unit (for the scan rules); empty on a replay. */
  readonly unitScans: readonly WrittenUnitScan[];
}

/** A written scan of a serial or token, with the state of the unit it named. */
export interface WrittenUnitScan {
  /** False for a serial or token the brand never issued. */
  readonly unitKnown: boolean;
  /** The unit's status; null when not known. */
  readonly unitStatus: string | null;
  readonly outcome: string;
  readonly kind: string;
  readonly gtin: string | null;
  readonly identifier: string | null;
  readonly scannedAt: Date;
  readonly count: number;
  readonly country: string | null;
  readonly clientClass: string | null;
  /** The edge's visitor hash; null when none. */
  readonly visitor: string | null;
}

/**
 * Records a batch under `batchKey` and writes its valid `scans` in one transaction, each with the
 * state of the unit it names as of now (unit_known and unit_status, looked up by serial for serial
 * and token scans). A key seen before writes nothing and answers the first call's outcome; two
 * concurrent calls with one key are serialised on the batch row's primary key.
 */
export async function ingestScanBatch(
  em: Em, brandId: string, batchKey: string, scans: readonly IngestScan[], rejected: readonly IngestRowError[], now: Date,
): Promise<IngestOutcome> {
  return em.transactional(async (tx) => {
    const claimed = await rawChanged(tx, sql`
      insert into scan_ingest_batches (brand_id, batch_key, accepted, rejected, created_at)
      values (${brandId}, ${batchKey}, ${scans.length}, ${JSON.stringify(rejected)}, ${now.toISOString()})
      on conflict (brand_id, batch_key) do nothing`);
    if (claimed === 0) {
      const before = await first(tx, (db) => db.selectFrom('scan_ingest_batches').select(['accepted', 'rejected'])
        .where('brand_id', '=', brandId).where('batch_key', '=', batchKey));
      return { accepted: before?.accepted ?? 0, rejected: JSON.parse(before?.rejected ?? '[]') as IngestRowError[], replayed: true, unitScans: [] };
    }
    let unitScans: WrittenUnitScan[] = [];
    if (scans.length > 0) {
      const col = <T>(f: (s: IngestScan) => T) => scans.map(f);
      const written = await rawRows(tx, sql<{
        unit_known: boolean | null; unit_status: string | null; outcome: string; kind: string; gtin: string | null; identifier: string | null; scanned_at: string | Date; scans: number;
        country: string | null; client_class: string | null; visitor: string | null;
      }>`
        insert into scan_events (brand_id, scanned_at, kind, gtin, identifier, lot, outcome, representation, link_type, unit_known, unit_status,
                                 scans, country, client_class, visitor, source)
        select ${brandId}::uuid, s.scanned_at, s.kind, s.gtin, s.identifier, s.lot, s.outcome, s.representation, s.link_type,
               case when s.kind in ('serial', 'token') then u.status is not null end, u.status, s.scans, s.country, s.client_class, s.visitor, 'ingest'
          from unnest(${col((s) => s.scannedAt.toISOString())}::timestamptz[], ${col((s) => s.kind)}::text[], ${col((s) => s.gtin)}::text[],
                      ${col((s) => s.identifier)}::text[], ${col((s) => s.lot)}::text[], ${col((s) => s.outcome)}::text[],
                      ${col((s) => s.representation)}::text[], ${col((s) => s.linkType)}::text[], ${col((s) => s.count)}::int[],
                      ${col((s) => s.country)}::text[], ${col((s) => s.clientClass)}::text[], ${col((s) => s.visitor)}::text[])
               as s(scanned_at, kind, gtin, identifier, lot, outcome, representation, link_type, scans, country, client_class, visitor)
          left join (mint_units u join mint_batches b on b.brand_id = u.brand_id and b.id = u.mint_batch_id)
            on s.kind in ('serial', 'token') and u.brand_id = ${brandId}::uuid and u.serial = s.identifier and b.gtin is not distinct from s.gtin
        returning unit_known, unit_status, outcome, kind, gtin, identifier, scanned_at, scans, country, client_class, visitor`);
      unitScans = written.filter((r) => r.unit_known !== null).map((r) => ({
        unitKnown: r.unit_known!, unitStatus: r.unit_status, outcome: r.outcome, kind: r.kind, gtin: r.gtin, identifier: r.identifier, scannedAt: new Date(r.scanned_at), count: Number(r.scans), country: r.country, clientClass: r.client_class,
        visitor: r.visitor,
      }));
    }
    return { accepted: scans.length, rejected, replayed: false, unitScans };
  });
}

/**
 * Deletes up to `limit` ingest batch keys recorded before `before` (their scans are past retention
 * too); returns how many. A batch replayed after that is written again.
 */
export async function deleteScanIngestBatchesBefore(em: Em, before: Date, limit: number): Promise<number> {
  // Keys first, then one delete per brand: on Citus each delete is routed to one shard.
  const old = await rawRows(em, sql<{ brand_id: string; batch_key: string }>`
    select brand_id, batch_key from scan_ingest_batches where created_at < ${before.toISOString()}::timestamptz limit ${limit}`);
  const keys = new Map<string, string[]>();
  for (const r of old) keys.set(r.brand_id, [...(keys.get(r.brand_id) ?? []), r.batch_key]);
  let deleted = 0;
  for (const [brandId, batchKeys] of keys) {
    deleted += await rawChanged(em, sql`delete from scan_ingest_batches where brand_id = ${brandId}::uuid and batch_key = any(${batchKeys}::text[])`);
  }
  return deleted;
}

/** Filters of {@link scanStats}; each one set narrows the scans counted. */
export interface ScanStatsFilter {
  readonly brandId: string;
  /** Scans at or after this time. */
  readonly from: Date;
  /** Scans before this time. */
  readonly to: Date;
  readonly gtin?: string | null;
  readonly lot?: string | null;
  /** Mint batch of the scanned unit (serial and token scans only). */
  readonly batchId?: string | null;
  /** Serial or token of a unit. */
  readonly serial?: string | null;
  readonly country?: string | null;
  readonly clientClass?: string | null;
  /** False: only scans of serials the brand never issued; true: only of known units. */
  readonly unitKnown?: boolean | null;
}

/** One group of {@link scanStats}. */
export interface ScanStatsRow {
  /** The group's value: a day (YYYY-MM-DD, UTC), GTIN, batch id, lot, `{gtin} {serial}` of a unit, country or client class; '' for none. */
  readonly key: string;
  /** Scans (the rows' counts summed). */
  readonly scans: number;
  /** Scans of serials the brand never issued. */
  readonly neverIssued: number;
  /** Distinct visitor hashes of the group (meaningful within one day: salts rotate daily). */
  readonly visitors: number;
  /** First scan of the group in the range. */
  readonly firstAt: Date;
  /** Last scan of the group in the range. */
  readonly lastAt: Date;
}

/** Ordering of {@link scanStats}: by group key ascending, or by scans descending (top lists). */
export type ScanStatsOrder = 'key' | 'top';

/** Where the next page of {@link scanStats} starts: after this key (and, ordered by scans, this count). */
export interface ScanStatsCursor {
  readonly key: string;
  readonly scans: number;
}

/** The expression of a grouping, on scan_events `e` and its unit `u` (joined only when the batch is needed). */
function groupExpression(group: ScanGroup): RawBuilder<string> {
  switch (group) {
    case 'day': return sql<string>`to_char(e.scanned_at at time zone 'UTC', 'YYYY-MM-DD')`;
    case 'gtin': return sql<string>`coalesce(e.gtin, '')`;
    case 'batch': return sql<string>`coalesce(u.mint_batch_id::text, '')`;
    case 'lot': return sql<string>`coalesce(e.lot, '')`;
    case 'unit': return sql<string>`coalesce(e.gtin, '') || ' ' || e.identifier`;
    case 'country': return sql<string>`coalesce(e.country, '')`;
    case 'client_class': return sql<string>`coalesce(e.client_class, '')`;
  }
}

/**
 * Scans of a brand in [from, to) grouped by `group`, filtered, keyset paged: ordered by key, or
 * by scans descending then key (`top`), `limit` groups after `after`. Grouped by unit, only
 * serial and token scans count. One range scan of (brand_id, scanned_at); the batch grouping or
 * filter joins each unit scan to its unit by (brand_id, serial).
 */
export async function scanStats(
  em: Em, filter: ScanStatsFilter, group: ScanGroup, order: ScanStatsOrder, after: ScanStatsCursor | null, limit: number,
): Promise<ScanStatsRow[]> {
  const key = groupExpression(group);
  const joinUnit = group === 'batch' || (filter.batchId ?? null) !== null;
  const where: RawBuilder<unknown>[] = [
    sql`e.brand_id = ${filter.brandId}::uuid`, sql`e.scanned_at >= ${filter.from.toISOString()}::timestamptz`,
    sql`e.scanned_at < ${filter.to.toISOString()}::timestamptz`,
  ];
  if ((filter.gtin ?? null) !== null) where.push(sql`e.gtin = ${filter.gtin}`);
  if ((filter.lot ?? null) !== null) where.push(sql`e.lot = ${filter.lot}`);
  if ((filter.serial ?? null) !== null) where.push(sql`e.kind in ('serial', 'token') and e.identifier = ${filter.serial}`);
  if ((filter.country ?? null) !== null) where.push(sql`e.country = ${filter.country}`);
  if ((filter.clientClass ?? null) !== null) where.push(sql`e.client_class = ${filter.clientClass}`);
  if ((filter.unitKnown ?? null) !== null) where.push(sql`e.unit_known = ${filter.unitKnown}`);
  if ((filter.batchId ?? null) !== null) where.push(sql`u.mint_batch_id = ${filter.batchId}::uuid`);
  if (group === 'unit') where.push(sql`e.kind in ('serial', 'token') and e.identifier is not null`);
  const having = after === null ? sql`` : order === 'key'
    ? sql`having ${key} > ${after.key}`
    : sql`having (sum(e.scans) < ${after.scans} or (sum(e.scans) = ${after.scans} and ${key} > ${after.key}))`;
  const orderBy = order === 'key' ? sql`order by key` : sql`order by scans desc, key`;
  const found = await rawRows(em, sql<{ key: string; scans: string | number; never_issued: string | number; visitors: string | number; first_at: string | Date; last_at: string | Date }>`
    select ${key} as key, sum(e.scans) as scans, coalesce(sum(e.scans) filter (where e.unit_known = false), 0) as never_issued,
           count(distinct e.visitor) as visitors, min(e.scanned_at) as first_at, max(e.scanned_at) as last_at
      from scan_events e
      ${joinUnit ? sql`left join mint_units u on e.kind in ('serial', 'token') and u.brand_id = e.brand_id and u.serial = e.identifier` : sql``}
     where ${sql.join(where, sql` and `)}
     group by 1
     ${having}
     ${orderBy}
     limit ${limit}`);
  return found.map((r) => ({
    key: r.key, scans: Number(r.scans), neverIssued: Number(r.never_issued), visitors: Number(r.visitors),
    firstAt: new Date(r.first_at), lastAt: new Date(r.last_at),
  }));
}

/** One scan row of a unit, as {@link unitScans} lists it. */
export interface UnitScanRow {
  readonly id: string;
  readonly scannedAt: Date;
  readonly outcome: string;
  readonly representation: string;
  readonly linkType: string | null;
  readonly unitStatus: string | null;
  readonly country: string | null;
  readonly clientClass: string | null;
  readonly scans: number;
  readonly source: string;
}

/** A unit's scan summary and one page of its scans. */
export interface UnitScans {
  /** All scans of the unit (rows' counts summed). */
  readonly total: number;
  /** Its first scan; null when never scanned. */
  readonly firstAt: Date | null;
  /** Its last scan; null when never scanned. */
  readonly lastAt: Date | null;
  /** Distinct countries it was scanned from. */
  readonly countries: readonly string[];
  /** The page, newest first. */
  readonly scans: readonly UnitScanRow[];
}

/**
 * The scans of one unit (serial under `gtin`, or a token's unit when `gtin` is null), newest first
 * after the cursor (scanned_at, id), `limit` rows, with its totals, first and last scan: each an
 * index walk of (brand_id, gtin, identifier, scanned_at).
 */
export async function unitScans(
  em: Em, brandId: string, gtin: string | null, serial: string, after: { at: Date; id: string } | null, limit: number,
): Promise<UnitScans> {
  const identity = sql`e.brand_id = ${brandId}::uuid and ${gtin === null ? sql`e.gtin is null` : sql`e.gtin = ${gtin}`} and e.identifier = ${serial}
    and e.kind in ('serial', 'token')`;
  const [summary] = await rawRows(em, sql<{ total: string | number | null; first_at: string | Date | null; last_at: string | Date | null; countries: string[] | null }>`
    select sum(e.scans) as total, min(e.scanned_at) as first_at, max(e.scanned_at) as last_at,
           array_remove(array_agg(distinct e.country), null) as countries
      from scan_events e where ${identity}`);
  const page = await rawRows(em, sql<{
    id: string | number; scanned_at: string | Date; outcome: string; representation: string; link_type: string | null; unit_status: string | null;
    country: string | null; client_class: string | null; scans: number; source: string;
  }>`
    select e.id, e.scanned_at, e.outcome, e.representation, e.link_type, e.unit_status, e.country, e.client_class, e.scans, e.source
      from scan_events e
     where ${identity} ${after === null ? sql`` : sql`and (e.scanned_at, e.id) < (${after.at.toISOString()}::timestamptz, ${after.id}::bigint)`}
     order by e.scanned_at desc, e.id desc
     limit ${limit}`);
  return {
    total: Number(summary?.total ?? 0),
    firstAt: summary?.first_at == null ? null : new Date(summary.first_at),
    lastAt: summary?.last_at == null ? null : new Date(summary.last_at),
    countries: [...(summary?.countries ?? [])].sort(),
    scans: page.map((r) => ({
      id: String(r.id), scannedAt: new Date(r.scanned_at), outcome: r.outcome, representation: r.representation, linkType: r.link_type,
      unitStatus: r.unit_status, country: r.country, clientClass: r.client_class, scans: Number(r.scans), source: r.source,
    })),
  };
}
