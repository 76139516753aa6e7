// ScanService: an edge's batches of scans (their own API key scope, row-by-row refusals, idempotent
// per batch key, 10,000 scans in one call over the wire) and the ledger's keyset-paged reads.

import { timestampFromDate } from '@bufbuild/protobuf/wkt';
import { Code } from '@connectrpc/connect';
import { ScanClientClass, ScanGroupBy, ScanStatsOrder } from '@mint/contract';
import { createApiKey, setApiAccess } from '@mint/usecases';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mintCompleted } from '../../../test/support/pack-fixtures.ts';
import { query } from '../../../test/support/sql.ts';
import { setupUseCases, type SeededBrand, type UseCaseBundle } from '../../../test/support/usecases.ts';
import { codeOf, errorOf, inProcessApi, startTestApi, type InProcessApi } from './support.ts';

let app: UseCaseBundle;
let brand: SeededBrand;
let api: InProcessApi;
let serials: string[];
let batchId: string;
let edgeKey: string;
let readerKey: string;

const asKey = (key: string) => ({ headers: { 'x-api-key': key } });
const at = (iso: string) => timestampFromDate(new Date(iso));

beforeAll(async () => {
  app = await setupUseCases();
  brand = await app.seedBrand();
  api = inProcessApi(app);
  await setApiAccess(app.ctx, brand.brandId, true);
  ({ mintBatchId: batchId } = await mintCompleted(app.ctx, brand, 4));
  serials = (await query<{ serial: string }>(app.db.em.fork(), 'select serial from mint_units where mint_batch_id = ? order by seq', [batchId])).map(
    (r) => r.serial,
  );
  edgeKey = (await createApiKey(app.ctx, { brandId: brand.brandId, name: 'edge', scopes: ['scans:write'] })).key;
  readerKey = (await createApiKey(app.ctx, { brandId: brand.brandId, name: 'charts', scopes: ['scans:read'] })).key;
});
afterAll(() => app.close());

/** A good scan row of the seeded brand's GTIN; fields overridable. */
const row = (fields: Record<string, unknown> = {}) => ({
  scannedAt: at('2026-02-01T10:00:00Z'),
  kind: 'serial',
  gtin: brand.gtin,
  identifier: serials[0]!,
  outcome: 'resolved',
  representation: 'redirect',
  clientClass: ScanClientClass.BROWSER,
  country: 'DE',
  ...fields,
});

