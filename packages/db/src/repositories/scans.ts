import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { sql, type RawBuilder } from 'kysely';
import pg from 'pg';
import { from as copyFrom } from 'pg-copy-streams';
import type { IngestRowError, IngestScan, ScanGroup } from '@mint/domain';
import type { Em } from '../orm.ts';
import { rawChanged, rawRows } from './kysely.ts';
import { rolledUpDays, rollupWhere, scanBatch, scanUnitJoin, utcDay } from './scan-retention.ts';
import { serialKeyArrays, unitKeysOfSerialsText } from './serial-keys.ts';

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

/** One small pool per server for the ingest's COPY (the ORM's connections cannot stream one). */
const ingestPools = new Map<string, pg.Pool>();
function ingestPool(em: Em): pg.Pool {
  const url = em.config.get('clientUrl') as string;
  let pool = ingestPools.get(url);
  if (pool === undefined) {
    pool = new pg.Pool({ connectionString: url, max: 2, idleTimeoutMillis: 5_000, allowExitOnIdle: true, application_name: 'minting-scan-ingest' });
    pool.on('error', () => undefined);
    ingestPools.set(url, pool);
  }
  return pool;
}

/** A value as a field of COPY's text format: `\N` for null, backslash, tab, newline and carriage return escaped. */
function copyField(value: string | null): string {
  if (value === null) return '\\N';
  return /[\\\t\n\r]/.test(value) ? value.replace(/[\\\t\n\r]/g, (c) => (c === '\\' ? '\\\\' : c === '\t' ? '\\t' : c === '\n' ? '\\n' : '\\r')) : value;
}

const ingestColumns =
  'brand_id, scanned_at, kind, gtin, identifier, lot, outcome, representation, link_type, unit_known, unit_status, scans, country, client_class, visitor, source, mint_batch_id';

/**
 * Records a batch under `batchKey` and writes its valid `scans` in one transaction, each with the
 * state of the unit it names as of now (unit_known and unit_status: the batch's distinct serials
 * looked up in one query, for serial and token scans). A key seen before writes nothing and
 * answers the first call's outcome; two concurrent calls with one key are serialised on the batch
 * row's primary key. The rows go in with COPY FROM STDIN on a connection of the ingest's own:
 * measured per batch of 10,000 scans, ~0.78 s as one INSERT ... SELECT FROM unnest joined to the
 * units with RETURNING, ~0.76 s with the lookup apart and no RETURNING, ~0.44 s as the lookup and
 * a COPY (a bare COPY of the rows: ~0.3-0.36 s). Building the COPY text by concatenation, and the
 * claim, the days and the lookup in one statement, took ~0.2 s more off a batch.
 */
