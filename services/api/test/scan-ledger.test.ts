// The scan ledger over HTTP: each resolver scan is stored with the unit's state, a client class, a
// country only a trusted proxy may give and a visitor hash of the day, never with the client's
// address or User-Agent (neither in a column nor in a log line).

import { query } from '../../../test/support/sql.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mintCompleted } from '../../../test/support/pack-fixtures.ts';
import { setupUseCases, type SeededBrand, type UseCaseBundle } from '../../../test/support/usecases.ts';
import { startTestApi, type TestApi } from './support.ts';

let app: UseCaseBundle;
let brand: SeededBrand;
let slug: string;
let serials: string[];
const running: TestApi[] = [];

/** An address and an agent no other test uses, to search the ledger and the logs for. */
const clientIp = '203.0.113.77';
const agent = 'Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.0 Mobile/15E148 Safari/604.1 Zq7d1f';

beforeAll(async () => {
  app = await setupUseCases();
  brand = await app.seedBrand();
  const { mintBatchId } = await mintCompleted(app.ctx, brand, 6);
  [{ slug }] = (await query<{ slug: string }>(app.db.em.fork(), 'select slug from brands where id = ?', [brand.brandId])) as [{ slug: string }];
  serials = (await query<{ serial: string }>(app.db.em.fork(), 'select serial from mint_units where mint_batch_id = ? order by seq', [mintBatchId])).map(
    (r) => r.serial,
  );
});
afterAll(async () => {
  for (const api of running) await api.close();
  await app.close();
});

async function start(config: Parameters<typeof startTestApi>[1] = {}): Promise<TestApi> {
  const api = await startTestApi(app, config);
  running.push(api);
  return api;
}