describe('RecordScanEvents', () => {
  it('needs the scans:write scope; scans:read reads and cannot write', async () => {
    const otherKey = (await createApiKey(app.ctx, { brandId: brand.brandId, name: 'links', scopes: ['links:write', 'links:read', 'mint:read'] })).key;
    const record = (key: string, batchKey: string) => codeOf(api.scans.recordScanEvents({ brandId: brand.brandId, batchKey, scans: [row()] }, asKey(key)));
    const stats = (key: string) =>
      codeOf(
        api.scans.getScanStats(
          {
            brandId: brand.brandId,
            groupBy: ScanGroupBy.DAY,
            from: at('2026-01-01T00:00:00Z'),
            to: at('2026-03-01T00:00:00Z'),
          },
          asKey(key),
        ),
      );
    expect([await record(edgeKey, 'access-1'), await record(readerKey, 'access-2'), await record(otherKey, 'access-3')]).toEqual([
      'ok',
      Code.PermissionDenied,
      Code.PermissionDenied,
    ]);
    expect([await stats(readerKey), await stats(edgeKey), await stats(otherKey)]).toEqual(['ok', Code.PermissionDenied, Code.PermissionDenied]);
  });

  it('writes the good rows of a batch with the unit state, and refuses each bad row with its index, field and reason', async () => {
    const result = await api.scans.recordScanEvents(
      {
        brandId: brand.brandId,
        batchKey: 'mixed-1',
        scans: [
          row({ identifier: serials[1] }),
          row({ gtin: '4006381333932' }),
          row({ identifier: 'NEVER-ISSUED-EDGE', lot: 'L7' }),
          row({ visitor: '203.0.113.7', country: 'Germany' }),
          row({ kind: 'token', gtin: '', identifier: serials[2] }),
          row({ scannedAt: undefined }),
        ],
      },
      asKey(edgeKey),
    );
    expect(result.accepted).toBe(3);
    expect(result.replayed).toBe(false);
    expect(result.rejected.map((r) => [r.index, r.field, r.message])).toEqual([
      [1, 'gtin', 'must be a GTIN-8, -12, -13 or -14 with a valid check digit'],
      [3, 'country', 'must be an ISO 3166-1 alpha-2 code'],
      [3, 'visitor', 'must be a hash (16-64 base64url or hex characters), never an address'],
      [5, 'scanned_at', 'is required'],
    ]);
    const rows = await query<Record<string, unknown>>(
      app.db.em.fork(),
      `select identifier, kind, lot, unit_known, unit_status, country, client_class, source from scan_events
        where brand_id = ? and identifier in (?, ?, ?) order by identifier`,
      [brand.brandId, serials[1], 'NEVER-ISSUED-EDGE', serials[2]],
    );
    expect(rows).toEqual(
      expect.arrayContaining([
        {
          identifier: serials[1],
          kind: 'serial',
          lot: null,
          unit_known: true,
          unit_status: 'active',
          country: 'DE',
          client_class: 'browser',
          source: 'ingest',
        },
        {
          identifier: 'NEVER-ISSUED-EDGE',
          kind: 'serial',
          lot: 'L7',
          unit_known: false,
          unit_status: null,
          country: 'DE',
          client_class: 'browser',
          source: 'ingest',
        },
        // A token names a unit without GTIN: this unit has one, so it is not found under a null GTIN.
        { identifier: serials[2], kind: 'token', lot: null, unit_known: false, unit_status: null, country: 'DE', client_class: 'browser', source: 'ingest' },
      ]),
    );
    expect(rows).toHaveLength(3);
  });

  it('is idempotent per batch key: a replay writes nothing and answers the first outcome', async () => {
    const batch = { brandId: brand.brandId, batchKey: 'replay-1', scans: [row({ identifier: 'REPLAY-A' }), row({ identifier: 'REPLAY-B', kind: 'nope' })] };
    const first = await api.scans.recordScanEvents(batch, asKey(edgeKey));
    const again = await api.scans.recordScanEvents({ ...batch, scans: [row({ identifier: 'REPLAY-C' })] }, asKey(edgeKey));
    expect([first.accepted, first.replayed, again.accepted, again.replayed]).toEqual([1, false, 1, true]);
    expect(again.rejected.map((r) => [r.index, r.field])).toEqual([[1, 'kind']]);
    const [{ n }] = (await query<{ n: string }>(app.db.em.fork(), `select count(*) as n from scan_events where brand_id = ? and identifier like 'REPLAY-%'`, [
      brand.brandId,
    ])) as [{ n: string }];
    expect(Number(n)).toBe(1);
  });

  it('refuses an empty batch or one of more than 10,000 scans whole, naming the field', async () => {
    const none = await errorOf(api.scans.recordScanEvents({ brandId: brand.brandId, batchKey: 'empty', scans: [] }, asKey(edgeKey)));
    expect([none.code, none.rawMessage]).toEqual([Code.InvalidArgument, expect.stringContaining('scans')]);
    const tooMany = await errorOf(
      api.scans.recordScanEvents({ brandId: brand.brandId, batchKey: 'big', scans: Array.from({ length: 10_001 }, () => row()) }, asKey(edgeKey)),
    );
    expect([tooMany.code, tooMany.rawMessage]).toEqual([Code.InvalidArgument, expect.stringContaining('scans')]);
  });

  it('keeps a link type with a tab, a newline and backslashes as sent (the rows go in through COPY)', async () => {
    const linkType = 'gs1:pip\t\\N\nline\\2';
    const both = (await createApiKey(app.ctx, { brandId: brand.brandId, name: 'edge+charts', scopes: ['scans:write', 'scans:read'] })).key;
    const result = await api.scans.recordScanEvents(
      { brandId: brand.brandId, batchKey: 'escapes', scans: [row({ identifier: serials[2], linkType })] },
      asKey(both),
    );
    expect([result.accepted, result.rejected]).toEqual([1, []]);
    const page = await api.scans.getUnitScans({ brandId: brand.brandId, gtin: brand.gtin, serial: serials[2]! }, asKey(both));
    expect(page.scans.map((s) => s.linkType)).toContain(linkType);
  });

  it('takes 10,000 scans in one Connect call over the wire (beyond the ordinary RPC body limit)', async () => {
    const server = await startTestApi(app);
    try {
      const scans = Array.from({ length: 10_000 }, (_, i) => ({
        scannedAt: '2025-06-01T12:00:00Z',
        kind: 'serial',
        gtin: brand.gtin,
        identifier: `WIRE-${i}`,
        outcome: 'resolved',
        representation: 'redirect',
        clientClass: 'SCAN_CLIENT_CLASS_APP',
      }));
      const response = await fetch(`${server.baseUrl}/mint.v1.ScanService/RecordScanEvents`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-api-key': edgeKey },
        body: JSON.stringify({ brandId: brand.brandId, batchKey: 'wire-10k', scans }),
      });
      expect(response.status).toBe(200);
      expect(await response.json()).toMatchObject({ ok: true, accepted: 10_000 });
    } finally {
      await server.close();
    }
  });
});

