// A brand's scan-alert settings and its suspect units, on a running API: the brand's thresholds
// decide what raises an alert; a clone alert marks the unit suspect and its resolver answers (JSON,
// linkset, page) carry a caution until the brand clears it with a reason; another brand can
// neither read nor clear; bad settings are refused naming the field, and nothing is written.

import { timestampFromDate } from '@bufbuild/protobuf/wkt';
import { createClient, Code, type Client } from '@connectrpc/connect';
import { createConnectTransport } from '@connectrpc/connect-node';
import { ScanService } from '@mint/contract';
import { createApiKey, moveSerials, setApiAccess } from '@mint/usecases';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mintCompleted } from '../../../test/support/pack-fixtures.ts';
import { query } from '../../../test/support/sql.ts';
import { setupUseCases, type SeededBrand, type UseCaseBundle } from '../../../test/support/usecases.ts';
import { codeOf, errorOf, startTestApi, type TestApi } from './support.ts';

let app: UseCaseBundle;
let api: TestApi;
let scans: Client<typeof ScanService>;
/** A fixed clock: every scan falls in one minute and one UTC day. */
const now = new Date('2026-04-02T10:00:30.000Z');

interface Minted {
  readonly brand: SeededBrand;
  readonly slug: string;
  readonly serials: string[];
  /** Call options with an API key of the brand's holding scans:write, scans:read and scans:manage (the test's clock is before its session tokens). */
  readonly owner: { headers: Record<string, string> };
  /** The key's id, the events' actor. */
  readonly keyId: string;
}
async function minted(count: number): Promise<Minted> {
  const brand = await app.seedBrand();
  await setApiAccess(app.ctx, brand.brandId, true);
  const created = await createApiKey(app.ctx, { brandId: brand.brandId, name: 'console', scopes: ['scans:write', 'scans:read', 'scans:manage'] });
  const { mintBatchId } = await mintCompleted(app.ctx, brand, count);
  const [{ slug }] = (await query<{ slug: string }>(app.db.em.fork(), 'select slug from brands where id = ?', [brand.brandId])) as [{ slug: string }];
  const serials = (await query<{ serial: string }>(app.db.em.fork(), 'select serial from mint_units where mint_batch_id = ? order by seq', [mintBatchId])).map(
    (r) => r.serial,
  );
  return { brand, slug, serials, owner: { headers: { 'x-api-key': created.key } }, keyId: created.id };
}

const unitUrl = (m: Minted, serial: string) => `${api.baseUrl}/r/${m.slug}/01/${m.brand.gtin}/21/${serial}`;
/** A scan at the resolver. */
const scanAt = (m: Minted, serial: string) => fetch(unitUrl(m, serial), { headers: { accept: 'application/json' } }).then((r) => r.text());
/**
 * Scans of `serial` by distinct visitors, sent as an edge does (the resolver's own scans from one
 * test address are one client's repeats, counted into one row).
 */
let batches = 0;
const scansBy = (m: Minted, serial: string, visitors: number) =>
  scans.recordScanEvents(
    {
      brandId: m.brand.brandId,
      batchKey: `visitors-${++batches}`,
      scans: Array.from({ length: visitors }, (_, i) => ({
        scannedAt: timestampFromDate(now),
        kind: 'serial',
        gtin: m.brand.gtin,
        identifier: serial,
        outcome: 'resolved',
        representation: 'redirect',
        country: 'DE',
        visitor: `${'ab'.repeat(8)}${String(i).padStart(4, '0')}`,
      })),
    },
    m.owner,
  );
const json = async (m: Minted, serial: string) =>
  (await (await fetch(unitUrl(m, serial), { headers: { accept: 'application/json' } })).json()) as { unit: Record<string, unknown> };
const clones = (brandId: string) =>
  query<{ entity_id: string; reason: string }>(
    app.db.em.fork(),
    `select entity_id, payload->>'reason' as reason from mint_events where brand_id = ? and event_type = 'scan_clone_suspected'`,
    [brandId],
  );
