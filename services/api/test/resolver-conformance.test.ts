// The resolver against the GS1-Conformant Resolver Standard 1.2: one test per SHALL this service
// covers, named after it (the wording of GS1's conformance list, gs1/GS1DL-resolver-testsuite
// Conformance1_2.txt, and of GS1's resolver test suite), over real HTTP. Every linkset an answer
// carries is validated against GS1's linkset schema (vendored in test/fixtures/standards/gs1-linkset).
//
// The link model (links at brand, GTIN, lot and serial level, several per identity) is exercised
// in resolver-links.test.ts: redirect to the requested linkType at the most specific level that
// has it, choice by Accept-Language (hreflang) and context, fwqs, links of other GS1 link types
// with their own titles, languages and media types, one default per request.
// The choice among several links of one type (the standard's link selection: context, media type
// by Accept, language by Accept-Language, the default, else 300 Multiple Choices with the
// candidates, never a guess) and gs1:defaultLinkMulti are named after their rules below.
// Not tested here:
// - "SHALL support HTTP Over TLS (HTTPS)": the deployment's ingress terminates TLS, not this process;
// - gs1:handledBy: this resolver does not redirect whole key ranges to another resolver.

import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Ajv } from 'ajv';
import digitalLink from 'digital-link.js';
import { query, run } from '../../../test/support/sql.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mintCompleted } from '../../../test/support/pack-fixtures.ts';
import { setupUseCases, type SeededBrand, type UseCaseBundle } from '../../../test/support/usecases.ts';
import { replaceLinks } from '@mint/usecases';
import { resolverBodies } from '../src/resolver/routes.ts';
import { startTestApi, type TestApi } from './support.ts';

const fixtures = join(import.meta.dirname, '../../../test/fixtures/standards/gs1-linkset');
const fixture = (name: string): unknown => JSON.parse(readFileSync(join(fixtures, name), 'utf8'));
// GS1's schemas use annotations of their own (`name`, `@id`): not strict, as GS1's test suite runs ajv.
const ajv = new Ajv({ strict: false, allErrors: true });
const validateGs1Linkset = ajv.compile(fixture('gs1-linkset-schema.json') as object);
const validateBasicLinkset = ajv.compile(fixture('linkset-schema.json') as object);

/** Asserts that a linkset validates against GS1's schema; returns it. */
function validLinkset(body: string): { linkset: Record<string, unknown>[] } {
  const linkset = JSON.parse(body) as { linkset: Record<string, unknown>[] };
  expect(validateGs1Linkset(linkset) ? [] : validateGs1Linkset.errors, body).toEqual([]);
  return linkset;
}

let app: UseCaseBundle;
let api: TestApi;
let baseUrl: string;
const origin = 'http://127.0.0.1:8080';
const passport = 'https://passports.example/shoe?from=resolver';
let brand: SeededBrand;
let slug: string;
let serial: string;
let dl: { gtin: string; serial: string; lot: string };

