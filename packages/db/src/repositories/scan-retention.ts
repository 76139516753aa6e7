import { sql, type RawBuilder } from 'kysely';
import type { Em } from '../orm.ts';
import { rawChanged, rawRows } from './kysely.ts';

/**
 * The scan ledger's day partitions and daily rollups. `scan_events` is partitioned by range of
 * `scanned_at`, one partition per UTC day named `scan_events_pYYYYMMDD`, and a default partition
 * for a scan of a day without one. Retention drops a day's partition whole; before that, the day's
 * scans are rolled up into `scan_daily_rollups` (per GTIN, batch, lot, country, client class and
 * unit state), which are kept. `scan_rollup_days` says which brand's days have scans and whether
 * their rollup is current.
 */

const dayMs = 86_400_000;

/** A UTC day as `YYYY-MM-DD`. */
export const utcDay = (at: Date | number): string => new Date(Math.floor(new Date(at).getTime() / dayMs) * dayMs).toISOString().slice(0, 10);

/** The partition of a UTC day. */
const partitionName = (day: string) => `scan_events_p${day.replaceAll('-', '')}`;

/** The UTC days that have a partition of their own, ascending. */
export async function scanPartitionDays(em: Em): Promise<string[]> {
  const found = await rawRows(
    em,
    sql<{ name: string }>`
    select c.relname as name from pg_inherits i join pg_class c on c.oid = i.inhrelid
     where i.inhparent = 'scan_events'::regclass and c.relname ~ '^scan_events_p[0-9]{8}$'`,
  );
  return found.map((r) => `${r.name.slice(13, 17)}-${r.name.slice(17, 19)}-${r.name.slice(19, 21)}`).sort();
}

/**
 * Makes the partition of the UTC day `day` (YYYY-MM-DD) unless it exists; returns whether it made
 * it. Scans of the day already in the default partition are moved into it in the same transaction
 * (PostgreSQL refuses a partition whose rows the default partition holds). Concurrent callers are
 * serialised on an advisory lock.
 */
export async function createScanPartition(em: Em, day: string): Promise<boolean> {
  if (!/^\d{4}-\d{2}-\d{2}$/.test(day)) throw new Error(`not a day: ${day}`);
  const name = partitionName(day);
  const next = utcDay(Date.parse(`${day}T00:00:00Z`) + dayMs);
  const from = `${day}T00:00:00Z`;
  const to = `${next}T00:00:00Z`;
  return em.transactional(async (tx) => {
    await rawRows(tx, sql`select pg_advisory_xact_lock(hashtext('scan_events partitions'))`);
    const [exists] = await rawRows(tx, sql<{ found: boolean }>`select to_regclass(${name}) is not null as found`);
    if (exists?.found === true) return false;
    const [waiting] = await rawRows(
      tx,
      sql<{ found: boolean }>`
      select exists (select 1 from scan_events_default where scanned_at >= ${from}::timestamptz and scanned_at < ${to}::timestamptz) as found`,
    );
    if (waiting?.found !== true) {
      await rawChanged(tx, sql`create table ${sql.id(name)} partition of scan_events for values from (${sql.lit(from)}) to (${sql.lit(to)})`);
      return true;
    }
    // The day's scans wait in the default partition: a table of its own takes them, then is attached
    // (its check constraint spares the attach a scan of it).
    await rawChanged(tx, sql`create table ${sql.id(name)} (like scan_events including defaults)`);
    await rawChanged(
      tx,
      sql`alter table ${sql.id(name)} add constraint ${sql.id(`${name}_day`)}
      check (scanned_at >= ${sql.lit(from)}::timestamptz and scanned_at < ${sql.lit(to)}::timestamptz)`,
    );
    await rawChanged(
      tx,
      sql`insert into ${sql.id(name)} select * from scan_events_default
      where scanned_at >= ${from}::timestamptz and scanned_at < ${to}::timestamptz`,
    );
    await rawChanged(tx, sql`delete from scan_events_default where scanned_at >= ${from}::timestamptz and scanned_at < ${to}::timestamptz`);
    await rawChanged(tx, sql`alter table scan_events attach partition ${sql.id(name)} for values from (${sql.lit(from)}) to (${sql.lit(to)})`);
    await rawChanged(tx, sql`alter table ${sql.id(name)} drop constraint ${sql.id(`${name}_day`)}`);
    return true;
  });
}

/** The UTC days of scans waiting in the default partition at or after `since`, ascending. */
export async function defaultPartitionDays(em: Em, since: Date): Promise<string[]> {
  const found = await rawRows(
    em,
    sql<{ day: string }>`
    select distinct to_char(scanned_at at time zone 'UTC', 'YYYY-MM-DD') as day from scan_events_default
     where scanned_at >= ${since.toISOString()}::timestamptz order by 1`,
  );
  return found.map((r) => r.day);
}

/**
 * Drops the partitions of the UTC days before `beforeDay` whose scans are rolled up (no brand's
 * day is waiting for its rollup); returns the days dropped. Each drop removes a day whole.
 */