/** Polls until `read` answers something non-empty (the rules run off the request path), then a little longer. */
async function settled<T>(read: () => Promise<T[]>, wait = true): Promise<T[]> {
  for (let i = 0; i < 200; i++) {
    if ((await read()).length > 0) break;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  if (wait) await new Promise((resolve) => setTimeout(resolve, 300));
  return read();
}

beforeAll(async () => {
  app = await setupUseCases();
  api = await startTestApi(app, { ctx: { ...app.ctx, clock: () => now } });
  scans = createClient(ScanService, createConnectTransport({ baseUrl: api.baseUrl, httpVersion: '1.1', useBinaryFormat: false }));
});
afterAll(async () => {
  await api?.close();
  await app?.close();
});

describe("a brand's scan-alert settings", () => {
  it('decide what raises an alert: three visitors of a unit are a clone under K = 2, not under the default 20', async () => {
    const strict = await minted(1);
    const lenient = await minted(1);
    const set = await scans.updateScanAlertSettings({ brandId: strict.brand.brandId, cloneVisitorsPerDay: 2 }, strict.owner);
    expect(set.settings).toMatchObject({ cloneVisitorsPerDay: 2, cloneWindowHours: 24, alertsPerMinute: 20, clone: true, neverIssued: true });
    expect((await scans.getScanAlertSettings({ brandId: lenient.brand.brandId }, lenient.owner)).settings?.cloneVisitorsPerDay).toBe(20);
    for (const m of [strict, lenient]) expect((await scansBy(m, m.serials[0]!, 3)).accepted).toBe(3);
    expect(await settled(() => clones(strict.brand.brandId))).toEqual([{ entity_id: `${strict.brand.gtin} ${strict.serials[0]}`, reason: 'visitors' }]);
    expect(await clones(lenient.brand.brandId)).toEqual([]);
  });

  it('turn a rule off: never-issued serials of a brand that switched the rule off raise no alert', async () => {
    const quiet = await minted(1);
    await scans.updateScanAlertSettings({ brandId: quiet.brand.brandId, neverIssued: false, burst: false }, quiet.owner);
    await scanAt(quiet, 'FORGED-QUIET');
    const loud = await minted(1);
    await scanAt(loud, 'FORGED-LOUD');
    const alerts = (brandId: string) =>
      query(app.db.em.fork(), `select 1 from mint_events where brand_id = ? and event_type like 'scan_never_issued%'`, [brandId]);
    expect(await settled(() => alerts(loud.brand.brandId))).toHaveLength(1);
    expect(await alerts(quiet.brand.brandId)).toEqual([]);
  });

  it('choose per decommissioning reason: a scan of a unit taken as a sample raises no alert when sample is ignored, one of an expired unit does', async () => {
    const m = await minted(2);
    const set = await scans.updateScanAlertSettings({ brandId: m.brand.brandId, withdrawnIgnored: ['sample'] }, m.owner);
    expect(set.settings?.withdrawnIgnored).toEqual(['sample']);
    const [sample, expired] = m.serials as [string, string];
    for (const [serial, reason] of [
      [sample, 'sample'],
      [expired, 'expired'],
    ] as const) {
      await moveSerials(
        app.ctx,
        { id: m.brand.userId },
        {
          brandId: m.brand.brandId,
          idempotencyKey: `decommission-${reason}`,
          action: 'decommission',
          reason,
          target: { serials: [serial] },
        },
      );
    }
    // Both scans go through the resolver, which answers each 410 and records its reason as the scan's unit status.
    await scanAt(m, sample);
    await scanAt(m, expired);
    const withdrawn = () =>
      query<{ entity_id: string }>(app.db.em.fork(), `select entity_id from mint_events where brand_id = ? and event_type = 'scan_withdrawn_unit'`, [
        m.brand.brandId,
      ]);
    expect(await settled(withdrawn)).toEqual([{ entity_id: `${m.brand.gtin} ${expired}` }]);
    expect(await query(app.db.em.fork(), 'select unit_status from scan_events where brand_id = ? order by unit_status', [m.brand.brandId])).toEqual([
      { unit_status: 'expired' },
      { unit_status: 'sample' },
    ]);
  });

  it('are refused naming each bad field, and nothing is written', async () => {
    const m = await minted(1);
    const error = await errorOf(
      scans.updateScanAlertSettings(
        {
          brandId: m.brand.brandId,
          cloneVisitorsPerDay: 0,
          cloneWindowHours: 9_999,
          withdrawnIgnored: ['Recycled', 'active'],
        },
        m.owner,
      ),
    );
    expect(error.code).toBe(Code.InvalidArgument);
    for (const field of ['clone_window_hours', 'clone_visitors_per_day', 'withdrawn_ignored[0]', 'withdrawn_ignored[1]'])
      expect(error.rawMessage).toContain(field);
    expect((await scans.getScanAlertSettings({ brandId: m.brand.brandId }, m.owner)).settings).toMatchObject({
      cloneVisitorsPerDay: 20,
      cloneWindowHours: 24,
      withdrawnIgnored: [],
    });
    expect(await query(app.db.em.fork(), 'select 1 from scan_alert_settings where brand_id = ?', [m.brand.brandId])).toEqual([]);
  });

  it('are read with scans:read and changed only with scans:manage, never by another brand', async () => {
    const m = await minted(1);
    const other = await minted(1);
    const key = async (scopes: ('scans:read' | 'scans:write' | 'scans:manage')[]) => ({
      headers: { 'x-api-key': (await createApiKey(app.ctx, { brandId: m.brand.brandId, name: scopes.join(' '), scopes })).key },
    });
    const [reader, edge, manager] = [await key(['scans:read']), await key(['scans:write']), await key(['scans:manage'])];
    const update = (options: object) => codeOf(scans.updateScanAlertSettings({ brandId: m.brand.brandId, alertsPerMinute: 5 }, options));
    expect([await update(reader), await update(edge), await update(manager)]).toEqual([Code.PermissionDenied, Code.PermissionDenied, 'ok']);
    expect(await codeOf(scans.getScanAlertSettings({ brandId: m.brand.brandId }, reader))).toBe('ok');
    expect(await codeOf(scans.getScanAlertSettings({ brandId: m.brand.brandId }, other.owner))).toBe(Code.PermissionDenied);
    expect(await codeOf(scans.updateScanAlertSettings({ brandId: m.brand.brandId, alertsPerMinute: 1 }, other.owner))).toBe(Code.PermissionDenied);
    expect((await scans.getScanAlertSettings({ brandId: m.brand.brandId }, reader)).settings?.alertsPerMinute).toBe(5);
  });
});

describe('a suspect unit', () => {
  let m: Minted;
  let suspect: string;
  beforeAll(async () => {
    m = await minted(2);
    suspect = m.serials[0]!;
    await scans.updateScanAlertSettings({ brandId: m.brand.brandId, cloneVisitorsPerDay: 1 }, m.owner);
    await scansBy(m, suspect, 2);
    await settled(() => clones(m.brand.brandId));
    await settled(() => query(app.db.em.fork(), 'select 1 from mint_units where brand_id = ? and suspect_since is not null', [m.brand.brandId]), false);
  });

  it("is marked by its clone alert, and its JSON, linkset and page carry the caution; its sibling's do not", async () => {
    expect((await json(m, suspect)).unit['suspect']).toEqual({ reason: 'clone', since: now.toISOString() });
    expect((await json(m, m.serials[1]!)).unit['suspect']).toBeUndefined();
    const linkset = (await (await fetch(unitUrl(m, suspect), { headers: { accept: 'application/linkset+json' } })).json()) as {
      linkset: { anchor: string; itemDescription: string }[];
    };
    // Least specific first: the unit's own level is the last, and only it carries the caution.
    expect(linkset.linkset.at(-1)!.anchor).toMatch(new RegExp(`/21/${suspect}$`));
    expect(linkset.linkset.at(-1)!.itemDescription).toContain('reported for checking: a suspected copy, since 2026-04-02');
    expect(
      linkset.linkset
        .slice(0, -1)
        .map((l) => l.itemDescription)
        .join(' '),
    ).not.toContain('reported for checking');
    const page = await (await fetch(unitUrl(m, suspect), { headers: { accept: 'text/html', 'accept-language': 'de' } })).text();
    expect(page).toContain('Zur Prüfung gemeldet');
  });

  it('cannot be cleared by another brand, nor without a reason', async () => {
    const other = await minted(1);
    expect(await codeOf(scans.clearSuspectUnit({ brandId: m.brand.brandId, gtin: m.brand.gtin, serial: suspect, reason: 'mine now' }, other.owner))).toBe(
      Code.PermissionDenied,
    );
    // Its own brand id with the other brand's serial: not a unit it has.
    expect(await codeOf(scans.clearSuspectUnit({ brandId: other.brand.brandId, gtin: m.brand.gtin, serial: suspect, reason: 'mine now' }, other.owner))).toBe(
      Code.NotFound,
    );
    const error = await errorOf(scans.clearSuspectUnit({ brandId: m.brand.brandId, gtin: m.brand.gtin, serial: suspect, reason: '  ' }, m.owner));
    expect([error.code, error.rawMessage]).toEqual([Code.InvalidArgument, 'reason: must be 1..500 characters']);
    expect((await json(m, suspect)).unit['suspect']).toMatchObject({ reason: 'clone' });
  });

  it('is cleared by its brand with a reason: the answers are clean again and the event says who, why and what', async () => {
    const cleared = await scans.clearSuspectUnit(
      { brandId: m.brand.brandId, gtin: m.brand.gtin, serial: suspect, reason: 'two shops share a demo unit' },
      m.owner,
    );
    expect([cleared.cleared, cleared.rule, cleared.since?.seconds]).toEqual([true, 'clone', BigInt(Math.floor(now.getTime() / 1000))]);
    expect((await json(m, suspect)).unit['suspect']).toBeUndefined();
    const page = await (await fetch(unitUrl(m, suspect), { headers: { accept: 'text/html' } })).text();
    expect(page).not.toContain('Reported for checking');
    expect(
      await query(app.db.em.fork(), `select entity_id, actor, payload from mint_events where brand_id = ? and event_type = 'scan_suspect_cleared'`, [
        m.brand.brandId,
      ]),
    ).toEqual([
      {
        entity_id: `${m.brand.gtin} ${suspect}`,
        actor: m.keyId,
        payload: { gtin: m.brand.gtin, serial: suspect, rule: 'clone', since: now.toISOString(), reason: 'two shops share a demo unit' },
      },
    ]);
    const again = await scans.clearSuspectUnit({ brandId: m.brand.brandId, gtin: m.brand.gtin, serial: suspect, reason: 'again' }, m.owner);
    expect([again.cleared, again.rule]).toEqual([false, undefined]);
  });
});
