// The resolver reflects a serial's lifecycle: a recalled item's answers lead with the recall
// (gs1:recallStatus); a decommissioned, scrapped or returned item is not in circulation (410, with
// its public reason) in JSON, linkset and page; an item never commissioned says so; a reactivated
// one resolves again. A recalled item keeps its hosted passport, the recall leading every answer
// that carries it. The scans record the reason, so the scan rules alert per reason.

import { Writable } from 'node:stream';
import { createLogger } from '@mint/runtime';
import { moveSerials, publishPassport, updatePassportDraft, type MoveSerialsInput } from '@mint/usecases';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mintCompleted } from '../../../test/support/pack-fixtures.ts';
import { query, setPassportUrl } from '../../../test/support/sql.ts';
import { setupUseCases, type SeededBrand, type UseCaseBundle } from '../../../test/support/usecases.ts';
import { startApi, type RunningApi } from '../src/start.ts';

let app: UseCaseBundle;
let api: RunningApi;
let baseUrl: string;
let brand: SeededBrand;
let slug: string;
let serials: string[];
const passport = 'https://passports.example/acme/shoe';

beforeAll(async () => {
  app = await setupUseCases();
  brand = await app.seedBrand();
  const { mintBatchId } = await mintCompleted(app.ctx, brand, 10);
  [{ slug }] = (await query<{ slug: string }>(app.db.em.fork(), 'select slug from brands where id = ?', [brand.brandId])) as [{ slug: string }];
  serials = (await query<{ serial: string }>(app.db.em.fork(), 'select serial from mint_units where mint_batch_id = ? order by seq', [mintBatchId])).map(
    (r) => r.serial,
  );
  await setPassportUrl(app.db.em.fork(), brand.brandId, passport);
  api = await startApi({
    ctx: app.ctx,
    config: { port: 0, host: '127.0.0.1', shutdownTimeoutMs: 2_000 },
    logger: createLogger({ logLevel: 'silent' }, {}, new Writable({ write: (_c, _e, done) => done() })),
    readiness: async () => ({ ok: true, checks: {} }),
  });
  baseUrl = `http://127.0.0.1:${api.port}`;
});
afterAll(async () => {
  await api?.close();
  await app?.close();
});

let keys = 0;
const move = (input: Omit<MoveSerialsInput, 'brandId' | 'idempotencyKey'>) =>
  moveSerials(app.ctx, { id: brand.userId }, { brandId: brand.brandId, idempotencyKey: `k${++keys}`, ...input });

async function get(serial: string, headers: Record<string, string> = {}) {
  const response = await fetch(`${baseUrl}/r/${slug}/01/${brand.gtin}/21/${serial}`, { headers, redirect: 'manual' });
  return { status: response.status, location: response.headers.get('location'), type: response.headers.get('content-type'), body: await response.text() };
}
const browser = { accept: 'text/html', 'accept-language': 'en' };
const json = { accept: 'application/json' };
const linkset = { accept: 'application/linkset+json' };

