import { sql, type ExpressionBuilder } from 'kysely';
import type { ScanAlertSettings } from '@mint/domain';
import type { Em } from '../orm.ts';
import type { Tables } from '../tables.ts';
import { changed, first, rawChanged, rows } from './kysely.ts';
import { unitKeysOfSerialsSql } from './serial-keys.ts';

/** The unit's GTIN (its batch's) is `gtin`; null matches a unit without GTIN. */
const unitGtinIs = (gtin: string | null) => (eb: ExpressionBuilder<Tables, 'mint_units'>) =>
  eb.exists(
    eb
      .selectFrom('mint_batches as b')
      .select(eb.lit(1).as('one'))
      .whereRef('b.brand_id', '=', 'mint_units.brand_id')
      .whereRef('b.id', '=', 'mint_units.mint_batch_id')
      .where('b.gtin', 'is not distinct from', eb.cast<string | null>(eb.val(gtin), 'text')),
  );

/**
 * A brand's settings of the scan rules and its suspect units. Every statement names its brand,
 * so on Citus it is routed to the brand's shard.
 */

/** The stored settings of these brands; a brand without a row is absent from the map (it has the defaults). */
export async function findScanAlertSettings(em: Em, brandIds: readonly string[]): Promise<Map<string, ScanAlertSettings>> {
  if (brandIds.length === 0) return new Map();
  const found = await rows(em, (db) =>
    db
      .selectFrom('scan_alert_settings')
      .select([
        'brand_id',
        'never_issued',
        'withdrawn',
        'clone',
        'burst',
        'clone_window_hours',
        'clone_visitors_per_day',
        'alerts_per_minute',
        'withdrawn_ignored',
      ])
      .where((eb) => eb('brand_id', '=', eb.fn.any(eb.cast<string[]>(eb.val(brandIds), sql`uuid[]`)))),
  );
  return new Map(
    found.map((r) => [
      r.brand_id,
      {
        neverIssued: r.never_issued,
        withdrawn: r.withdrawn,
        clone: r.clone,
        burst: r.burst,
        cloneWindowHours: r.clone_window_hours,
        cloneVisitorsPerDay: r.clone_visitors_per_day,
        alertsPerMinute: r.alerts_per_minute,
        withdrawnIgnored: typeof r.withdrawn_ignored === 'string' ? (JSON.parse(r.withdrawn_ignored) as string[]) : r.withdrawn_ignored,
      },
    ]),
  );
}

/** Stores the brand's settings (inserted or replaced). */
export async function saveScanAlertSettings(em: Em, brandId: string, s: ScanAlertSettings, at: Date): Promise<void> {
  const values = {
    never_issued: s.neverIssued,
    withdrawn: s.withdrawn,
    clone: s.clone,
    burst: s.burst,
    clone_window_hours: s.cloneWindowHours,
    clone_visitors_per_day: s.cloneVisitorsPerDay,
    alerts_per_minute: s.alertsPerMinute,
    withdrawn_ignored: JSON.stringify(s.withdrawnIgnored),
    updated_at: at,
  };
  await changed(em, (db) =>
    db
      .insertInto('scan_alert_settings')
      .values({ brand_id: brandId, ...values })
      .onConflict((oc) => oc.column('brand_id').doUpdateSet(values)),
  );
}

/** A unit a scan rule marks suspect. */
export interface SuspectMark {
  readonly brandId: string;
  /** The unit's GTIN; null for a unit without GTIN (named by its token). */
  readonly gtin: string | null;
  readonly serial: string;
  /** The rule: clone or withdrawn. */
  readonly rule: string;
}

/**
 * Marks these units suspect since `at`; a unit already suspect keeps its first rule and time, and
 * a serial that names no unit changes nothing. One update per brand, its units as arrays. Resolves
 * to the units newly marked.
 */
export async function markUnitsSuspect(em: Em, marks: readonly SuspectMark[], at: Date): Promise<number> {
  // One statement per brand (on Citus, routed to its shard), the units as array parameters: a
  // statement per unit cost bench:scans ~0.5 s per batch of 10,000 scans (~80 alerts).
  const byBrand = new Map<string, Map<string, SuspectMark>>();
  for (const m of marks) {
    const units = byBrand.get(m.brandId) ?? new Map<string, SuspectMark>();
    byBrand.set(m.brandId, units);
    // A unit marked twice in one call keeps its first rule.
    if (!units.has(m.serial)) units.set(m.serial, m);
  }
  let n = 0;
  for (const [brandId, units] of byBrand) {
    const list = [...units.values()];
    // The serials decoded first (unitKeysOfSerialsSql): each unit is one primary-key probe.
    const keys = await unitKeysOfSerialsSql(
      em,
      brandId,
      list.map((m) => m.serial),
    );
    n += await rawChanged(
      em,
      sql`
      update mint_units u set suspect_rule = m.rule, suspect_since = ${at.toISOString()}::timestamptz
        from unnest(${list.map((m) => m.serial)}::text[], ${list.map((m) => m.gtin)}::text[], ${list.map((m) => m.rule)}::text[]) as m(serial, gtin, rule),
             ${keys} as k,
             mint_batches b
       where k.serial = m.serial and u.brand_id = ${brandId}::uuid and u.mint_batch_id = k.mint_batch_id and u.seq = k.seq and u.serial = m.serial and u.suspect_since is null
         and b.brand_id = u.brand_id and b.id = u.mint_batch_id and b.gtin is not distinct from m.gtin`,
    );
  }
  return n;
}

/** A unit's suspect mark as it was. */
export interface SuspectState {
  /** False when the brand has no such unit. */
  readonly found: boolean;
  /** The rule that marked it; null when it was not suspect. */
  readonly rule: string | null;
  readonly since: Date | null;
}

/**
 * Locks the brand's unit and returns its suspect mark, for a clear in the same transaction
 * ({@link unmarkUnitSuspect}).
 */
export async function lockSuspectUnit(em: Em, brandId: string, gtin: string | null, serial: string): Promise<SuspectState> {
  const keys = await unitKeysOfSerialsSql(em, brandId, [serial]);
  const row = await first(em, (db) =>
    db
      .selectFrom('mint_units')
      .select(['suspect_rule', 'suspect_since'])
      .where('brand_id', '=', brandId)
      .where(sql<boolean>`(mint_batch_id, seq, serial) in (select k.mint_batch_id, k.seq, k.serial from ${keys} as k)`)
      .where(unitGtinIs(gtin))
      .forUpdate(),
  );
  if (row === undefined) return { found: false, rule: null, since: null };
  const since = row.suspect_since;
  return { found: true, rule: row.suspect_rule, since: since === null ? null : since instanceof Date ? since : new Date(since) };
}

/** Clears the brand's unit's suspect mark; resolves to whether it had one. */
export async function unmarkUnitSuspect(em: Em, brandId: string, gtin: string | null, serial: string): Promise<boolean> {
  const keys = await unitKeysOfSerialsSql(em, brandId, [serial]);
  return (
    (await changed(em, (db) =>
      db
        .updateTable('mint_units')
        .set({ suspect_rule: null, suspect_since: null })
        .where('brand_id', '=', brandId)
        .where(sql<boolean>`(mint_batch_id, seq, serial) in (select k.mint_batch_id, k.seq, k.serial from ${keys} as k)`)
        .where('suspect_since', 'is not', null)
        .where(unitGtinIs(gtin)),
    )) > 0
  );
}