export async function ingestScanBatch(
  em: Em,
  brandId: string,
  batchKey: string,
  scans: readonly IngestScan[],
  rejected: readonly IngestRowError[],
  now: Date,
): Promise<IngestOutcome> {
  const client = await ingestPool(em).connect();
  let failed = false;
  try {
    await client.query('begin');
    // One round trip: claim the key; when claimed, note the batch's days (a day rolled up already
    // is rolled up again with these scans) and read the units its distinct serials name.
    const serials = [...new Set(scans.filter((s) => (s.kind === 'serial' || s.kind === 'token') && s.identifier !== null).map((s) => s.identifier!))];
    const days = [...new Set(scans.map((s) => Math.floor(s.scannedAt.getTime() / 86_400_000)))].map((d) => utcDay(d * 86_400_000));
    // Encoded serials decoded first: their units are read by (batch ordinal, seq), the others
    // through the stored serials' partial index (unitKeysOfSerialsText).
    const keys = await serialKeyArrays(em, brandId, serials);
    const found = await client.query<{ what: string; serial: string | null; gtin: string | null; status: string | null; mint_batch_id: string | null }>(
      `
      with claim as (
        insert into scan_ingest_batches (brand_id, batch_key, accepted, rejected, created_at) values ($1, $2, $3, $4, $5)
        on conflict (brand_id, batch_key) do nothing returning 1),
      marked as (
        insert into scan_rollup_days (brand_id, day, version, rolled_version) select $1::uuid, d.day, 1, 0 from unnest($6::date[]) as d(day)
         where exists (select 1 from claim)
        on conflict (brand_id, day) do update set version = scan_rollup_days.version + 1 returning 1)
      select 'claim' as what, null as serial, null as gtin, null as status, null::uuid as mint_batch_id from claim
      union all
      select 'unit', u.serial, b.gtin, u.status, u.mint_batch_id from ${unitKeysOfSerialsText('$1', '$7', '$8', '$9')} k
        join mint_units u on u.brand_id = $1 and u.mint_batch_id = k.mint_batch_id and u.seq = k.seq and u.serial = k.serial
        join mint_batches b on b.brand_id = u.brand_id and b.id = u.mint_batch_id
       where exists (select 1 from claim)`,
      [brandId, batchKey, scans.length, JSON.stringify(rejected), now.toISOString(), days, keys.serials, keys.ordinals, keys.seqs],
    );
    if (!found.rows.some((r) => r.what === 'claim')) {
      const before = (
        await client.query<{ accepted: number; rejected: string }>(
          'select accepted, rejected from scan_ingest_batches where brand_id = $1 and batch_key = $2',
          [brandId, batchKey],
        )
      ).rows[0];
      await client.query('commit');
      return { accepted: before?.accepted ?? 0, rejected: JSON.parse(before?.rejected ?? '[]') as IngestRowError[], replayed: true, unitScans: [] };
    }
    const units = new Map<string, { gtin: string | null; status: string; batch: string }>();
    for (const u of found.rows) if (u.what === 'unit') units.set(u.serial!, { gtin: u.gtin, status: u.status!, batch: u.mint_batch_id! });
    const unitScans: WrittenUnitScan[] = [];
    if (scans.length > 0) {
      // COPY's text rows, concatenated: the enumerated and validated fields (kind, GTIN digits,
      // outcome, representation, country, class, visitor hash) need no escaping.
      let text = '';
      const prefix = `${brandId}\t`;
      for (const s of scans) {
        const isUnit = s.kind === 'serial' || s.kind === 'token';
        const unit = isUnit && s.identifier !== null ? units.get(s.identifier) : undefined;
        const known = unit !== undefined && unit.gtin === s.gtin;
        const status = known ? unit.status : null;
        text +=
          `${prefix}${s.scannedAt.toISOString()}\t${s.kind}\t${s.gtin ?? '\\N'}\t${copyField(s.identifier)}\t${copyField(s.lot)}\t${s.outcome}\t${s.representation}\t` +
          `${copyField(s.linkType)}\t${isUnit ? (known ? 't' : 'f') : '\\N'}\t${status ?? '\\N'}\t${s.count}\t${s.country ?? '\\N'}\t${s.clientClass ?? '\\N'}\t` +
          `${s.visitor ?? '\\N'}\tingest\t${known ? unit.batch : '\\N'}\n`;
        if (isUnit) {
          unitScans.push({
            unitKnown: known,
            unitStatus: status,
            outcome: s.outcome,
            kind: s.kind,
            gtin: s.gtin,
            identifier: s.identifier,
            scannedAt: s.scannedAt,
            count: s.count,
            country: s.country,
            clientClass: s.clientClass,
            visitor: s.visitor,
          });
        }
      }
      await pipeline(Readable.from([text]), client.query(copyFrom(`copy scan_events (${ingestColumns}) from stdin`)));
    }
    await client.query('commit');
    return { accepted: scans.length, rejected, replayed: false, unitScans };
  } catch (error) {
    failed = true;
    await client.query('rollback').catch(() => undefined);
    throw error;
  } finally {
    client.release(failed);
  }
}

/**
 * Deletes up to `limit` ingest batch keys recorded before `before` (their scans are past retention
 * too); returns how many. A batch replayed after that is written again.
 */
export async function deleteScanIngestBatchesBefore(em: Em, before: Date, limit: number): Promise<number> {
  // Keys first, then one delete per brand: on Citus each delete is routed to one shard.
  const old = await rawRows(
    em,
    sql<{ brand_id: string; batch_key: string }>`
    select brand_id, batch_key from scan_ingest_batches where created_at < ${before.toISOString()}::timestamptz limit ${limit}`,
  );
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
    case 'day':
      return sql<string>`to_char(e.scanned_at at time zone 'UTC', 'YYYY-MM-DD')`;
    case 'gtin':
      return sql<string>`coalesce(e.gtin, '')`;
    case 'batch':
      return sql<string>`coalesce(${scanBatch}::text, '')`;
    case 'lot':
      return sql<string>`coalesce(e.lot, '')`;
    case 'unit':
      return sql<string>`coalesce(e.gtin, '') || ' ' || e.identifier`;
    case 'country':
      return sql<string>`coalesce(e.country, '')`;
    case 'client_class':
      return sql<string>`coalesce(e.client_class, '')`;
  }
}

