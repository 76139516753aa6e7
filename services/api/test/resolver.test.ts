// The public resolver end to end over HTTP: each route and state, the cross-tenant case, content
// negotiation, and scan events recorded without ever holding up an answer.

import { Writable } from 'node:stream';
import { query, setPassportUrl, setBrandDefaultPassportUrl } from '../../../test/support/sql.ts';
import { defaultScanFloodLimits } from '@mint/domain';
import { createLogger } from '@mint/runtime';
import { activateMintUnits, maintainScanLedger, setMintBatchStatus, type ScanRecorderOptions } from '@mint/usecases';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mintCompleted } from '../../../test/support/pack-fixtures.ts';
import { sampleValue, scrape } from '../../../test/support/prometheus.ts';
import { setupUseCases, type SeededBrand, type UseCaseBundle } from '../../../test/support/usecases.ts';
import { resolverBodies } from '@mint/pages';
import { startApi, type RunningApi } from '../src/start.ts';

let app: UseCaseBundle;
const running: RunningApi[] = [];
let baseUrl: string;

interface Fixture {
  brand: SeededBrand;
  slug: string;
  serials: string[];
  batchId: string;
}

let acme: Fixture;
let globex: Fixture;
let tokenBrand: Fixture;
const passport = 'https://passports.example/acme/shoe';
const brandDefault = 'https://globex.example/products';

async function startWith(scanRecorder?: ScanRecorderOptions): Promise<string> {
  const api = await startApi({
    ctx: app.ctx,
    config: { port: 0, host: '127.0.0.1', shutdownTimeoutMs: 2_000 },
    logger: createLogger({ logLevel: 'silent' }, {}, new Writable({ write: (_c, _e, done) => done() })),
    readiness: async () => ({ ok: true, checks: {} }),
    ...(scanRecorder === undefined ? {} : { scanRecorder }),
  });
  running.push(api);
  return `http://127.0.0.1:${api.port}`;
}

async function fixture(options: { gtin?: string | null; quantity?: number } = {}): Promise<Fixture> {
  const brand = await app.seedBrand(options.gtin === undefined ? {} : { gtin: options.gtin });
  const { mintBatchId } = await mintCompleted(app.ctx, brand, options.quantity ?? 3);
  const [{ slug }] = (await query<{ slug: string }>(app.db.em.fork(), 'select slug from brands where id = ?', [brand.brandId])) as [{ slug: string }];
  const serials = (await query<{ serial: string }>(app.db.em.fork(), 'select serial from mint_units where mint_batch_id = ? order by seq', [mintBatchId])).map(
    (r) => r.serial,
  );
  return { brand, slug, serials, batchId: mintBatchId };
}