type Row = Record<string, unknown> & { identifier: string | null; visitor: string | null; country: string | null; client_class: string | null };
/** The rows of `identifiers`, once all of them are written (the recorder writes within a quarter second). */
async function rowsOf(identifiers: readonly string[]): Promise<Row[]> {
  for (let i = 0; ; i++) {
    const found = await query<Row>(app.db.em.fork(), 'select * from scan_events where brand_id = ? and identifier in (?) order by id', [
      brand.brandId,
      identifiers,
    ]);
    if (new Set(found.map((r) => r.identifier)).size === identifiers.length || i > 200) return found;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

const scan = (api: TestApi, path: string, headers: Record<string, string>) =>
  fetch(`${api.baseUrl}${path}`, { headers, redirect: 'manual' }).then(async (r) => ({ status: r.status, body: await r.text() }));

describe('the scan ledger', () => {
  it('stores the unit state, class, trusted country and a visitor hash, and neither the address nor the agent in any column or log line', async () => {
    const api = await start({ config: { trustedProxies: ['127.0.0.1/32', '::1/128'], scanCountryHeader: 'cf-ipcountry' } });
    const headers = { 'user-agent': agent, 'x-forwarded-for': clientIp, 'cf-ipcountry': 'de', accept: 'application/json' };
    expect((await scan(api, `/r/${slug}/01/${brand.gtin}/21/${serials[0]}`, headers)).status).toBe(200);
    expect((await scan(api, `/r/${slug}/01/${brand.gtin}/21/NEVER-ISSUED-1`, headers)).status).toBe(200);
    expect(
      (
        await scan(api, `/r/${slug}/01/${brand.gtin}/21/${serials[1]}`, {
          ...headers,
          'user-agent': 'Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)',
        })
      ).status,
    ).toBe(200);
    const rows = await rowsOf([serials[0]!, 'NEVER-ISSUED-1', serials[1]!]);
    expect(
      rows.map((r) => ({
        identifier: r.identifier,
        unit_known: r.unit_known,
        unit_status: r.unit_status,
        country: r.country,
        client_class: r.client_class,
        source: r.source,
      })),
    ).toEqual([
      { identifier: serials[0], unit_known: true, unit_status: 'active', country: 'DE', client_class: 'browser', source: 'resolver' },
      { identifier: 'NEVER-ISSUED-1', unit_known: false, unit_status: null, country: 'DE', client_class: 'browser', source: 'resolver' },
      { identifier: serials[1], unit_known: true, unit_status: 'active', country: 'DE', client_class: 'bot', source: 'resolver' },
    ]);
    expect(rows[0]!.visitor).toMatch(/^[A-Za-z0-9_-]{22}$/);
    // One visitor (address and agent) on one day: one hash; another agent: another.
    expect(rows[1]!.visitor).toBe(rows[0]!.visitor);
    expect(rows[2]!.visitor).not.toBe(rows[0]!.visitor);
    // Every column of every row of the table, as text: no trace of the address or the agent.
    const everything = (await query<{ row: string }>(app.db.em.fork(), 'select row_to_json(e)::text as row from scan_events e')).map((r) => r.row).join('\n');
    for (const secret of [clientIp, agent, 'Zq7d1f', 'iPhone', 'Googlebot']) expect(everything).not.toContain(secret);
    expect(api.rawLogs().length).toBeGreaterThan(0);
    for (const secret of [clientIp, 'Zq7d1f', 'Googlebot']) expect(api.rawLogs()).not.toContain(secret);
  });

  it('ignores the country header from a peer that is not a trusted proxy, whoever sent it', async () => {
    // The test's TCP peer is 127.0.0.1, which this API does not trust.
    const api = await start({ config: { trustedProxies: ['10.9.9.9/32'], scanCountryHeader: 'cf-ipcountry' } });
    const untrusted = await start({ config: { scanCountryHeader: 'cf-ipcountry' } });
    const headers = { 'user-agent': agent, 'cf-ipcountry': 'FR', 'x-forwarded-for': clientIp, accept: 'application/json' };
    await scan(api, `/r/${slug}/01/${brand.gtin}/21/${serials[2]}`, headers);
    await scan(untrusted, `/r/${slug}/01/${brand.gtin}/21/${serials[3]}`, headers);
    const rows = await rowsOf([serials[2]!, serials[3]!]);
    expect(rows.map((r) => [r.identifier, r.country, r.client_class])).toEqual([
      [serials[2], null, 'browser'],
      [serials[3], null, 'browser'],
    ]);
  });

  it('rotates the visitor salt daily: the same visitor hashes alike within a day and unrelated the next day', async () => {
    let now = new Date('2026-03-10T09:00:00.000Z');
    const api = await start({ ctx: { ...app.ctx, clock: () => now } });
    const headers = { 'user-agent': agent, accept: 'application/json' };
    await scan(api, `/r/${slug}/01/${brand.gtin}/21/DAY1-A`, headers);
    now = new Date('2026-03-10T23:59:00.000Z');
    await scan(api, `/r/${slug}/01/${brand.gtin}/21/DAY1-B`, headers);
    now = new Date('2026-03-11T00:01:00.000Z');
    await scan(api, `/r/${slug}/01/${brand.gtin}/21/DAY2-A`, headers);
    await scan(api, `/r/${slug}/01/${brand.gtin}/21/DAY2-B`, headers);
    const rows = await rowsOf(['DAY1-A', 'DAY1-B', 'DAY2-A', 'DAY2-B']);
    const hash = Object.fromEntries(rows.map((r) => [r.identifier, r.visitor]));
    expect(hash['DAY1-B']).toBe(hash['DAY1-A']);
    expect(hash['DAY2-B']).toBe(hash['DAY2-A']);
    expect(hash['DAY2-A']).not.toBe(hash['DAY1-A']);
    expect(rows.map((r) => new Date(r['scanned_at'] as string).toISOString().slice(0, 10))).toEqual(['2026-03-10', '2026-03-10', '2026-03-11', '2026-03-11']);
  });
});
