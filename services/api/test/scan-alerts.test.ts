// The never-issued serial rule on the stream of scans: a serial the brand never issued, scanned
// through the resolver or sent by an edge, raises one alert a day as an audit event with its
// webhook deliveries; beyond the brand's alerts a minute, one burst alert counts the rest.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiKey, createWebhookEndpoint, drainWebhookFanout, issueAccessToken, setApiAccess, setMintBatchStatus } from '@mint/usecases';
import { mintCompleted } from '../../../test/support/pack-fixtures.ts';
import { query } from '../../../test/support/sql.ts';
import { setupUseCases, type SeededBrand, type UseCaseBundle } from '../../../test/support/usecases.ts';
import { startTestApi, type TestApi } from './support.ts';

let app: UseCaseBundle;
let brand: SeededBrand;
let slug: string;
let serials: string[];
let endpointId: string;
let api: TestApi;
/** A fixed clock: the whole test runs in one minute of the rule's budget. */
const now = new Date('2026-04-02T10:00:30.000Z');

beforeAll(async () => {
  app = await setupUseCases();
  brand = await app.seedBrand();
  const { mintBatchId } = await mintCompleted(app.ctx, brand, 2);
  [{ slug }] = (await query<{ slug: string }>(app.db.em.fork(), 'select slug from brands where id = ?', [brand.brandId])) as [{ slug: string }];
  serials = (await query<{ serial: string }>(app.db.em.fork(), 'select serial from mint_units where mint_batch_id = ? order by seq', [mintBatchId])).map(
    (r) => r.serial,
  );
  ({
    endpoint: { id: endpointId },
  } = await createWebhookEndpoint(
    app.ctx,
    { id: brand.userId },
    { allowLoopback: true },
    {
      brandId: brand.brandId,
      url: 'http://127.0.0.1:9/hooks',
      eventTypes: ['scan_never_issued_serial', 'scan_never_issued_burst'],
      description: 'alerts',
    },
  ));
  api = await startTestApi(app, { ctx: { ...app.ctx, clock: () => now } });
});
afterAll(async () => {
  await api?.close();
  await app.close();
});

type Alert = { event_type: string; entity_id: string; payload: Record<string, unknown> };
const alerts = async () =>
  query<Alert>(
    app.db.em.fork(),
    `select event_type, entity_id, payload from mint_events where brand_id = ? and entity_type = 'scan' order by event_type, entity_id`,
    [brand.brandId],
  );