describe('the resolver and the serial lifecycle', () => {
  it("leads a recalled item's answers with the recall, and resolves it again once reactivated", async () => {
    const serial = serials[0]!;
    expect((await get(serial)).status).toBe(307);
    await move({ action: 'decommission', reason: 'recalled', target: { serials: [serial] } });
    const page = await get(serial, browser);
    expect([page.status, page.location]).toEqual([200, null]);
    expect(page.body).toContain('Recalled');
    expect(page.body.indexOf('Recalled')).toBeLessThan(page.body.indexOf(passport));
    const de = await get(serial, { accept: 'text/html', 'accept-language': 'de' });
    expect(de.body).toContain('Zurückgerufen');
    const answer = JSON.parse((await get(serial, json)).body) as Record<string, unknown>;
    expect(Object.keys(answer)[0]).toBe('recall_status');
    expect(answer).toMatchObject({
      recall_status: 'recalled',
      isProductRecalled: true,
      unit: { state: 'decommissioned', reason: 'recalled', in_circulation: false },
    });
    const set = JSON.parse((await get(serial, linkset)).body) as { linkset: Record<string, unknown>[] };
    const unitLevel = set.linkset.at(-1)!;
    expect(unitLevel['itemDescription']).toMatch(/RECALLED/);
    expect(unitLevel['https://ref.gs1.org/voc/recallStatus']).toEqual([
      expect.objectContaining({ title: 'Recall status: recalled', type: 'application/json' }),
    ]);
    // A link type asked for by name is still followed.
    const named = await get(`${serial}?linkType=gs1:pip`);
    expect([named.status, named.location, named.body]).toEqual([307, passport, '']);
    await move({ action: 'reactivate', reason: null, target: { serials: [serial] } });
    // (A plain scan may now show the scan rules' caution: the recalled unit was scanned while withdrawn.)
    const back = await get(serial, json);
    expect(back.status).toBe(200);
    expect(JSON.parse(back.body)).toMatchObject({ ok: true, target: passport, unit: { state: 'commissioned', in_circulation: true } });
  });

  it("keeps a recalled item's hosted passport reachable, the recall leading: plain scan, gs1:dpp by name, JSON and the credential", async () => {
    // A brand whose product has a hosted passport and no external passport URL.
    const hosting = await app.seedBrand();
    const { mintBatchId } = await mintCompleted(app.ctx, hosting, 2);
    const [{ slug: hostingSlug }] = (await query<{ slug: string }>(app.db.em.fork(), 'select slug from brands where id = ?', [hosting.brandId])) as [
      { slug: string },
    ];
    const [serial] = (
      await query<{ serial: string }>(app.db.em.fork(), 'select serial from mint_units where mint_batch_id = ? order by seq', [mintBatchId])
    ).map((r) => r.serial);
    const owner = { id: hosting.userId };
    const described = 'Traction battery 300 Ah';
    await updatePassportDraft(app.ctx, owner, {
      brandId: hosting.brandId,
      productId: hosting.productId,
      lot: null,
      serial: null,
      expectedRevision: null,
      content: { description: { en: described }, manufacturer: { name: 'Example Cells GmbH', id: 'https://example.com/company/42' } },
    });
    await publishPassport(app.ctx, owner, { brandId: hosting.brandId, productId: hosting.productId, lot: null, serial: null });
    const at = async (query: string, headers: Record<string, string>) => {
      const response = await fetch(`${baseUrl}/r/${hostingSlug}/01/${hosting.gtin}/21/${serial}${query}`, { headers, redirect: 'manual' });
      return { status: response.status, location: response.headers.get('location'), body: await response.text() };
    };
    const live = await at('', browser);
    expect(live.status).toBe(200);
    expect(live.body).toContain(described);
    await moveSerials(app.ctx, owner, {
      brandId: hosting.brandId,
      idempotencyKey: 'recall',
      action: 'decommission',
      reason: 'recalled',
      target: { serials: [serial!] },
    });
    for (const [name, answer] of [
      ['plain scan', await at('', browser)],
      ['gs1:dpp', await at('?linkType=gs1:dpp', browser)],
    ] as const) {
      expect([name, answer.status, answer.location]).toEqual([name, 200, null]);
      expect(answer.body, name).toContain('Recalled');
      expect(answer.body, name).toContain(described);
      expect(answer.body.indexOf('Recalled'), name).toBeLessThan(answer.body.indexOf('Product passport'));
      expect(answer.body, name).not.toContain('Genuine');
    }
    const answer = JSON.parse((await at('', json)).body) as Record<string, unknown>;
    expect(Object.keys(answer)[0]).toBe('recall_status');
    expect(answer).toMatchObject({ recall_status: 'recalled', unit: { reason: 'recalled' }, passport: { version: 1 } });
    const credential = await at('', { accept: 'application/ld+json' });
    expect(credential.status).toBe(200);
    expect(credential.body).toContain(described);
  });

  it('says a destroyed, scrapped or returned item is not in circulation with its public reason, a theft without', async () => {
    await move({ action: 'decommission', reason: 'destroyed', target: { serials: [serials[1]!] } });
    await move({ action: 'decommission', reason: 'stolen', target: { serials: [serials[2]!] } });
    const destroyed = await get(serials[1]!, json);
    expect(destroyed.status).toBe(410);
    expect(JSON.parse(destroyed.body)).toMatchObject({
      ok: false,
      error: 'not_in_circulation',
      state: 'decommissioned',
      reason: 'destroyed',
      unit: { serial: serials[1] },
    });
    const stolen = JSON.parse((await get(serials[2]!, json)).body) as Record<string, unknown>;
    expect(stolen).toMatchObject({ error: 'not_in_circulation', reason: null, unit: { reason: null } });
    expect(JSON.stringify(stolen)).not.toContain('stolen');
    const page = await get(serials[1]!, { accept: 'text/html', 'accept-language': 'fr' });
    expect([page.status, page.location]).toEqual([410, null]);
    expect(page.body).toContain('Hors circulation');
    expect(page.body).toContain('(détruit)');
    const set = await get(serials[1]!, linkset);
    expect(set.status).toBe(410);
    expect(set.body).toContain('not in circulation: destroyed');
  });

  it('says an issued or encoded item was never commissioned', async () => {
    const fresh = await mintCompleted(app.ctx, brand, 2, { activationMode: 'first_scan' });
    const [first, second] = (
      await query<{ serial: string }>(app.db.em.fork(), 'select serial from mint_units where mint_batch_id = ? order by seq', [fresh.mintBatchId])
    ).map((r) => r.serial);
    await move({ action: 'encode', reason: null, target: { serials: [second!] } });
    await move({ action: 'scrap', reason: null, target: { serials: [second!] } });
    const issued = await get(first!, json);
    expect(issued.status).toBe(409);
    expect(JSON.parse(issued.body)).toMatchObject({ error: 'not_activated', unit: { state: 'issued', never_commissioned: true } });
    expect((await get(first!, browser)).body).toContain('never put it into circulation');
    expect((await get(first!, linkset)).body).toContain('never commissioned');
    const scrapped = await get(second!, browser);
    expect(scrapped.status).toBe(410);
    expect(scrapped.body).toContain('label was destroyed before use');
  });

  it("records the reason as the scan's unit status, which the scan rules read per reason", async () => {
    await move({ action: 'decommission', reason: 'expired', target: { serials: [serials[3]!] } });
    await get(serials[3]!, json);
    let rows: { unit_status: string | null }[] = [];
    for (let i = 0; i < 50 && rows.length === 0; i++) {
      rows = await query<{ unit_status: string | null }>(app.db.em.fork(), 'select unit_status from scan_events where brand_id = ? and identifier = ?', [
        brand.brandId,
        serials[3],
      ]);
      if (rows.length === 0) await new Promise((r) => setTimeout(r, 100));
    }
    expect(rows.map((r) => r.unit_status)).toContain('expired');
  });
});