/** The expression of a grouping on rollups `r`; null for the unit grouping, which rollups do not hold. */
function rollupGroupExpression(group: ScanGroup): RawBuilder<string> | null {
  switch (group) {
    case 'day':
      return sql<string>`to_char(r.day, 'YYYY-MM-DD')`;
    case 'gtin':
      return sql<string>`r.gtin`;
    case 'batch':
      return sql<string>`r.mint_batch_id`;
    case 'lot':
      return sql<string>`r.lot`;
    case 'unit':
      return null;
    case 'country':
      return sql<string>`r.country`;
    case 'client_class':
      return sql<string>`r.client_class`;
  }
}

const dayMs = 86_400_000;

/**
 * Scans of a brand in [from, to) grouped by `group`, filtered, keyset paged: ordered by key, or
 * by scans descending then key (`top`), `limit` groups after `after`. Whole UTC days whose rollup
 * is current are read from `scan_daily_rollups` (so past the raw scans' retention too); the rest of
 * the range (today, a day rolled up again after a late scan, the partial days at either end) from
 * the raw scans, a range scan of (brand_id, scanned_at) on the days' partitions. Grouped by unit or
 * filtered by serial, only raw scans answer (rollups hold no unit). Visitors: a raw range counts
 * distinct visitor hashes; a rolled-up day adds its cells' distinct visitors, so one visitor who
 * scanned two products (or lots, batches) that day counts in each. Hashes never repeat across days,
 * so over many days both are sums of days.
 */