type Answer = { status: number; headers: Headers; body: string };
async function request(path: string, headers: Record<string, string> = {}, method = 'GET'): Promise<Answer> {
  const response = await fetch(`${baseUrl}${path}`, { method, headers, redirect: 'manual' });
  return { status: response.status, headers: response.headers, body: await response.text() };
}
const json = { accept: 'application/json' };
const browser = { accept: 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8' };
const linksetAccept = { accept: 'application/linkset+json' };

beforeAll(async () => {
  app = await setupUseCases();
  brand = await app.seedBrand();
  const minted = await mintCompleted(app.ctx, brand, 2);
  await mintCompleted(app.ctx, brand, 4, { identityMode: 'batch', lots: [{ lotCode: 'LOT-1', qty: 4 }] });
  [{ slug }] = (await query<{ slug: string }>(app.db.em.fork(), 'select slug from brands where id = ?', [brand.brandId])) as [{ slug: string }];
  [{ serial }] = (await query<{ serial: string }>(app.db.em.fork(), 'select serial from mint_units where mint_batch_id = ? order by seq limit 1', [minted.mintBatchId])) as [{ serial: string }];
  await run(app.db.em.fork(), 'update products set passport_url = ? where brand_id = ?', [passport, brand.brandId]);
  dl = { gtin: `/r/${slug}/01/${brand.gtin}`, serial: `/r/${slug}/01/${brand.gtin}/21/${serial}`, lot: `/r/${slug}/01/${brand.gtin}/10/LOT-1` };
  api = await startTestApi(app, { readiness: async () => ({ ok: true, checks: {} }) });
  baseUrl = api.baseUrl;
});
afterAll(async () => {
  await api?.close();
  await app?.close();
});

/** The compressed form of a path, made with GS1's toolkit (the brand's base keeps its slug). */
const compressed = (path: string) => digitalLink.Utils.compressWebUri(`${origin}${path}`).slice(origin.length);

describe('GS1-Conformant Resolver 1.2', () => {
  it('the linkset validator itself accepts GS1\'s valid examples and model linkset and refuses the invalid ones', () => {
    expect(validateGs1Linkset(fixture('valid-gs1-example.json'))).toBe(true);
    expect(validateGs1Linkset(fixture('model-linkset-serial.json'))).toBe(true);
    expect(validateGs1Linkset(fixture('invalid-gs1-example.json'))).toBe(false);
    expect(validateBasicLinkset(fixture('valid-basic-example.json'))).toBe(true);
    expect(validateBasicLinkset(fixture('invalid-basic-example.json'))).toBe(false);
    // An empty relation or a link without a title is what the schema must catch in our answers.
    expect(validateGs1Linkset({ linkset: [{ anchor: 'https://id.example/01/1', 'https://ref.gs1.org/voc/pip': [{ href: 'https://p.example' }] }] })).toBe(false);
  });

  it('SHALL support HTTP 1.1 (or higher) GET, HEAD and OPTIONS requests', async () => {
    const get = await request(dl.serial);
    const head = await request(dl.serial, {}, 'HEAD');
    expect([get.status, head.status]).toEqual([307, 307]);
    expect(head.headers.get('location')).toBe(get.headers.get('location'));
    const linksetHead = await request(`${dl.serial}?linkType=linkset`, {}, 'HEAD');
    expect([linksetHead.status, linksetHead.headers.get('content-type'), linksetHead.body]).toEqual([200, 'application/linkset+json', '']);
    expect(Number(linksetHead.headers.get('content-length'))).toBeGreaterThan(0);
    const options = await request(dl.serial, {}, 'OPTIONS');
    expect(options.status).toBe(204);
    expect(options.headers.get('access-control-allow-methods')).toBe('GET, HEAD, OPTIONS');
    expect((await request(dl.serial, {}, 'POST')).status).toBe(405);
  });

  it('SHALL support CORS', async () => {
    const answers = [
      await request(dl.serial), await request(`${dl.serial}?linkType=linkset`), await request(`/r/${slug}/01/${brand.gtin}/21/NOSUCHSERIAL`),
      await request(`/r/${slug}/01/09506000134353`), await request('/.well-known/gs1resolver'),
    ];
    for (const answer of answers) {
      expect(answer.headers.get('access-control-allow-origin')).toBe('*');
      expect(answer.headers.get('access-control-expose-headers')).toBe('Link, Location, Content-Type');
      expect(answer.headers.get('access-control-allow-methods')).toBe('GET, HEAD, OPTIONS');
    }
    const preflight = await request(dl.serial, {
      origin: 'https://app.example', 'access-control-request-method': 'GET', 'access-control-request-headers': 'accept, x-scanner',
    }, 'OPTIONS');
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get('access-control-allow-origin')).toBe('*');
    expect(preflight.headers.get('access-control-allow-headers')).toBe('accept, x-scanner');
    expect(preflight.body).toBe('');
  });

  it('SHALL be able to decompress a URI to generate a GS1 Digital Link URI', async () => {
    for (const path of [dl.serial, dl.gtin, `${dl.lot}?17=261231`]) {
      const plain = await request(path);
      const short = await request(compressed(path));
      expect([short.status, short.headers.get('location')], path).toEqual([plain.status, plain.headers.get('location')]);
    }
    expect((await request(`/r/${slug}/AAAA`)).status).toBe(400);
  });

  it('If handling a compressed request URI, it SHALL expose the uncompressed URI in the Link response header with a rel value of owl:sameAs', async () => {
    const answer = await request(compressed(`${dl.lot}?17=261231`));
    expect(answer.headers.get('link')).toContain(`<${origin}${dl.lot}?17=261231>; rel="owl:sameAs"`);
  });

  it('SHALL extract and syntactically validate the URI and report errors with an HTTP response code of 400', async () => {
    const gtin = brand.gtin;
    const bad = gtin.slice(0, 13) + String((Number(gtin[13]) + 1) % 10);
    const cases: [string, RegExp][] = [
      [`/r/${slug}/01/${bad}`, /check digit/],
      [`/r/${slug}/01/${gtin.slice(0, 11)}`, /digits/],
      [`/r/${slug}/01/${gtin}/21/${'A'.repeat(21)}`, /longer than 20/],
      [`/r/${slug}/01/${gtin}/10/${'A'.repeat(21)}`, /longer than 20/],
      [`/r/${slug}/01/${gtin}/22/${'A'.repeat(21)}`, /longer than 20/],
      [`/r/${slug}/01/${gtin}/21/a%20b`, /character set 82/],
      [`/r/${slug}/01/${gtin}/21/${serial}/10/LOT-1`, /out of order/],
      [`/r/${slug}/01/${gtin}/10/LOT-1/22/CPV`, /out of order/],
      [`/r/${slug}/01/${gtin}/99/x`, /not a key qualifier/],
      [`/r/${slug}/01/${gtin}/17/261231`, /data attributes go in the query string/],
      [`/r/${slug}/01/${gtin}/21/%E0%A4%A`, /percent-encoded/],
      [`/r/${slug}/01/${gtin}/21/%zz`, /percent-encoded/],
      [`/r/${slug}/01/${gtin}/foo`, /not a GS1 Application Identifier|has no value/],
      [`/r/${slug}/414/9506000000006`, /not served here/],
      [`/r/${slug}`, /no primary key/],
    ];
    for (const [path, reason] of cases) {
      const answer = await request(path, json);
      expect(answer.status, path).toBe(400);
      const body = JSON.parse(answer.body) as { ok: boolean; error: string; message: string };
      expect([body.ok, body.error], path).toEqual([false, 'bad_request']);
      expect(body.message, path).toMatch(reason);
      const page = await request(path, browser);
      expect([page.status, page.headers.get('content-type')], path).toEqual([400, 'text/html; charset=utf-8']);
    }
  });

  it('SHALL NOT use a 200 OK response code with a resource that indicates an error condition', async () => {
    const { mintBatchId } = await mintCompleted(app.ctx, brand, 1, { activationMode: 'first_scan' });
    const [{ serial: inactive }] = (await query<{ serial: string }>(app.db.em.fork(), 'select serial from mint_units where mint_batch_id = ?', [mintBatchId])) as [{ serial: string }];
    const errors: [string, number][] = [
      [`/r/${slug}/u/NOSUCHTOKEN`, 404], [`/r/${slug}/01/09506000134352/21/NOSUCHSERIAL`, 404], [`/r/no-such-brand/01/${brand.gtin}`, 404], [`/r/${slug}/01/09506000134352`, 404],
      [`${dl.serial}?linkType=gs1:nosuchlt`, 404], [`${dl.serial}?linkType=gs1:epil`, 404],
      [`/r/${slug}/01/${brand.gtin}/21/${inactive}`, 409], [`/r/${slug}/01/${brand.gtin}/99/x`, 400],
    ];
    for (const [path, status] of errors) {
      for (const headers of [json, browser, linksetAccept]) expect((await request(path, headers)).status, `${path} ${headers.accept}`).toBe(status);
    }
  });

  it('SHALL respond to a query parameter of linkType set to linkset by returning the linkset (RFC 9264), with the links of each level up to the primary key, the uncompressed URI as the subject', async () => {
    const answers = [
      await request(`${dl.serial}?linkType=linkset`, browser), await request(`${dl.serial}?linkType=all`), await request(dl.serial, linksetAccept),
      await request(compressed(dl.serial), linksetAccept),
    ];
    for (const answer of answers) {
      expect([answer.status, answer.headers.get('content-type'), answer.headers.get('location')]).toEqual([200, 'application/linkset+json', null]);
      const { linkset } = validLinkset(answer.body);
      expect(linkset.map((l) => l.anchor)).toEqual([`${origin}${dl.gtin}`, `${origin}${dl.serial}`]);
    }
    const lot = validLinkset((await request(`${dl.lot}?linkType=linkset`)).body);
    expect(lot.linkset.map((l) => l.anchor)).toEqual([`${origin}${dl.gtin}`, `${origin}${dl.lot}`]);
    const product = validLinkset((await request(dl.gtin, linksetAccept)).body);
    expect(product.linkset.map((l) => l.anchor)).toEqual([`${origin}${dl.gtin}`]);
  });

  it('SHOULD expose link to the linkset in an HTTP Link header, even when redirecting', async () => {
    for (const [path, status] of [[dl.serial, 307], [`/r/${slug}/01/09506000134352/21/NOSUCHSERIAL`, 404]] as const) {
      const answer = await request(path);
      expect(answer.status).toBe(status);
      expect(answer.headers.get('link')).toContain(`<${origin}${path}?linkType=linkset>; rel="linkset"`);
    }
  });

  it('SHOULD include a Link header pointing to a JSON-LD context file when answering with the linkset', async () => {
    const answer = await request(dl.serial, linksetAccept);
    expect(answer.headers.get('link')).toContain('<https://ref.gs1.org/standards/resolver/linkset-context>; rel="http://www.w3.org/ns/json-ld#context"; type="application/ld+json"');
    expect((await request(dl.serial)).headers.get('link')).not.toContain('json-ld#context');
  });

  it('SHALL recognise one available link as the default for any given request URI (exactly one gs1:defaultLink, with a title and no other attributes)', async () => {
    for (const path of [dl.serial, dl.lot, dl.gtin]) {
      const { linkset } = validLinkset((await request(path, linksetAccept)).body);
      const defaults = linkset.flatMap((level) => (level['https://ref.gs1.org/voc/defaultLink'] as unknown[] | undefined) ?? []);
      expect(defaults, path).toEqual([{ href: passport, title: 'Product One' }]);
    }
  });

  it('All links exposed SHALL include the target URL, the link relationship type (the link type) and a human-readable title', async () => {
    const { linkset } = validLinkset((await request(dl.serial, linksetAccept)).body);
    for (const level of linkset) {
      expect(typeof level.itemDescription).toBe('string');
      for (const [rel, links] of Object.entries(level)) {
        if (rel === 'anchor' || rel === 'itemDescription') continue;
        expect(rel).toMatch(/^https:\/\/ref\.gs1\.org\/voc\/\w+$/);
        expect((links as unknown[]).length).toBeGreaterThan(0);
        for (const link of links as { href: string; title: string; type?: string }[]) {
          expect(link.href).toBe(passport);
          expect(link.title).toBe('Product One');
          if (rel !== 'https://ref.gs1.org/voc/defaultLink') expect(link.type).toBe('text/html');
        }
      }
    }
  });

  it('SHALL redirect to the default link unless there is information in the request that can be matched against available link metadata', async () => {
    for (const path of [dl.serial, dl.lot, dl.gtin, `/r/${slug}/01/${brand.gtin}/22/CPV-1`]) {
      const answer = await request(path, browser);
      expect([answer.status, answer.headers.get('location')], path).toEqual([307, passport]);
    }
    // An unknown lot walks up to its GTIN and resolves through the GTIN's links.
    const unknownLot = await request(`/r/${slug}/01/${brand.gtin}/10/NO-SUCH-LOT`);
    expect([unknownLot.status, unknownLot.headers.get('location')]).toEqual([307, passport]);
    const walked = validLinkset((await request(`/r/${slug}/01/${brand.gtin}/10/NO-SUCH-LOT`, linksetAccept)).body);
    expect(walked.linkset.map((l) => l.anchor)).toEqual([`${origin}${dl.gtin}`]);
    // The serial, qualified by its lot and a consumer product variant, resolves at the serial.
    const qualified = await request(`/r/${slug}/01/${brand.gtin}/22/CPV-1/10/LOT-1/21/${serial}`);
    expect([qualified.status, qualified.headers.get('location')]).toEqual([307, passport]);
  });

  it('SHALL redirect to the requested linkType if available', async () => {
    for (const linkType of ['gs1:pip', 'https://ref.gs1.org/voc/pip', 'https://gs1.org/voc/pip', 'gs1:defaultLink', encodeURIComponent('https://ref.gs1.org/voc/pip')]) {
      for (const headers of [browser, json, linksetAccept]) {
        const answer = await request(`${dl.serial}?linkType=${linkType}`, headers);
        expect([answer.status, answer.headers.get('location')], `${linkType} ${headers.accept}`).toEqual([307, passport]);
      }
    }
  });

  it('If the requested type of link is not available, the resolver SHALL return a 404 Not Found message', async () => {
    for (const [linkType, error] of [['gs1:nosuchlt', 'unknown_link_type'], ['https://example.org/voc/pip', 'unknown_link_type'], ['gs1:epil', 'link_type_not_available'], ['https://gs1.org/voc/recallStatus', 'link_type_not_available']] as const) {
      const answer = await request(`${dl.serial}?linkType=${linkType}`, json);
      expect([answer.status, JSON.parse(answer.body)], linkType).toEqual([404, resolverBodies[error]]);
      expect(answer.headers.get('link'), linkType).toContain('rel="linkset"');
    }
    expect((await request(`${dl.serial}?linkType=gs1:nosuchlt`, browser)).headers.get('content-type')).toBe('text/html; charset=utf-8');
  });

  it('By default, SHALL pass on all key=value pairs in the query string of the request URI (if present) when redirecting', async () => {
    const answer = await request(`${dl.serial}?foo=bar&17=261231&linkType=gs1:pip&x=a%20b`);
    expect([answer.status, answer.headers.get('location')]).toEqual([307, `${passport}&foo=bar&17=261231&x=a%20b`]);
    expect((await request(`${compressed(`${dl.lot}?17=261231`)}?foo=bar`)).headers.get('location')).toBe(`${passport}&17=261231&foo=bar`);
  });

  it('SHALL provide a resolver description file at /.well-known/gs1resolver', async () => {
    const answer = await request('/.well-known/gs1resolver');
    expect([answer.status, answer.headers.get('content-type')]).toEqual([200, 'application/json']);
    expect(JSON.parse(answer.body)).toEqual({
      name: 'Minting service GS1 Digital Link resolver',
      resolverRoot: `${origin}/r`,
      supportedPrimaryKeys: ['01'],
      supportedLinkType: [{ namespace: 'https://ref.gs1.org/voc/', prefix: 'gs1:' }],
      linkTypeDefaultCanBeLinkset: false,
      jsonLdContextLocation: 'https://ref.gs1.org/standards/resolver/linkset-context',
    });
    expect((await request('/.well-known/gs1resolver', {}, 'OPTIONS')).status).toBe(204);
    // RESOLVER_CONTACT adds whom to contact.
    const withContact = await startTestApi(app, { readiness: async () => ({ ok: true, checks: {} }), config: { resolverContact: 'resolver@mint.example' } });
    try {
      const described = await fetch(`${withContact.baseUrl}/.well-known/gs1resolver`);
      expect(await described.json()).toMatchObject({ resolverRoot: `${origin}/r`, contact: 'resolver@mint.example' });
    } finally {
      await withContact.close();
    }
  });

  it('SHALL recognise the GS1 Web vocabulary namespace (link types written in https://ref.gs1.org/voc/, the older https://gs1.org/voc/ accepted on input)', async () => {
    const { linkset } = validLinkset((await request(dl.gtin, linksetAccept)).body);
    expect(Object.keys(linkset[0]!).filter((k) => k.startsWith('http'))).toEqual(['https://ref.gs1.org/voc/defaultLink', 'https://ref.gs1.org/voc/pip']);
    expect((await request(`${dl.gtin}?linkType=https://gs1.org/voc/pip`)).status).toBe(307);
  });

  it('SHOULD tolerate trailing slashes at the end of GS1 Digital Link URIs', async () => {
    for (const path of [dl.serial, dl.lot, dl.gtin]) {
      const [plain, slash] = [await request(path), await request(`${path}/`)];
      expect([slash.status, slash.headers.get('location')], path).toEqual([plain.status, plain.headers.get('location')]);
    }
  });

  it('answers a valid Digital Link of an identity it does not know with 404, and a GTIN-13 with 301 to its GTIN-14 form', async () => {
    const unknown = await request(`/r/${slug}/01/09506000134352/21/ABC`, json);
    expect([unknown.status, JSON.parse(unknown.body)]).toEqual([404, resolverBodies.not_found]);
    const moved = await request(`/r/${slug}/01/${brand.gtin.slice(1)}/21/${serial}/?linkType=gs1:pip`);
    expect([moved.status, moved.headers.get('location')]).toEqual([301, `${origin}${dl.serial}?linkType=gs1:pip`]);
  });
});