export async function dropScanPartitionsBefore(em: Em, beforeDay: string): Promise<string[]> {
  const days = (await scanPartitionDays(em)).filter((d) => d < beforeDay);
  if (days.length === 0) return [];
  const waiting = new Set(
    (
      await rawRows(
        em,
        sql<{ day: string }>`
    select distinct to_char(day, 'YYYY-MM-DD') as day from scan_rollup_days where day < ${beforeDay}::date and version <> rolled_version`,
      )
    ).map((r) => r.day),
  );
  const dropped: string[] = [];
  for (const day of days) {
    if (waiting.has(day)) continue;
    await rawChanged(em, sql`drop table if exists ${sql.id(partitionName(day))}`);
    dropped.push(day);
  }
  return dropped;
}

/**
 * Notes that brands have scans of UTC days (pairs of brand id and YYYY-MM-DD day): a day not known
 * yet gets its row; with `bump`, a known one's version is raised, so a day rolled up already is
 * rolled up again (a late write). Run in the transaction that writes the scans.
 */
export async function markScanDays(em: Em, pairs: readonly { brandId: string; day: string }[], bump: boolean): Promise<void> {
  if (pairs.length === 0) return;
  await rawChanged(
    em,
    sql`
    insert into scan_rollup_days (brand_id, day, version, rolled_version)
    select brand_id, day, 1, 0 from unnest(${pairs.map((p) => p.brandId)}::uuid[], ${pairs.map((p) => p.day)}::date[]) as s(brand_id, day)
    on conflict (brand_id, day) do ${bump ? sql`update set version = scan_rollup_days.version + 1` : sql`nothing`}`,
  );
}

/**
 * A raw scan's (`e`) unit batch: the one recorded with the scan; for a scan recorded before batches
 * were (mint_batch_id null), that of its unit found by serial ({@link scanUnitJoin}, aliased `u`).
 */
export const scanBatch = sql`coalesce(e.mint_batch_id, u.mint_batch_id)`;
/**
 * The unit of a raw scan `e` recorded without its batch, by serial: only units minted before serials
 * were encoded can be named so (they store their id and are in the stored serials' partial index).
 */
export const scanUnitJoin = sql`left join mint_units u on e.mint_batch_id is null and e.kind in ('serial', 'token') and u.brand_id = e.brand_id and u.serial = e.identifier and u.id is not null`;
/** The rollup cells of raw scans `e` (joined to their units `u`): group columns in the rollup table's order. */
const cellColumns = sql`coalesce(e.gtin, ''), coalesce(${scanBatch}::text, ''), coalesce(e.lot, ''), coalesce(e.country, ''), coalesce(e.client_class, ''),
  case when e.unit_known then 'known' when not e.unit_known then 'never_issued' else '' end`;
const cellAggregates = sql`sum(e.scans), coalesce(sum(e.scans) filter (where e.unit_known = false), 0), count(distinct e.visitor), min(e.scanned_at), max(e.scanned_at)`;
const unitJoin = scanUnitJoin;
const rollupColumns = sql`brand_id, day, gtin, mint_batch_id, lot, country, client_class, unit_state, scans, never_issued, visitors, first_at, last_at`;

/**
 * Rolls up to `limit` brands' days before `closedBefore` (UTC midnight of a day still open, less a
 * grace) whose rollup is missing or stale: each in one transaction, the day's rollup rows replaced
 * by the group-by of its raw scans, and the version read recorded (a write meanwhile bumps it
 * again). Returns how many days were rolled up.
 */
export async function rollUpScanDays(em: Em, closedBefore: Date, limit: number): Promise<number> {
  const due = await rawRows(
    em,
    sql<{ brand_id: string; day: string; version: string | number }>`
    select brand_id, to_char(day, 'YYYY-MM-DD') as day, version from scan_rollup_days
     where version <> rolled_version and day < ${utcDay(closedBefore)}::date
     order by day limit ${limit}`,
  );
  for (const d of due) await rollUpScanDay(em, d.brand_id, d.day, String(d.version));
  return due.length;
}

async function rollUpScanDay(em: Em, brandId: string, day: string, version: string): Promise<void> {
  const from = `${day}T00:00:00Z`;
  const to = new Date(Date.parse(from) + dayMs).toISOString();
  await em.transactional(async (tx) => {
    // Two sweepers rolling one day up take turns (the second replaces the first's rows).
    await rawRows(tx, sql`select pg_advisory_xact_lock(hashtext(${`scan rollup ${brandId} ${day}`}))`);
    await rawChanged(tx, sql`delete from scan_daily_rollups where brand_id = ${brandId}::uuid and day = ${day}::date`);
    await rawChanged(
      tx,
      sql`
      insert into scan_daily_rollups (${rollupColumns})
      select e.brand_id, ${day}::date, ${cellColumns}, ${cellAggregates}
        from scan_events e ${unitJoin}
       where e.brand_id = ${brandId}::uuid and e.scanned_at >= ${from}::timestamptz and e.scanned_at < ${to}::timestamptz
       group by e.brand_id, 3, 4, 5, 6, 7, 8`,
    );
    await rawChanged(
      tx,
      sql`update scan_rollup_days set rolled_version = ${version}::bigint
      where brand_id = ${brandId}::uuid and day = ${day}::date and rolled_version < ${version}::bigint`,
    );
  });
}

