// The scan ledger's retention: raw scans in day partitions dropped whole past retention, daily
// rollups kept, GetScanStats answering the same from rollups as it did from raw scans.

import { createUseCaseContext, getScanStats, maintainScanLedger, recordScanEvents, type UseCaseContext } from '@mint/usecases';
import type { ScanGroup } from '@mint/domain';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mintCompleted } from '../../../test/support/pack-fixtures.ts';
import { query } from '../../../test/support/sql.ts';
import { setupUseCases, type SeededBrand, type UseCaseBundle } from '../../../test/support/usecases.ts';

const dayMs = 86_400_000;
/** The test's "today": noon of a fixed day, moved by the tests. */
const today0 = Date.parse('2026-06-10T00:00:00Z');
let now = today0 + 12 * 3_600_000;
const day = (d: number) => new Date(today0 + d * dayMs).toISOString().slice(0, 10);

let app: UseCaseBundle;
let ctx: UseCaseContext;
let brand: SeededBrand;
let serials: string[];

beforeAll(async () => {
  app = await setupUseCases();
  ctx = createUseCaseContext({ db: app.db, publicBaseUrl: 'http://127.0.0.1:8080', clock: () => new Date(now) });
  brand = await app.seedBrand();
  const { mintBatchId } = await mintCompleted(app.ctx, brand, 3);
  serials = (await query<{ serial: string }>(app.db.em.fork(), 'select serial from mint_units where mint_batch_id = ? order by seq', [mintBatchId])).map(
    (r) => r.serial,
  );
});
afterAll(() => app.close());

const countries = ['DE', 'FR', 'NL'];
const classes = ['browser', 'app', 'bot'];
/** `n` scans of day `d` (relative to today): units and a forged serial, countries and classes in turn, visitors each of one country, class and unit state (as a real visitor hash is). */
const scansOf = (d: number, n: number, tag: string) =>
  Array.from({ length: n }, (_, i) => ({
    scannedAt: new Date(today0 + d * dayMs + (i + 1) * 60_000),
    kind: 'serial',
    gtin: brand.gtin,
    identifier: i % 4 === 3 ? `FORGED-${tag}-${i}` : serials[i % 3]!,
    lot: null,
    outcome: 'resolved',
    representation: 'redirect',
    linkType: null,
    country: countries[i % 3]!,
    clientClass: classes[i % 3]!,
    visitor: `${tag}d${d + 10}v${String(i % 12).padStart(16, '0')}`,
    count: 1 + (i % 2),
  }));

const partitions = async () =>
  (
    await query<{ name: string }>(
      app.db.em.fork(),
      `select c.relname as name from pg_inherits i join pg_class c on c.oid = i.inhrelid where i.inhparent = 'scan_events'::regclass order by 1`,
    )
  ).map((r) => r.name);
const rawPerDay = async () =>
  Object.fromEntries(
    (
      await query<{ day: string; n: string }>(
        app.db.em.fork(),
        `select to_char(scanned_at at time zone 'UTC', 'YYYY-MM-DD') as day, count(*)::text as n from scan_events where brand_id = ? group by 1 order by 1`,
        [brand.brandId],
      )
    ).map((r) => [r.day, Number(r.n)]),
  );
/** Every grouping's answer over the five days around today (what the console's charts read). */
const answers = async () => {
  const out: Record<string, unknown> = {};
  for (const groupBy of ['day', 'gtin', 'batch', 'country', 'client_class'] as ScanGroup[]) {
    for (const unitKnown of [null, false]) {
      const page = await getScanStats(ctx, {
        brandId: brand.brandId,
        groupBy,
        from: new Date(today0 - 4 * dayMs),
        to: new Date(today0 + dayMs),
        order: 'key',
        unitKnown,
        limit: 1000,
      });
      out[`${groupBy} ${unitKnown}`] = page.groups.map((g) => [g.key, g.scans, g.neverIssued, g.visitors, g.firstAt.toISOString(), g.lastAt.toISOString()]);
    }
  }
  return out;
};

describe('scan retention', () => {
  let before: Record<string, unknown>;

  it('files scans into day partitions and rolls up closed days; the reads answer the same from rollups as from raw scans', async () => {
    for (const d of [-3, -2, -1, 0]) {
      const outcome = await recordScanEvents(ctx, { brandId: brand.brandId, batchKey: `day${d}`, scans: scansOf(d, 40, 'a') });
      expect(outcome.rejected).toEqual([]);
    }
    before = await answers();
    expect((before['day null'] as unknown[]).length).toBe(4);
    // Kept two days: day -3 is past retention (its scans waited in the default partition: rolled up, then deleted).
    const upkeep = await maintainScanLedger(ctx, { retentionDays: 2 });
    expect(upkeep).toMatchObject({ lateScansRolledUp: 40, daysRolledUp: 2, partitionsDropped: [] });
    expect(await partitions()).toEqual(['scan_events_default', ...[-2, -1, 0, 1, 2].map((d) => `scan_events_p${day(d).replaceAll('-', '')}`)]);
    expect(await rawPerDay()).toEqual({ [day(-2)]: 40, [day(-1)]: 40, [day(0)]: 40 });
    expect(await answers()).toEqual(before);
  });

  it('drops a day past retention whole, and its scans still count from the rollups', async () => {
    now += dayMs;
    const upkeep = await maintainScanLedger(ctx, { retentionDays: 2 });
    expect(upkeep.partitionsDropped).toEqual([day(-2)]);
    expect(upkeep.daysRolledUp).toBe(1);
    expect(await partitions()).not.toContain(`scan_events_p${day(-2).replaceAll('-', '')}`);
    expect(await rawPerDay()).toEqual({ [day(-1)]: 40, [day(0)]: 40 });
    expect(await answers()).toEqual(before);
  });

  it('counts a late scan of a rolled-up day at once, and rolls the day up again', async () => {
    const late = scansOf(-1, 4, 'late');
    await recordScanEvents(ctx, { brandId: brand.brandId, batchKey: 'late', scans: late });
    const withLate = await answers();
    const days = withLate['day null'] as [string, number][];
    expect(days.find(([k]) => k === day(-1))![1]).toBe(60 + 6);
    expect(await maintainScanLedger(ctx, { retentionDays: 2 })).toMatchObject({ daysRolledUp: 1, partitionsDropped: [] });
    expect(await answers()).toEqual(withLate);
  });
});