export async function scanStats(
  em: Em,
  filter: ScanStatsFilter,
  group: ScanGroup,
  order: ScanStatsOrder,
  after: ScanStatsCursor | null,
  limit: number,
): Promise<ScanStatsRow[]> {
  const rollupKey = (filter.serial ?? null) === null ? rollupGroupExpression(group) : null;
  const firstWholeDay = utcDay(Math.ceil(filter.from.getTime() / dayMs) * dayMs);
  const endDay = utcDay(filter.to);
  const rolled = rollupKey === null || firstWholeDay >= endDay ? [] : await rolledUpDays(em, filter.brandId, firstWholeDay, endDay);
  // The raw ranges: [from, to) less the rolled-up days.
  const ranges: [Date, Date][] = [];
  let cursor = filter.from;
  for (const day of rolled) {
    const start = new Date(`${day}T00:00:00Z`);
    if (start > cursor) ranges.push([cursor, start]);
    cursor = new Date(start.getTime() + dayMs);
  }
  if (cursor < filter.to) ranges.push([cursor, filter.to]);

  const parts: RawBuilder<unknown>[] = [];
  if (ranges.length > 0) {
    const key = groupExpression(group);
    const joinUnit = group === 'batch' || (filter.batchId ?? null) !== null;
    const where: RawBuilder<unknown>[] = [
      sql`e.brand_id = ${filter.brandId}::uuid`,
      sql`(${sql.join(
        ranges.map(([a, b]) => sql`(e.scanned_at >= ${a.toISOString()}::timestamptz and e.scanned_at < ${b.toISOString()}::timestamptz)`),
        sql` or `,
      )})`,
    ];
    if ((filter.gtin ?? null) !== null) where.push(sql`e.gtin = ${filter.gtin}`);
    if ((filter.lot ?? null) !== null) where.push(sql`e.lot = ${filter.lot}`);
    if ((filter.serial ?? null) !== null) where.push(sql`e.kind in ('serial', 'token') and e.identifier = ${filter.serial}`);
    if ((filter.country ?? null) !== null) where.push(sql`e.country = ${filter.country}`);
    if ((filter.clientClass ?? null) !== null) where.push(sql`e.client_class = ${filter.clientClass}`);
    if ((filter.unitKnown ?? null) !== null) where.push(sql`e.unit_known = ${filter.unitKnown}`);
    if ((filter.batchId ?? null) !== null) where.push(sql`${scanBatch} = ${filter.batchId}::uuid`);
    if (group === 'unit') where.push(sql`e.kind in ('serial', 'token') and e.identifier is not null`);
    parts.push(sql`
      select ${key} as key, sum(e.scans) as scans, coalesce(sum(e.scans) filter (where e.unit_known = false), 0) as never_issued,
             count(distinct e.visitor) as visitors, min(e.scanned_at) as first_at, max(e.scanned_at) as last_at
        from scan_events e
        ${joinUnit ? scanUnitJoin : sql``}
       where ${sql.join(where, sql` and `)}
       group by 1`);
  }
  if (rollupKey !== null && rolled.length > 0) {
    parts.push(sql`
      select ${rollupKey} as key, sum(r.scans) as scans, sum(r.never_issued) as never_issued, sum(r.visitors) as visitors,
             min(r.first_at) as first_at, max(r.last_at) as last_at
        from scan_daily_rollups r
       where ${sql.join(rollupWhere(filter.brandId, rolled, filter), sql` and `)}
       group by 1`);
  }
  const having =
    after === null
      ? sql``
      : order === 'key'
        ? sql`having g.key > ${after.key}`
        : sql`having (sum(g.scans) < ${after.scans} or (sum(g.scans) = ${after.scans} and g.key > ${after.key}))`;
  const orderBy = order === 'key' ? sql`order by key` : sql`order by scans desc, key`;
  const found = await rawRows(
    em,
    sql<{ key: string; scans: string | number; never_issued: string | number; visitors: string | number; first_at: string | Date; last_at: string | Date }>`
    select g.key, sum(g.scans) as scans, sum(g.never_issued) as never_issued, sum(g.visitors) as visitors, min(g.first_at) as first_at, max(g.last_at) as last_at
      from (${sql.join(parts, sql` union all `)}) g
     group by g.key
     ${having}
     ${orderBy}
     limit ${limit}`,
  );
  return found.map((r) => ({
    key: r.key,
    scans: Number(r.scans),
    neverIssued: Number(r.never_issued),
    visitors: Number(r.visitors),
    firstAt: new Date(r.first_at),
    lastAt: new Date(r.last_at),
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
  em: Em,
  brandId: string,
  gtin: string | null,
  serial: string,
  after: { at: Date; id: string } | null,
  limit: number,
): Promise<UnitScans> {
  const identity = sql`e.brand_id = ${brandId}::uuid and ${gtin === null ? sql`e.gtin is null` : sql`e.gtin = ${gtin}`} and e.identifier = ${serial}
    and e.kind in ('serial', 'token')`;
  const [summary] = await rawRows(
    em,
    sql<{ total: string | number | null; first_at: string | Date | null; last_at: string | Date | null; countries: string[] | null }>`
    select sum(e.scans) as total, min(e.scanned_at) as first_at, max(e.scanned_at) as last_at,
           array_remove(array_agg(distinct e.country), null) as countries
      from scan_events e where ${identity}`,
  );
  const page = await rawRows(
    em,
    sql<{
      id: string | number;
      scanned_at: string | Date;
      outcome: string;
      representation: string;
      link_type: string | null;
      unit_status: string | null;
      country: string | null;
      client_class: string | null;
      scans: number;
      source: string;
    }>`
    select e.id, e.scanned_at, e.outcome, e.representation, e.link_type, e.unit_status, e.country, e.client_class, e.scans, e.source
      from scan_events e
     where ${identity} ${after === null ? sql`` : sql`and (e.scanned_at, e.id) < (${after.at.toISOString()}::timestamptz, ${after.id}::bigint)`}
     order by e.scanned_at desc, e.id desc
     limit ${limit}`,
  );
  return {
    total: Number(summary?.total ?? 0),
    firstAt: summary?.first_at == null ? null : new Date(summary.first_at),
    lastAt: summary?.last_at == null ? null : new Date(summary.last_at),
    countries: [...(summary?.countries ?? [])].sort(),
    scans: page.map((r) => ({
      id: String(r.id),
      scannedAt: new Date(r.scanned_at),
      outcome: r.outcome,
      representation: r.representation,
      linkType: r.link_type,
      unitStatus: r.unit_status,
      country: r.country,
      clientClass: r.client_class,
      scans: Number(r.scans),
      source: r.source,
    })),
  };
}