describe('GS1-Conformant Resolver 1.2: choosing among several links of one type', () => {
  let other: SeededBrand;
  let gtinPath: string;
  const link = (linkType: string, href: string, title: string, extra: { hreflang?: string[]; mediaType?: string; isDefault?: boolean } = {}) => ({
    linkType, href, title, hreflang: extra.hreflang ?? [], mediaType: extra.mediaType ?? null, context: [], fwqs: false, isDefault: extra.isDefault ?? false,
  });

  beforeAll(async () => {
    other = await app.seedBrand();
    const [{ slug: otherSlug }] = (await query<{ slug: string }>(app.db.em.fork(), 'select slug from brands where id = ?', [other.brandId])) as [{ slug: string }];
    gtinPath = `/r/${otherSlug}/01/${other.gtin}`;
    await replaceLinks(app.ctx, { id: other.userId }, {
      brandId: other.brandId, gtin: other.gtin, lot: null, serial: null, links: [
        link('gs1:pip', 'https://b2.example/pip-en', 'Product page', { hreflang: ['en'], mediaType: 'text/html', isDefault: true }),
        link('gs1:pip', 'https://b2.example/pip-de', 'Produktseite', { hreflang: ['de'], mediaType: 'text/html' }),
        link('gs1:certificationInfo', 'https://b2.example/cert.html', 'Certificate (page)', { mediaType: 'text/html' }),
        link('gs1:certificationInfo', 'https://b2.example/cert.pdf', 'Certificate (PDF)', { mediaType: 'application/pdf' }),
        link('gs1:instructions', 'https://b2.example/manual-en', 'Manual', { hreflang: ['en'] }),
        link('gs1:instructions', 'https://b2.example/manual-fr', 'Notice', { hreflang: ['fr'] }),
      ],
    });
  });

  it('SHALL redirect to the default link unless there is information in the request that can be matched against available link metadata: Accept-Language picks among the default\'s alternatives', async () => {
    for (const [language, target] of [[undefined, 'https://b2.example/pip-en'], ['de-DE,de;q=0.9', 'https://b2.example/pip-de'], ['fr', 'https://b2.example/pip-en'], ['en-GB', 'https://b2.example/pip-en']] as const) {
      const answer = await request(gtinPath, { ...browser, ...(language === undefined ? {} : { 'accept-language': language }) });
      expect([answer.status, answer.headers.get('location')], language).toEqual([307, target]);
    }
  });

  it('lists the default link\'s alternatives by language, context or media type as gs1:defaultLinkMulti next to the one gs1:defaultLink', async () => {
    const { linkset } = validLinkset((await request(gtinPath, linksetAccept)).body);
    expect(linkset).toHaveLength(1);
    expect(linkset[0]!['https://ref.gs1.org/voc/defaultLink']).toEqual([{ href: 'https://b2.example/pip-en', title: 'Product page' }]);
    expect(linkset[0]!['https://ref.gs1.org/voc/defaultLinkMulti']).toEqual([
      { href: 'https://b2.example/pip-en', title: 'Product page', type: 'text/html', hreflang: ['en'] },
      { href: 'https://b2.example/pip-de', title: 'Produktseite', type: 'text/html', hreflang: ['de'] },
    ]);
    // A level whose default has no alternatives lists no defaultLinkMulti.
    expect(validLinkset((await request(dl.gtin, linksetAccept)).body).linkset[0]).not.toHaveProperty(['https://ref.gs1.org/voc/defaultLinkMulti']);
  });

  it('SHALL redirect to the requested linkType if available, choosing among its links by the media type the request accepts', async () => {
    const cases = [
      [{ accept: 'application/pdf' }, 'https://b2.example/cert.pdf'],
      [{ accept: 'application/pdf;q=0.5, text/html' }, 'https://b2.example/cert.html'],
      [browser, 'https://b2.example/cert.html'],
      [{ accept: 'application/*' }, 'https://b2.example/cert.pdf'],
    ] as const;
    for (const [headers, target] of cases) {
      const answer = await request(`${gtinPath}?linkType=gs1:certificationInfo`, headers);
      expect([answer.status, answer.headers.get('location')], headers.accept).toEqual([307, target]);
    }
  });

  it('answers 300 Multiple Choices with the matching links when several match and none is the default, never a guess', async () => {
    for (const [path, headers, hrefs] of [
      [`${gtinPath}?linkType=gs1:instructions`, {}, ['https://b2.example/manual-en', 'https://b2.example/manual-fr']],
      [`${gtinPath}?linkType=gs1:instructions`, { 'accept-language': 'es' }, ['https://b2.example/manual-en', 'https://b2.example/manual-fr']],
      [`${gtinPath}?linkType=gs1:certificationInfo`, {}, ['https://b2.example/cert.html', 'https://b2.example/cert.pdf']],
      [`${gtinPath}?linkType=gs1:certificationInfo`, { accept: 'image/png' }, ['https://b2.example/cert.html', 'https://b2.example/cert.pdf']],
    ] as const) {
      const answer = await request(path, headers);
      expect([answer.status, answer.headers.get('location'), answer.headers.get('content-type')], `${path} ${JSON.stringify(headers)}`)
        .toEqual([300, null, 'application/linkset+json']);
      expect(answer.headers.get('link')).toContain('rel="linkset"');
      const { linkset } = validLinkset(answer.body);
      expect(linkset.flatMap((level) => Object.entries(level).filter(([k]) => k.startsWith('https://')).flatMap(([, v]) => (v as { href: string }[]).map((l) => l.href))))
        .toEqual(hrefs);
    }
    // A browser gets the same choice as a page of links.
    const page = await request(`${gtinPath}?linkType=gs1:instructions`, browser);
    expect([page.status, page.headers.get('content-type')]).toEqual([300, 'text/html; charset=utf-8']);
    expect(page.body).toContain('href="https://b2.example/manual-en"');
    expect(page.body).toContain('href="https://b2.example/manual-fr"');
    // Information in the request that matches one of them decides.
    const fr = await request(`${gtinPath}?linkType=gs1:instructions`, { 'accept-language': 'fr-CA' });
    expect([fr.status, fr.headers.get('location')]).toEqual([307, 'https://b2.example/manual-fr']);
    expect((await request(`${gtinPath}?linkType=gs1:instructions`, { 'accept-language': 'fr' }, 'HEAD')).status).toBe(307);
    expect((await request(`${gtinPath}?linkType=gs1:instructions`, {}, 'HEAD')).status).toBe(300);
  });
});