type Answer = { status: number; location: string | null; type: string | null; link: string | null; body: string };
async function get(path: string, headers: Record<string, string> = {}, base = baseUrl): Promise<Answer> {
  const response = await fetch(`${base}${path}`, { headers, redirect: 'manual' });
  return {
    status: response.status,
    location: response.headers.get('location'),
    type: response.headers.get('content-type'),
    link: response.headers.get('link'),
    body: await response.text(),
  };
}
const browser = { accept: 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8' };
const json = { accept: 'application/json' };

beforeAll(async () => {
  app = await setupUseCases();
  acme = await fixture();
  globex = await fixture();
  tokenBrand = await fixture({ gtin: null });
  await setPassportUrl(app.db.em.fork(), acme.brand.brandId, passport);
  await setBrandDefaultPassportUrl(app.db.em.fork(), globex.brand.brandId, brandDefault);
  await setBrandDefaultPassportUrl(app.db.em.fork(), tokenBrand.brand.brandId, brandDefault);
  baseUrl = await startWith();
});
afterAll(async () => {
  for (const api of running) await api.close();
  await app.close();
});

describe('routes', () => {
  it('redirects a browser scanning a serial to the product passport (307), with a linkset Link header', async () => {
    const path = `/r/${acme.slug}/01/${acme.brand.gtin}/21/${acme.serials[0]}`;
    const answer = await get(path, browser);
    expect(answer.status).toBe(307);
    expect(answer.location).toBe(passport);
    expect(answer.link).toBe(`<http://127.0.0.1:8080${path}?linkType=linkset>; rel="linkset"; type="application/linkset+json"`);
  });

  it('walks up to the brand default when the product has no passport page', async () => {
    const answer = await get(`/r/${globex.slug}/01/${globex.brand.gtin}/21/${globex.serials[0]}`, browser);
    expect([answer.status, answer.location]).toEqual([307, brandDefault]);
  });

  it('shows a browser what it scanned when neither product nor brand has a passport page', async () => {
    const bare = await fixture();
    const path = `/r/${bare.slug}/01/${bare.brand.gtin}/21/${bare.serials[0]}`;
    const page = await get(path, browser);
    expect([page.status, page.type, page.location]).toEqual([200, 'text/html; charset=utf-8', null]);
    expect(page.body).toContain('Product One');
    expect(page.body).toContain('Genuine');
    expect(page.body).toContain('The brand has not published a passport page for this product yet.');
    expect(JSON.parse((await get(path, json)).body)).toMatchObject({ unit: { serial: bare.serials[0] }, target: null });
  });

  it('resolves the GTIN alone, and moves a GTIN-13 written without its leading zero to the GTIN-14 form (301)', async () => {
    expect((await get(`/r/${acme.slug}/01/${acme.brand.gtin}`)).location).toBe(passport);
    const short = await get(`/r/${acme.slug}/01/${acme.brand.gtin.slice(1)}?17=261231`);
    expect([short.status, short.location]).toEqual([301, `http://127.0.0.1:8080/r/${acme.slug}/01/${acme.brand.gtin}?17=261231`]);
  });

  it('resolves a lot, and answers 410 once its batch is voided', async () => {
    const { mintBatchId } = await mintCompleted(app.ctx, acme.brand, 10, { identityMode: 'batch', lots: [{ lotCode: 'LOT-7', qty: 10 }] });
    const path = `/r/${acme.slug}/01/${acme.brand.gtin}/10/LOT-7`;
    expect(await get(path, json)).toMatchObject({ status: 200 });
    expect(JSON.parse((await get(path, json)).body)).toMatchObject({ lot: { lot_code: 'LOT-7', qty: 10 }, target: passport });
    expect((await get(path, browser)).location).toBe(passport);
    await setMintBatchStatus(app.ctx, { id: acme.brand.userId }, { brandId: acme.brand.brandId, mintBatchId, status: 'voided', reason: null });
    const gone = await get(path, json);
    expect(gone.status).toBe(410);
    expect(JSON.parse(gone.body)).toEqual(resolverBodies.gone);
  });

  it('resolves a token of a product without GTIN at /u/, and not under a GTIN', async () => {
    const answer = await get(`/r/${tokenBrand.slug}/u/${tokenBrand.serials[0]}`, browser);
    expect([answer.status, answer.location]).toEqual([307, brandDefault]);
    expect((await get(`/r/${acme.slug}/u/${acme.serials[0]}`)).status).toBe(404);
  });
});

describe('caching', () => {
  it('keeps every answer about a unit and every refusal out of caches, lets shared caches keep GTIN and lot answers under surrogate keys, all varying by Accept and Accept-Language', async () => {
    const unit = `/r/${acme.slug}/01/${acme.brand.gtin}/21/${acme.serials[0]}`;
    const answers = [
      await fetch(`${baseUrl}${unit}`, { headers: browser, redirect: 'manual' }),
      await fetch(`${baseUrl}${unit}?linkType=linkset`, { redirect: 'manual' }),
      await fetch(`${baseUrl}${unit}`, { headers: json, redirect: 'manual' }),
      await fetch(`${baseUrl}/r/${acme.slug}/01/${acme.brand.gtin}/21/UNKNOWN1`, { redirect: 'manual' }),
      await fetch(`${baseUrl}/r/${globex.slug}/01/${acme.brand.gtin}/21/${acme.serials[0]}`, { headers: json, redirect: 'manual' }),
      await fetch(`${baseUrl}/r/${acme.slug}/01/12345`, { redirect: 'manual' }),
      await fetch(`${baseUrl}/r/${globex.slug}/01/${acme.brand.gtin}`, { redirect: 'manual' }),
    ];
    // A serial the brand never minted gets its own page (404), not its product's.
    expect(answers.map((a) => a.status)).toEqual([307, 200, 200, 404, 404, 400, 404]);
    for (const answer of answers) {
      expect(answer.headers.get('cache-control'), String(answer.status)).toBe('no-store');
      expect([answer.headers.get('surrogate-key'), answer.headers.get('x-scan')], String(answer.status)).toEqual([null, null]);
      expect(
        answer.headers
          .get('vary')
          ?.split(/\s*,\s*/)
          .map((h) => h.toLowerCase())
          .sort(),
        String(answer.status),
      ).toEqual(['accept', 'accept-language']);
    }
    const cacheable = [
      await fetch(`${baseUrl}/r/${acme.slug}/01/${acme.brand.gtin}`, { headers: { ...browser, 'accept-language': 'de' }, redirect: 'manual' }),
      await fetch(`${baseUrl}/r/${acme.slug}/01/${acme.brand.gtin}?linkType=linkset`, { redirect: 'manual' }),
      await fetch(`${baseUrl}/r/${acme.slug}/01/${acme.brand.gtin}/10/NOLOT-Q`, { headers: json, redirect: 'manual' }),
    ];
    expect(cacheable.map((a) => a.status)).toEqual([307, 200, 200]);
    for (const answer of cacheable) {
      expect(answer.headers.get('cache-control'), String(answer.status)).toBe('public, max-age=0, s-maxage=300');
      expect(answer.headers.get('surrogate-key')?.split(' ')).toEqual(['resolver', `b-${acme.brand.brandId}`, `g-${acme.brand.brandId}-${acme.brand.gtin}`]);
      expect(
        answer.headers
          .get('vary')
          ?.split(/\s*,\s*/)
          .map((h) => h.toLowerCase())
          .sort(),
        String(answer.status),
      ).toEqual(['accept', 'accept-language']);
    }
    expect(Object.fromEntries(new URLSearchParams(cacheable[2]!.headers.get('x-scan')!))).toEqual({
      b: acme.brand.brandId,
      k: 'lot',
      g: acme.brand.gtin,
      l: 'NOLOT-Q',
      o: 'resolved',
      r: 'json',
    });
    const moved = await fetch(`${baseUrl}/r/${acme.slug}/01/${acme.brand.gtin.slice(1)}`, { redirect: 'manual' });
    expect([moved.status, moved.headers.get('cache-control')]).toEqual([301, 'public, max-age=86400']);
  });
});

describe('states', () => {
  it('answers 409 "not yet activated" for an inactive first_scan unit, then redirects once it is activated', async () => {
    const { mintBatchId } = await mintCompleted(app.ctx, acme.brand, 2, { activationMode: 'first_scan' });
    const [{ serial }] = (await query<{ serial: string }>(app.db.em.fork(), 'select serial from mint_units where mint_batch_id = ? order by seq limit 1', [
      mintBatchId,
    ])) as [{ serial: string }];
    const path = `/r/${acme.slug}/01/${acme.brand.gtin}/21/${serial}`;
    const inactive = await get(path, json);
    expect(inactive.status).toBe(409);
    expect(JSON.parse(inactive.body)).toMatchObject({
      ...resolverBodies.not_activated,
      unit: { serial, state: 'issued', in_circulation: false, never_commissioned: true },
    });
    const page = await get(path, browser);
    expect([page.status, page.type]).toEqual([409, 'text/html; charset=utf-8']);
    expect(page.body).toContain('not been activated yet');
    await activateMintUnits(app.ctx, { id: acme.brand.userId }, { brandId: acme.brand.brandId, mintBatchId });
    expect((await get(path, browser)).status).toBe(307);
  });

  it("answers 410 for a voided batch's units", async () => {
    const voided = await mintCompleted(app.ctx, acme.brand, 1);
    const [{ serial }] = (await query<{ serial: string }>(app.db.em.fork(), 'select serial from mint_units where mint_batch_id = ?', [voided.mintBatchId])) as [
      { serial: string },
    ];
    const path = `/r/${acme.slug}/01/${acme.brand.gtin}/21/${serial}`;
    expect((await get(path)).status).toBe(307);
    await setMintBatchStatus(
      app.ctx,
      { id: acme.brand.userId },
      { brandId: acme.brand.brandId, mintBatchId: voided.mintBatchId, status: 'voided', reason: 'recall' },
    );
    const gone = await get(path, browser);
    expect([gone.status, gone.location]).toEqual([410, null]);
  });
});

describe('tenancy', () => {
  it("gives another brand's identity, a wrong GTIN, an unknown token and an unknown brand the same 404 body, and a malformed path a 400", async () => {
    const unknown = await get(`/r/${acme.slug}/01/${globex.brand.gtin}/21/AAAAAAAAAAAAAAAAAAAA`, json);
    expect(unknown.status).toBe(404);
    const cases = [
      `/r/${acme.slug}/01/${globex.brand.gtin}/21/${globex.serials[0]}`,
      `/r/${acme.slug}/01/${globex.brand.gtin}/21/${acme.serials[0]}`,
      `/r/${globex.slug}/01/${acme.brand.gtin}/21/${acme.serials[0]}`,
      `/r/${globex.slug}/01/${acme.brand.gtin}`,
      `/r/${acme.slug}/u/${tokenBrand.serials[0]}`,
      `/r/no-such-brand/01/${acme.brand.gtin}/21/${acme.serials[0]}`,
    ];
    for (const path of cases) {
      const answer = await get(path, json);
      expect([answer.status, answer.body], path).toEqual([404, unknown.body]);
    }
    expect(JSON.parse(unknown.body)).toEqual(resolverBodies.not_found);
    const malformed = await get(`/r/${acme.slug}/01/${acme.brand.gtin}/99/x`, json);
    expect([malformed.status, JSON.parse(malformed.body).error]).toEqual([400, 'bad_request']);
    const page = await get(`/r/${acme.slug}/01/${globex.brand.gtin}/21/${globex.serials[0]}`, browser);
    expect([page.status, page.body]).toEqual([404, (await get(`/r/${acme.slug}/01/${globex.brand.gtin}/21/AAAAAAAAAAAAAAAAAAAA`, browser)).body]);
  });

  it("walks a serial the brand never minted (another brand's serial under its own GTIN included) up to its product, flagged unknown; a browser gets the not-issued page", async () => {
    for (const serial of ['AAAAAAAAAAAAAAAAAAAA', globex.serials[0]!]) {
      const path = `/r/${acme.slug}/01/${acme.brand.gtin}/21/${serial}`;
      const page = await get(path, browser);
      expect([page.status, page.location, page.type]).toEqual([404, null, 'text/html; charset=utf-8']);
      expect(page.body).toContain('Not issued by this brand');
      const body = JSON.parse((await get(path, json)).body);
      expect(body).toMatchObject({
        ok: true,
        unit: { serial, gtin: acme.brand.gtin, status: 'unknown', known: false },
        product: { sku: 'SKU-1' },
        target: passport,
      });
      const linkset = JSON.parse((await get(path, { accept: 'application/linkset+json' })).body) as { linkset: { anchor: string; itemDescription: string }[] };
      expect(linkset.linkset.at(-1)).toEqual({
        anchor: `http://127.0.0.1:8080${path}`,
        itemDescription: `Product One, serial ${serial} (unknown: not a unit this brand minted)`,
      });
    }
  });
});

describe('concurrent scans', () => {
  it('answers each of many simultaneous scans for its own identity only, including foreign and wrong-GTIN ones', async () => {
    const cases: [string, number, string | null][] = [];
    for (let i = 0; i < 10; i++) {
      cases.push([`/r/${acme.slug}/01/${acme.brand.gtin}/21/${acme.serials[i % 3]}`, 307, passport]);
      cases.push([`/r/${globex.slug}/01/${globex.brand.gtin}/21/${globex.serials[i % 3]}`, 307, brandDefault]);
      cases.push([`/r/${acme.slug}/01/${globex.brand.gtin}/21/${globex.serials[i % 3]}`, 404, null]);
      // A serial globex never minted: its not-issued page, never its product's.
      cases.push([`/r/${globex.slug}/01/${globex.brand.gtin}/21/${acme.serials[i % 3]}`, 404, null]);
      cases.push([`/r/${acme.slug}/01/${globex.brand.gtin}/21/${acme.serials[i % 3]}`, 404, null]);
      cases.push([`/r/${tokenBrand.slug}/u/${tokenBrand.serials[i % 3]}`, 307, brandDefault]);
    }
    const answers = await Promise.all(cases.map(([path]) => get(path, browser)));
    expect(answers.map((a) => [a.status, a.location])).toEqual(cases.map(([, status, location]) => [status, location]));
  });
});

describe('content negotiation', () => {
  it('answers application/json with the unit and product data', async () => {
    const answer = await get(`/r/${acme.slug}/01/${acme.brand.gtin}/21/${acme.serials[1]}`, json);
    expect(answer.status).toBe(200);
    expect(answer.type).toBe('application/json; charset=utf-8');
    expect(JSON.parse(answer.body)).toEqual({
      ok: true,
      unit: {
        serial: acme.serials[1],
        gtin: acme.brand.gtin,
        status: 'active',
        activated_at: expect.any(String),
        digital_link: `http://127.0.0.1:8080/r/${acme.slug}/01/${acme.brand.gtin}/21/${acme.serials[1]}`,
        state: 'commissioned',
        in_circulation: true,
      },
      product: { name: 'Product One', sku: 'SKU-1', gtin: acme.brand.gtin, passport_url: passport },
      brand: { slug: acme.slug, name: 'Test Brand' },
      target: passport,
    });
  });

  it('answers an RFC 9264 linkset for Accept: application/linkset+json and for ?linkType=linkset', async () => {
    const path = `/r/${acme.slug}/01/${acme.brand.gtin}/21/${acme.serials[2]}`;
    const expected = {
      linkset: [
        {
          anchor: `http://127.0.0.1:8080/r/${acme.slug}/01/${acme.brand.gtin}`,
          itemDescription: 'Product One',
          'https://ref.gs1.org/voc/defaultLink': [{ href: passport, title: 'Product One' }],
          'https://ref.gs1.org/voc/pip': [{ href: passport, type: 'text/html', title: 'Product One' }],
        },
        { anchor: `http://127.0.0.1:8080${path}`, itemDescription: `Product One, serial ${acme.serials[2]}` },
      ],
    };
    for (const answer of [await get(path, { accept: 'application/linkset+json' }), await get(`${path}?linkType=linkset`, browser)]) {
      expect([answer.status, answer.type]).toEqual([200, 'application/linkset+json']);
      expect(JSON.parse(answer.body)).toEqual(expected);
    }
  });
});

describe('scan events', () => {
  async function scansOf(brandId: string) {
    return query<{ kind: string; outcome: string; representation: string; identifier: string | null; link_type: string | null; unit_known: boolean | null }>(
      app.db.em.fork(),
      'select kind, outcome, representation, identifier, link_type, unit_known from scan_events where brand_id = ? order by id',
      [brandId],
    );
  }

  it('records every resolution of a brand, in batches off the request path', async () => {
    const brand = await fixture();
    await setPassportUrl(app.db.em.fork(), brand.brand.brandId, passport);
    await get(`/r/${brand.slug}/01/${brand.brand.gtin}/21/${brand.serials[0]}`, browser);
    await get(`/r/${brand.slug}/01/${brand.brand.gtin}/21/${brand.serials[0]}`, json);
    await get(`/r/${brand.slug}/01/${brand.brand.gtin}/21/NOTASERIAL`, json);
    await get(`/r/${brand.slug}/01/${brand.brand.gtin}`, { accept: 'application/linkset+json' });
    let scans: Awaited<ReturnType<typeof scansOf>> = [];
    for (let i = 0; i < 100 && scans.length < 4; i++) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      scans = await scansOf(brand.brand.brandId);
    }
    expect(scans).toEqual([
      { kind: 'serial', outcome: 'resolved', representation: 'redirect', identifier: brand.serials[0], link_type: 'pip', unit_known: true },
      { kind: 'serial', outcome: 'resolved', representation: 'json', identifier: brand.serials[0], link_type: null, unit_known: true },
      { kind: 'serial', outcome: 'resolved', representation: 'json', identifier: 'NOTASERIAL', link_type: null, unit_known: false },
      { kind: 'gtin', outcome: 'resolved', representation: 'linkset', identifier: null, link_type: null, unit_known: null },
    ]);
    expect(sampleValue(await scrape(`${baseUrl}/metrics`), 'minting_scan_events_total', { result: 'written' })).toBeGreaterThanOrEqual(4);
  });

  it('keeps redirecting while the scan writer hangs or fails', async () => {
    let hangingCalls = 0;
    // The same scan from the same client twenty times: the flood gate is off, so each one reaches the writer.
    const hanging = await startWith({
      write: () => {
        hangingCalls++;
        return new Promise(() => {});
      },
      batchSize: 2,
      capacity: 3,
      flushIntervalMs: 1,
      flood: null,
    });
    let failingCalls = 0;
    const failing = await startWith({
      write: async () => {
        failingCalls++;
        throw new Error('database down');
      },
      batchSize: 1,
      flushIntervalMs: 1,
      flood: null,
    });
    const path = `/r/${acme.slug}/01/${acme.brand.gtin}/21/${acme.serials[0]}`;
    for (let i = 0; i < 20; i++) {
      for (const base of [hanging, failing]) {
        const answer = await get(path, browser, base);
        expect([answer.status, answer.location]).toEqual([307, passport]);
      }
    }
    expect(hangingCalls).toBe(1);
    expect(failingCalls).toBeGreaterThan(0);
    // Operators see the loss on /metrics: the hung writer holds the first batch (1 or 2 scans,
    // depending on when its timer fired), 3 wait in the queue, and the rest were dropped.
    const scanEvents = async (base: string, result: string) => sampleValue(await scrape(`${base}/metrics`), 'minting_scan_events_total', { result });
    expect([15, 16]).toContain(await scanEvents(hanging, 'dropped'));
    // Each of the 20 scans of the failing writer is tried once and counted as failed.
    for (let i = 0; i < 100 && (await scanEvents(failing, 'failed')) !== 20; i++) await new Promise((resolve) => setTimeout(resolve, 20));
    expect(await scanEvents(failing, 'failed')).toBe(20);
    expect(await scanEvents(failing, 'written')).toBeUndefined();
  });

  it('counts a flood from one client into a few rows, and a flood of never-issued serials into one sampled row, the scans counted exactly', async () => {
    const brand = await fixture();
    const base = await startWith({ flushIntervalMs: 10, flood: { windowMs: 2_000, unknownPerWindow: 20, maxTracked: 10_000 } });
    const forged = `/r/${brand.slug}/01/${brand.brand.gtin}/21/FORGED1`;
    const scan = (path: string) => fetch(`${base}${path}`, { headers: json }).then((r) => r.arrayBuffer());
    // 1,500 scans of one forged serial from one address, then 300 different forged serials.
    for (let round = 0; round < 75; round++) await Promise.all(Array.from({ length: 20 }, () => scan(forged)));
    for (let round = 0; round < 15; round++)
      await Promise.all(Array.from({ length: 20 }, (_, i) => scan(`/r/${brand.slug}/01/${brand.brand.gtin}/21/GUESS${round}x${i}`)));
    const ledger = async () =>
      (
        await query<{ rows: string; scans: string; sampled: string; flood: string | null }>(
          app.db.em.fork(),
          `select count(*) as rows, coalesce(sum(scans), 0) as scans, count(*) filter (where identifier is null) as sampled,
              sum(scans) filter (where identifier = 'FORGED1') as flood
         from scan_events where brand_id = ?`,
          [brand.brand.brandId],
        )
      )[0]!;
    let found = await ledger();
    for (let i = 0; i < 300 && Number(found.scans) < 1_800; i++) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      found = await ledger();
    }
    // Every scan is counted; the one address's 1,500 are a row and a row of repeats per 2 s window
    // they spanned, and the guesses beyond the brand's 20 a window are one sampled row per window.
    expect(Number(found.scans)).toBe(1_800);
    expect(Number(found.flood)).toBe(1_500);
    expect(Number(found.sampled)).toBeGreaterThanOrEqual(1);
    expect(Number(found.rows)).toBeLessThan(100);
  });

  it('holds the scan ledger to a few rows under a flood of anonymous scans, the database measured before and after', async () => {
    const brand = await fixture({ quantity: 3 });
    // Today's partition made beforehand, as the executor's sweeper does, so the flood pays no first allocation.
    await maintainScanLedger(app.ctx, { retentionDays: 0 });
    // The default budget (100 never-issued serials a brand a window), a 2 s window so the counted rows come soon.
    const base = await startWith({ flushIntervalMs: 10, flood: { ...defaultScanFloodLimits, windowMs: 2_000 } });
    const ledgerBytes = async () =>
      Number(
        (
          await query<{ bytes: string }>(
            app.db.em.fork(),
            `select coalesce(sum(pg_total_relation_size(inhrelid)), 0)::text as bytes from pg_inherits where inhparent = 'scan_events'::regclass`,
          )
        )[0]!.bytes,
      );
    const scans = async () =>
      Number(
        (
          await query<{ scans: string }>(app.db.em.fork(), 'select coalesce(sum(scans), 0)::text as scans from scan_events where brand_id = ?', [
            brand.brand.brandId,
          ])
        )[0]!.scans,
      );
    const before = await ledgerBytes();
    const databaseBefore = Number((await query<{ bytes: string }>(app.db.em.fork(), 'select pg_database_size(current_database())::text as bytes'))[0]!.bytes);
    // 3,000 anonymous scans: 2,000 guessed serials (each a different one) and 1,000 repeats of one unit, 20 at a time.
    const paths = [
      ...Array.from({ length: 2_000 }, (_, i) => `/r/${brand.slug}/01/${brand.brand.gtin}/21/GUESSED${i}`),
      ...Array.from({ length: 1_000 }, () => `/r/${brand.slug}/01/${brand.brand.gtin}/21/${brand.serials[0]}`),
    ];
    const started = Date.now();
    for (let i = 0; i < paths.length; i += 20)
      await Promise.all(paths.slice(i, i + 20).map((path) => fetch(`${base}${path}`, { headers: json }).then((r) => r.arrayBuffer())));
    for (let i = 0; i < 300 && (await scans()) < 3_000; i++) await new Promise((resolve) => setTimeout(resolve, 50));
    const windows = Math.ceil((Date.now() - started) / 2_000) + 1;
    expect(await scans()).toBe(3_000);
    const rows = Number(
      (await query<{ rows: string }>(app.db.em.fork(), 'select count(*)::text as rows from scan_events where brand_id = ?', [brand.brand.brandId]))[0]!.rows,
    );
    // A window stores at most the budget's 100 guesses one by one, a sampled row of the rest, and a row and a row of repeats of the unit.
    expect(rows).toBeLessThanOrEqual(windows * 103);
    const grown = (await ledgerBytes()) - before;
    const databaseGrown =
      Number((await query<{ bytes: string }>(app.db.em.fork(), 'select pg_database_size(current_database())::text as bytes'))[0]!.bytes) - databaseBefore;
    // Stored one by one, 3,000 scans take ~1.2 MB (~400 bytes a row with its indexes, bench:scans);
    // gated, the flood is a few hundred rows, whatever the number of scans in a window.
    expect(grown).toBeLessThan(Math.min(300_000, windows * 103 * 600));
    expect(databaseGrown).toBeLessThan(1_000_000);
  });
});