describe('/v1/rpc/record_scan_event', () => {
  it('takes the same batch with a session, past the 1 MiB of other JSON routes, refusing bad rows one by one', async () => {
    const server = await startTestApi(app);
    try {
      const scans = Array.from({ length: 10_000 }, (_, i) => ({
        scanned_at: '2025-07-01T12:00:00Z',
        kind: 'serial',
        gtin: brand.gtin,
        identifier: `V1-${i}-${'x'.repeat(60)}`,
        outcome: 'resolved',
        representation: 'json',
        client_class: 'app',
        country: 'NL',
      }));
      scans[7] = { ...scans[7]!, scanned_at: 'yesterday', country: 'Netherlands' };
      const body = JSON.stringify({ _brand_id: brand.brandId, _batch_key: 'v1-10k', _scans: scans });
      expect(body.length).toBeGreaterThan(1024 * 1024);
      const response = await fetch(`${server.baseUrl}/v1/rpc/record_scan_event`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${brand.token}` },
        body,
      });
      expect(response.status).toBe(200);
      expect(await response.json()).toEqual({
        ok: true,
        accepted: 9_999,
        replayed: false,
        rejected: [
          { index: 7, field: 'scanned_at', message: 'must be an RFC 3339 time' },
          { index: 7, field: 'country', message: 'must be an ISO 3166-1 alpha-2 code' },
        ],
      });
    } finally {
      await server.close();
    }
  });
});

describe('GetScanStats and GetUnitScans', () => {
  let reads: SeededBrand;
  let units: string[];
  let key: string;
  beforeAll(async () => {
    reads = await app.seedBrand();
    await setApiAccess(app.ctx, reads.brandId, true);
    const { mintBatchId } = await mintCompleted(app.ctx, reads, 3);
    units = (await query<{ serial: string }>(app.db.em.fork(), 'select serial from mint_units where mint_batch_id = ? order by seq', [mintBatchId])).map(
      (r) => r.serial,
    );
    key = (await createApiKey(app.ctx, { brandId: reads.brandId, name: 'all', scopes: ['scans:write', 'scans:read'] })).key;
    const scan = (when: string, identifier: string, country: string, clientClass: ScanClientClass, count = 1, visitor = 'v'.repeat(22)) => ({
      scannedAt: at(when),
      kind: 'serial',
      gtin: reads.gtin,
      identifier,
      outcome: 'resolved',
      representation: 'redirect',
      country,
      clientClass,
      count,
      visitor,
    });
    // Day 1: unit 0 three times (DE, browser; two visitors), unit 1 once (FR, app), a forged serial twice (FR, bot).
    // Day 2: unit 0 once (US, browser), unit 2 five times counted into one row (DE, browser).
    const result = await api.scans.recordScanEvents(
      {
        brandId: reads.brandId,
        batchKey: 'reads',
        scans: [
          scan('2026-02-01T08:00:00Z', units[0]!, 'DE', ScanClientClass.BROWSER),
          scan('2026-02-01T09:00:00Z', units[0]!, 'DE', ScanClientClass.BROWSER, 2, 'w'.repeat(22)),
          scan('2026-02-01T10:00:00Z', units[1]!, 'FR', ScanClientClass.APP),
          scan('2026-02-01T11:00:00Z', 'FORGED-1', 'FR', ScanClientClass.BOT),
          scan('2026-02-01T12:00:00Z', 'FORGED-2', 'FR', ScanClientClass.BOT),
          scan('2026-02-02T08:00:00Z', units[0]!, 'US', ScanClientClass.BROWSER),
          scan('2026-02-02T09:00:00Z', units[2]!, 'DE', ScanClientClass.BROWSER, 5),
        ],
      },
      asKey(key),
    );
    expect(result.rejected).toEqual([]);
  });

  const stats = (fields: Record<string, unknown>) =>
    api.scans
      .getScanStats(
        {
          brandId: reads.brandId,
          from: at('2026-02-01T00:00:00Z'),
          to: at('2026-02-03T00:00:00Z'),
          ...fields,
        },
        asKey(key),
      )
      .then((r) => ({ groups: r.groups.map((g) => [g.key, Number(g.scans), Number(g.neverIssued), Number(g.visitors)]), next: r.nextCursor }));

  it('counts scans per day of a product, per country, per client class and per batch', async () => {
    expect((await stats({ groupBy: ScanGroupBy.DAY, gtin: reads.gtin })).groups).toEqual([
      ['2026-02-01', 6, 2, 2],
      ['2026-02-02', 6, 0, 1],
    ]);
    expect((await stats({ groupBy: ScanGroupBy.COUNTRY })).groups).toEqual([
      ['DE', 8, 0, 2],
      ['FR', 3, 2, 1],
      ['US', 1, 0, 1],
    ]);
    expect((await stats({ groupBy: ScanGroupBy.CLIENT_CLASS, country: 'fr' })).groups).toEqual([
      ['app', 1, 0, 1],
      ['bot', 2, 2, 1],
    ]);
    const byBatch = (await stats({ groupBy: ScanGroupBy.BATCH })).groups;
    expect(byBatch.map(([, scans]) => scans).sort()).toEqual([10, 2]);
    expect((await stats({ groupBy: ScanGroupBy.DAY, clientClass: ScanClientClass.BOT })).groups).toEqual([['2026-02-01', 2, 2, 1]]);
  });

  it('lists never-issued attempts per GTIN, and the top scanned units keyset paged', async () => {
    expect((await stats({ groupBy: ScanGroupBy.GTIN, unitKnown: false })).groups).toEqual([[reads.gtin, 2, 2, 1]]);
    const first = await stats({ groupBy: ScanGroupBy.UNIT, order: ScanStatsOrder.TOP, unitKnown: true, limit: 2 });
    expect(first.groups).toEqual([
      [`${reads.gtin} ${units[2]}`, 5, 0, 1],
      [`${reads.gtin} ${units[0]}`, 4, 0, 2],
    ]);
    const second = await stats({ groupBy: ScanGroupBy.UNIT, order: ScanStatsOrder.TOP, unitKnown: true, limit: 2, cursor: first.next });
    expect(second).toEqual({ groups: [[`${reads.gtin} ${units[1]}`, 1, 0, 1]], next: undefined });
    const tampered = await errorOf(
      api.scans.getScanStats(
        {
          brandId: reads.brandId,
          groupBy: ScanGroupBy.DAY,
          from: at('2026-02-01T00:00:00Z'),
          to: at('2026-02-03T00:00:00Z'),
          cursor: 'bm90LWEtY3Vyc29y',
        },
        asKey(key),
      ),
    );
    expect([tampered.code, tampered.rawMessage]).toEqual([Code.InvalidArgument, 'cursor: is not a cursor returned by this read']);
  });

  it('gives a unit its first and last scan, total and countries, its scans newest first and paged', async () => {
    const page1 = await api.scans.getUnitScans({ brandId: reads.brandId, gtin: reads.gtin, serial: units[0]!, limit: 2 }, asKey(key));
    expect([Number(page1.total), page1.firstScanAt?.seconds, page1.lastScanAt?.seconds, page1.countries]).toEqual([
      4,
      at('2026-02-01T08:00:00Z').seconds,
      at('2026-02-02T08:00:00Z').seconds,
      ['DE', 'US'],
    ]);
    expect(page1.scans.map((s) => [s.country, s.scans, s.unitStatus, s.source])).toEqual([
      ['US', 1, 'active', 'ingest'],
      ['DE', 2, 'active', 'ingest'],
    ]);
    const page2 = await api.scans.getUnitScans({ brandId: reads.brandId, gtin: reads.gtin, serial: units[0]!, limit: 2, cursor: page1.nextCursor }, asKey(key));
    expect([page2.scans.map((s) => s.scannedAt?.seconds), page2.hasMore]).toEqual([[at('2026-02-01T08:00:00Z').seconds], false]);
    const never = await api.scans.getUnitScans({ brandId: reads.brandId, gtin: reads.gtin, serial: 'NEVER-SCANNED' }, asKey(key));
    expect([Number(never.total), never.firstScanAt, never.scans]).toEqual([0, undefined, []]);
  });
});