/**
 * Scans past retention (before `beforeDay`) still in the default partition (their day has no
 * partition: sent late by an edge): added into their days' rollups and deleted in one statement,
 * and those days marked rolled up. Returns how many raw rows went.
 */
export async function rollUpAndDeleteDefaultBefore(em: Em, beforeDay: string): Promise<number> {
  return em.transactional(async (tx) => {
    const [moved] = await rawRows(
      tx,
      sql<{ rows: string | number }>`
      with gone as (delete from scan_events_default where scanned_at < ${`${beforeDay}T00:00:00Z`}::timestamptz returning *),
      cells as (
        insert into scan_daily_rollups (${rollupColumns})
        select e.brand_id, (e.scanned_at at time zone 'UTC')::date, ${cellColumns}, ${cellAggregates}
          from gone e ${unitJoin}
         group by e.brand_id, 2, 3, 4, 5, 6, 7, 8
        on conflict (brand_id, day, gtin, mint_batch_id, lot, country, client_class, unit_state) do update set
          scans = scan_daily_rollups.scans + excluded.scans, never_issued = scan_daily_rollups.never_issued + excluded.never_issued,
          visitors = scan_daily_rollups.visitors + excluded.visitors, first_at = least(scan_daily_rollups.first_at, excluded.first_at),
          last_at = greatest(scan_daily_rollups.last_at, excluded.last_at)
        returning 1)
      select (select count(*) from gone) as rows, (select count(*) from cells) as cells`,
    );
    await rawChanged(tx, sql`update scan_rollup_days set rolled_version = version where day < ${beforeDay}::date and version <> rolled_version`);
    return Number(moved?.rows ?? 0);
  });
}

/** A read's filters that rollups can answer (those of a unit cannot). */
export interface RollupFilter {
  readonly gtin?: string | null;
  readonly lot?: string | null;
  readonly batchId?: string | null;
  readonly country?: string | null;
  readonly clientClass?: string | null;
  readonly unitKnown?: boolean | null;
}

/** The UTC days of a brand in [fromDay, toDay) whose rollup is current (answered from rollups, not raw scans). */
export async function rolledUpDays(em: Em, brandId: string, fromDay: string, toDay: string): Promise<string[]> {
  const found = await rawRows(
    em,
    sql<{ day: string }>`
    select to_char(day, 'YYYY-MM-DD') as day from scan_rollup_days
     where brand_id = ${brandId}::uuid and day >= ${fromDay}::date and day < ${toDay}::date and version = rolled_version order by day`,
  );
  return found.map((r) => r.day);
}

/** The WHERE terms of a rollup read on rollups `r`. */
export function rollupWhere(brandId: string, days: readonly string[], f: RollupFilter): RawBuilder<unknown>[] {
  const where: RawBuilder<unknown>[] = [sql`r.brand_id = ${brandId}::uuid`, sql`r.day = any(${days}::date[])`];
  if ((f.gtin ?? null) !== null) where.push(sql`r.gtin = ${f.gtin}`);
  if ((f.lot ?? null) !== null) where.push(sql`r.lot = ${f.lot}`);
  if ((f.batchId ?? null) !== null) where.push(sql`r.mint_batch_id = ${f.batchId}`);
  if ((f.country ?? null) !== null) where.push(sql`r.country = ${f.country}`);
  if ((f.clientClass ?? null) !== null) where.push(sql`r.client_class = ${f.clientClass}`);
  if ((f.unitKnown ?? null) !== null) where.push(sql`r.unit_state = ${f.unitKnown ? 'known' : 'never_issued'}`);
  return where;
}

/** Bytes of the raw scans (every partition, with indexes) and of the rollups (with their index). */
export async function scanLedgerSize(em: Em): Promise<{ rawBytes: number; rollupBytes: number; rawRows: number; rollupRows: number }> {
  const [r] = await rawRows(
    em,
    sql<{ raw: string; rollup: string; raw_rows: string; rollup_rows: string }>`
    select (select coalesce(sum(pg_total_relation_size(i.inhrelid)), 0) from pg_inherits i where i.inhparent = 'scan_events'::regclass)::text as raw,
           pg_total_relation_size('scan_daily_rollups')::text as rollup,
           (select count(*) from scan_events)::text as raw_rows, (select count(*) from scan_daily_rollups)::text as rollup_rows`,
  );
  return { rawBytes: Number(r?.raw ?? 0), rollupBytes: Number(r?.rollup ?? 0), rawRows: Number(r?.raw_rows ?? 0), rollupRows: Number(r?.rollup_rows ?? 0) };
}