async function alertsUntil(done: (found: Alert[]) => boolean): Promise<Alert[]> {
  for (let i = 0; ; i++) {
    const found = await alerts();
    if (done(found) || i > 200) return found;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}
/** The rows of `sql` once `count` are there (an ingest call answers before the rules raise its alerts), or what is there after ~5 s. */
async function rowsUntil<T extends object>(count: number, sql: string, params: unknown[]): Promise<T[]> {
  for (let i = 0; ; i++) {
    const found = await query<T>(app.db.em.fork(), sql, params);
    if (found.length >= count || i > 200) return found;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}
const scan = (path: string, agent: string) =>
  fetch(`${api.baseUrl}${path}`, { headers: { accept: 'application/json', 'user-agent': agent } }).then((r) => r.text());

describe('the never-issued serial rule', () => {
  it('alerts once a day for a forged serial, never for a known unit, with a webhook delivery to the endpoint that wants it', async () => {
    const phone = (v: number) =>
      `Mozilla/5.0 (iPhone; CPU iPhone OS 17_${v} like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.0 Mobile/15E148 Safari/604.1`;
    for (const v of [1, 2, 3]) await scan(`/r/${slug}/01/${brand.gtin}/21/FORGED-0`, phone(v));
    await scan(`/r/${slug}/01/${brand.gtin}/21/${serials[0]}`, phone(1));
    const found = await alertsUntil((f) => f.length >= 1);
    await new Promise((resolve) => setTimeout(resolve, 400));
    expect(await alerts()).toEqual([
      {
        event_type: 'scan_never_issued_serial',
        entity_id: `${brand.gtin} FORGED-0`,
        payload: { gtin: brand.gtin, serial: 'FORGED-0', scanned_at: now.toISOString(), country: null, client_class: 'browser' },
      },
    ]);
    expect(found).toHaveLength(1);
    await drainWebhookFanout(app.ctx);
    const deliveries = await query<{ body: string | Record<string, unknown> }>(
      app.db.em.fork(),
      `select body from webhook_deliveries where brand_id = ? and endpoint_id = ? and event_type = 'scan_never_issued_serial'`,
      [brand.brandId, endpointId],
    );
    expect(deliveries).toHaveLength(1);
    expect(JSON.stringify(deliveries[0]!.body)).toContain('FORGED-0');
  });

  it('caps a brand at 20 serial alerts a minute and counts the rest into one burst alert', async () => {
    await Promise.all(Array.from({ length: 40 }, (_, i) => scan(`/r/${slug}/01/${brand.gtin}/21/GUESS-${i}`, `agent-${i}`)));
    const found = await alertsUntil((f) => f.some((a) => a.event_type === 'scan_never_issued_burst'));
    await new Promise((resolve) => setTimeout(resolve, 400));
    const all = await alerts();
    // FORGED-0 took one of the minute's 20.
    expect(all.filter((a) => a.event_type === 'scan_never_issued_serial')).toHaveLength(20);
    const bursts = all.filter((a) => a.event_type === 'scan_never_issued_burst');
    expect(bursts).toHaveLength(1);
    expect(bursts[0]!.payload).toMatchObject({ gtins: [brand.gtin], minute: '2026-04-02T10:00:00.000Z' });
    expect(Number(bursts[0]!.payload['scans'])).toBeGreaterThan(0);
    expect(found.length).toBeGreaterThan(0);
  });

  it('alerts once on scans of a unit whose batch was withdrawn (voided)', async () => {
    const other = await app.seedBrand();
    const { mintBatchId } = await mintCompleted(app.ctx, other, 2);
    const [{ serial }] = (await query<{ serial: string }>(app.db.em.fork(), 'select serial from mint_units where mint_batch_id = ? order by seq limit 1', [
      mintBatchId,
    ])) as [{ serial: string }];
    const [{ slug: otherSlug }] = (await query<{ slug: string }>(app.db.em.fork(), 'select slug from brands where id = ?', [other.brandId])) as [
      { slug: string },
    ];
    await setMintBatchStatus(app.ctx, { id: other.userId }, { brandId: other.brandId, mintBatchId, status: 'voided', reason: 'recall' });
    const phone = 'Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0 Mobile Safari/537.36';
    for (let i = 0; i < 3; i++) await scan(`/r/${otherSlug}/01/${other.gtin}/21/${serial}?v=${i}`, `${phone} ${i}`);
    let events: { entity_id: string; outcome: string }[] = [];
    for (let i = 0; i < 200 && events.length === 0; i++) {
      await new Promise((resolve) => setTimeout(resolve, 25));
      events = await query(
        app.db.em.fork(),
        `select entity_id, payload->>'outcome' as outcome from mint_events where brand_id = ? and event_type = 'scan_withdrawn_unit'`,
        [other.brandId],
      );
    }
    await new Promise((resolve) => setTimeout(resolve, 400));
    expect(
      await query(
        app.db.em.fork(),
        `select entity_id, payload->>'outcome' as outcome from mint_events where brand_id = ? and event_type = 'scan_withdrawn_unit'`,
        [other.brandId],
      ),
    ).toEqual([{ entity_id: `${other.gtin} ${serial}`, outcome: 'gone' }]);
    // The alert marked the unit suspect, for the brand to look at and clear.
    expect(await query(app.db.em.fork(), 'select suspect_rule from mint_units where brand_id = ? and serial = ?', [other.brandId, serial])).toEqual([
      { suspect_rule: 'withdrawn' },
    ]);
  });

  it('alerts on never-issued serials an edge sends, not on its known units', async () => {
    const other = await app.seedBrand();
    await setApiAccess(app.ctx, other.brandId, true);
    const { mintBatchId } = await mintCompleted(app.ctx, other, 1);
    const [{ serial }] = (await query<{ serial: string }>(app.db.em.fork(), 'select serial from mint_units where mint_batch_id = ?', [mintBatchId])) as [
      { serial: string },
    ];
    const key = (await createApiKey(app.ctx, { brandId: other.brandId, name: 'edge', scopes: ['scans:write'] })).key;
    const row = (identifier: string) => ({
      scannedAt: now.toISOString(),
      kind: 'serial',
      gtin: other.gtin,
      identifier,
      outcome: 'resolved',
      representation: 'redirect',
      country: 'BR',
    });
    const response = await fetch(`${api.baseUrl}/mint.v1.ScanService/RecordScanEvents`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': key },
      body: JSON.stringify({
        brandId: other.brandId,
        batchKey: 'edge-alerts',
        scans: [row(serial), row('EDGE-FORGED-1'), row('EDGE-FORGED-2'), row('EDGE-FORGED-1')],
      }),
    });
    expect(response.status).toBe(200);
    const events = await rowsUntil<{ entity_id: string; country: string }>(
      2,
      `select entity_id, payload->>'country' as country from mint_events where brand_id = ? and event_type = 'scan_never_issued_serial' order by entity_id`,
      [other.brandId],
    );
    expect(events).toEqual([
      { entity_id: `${other.gtin} EDGE-FORGED-1`, country: 'BR' },
      { entity_id: `${other.gtin} EDGE-FORGED-2`, country: 'BR' },
    ]);
  });

  it('alerts on never-issued serials sent to /v1/rpc/record_scan_event, as on the RPC', async () => {
    const other = await app.seedBrand();
    await setApiAccess(app.ctx, other.brandId, true);
    await mintCompleted(app.ctx, other, 1);
    const row = (identifier: string) => ({
      scanned_at: now.toISOString(),
      kind: 'serial',
      gtin: other.gtin,
      identifier,
      outcome: 'resolved',
      representation: 'redirect',
      country: 'AR',
    });
    const response = await fetch(`${api.baseUrl}/v1/rpc/record_scan_event`, {
      // A session of the API's clock (the file's fixed time).
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${await issueAccessToken({ ...app.ctx, clock: () => now }, other.userId)}` },
      body: JSON.stringify({ _brand_id: other.brandId, _batch_key: 'v1-alerts', _scans: [row('V1-FORGED-1'), row('V1-FORGED-1')] }),
    });
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({ ok: true, accepted: 2 });
    const events = await rowsUntil<{ entity_id: string; country: string }>(
      1,
      `select entity_id, payload->>'country' as country from mint_events where brand_id = ? and event_type = 'scan_never_issued_serial'`,
      [other.brandId],
    );
    expect(events).toEqual([{ entity_id: `${other.gtin} V1-FORGED-1`, country: 'AR' }]);
  });

  it('suspects a clone when one unit is scanned from two countries within a day', async () => {
    const other = await app.seedBrand();
    const { mintBatchId } = await mintCompleted(app.ctx, other, 1);
    const [{ serial }] = (await query<{ serial: string }>(app.db.em.fork(), 'select serial from mint_units where mint_batch_id = ?', [mintBatchId])) as [
      { serial: string },
    ];
    const key = (await createApiKey(app.ctx, { brandId: other.brandId, name: 'edge', scopes: ['scans:write'] })).key;
    const row = (country: string, at: string) => ({
      scannedAt: at,
      kind: 'serial',
      gtin: other.gtin,
      identifier: serial,
      outcome: 'resolved',
      representation: 'redirect',
      country,
    });
    const send = (batchKey: string, scans: object[]) =>
      fetch(`${api.baseUrl}/mint.v1.ScanService/RecordScanEvents`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-api-key': key },
        body: JSON.stringify({ brandId: other.brandId, batchKey, scans }),
      }).then((r) => r.status);
    expect(await send('clone-1', [row('DE', '2026-04-02T01:00:00Z'), row('DE', '2026-04-02T02:00:00Z')])).toBe(200);
    expect(await send('clone-2', [row('JP', '2026-04-02T09:00:00Z')])).toBe(200);
    const events = await rowsUntil<{ entity_id: string; reason: string; countries: string }>(
      1,
      `select entity_id, payload->>'reason' as reason, payload->>'countries' as countries from mint_events where brand_id = ? and event_type = 'scan_clone_suspected'`,
      [other.brandId],
    );
    expect(events).toEqual([{ entity_id: `${other.gtin} ${serial}`, reason: 'countries', countries: '["DE", "JP"]' }]);
  });
});
