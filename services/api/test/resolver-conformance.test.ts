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
// - the test suite's checks of HTTPS (isHttps, tlsOK) and of the HTTP version (httpVersion): the
//   deployment's, as above.

import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Ajv } from 'ajv';
import addFormats from 'ajv-formats';
import digitalLink from 'digital-link.js';
import { query, setPassportUrl } from '../../../test/support/sql.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mintCompleted } from '../../../test/support/pack-fixtures.ts';
import { setupUseCases, type SeededBrand, type UseCaseBundle } from '../../../test/support/usecases.ts';
import { replaceLinks } from '@mint/usecases';
import { resolverBodies } from '@mint/pages';
import { startTestApi, type TestApi } from './support.ts';

const fixtures = join(import.meta.dirname, '../../../test/fixtures/standards/gs1-linkset');
const fixture = (name: string): unknown => JSON.parse(readFileSync(join(fixtures, name), 'utf8'));
// GS1's schemas use annotations of their own (`name`, `@id`): not strict, as GS1's test suite runs ajv.
const ajv = new Ajv({ strict: false, allErrors: true });
const validateGs1Linkset = ajv.compile(fixture('gs1-linkset-schema.json') as object);
const validateBasicLinkset = ajv.compile(fixture('linkset-schema.json') as object);
// The description file schema's `format: "uri"` is checked (ajv-formats), as GS1's test suite does not.
const describedAjv = new Ajv({ strict: false, allErrors: true });
// ajv-formats is CommonJS: its default export is the plugin function at run time.
(addFormats as unknown as (a: Ajv) => void)(describedAjv);
const validateDescription = describedAjv.compile(fixture('resolver-description-file-schema-1.2.0.json') as object);
/** The gs1:linkType terms of the vendored GS1 Web Vocabulary 1.16. */
const vocabularyLinkTypes = new Set(
  (
    JSON.parse(readFileSync(join(import.meta.dirname, '../../../test/fixtures/standards/gs1-webvoc/gs1Voc_v1_16.jsonld'), 'utf8').replace(/^\uFEFF/, '')) as {
      '@graph': Record<string, unknown>[];
    }
  )['@graph']
    .filter((node) => JSON.stringify(node['rdfs:subPropertyOf'] ?? null).includes('"gs1:linkType"'))
    .map((node) => String(node['@id']).slice('gs1:'.length)),
);

/** Asserts that a resolver description file validates against GS1's schema 1.2.0; returns it. */
function validDescription(body: string): Record<string, unknown> {
  const description = JSON.parse(body) as Record<string, unknown>;
  expect(validateDescription(description) ? [] : validateDescription.errors, body).toEqual([]);
  return description;
}

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
  [{ serial }] = (await query<{ serial: string }>(app.db.em.fork(), 'select serial from mint_units where mint_batch_id = ? order by seq limit 1', [
    minted.mintBatchId,
  ])) as [{ serial: string }];
  await setPassportUrl(app.db.em.fork(), brand.brandId, passport);
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
  it("the linkset validator itself accepts GS1's valid examples and model linkset and refuses the invalid ones", () => {
    expect(validateGs1Linkset(fixture('valid-gs1-example.json'))).toBe(true);
    expect(validateGs1Linkset(fixture('model-linkset-serial.json'))).toBe(true);
    expect(validateGs1Linkset(fixture('invalid-gs1-example.json'))).toBe(false);
    expect(validateBasicLinkset(fixture('valid-basic-example.json'))).toBe(true);
    expect(validateBasicLinkset(fixture('invalid-basic-example.json'))).toBe(false);
    // An empty relation or a link without a title is what the schema must catch in our answers.
    expect(validateGs1Linkset({ linkset: [{ anchor: 'https://id.example/01/1', 'https://ref.gs1.org/voc/pip': [{ href: 'https://p.example' }] }] })).toBe(
      false,
    );
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
      await request(dl.serial),
      await request(`${dl.serial}?linkType=linkset`),
      await request(`/r/${slug}/01/${brand.gtin}/21/NOSUCHSERIAL`),
      await request(`/r/${slug}/01/09506000134353`),
      await request('/.well-known/gs1resolver'),
    ];
    for (const answer of answers) {
      expect(answer.headers.get('access-control-allow-origin')).toBe('*');
      expect(answer.headers.get('access-control-expose-headers')).toBe('Link, Location, Content-Type');
      expect(answer.headers.get('access-control-allow-methods')).toBe('GET, HEAD, OPTIONS');
    }
    const preflight = await request(
      dl.serial,
      {
        origin: 'https://app.example',
        'access-control-request-method': 'GET',
        'access-control-request-headers': 'accept, x-scanner',
      },
      'OPTIONS',
    );
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get('access-control-allow-origin')).toBe('*');
    expect(preflight.headers.get('access-control-allow-headers')).toBe('accept, x-scanner');
    expect(preflight.body).toBe('');
  });

  it('answers OPTIONS on an identity path with Allow, CORS and the Link to its linkset, never the links themselves (test suite: methodsCheck, corsCheck, linkOnRedirect, legacyLinkHeaders)', async () => {
    // What GS1's test suite sends: its origin and the three methods.
    const suite = { origin: 'https://ref.gs1.org/test-suites/resolver/', 'access-control-request-method': 'GET,HEAD,OPTIONS' };
    const cases: [string, string][] = [
      [dl.serial, `${origin}${dl.serial}`],
      [`${dl.serial}/`, `${origin}${dl.serial}`],
      [dl.lot, `${origin}${dl.lot}`],
      [dl.gtin, `${origin}${dl.gtin}`],
      [`/r/${slug}/01/${brand.gtin.slice(1)}`, `${origin}${dl.gtin}`],
      [`/r/${slug}/01/09506000134352/21/NOSUCHSERIAL`, `${origin}/r/${slug}/01/09506000134352/21/NOSUCHSERIAL`],
      [`/r/01/${brand.gtin}/21/${serial}`, `${origin}/r/01/${brand.gtin}/21/${serial}`],
    ];
    for (const [path, anchor] of cases) {
      for (const headers of [suite, {}]) {
        const answer = await request(path, headers, 'OPTIONS');
        expect([answer.status, answer.body], path).toEqual([204, '']);
        expect(answer.headers.get('allow'), path).toBe('GET, HEAD, OPTIONS');
        expect(answer.headers.get('access-control-allow-origin'), path).toBe('*');
        expect(answer.headers.get('access-control-allow-methods'), path).toBe('GET, HEAD, OPTIONS');
        expect(answer.headers.get('access-control-expose-headers'), path).toBe('Link, Location, Content-Type');
        expect(answer.headers.get('link'), path).toBe(`<${anchor}?linkType=linkset>; rel="linkset"; type="application/linkset+json"`);
        expect(answer.headers.get('link'), path).not.toContain('rel="gs1:');
      }
    }
    // A compressed URI's OPTIONS names its uncompressed URI too; a path that is no Digital Link names no linkset.
    expect((await request(compressed(dl.serial), {}, 'OPTIONS')).headers.get('link')).toContain(`<${origin}${dl.serial}>; rel="owl:sameAs"`);
    const malformed = await request(`/r/${slug}/01/${brand.gtin}/99/x`, suite, 'OPTIONS');
    expect([malformed.status, malformed.headers.get('access-control-allow-origin'), malformed.headers.get('link')]).toEqual([204, '*', null]);
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
    const [{ serial: inactive }] = (await query<{ serial: string }>(app.db.em.fork(), 'select serial from mint_units where mint_batch_id = ?', [
      mintBatchId,
    ])) as [{ serial: string }];
    const errors: [string, number][] = [
      [`/r/${slug}/u/NOSUCHTOKEN`, 404],
      [`/r/${slug}/01/09506000134352/21/NOSUCHSERIAL`, 404],
      [`/r/no-such-brand/01/${brand.gtin}`, 404],
      [`/r/${slug}/01/09506000134352`, 404],
      [`${dl.serial}?linkType=gs1:nosuchlt`, 404],
      [`${dl.serial}?linkType=gs1:epil`, 404],
      [`/r/${slug}/01/${brand.gtin}/21/${inactive}`, 409],
      [`/r/${slug}/01/${brand.gtin}/99/x`, 400],
    ];
    for (const [path, status] of errors) {
      for (const headers of [json, browser, linksetAccept]) expect((await request(path, headers)).status, `${path} ${headers.accept}`).toBe(status);
    }
  });

  it('SHALL respond to a query parameter of linkType set to linkset by returning the linkset (RFC 9264), with the links of each level up to the primary key, the uncompressed URI as the subject', async () => {
    const answers = [
      await request(`${dl.serial}?linkType=linkset`, browser),
      await request(`${dl.serial}?linkType=all`),
      await request(dl.serial, linksetAccept),
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
    for (const [path, status] of [
      [dl.serial, 307],
      [`/r/${slug}/01/09506000134352/21/NOSUCHSERIAL`, 404],
    ] as const) {
      const answer = await request(path);
      expect(answer.status).toBe(status);
      expect(answer.headers.get('link')).toContain(`<${origin}${path}?linkType=linkset>; rel="linkset"`);
    }
  });

  it('SHOULD include a Link header pointing to a JSON-LD context file when answering with the linkset', async () => {
    const answer = await request(dl.serial, linksetAccept);
    expect(answer.headers.get('link')).toContain(
      '<https://ref.gs1.org/standards/resolver/linkset-context>; rel="http://www.w3.org/ns/json-ld#context"; type="application/ld+json"',
    );
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
    for (const linkType of [
      'gs1:pip',
      'https://ref.gs1.org/voc/pip',
      'https://gs1.org/voc/pip',
      'gs1:defaultLink',
      encodeURIComponent('https://ref.gs1.org/voc/pip'),
    ]) {
      for (const headers of [browser, json, linksetAccept]) {
        const answer = await request(`${dl.serial}?linkType=${linkType}`, headers);
        expect([answer.status, answer.headers.get('location')], `${linkType} ${headers.accept}`).toEqual([307, passport]);
      }
    }
  });

  it('If the requested type of link is not available, the resolver SHALL return a 404 Not Found message', async () => {
    for (const [linkType, error] of [
      ['gs1:nosuchlt', 'unknown_link_type'],
      ['https://example.org/voc/pip', 'unknown_link_type'],
      ['gs1:epil', 'link_type_not_available'],
      ['https://gs1.org/voc/recallStatus', 'link_type_not_available'],
    ] as const) {
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

  it("SHALL provide a resolver description file at /.well-known/gs1resolver, valid against GS1's description file schema 1.2.0 (test suite: rdFile)", async () => {
    const answer = await request('/.well-known/gs1resolver');
    expect([answer.status, answer.headers.get('content-type')]).toEqual([200, 'application/json']);
    expect(validDescription(answer.body)).toEqual({
      name: 'Minting service GS1 Digital Link resolver',
      resolverRoot: `${origin}/r`,
      supportedPrimaryKeys: ['01'],
      supportedLinkType: [{ namespace: 'https://ref.gs1.org/voc/', prefix: 'gs1:' }],
      linkTypeDefaultCanBeLinkset: false,
      jsonLdContextLocation: 'https://ref.gs1.org/standards/resolver/linkset-context',
    });
    expect((await request('/.well-known/gs1resolver', {}, 'OPTIONS')).status).toBe(204);
    // The validator refuses what the schema refuses: a contact written as a string, a root that is no URI.
    expect(validateDescription({ resolverRoot: `${origin}/r`, supportedPrimaryKeys: ['01'], contact: 'resolver@mint.example' })).toBe(false);
    expect(validateDescription({ resolverRoot: 'not a uri', supportedPrimaryKeys: ['01'] })).toBe(false);
    // RESOLVER_CONTACT adds whom to contact, as the schema's vCard-like object.
    for (const [contact, expected] of [
      ['resolver@mint.example', { fn: 'resolver@mint.example', hasEmail: 'mailto:resolver@mint.example' }],
      ['mailto:resolver@mint.example', { fn: 'resolver@mint.example', hasEmail: 'mailto:resolver@mint.example' }],
      ['https://mint.example/contact', { fn: 'https://mint.example/contact', hasURL: 'https://mint.example/contact' }],
    ] as const) {
      const withContact = await startTestApi(app, { readiness: async () => ({ ok: true, checks: {} }), config: { resolverContact: contact } });
      try {
        const described = validDescription(await (await fetch(`${withContact.baseUrl}/.well-known/gs1resolver`)).text());
        expect(described, contact).toMatchObject({ resolverRoot: `${origin}/r`, contact: expected });
      } finally {
        await withContact.close();
      }
    }
  });

  it("resolverRoot is a root under which the standard's URIs resolve: {resolverRoot}/01/{gtin}[/10/{lot}][/21/{serial}], compressed too, through the one brand that holds the GTIN", async () => {
    const { resolverRoot } = validDescription((await request('/.well-known/gs1resolver')).body) as { resolverRoot: string };
    expect(resolverRoot.startsWith(origin)).toBe(true);
    const root = resolverRoot.slice(origin.length);
    const under = { gtin: `${root}/01/${brand.gtin}`, serial: `${root}/01/${brand.gtin}/21/${serial}`, lot: `${root}/01/${brand.gtin}/10/LOT-1` };
    for (const path of [under.serial, under.lot, under.gtin, `${root}/01/${brand.gtin}/10/NO-SUCH-LOT`, `${under.serial}/`, compressed(under.serial)]) {
      const answer = await request(path, browser);
      expect([answer.status, answer.headers.get('location')], path).toEqual([307, passport]);
      expect(answer.headers.get('link'), path).toContain('rel="linkset"');
    }
    // The answers name the URIs under the root: linkset anchors, the Link to the linkset, the 301 of a short GTIN.
    const { linkset } = validLinkset((await request(under.serial, linksetAccept)).body);
    expect(linkset.map((l) => l.anchor)).toEqual([`${origin}${under.gtin}`, `${origin}${under.serial}`]);
    expect((await request(under.serial)).headers.get('link')).toContain(`<${origin}${under.serial}?linkType=linkset>; rel="linkset"`);
    const moved = await request(`${root}/01/${brand.gtin.slice(1)}/21/${serial}?linkType=gs1:pip`);
    expect([moved.status, moved.headers.get('location')]).toEqual([301, `${origin}${under.serial}?linkType=gs1:pip`]);
    expect((await request(`${under.serial}?foo=bar&linkType=gs1:pip`)).headers.get('location')).toBe(`${passport}&foo=bar`);
    expect((await request(compressed(`${under.lot}?17=261231`))).headers.get('link')).toContain(`<${origin}${under.lot}?17=261231>; rel="owl:sameAs"`);
    // Checked before any lookup, as below a brand's base.
    const bad = brand.gtin.slice(0, 13) + String((Number(brand.gtin[13]) + 1) % 10);
    expect((await request(`${root}/01/${bad}`, json)).status).toBe(400);
    expect((await request(`${under.serial}/foo`, json)).status).toBe(400);
    // A GTIN no brand holds, a serial the brand never minted (walks up in JSON, flagged unknown; a
    // browser gets the not-issued page), and a GTIN two brands hold.
    expect((await request(`${root}/01/09506000134352/21/ABC`, json)).status).toBe(404);
    expect(JSON.parse((await request(`${root}/01/${brand.gtin}/21/NOSUCHSERIAL`, json)).body)).toMatchObject({ unit: { known: false }, target: passport });
    expect((await request(`${root}/01/${brand.gtin}/21/NOSUCHSERIAL`)).status).toBe(404);
    const shared = await app.seedBrand();
    await app.seedBrand({ gtin: shared.gtin });
    const ambiguous = await request(`${root}/01/${shared.gtin}`, json);
    expect([ambiguous.status, JSON.parse(ambiguous.body)]).toEqual([404, resolverBodies.not_found]);
    // A brand's own base keeps resolving as before.
    expect((await request(dl.serial)).headers.get('location')).toBe(passport);
  });

  it('SHALL recognise the GS1 Web vocabulary namespace (link types written in https://ref.gs1.org/voc/, the older https://gs1.org/voc/ accepted on input)', async () => {
    const { linkset } = validLinkset((await request(dl.gtin, linksetAccept)).body);
    expect(Object.keys(linkset[0]!).filter((k) => k.startsWith('http'))).toEqual(['https://ref.gs1.org/voc/defaultLink', 'https://ref.gs1.org/voc/pip']);
    expect((await request(`${dl.gtin}?linkType=https://gs1.org/voc/pip`)).status).toBe(307);
  });

  it('SHALL recognise the GS1 Web vocabulary namespace, noting its change management practice: every link type of Web Vocabulary 1.16, gs1:eifu, gs1:backgroundInfo and gs1:reportFound among them', async () => {
    const third = await app.seedBrand();
    const [{ slug: thirdSlug }] = (await query<{ slug: string }>(app.db.em.fork(), 'select slug from brands where id = ?', [third.brandId])) as [
      { slug: string },
    ];
    const path = `/r/${thirdSlug}/01/${third.gtin}`;
    const added = [
      ['gs1:eifu', 'https://c.example/eifu.pdf', 'application/pdf'],
      ['gs1:backgroundInfo', 'https://c.example/story', 'text/html'],
      ['gs1:reportFound', 'https://c.example/found', 'text/html'],
    ] as const;
    // Link types of the vocabulary with no link: 404 because no link is available, not because the type is unknown.
    // (Asked of another identity: a request here would cache this GTIN's links before they change.)
    for (const [linkType] of added) {
      const answer = await request(`${dl.serial}?linkType=${linkType}`, json);
      expect([answer.status, JSON.parse(answer.body)], linkType).toEqual([404, resolverBodies.link_type_not_available]);
    }
    await replaceLinks(
      app.ctx,
      { id: third.userId },
      {
        brandId: third.brandId,
        gtin: third.gtin,
        lot: null,
        serial: null,
        links: [
          {
            linkType: 'gs1:pip',
            href: 'https://c.example/pip',
            title: 'Product page',
            hreflang: [],
            mediaType: 'text/html',
            context: [],
            fwqs: false,
            isDefault: true,
          },
          ...added.map(([linkType, href, mediaType]) => ({
            linkType,
            href,
            title: linkType,
            hreflang: [],
            mediaType,
            context: [],
            fwqs: false,
            isDefault: false,
          })),
        ],
      },
    );
    for (const [linkType, href] of added) {
      for (const written of [linkType, `https://ref.gs1.org/voc/${linkType.slice(4)}`]) {
        const answer = await request(`${path}?linkType=${written}`);
        expect([answer.status, answer.headers.get('location')], written).toEqual([307, href]);
      }
    }
    const { linkset } = validLinkset((await request(path, linksetAccept)).body);
    expect(Object.keys(linkset[0]!).filter((k) => k.startsWith('https://'))).toEqual(
      expect.arrayContaining(added.map(([lt]) => `https://ref.gs1.org/voc/${lt.slice(4)}`)),
    );
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
    linkType,
    href,
    title,
    hreflang: extra.hreflang ?? [],
    mediaType: extra.mediaType ?? null,
    context: [],
    fwqs: false,
    isDefault: extra.isDefault ?? false,
  });

  beforeAll(async () => {
    other = await app.seedBrand();
    const [{ slug: otherSlug }] = (await query<{ slug: string }>(app.db.em.fork(), 'select slug from brands where id = ?', [other.brandId])) as [
      { slug: string },
    ];
    gtinPath = `/r/${otherSlug}/01/${other.gtin}`;
    await replaceLinks(
      app.ctx,
      { id: other.userId },
      {
        brandId: other.brandId,
        gtin: other.gtin,
        lot: null,
        serial: null,
        links: [
          link('gs1:pip', 'https://b2.example/pip-en', 'Product page', { hreflang: ['en'], mediaType: 'text/html', isDefault: true }),
          link('gs1:pip', 'https://b2.example/pip-de', 'Produktseite', { hreflang: ['de'], mediaType: 'text/html' }),
          link('gs1:certificationInfo', 'https://b2.example/cert.html', 'Certificate (page)', { mediaType: 'text/html' }),
          link('gs1:certificationInfo', 'https://b2.example/cert.pdf', 'Certificate (PDF)', { mediaType: 'application/pdf' }),
          link('gs1:instructions', 'https://b2.example/manual-en', 'Manual', { hreflang: ['en'] }),
          link('gs1:instructions', 'https://b2.example/manual-fr', 'Notice', { hreflang: ['fr'] }),
        ],
      },
    );
  });

  it("SHALL redirect to the default link unless there is information in the request that can be matched against available link metadata: Accept-Language picks among the default's alternatives", async () => {
    for (const [language, target] of [
      [undefined, 'https://b2.example/pip-en'],
      ['de-DE,de;q=0.9', 'https://b2.example/pip-de'],
      ['fr', 'https://b2.example/pip-en'],
      ['en-GB', 'https://b2.example/pip-en'],
    ] as const) {
      const answer = await request(gtinPath, { ...browser, ...(language === undefined ? {} : { 'accept-language': language }) });
      expect([answer.status, answer.headers.get('location')], language).toEqual([307, target]);
    }
  });

  it("lists the default link's alternatives by language, context or media type as gs1:defaultLinkMulti next to the one gs1:defaultLink", async () => {
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
      expect([answer.status, answer.headers.get('location'), answer.headers.get('content-type')], `${path} ${JSON.stringify(headers)}`).toEqual([
        300,
        null,
        'application/linkset+json',
      ]);
      expect(answer.headers.get('link')).toContain('rel="linkset"');
      const { linkset } = validLinkset(answer.body);
      expect(
        linkset.flatMap((level) =>
          Object.entries(level)
            .filter(([k]) => k.startsWith('https://'))
            .flatMap(([, v]) => (v as { href: string }[]).map((l) => l.href)),
        ),
      ).toEqual(hrefs);
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

/**
 * The checks of GS1's resolver test suite (gs1/GS1DL-resolver-testsuite), made here in our own
 * code against one Digital Link URI, each recorded under the suite's id as `pass`, `warn` or
 * `fail` by the suite's rule. `path` is requested on the test server; `uri` (the same path on the
 * public origin) is what the linkset's anchors must name.
 */
async function gs1TestSuite(path: string): Promise<Record<string, 'pass' | 'warn' | 'fail'>> {
  const results: Record<string, 'pass' | 'warn' | 'fail'> = {};
  const record = (id: string, ok: boolean, otherwise: 'warn' | 'fail' = 'fail') => {
    results[id] = ok ? 'pass' : otherwise;
  };
  const uri = `${origin}${path}`;
  const suiteOrigin = { origin: 'https://ref.gs1.org/test-suites/resolver/' };
  // isURL, plausibleDL, validDL: the URI is a GS1 Digital Link (what precedes /01/ is its stem), its GTIN written in 14 digits.
  const { protocol, host } = new URL(uri);
  record('isURL', (protocol === 'http:' || protocol === 'https:') && host.includes('.'));
  record('plausibleDL', /^https?:\/\/[^/?#]+[^?#]*\/01\/\d{4}[^/]+(\/[^/]+\/[^/]+)?\/?(\?[^#]*)?$/.test(uri));
  const parsed = digitalLink.DigitalLink(uri);
  record('validDL', parsed.isValid() && uri.includes(`/01/${parsed.getIdentifier()['01']}`), 'warn');
  // rdFile: the description file validates against the description file schema.
  const rd = await request('/.well-known/gs1resolver', { accept: 'application/json' });
  record('rdFile', rd.status === 200 && validateDescription(JSON.parse(rd.body)));
  // corsCheck, methodsCheck, linkOnRedirect, legacyLinkHeaders: from the answer to OPTIONS.
  const options = await request(path, { ...suiteOrigin, 'access-control-request-method': 'GET,HEAD,OPTIONS' }, 'OPTIONS');
  const methods = options.headers.get('access-control-allow-methods') ?? '';
  record('corsCheck', options.headers.get('access-control-allow-origin') !== null);
  record(
    'methodsCheck',
    ['GET', 'HEAD', 'OPTIONS'].every((m) => methods.includes(m)),
  );
  const optionsLinks = (options.headers.get('link') ?? '').split('",');
  record(
    'linkOnRedirect',
    optionsLinks.some((l) => l.includes('rel="linkset"')),
    'warn',
  );
  record('legacyLinkHeaders', !optionsLinks.some((l) => l.includes('rel="gs1:')), 'warn');
  // reportWith400, noErrorWith200: the URI with /foo appended is no Digital Link.
  const foo = await request(`${path}/foo`, suiteOrigin);
  record('reportWith400', foo.status === 400);
  record('noErrorWith200', foo.status !== 200);
  // trailingSlash: the same status and Location with and without a trailing slash.
  const [plain, slash] = [await request(path, suiteOrigin), await request(`${path}/`, suiteOrigin)];
  record('trailingSlash', plain.status === slash.status && plain.headers.get('location') === slash.headers.get('location'), 'warn');
  // basicWalkUp: an unknown lot of the GTIN is not a 404.
  const gtinPath = path.slice(0, path.indexOf('/01/') + 4 + 14);
  record('basicWalkUp', (await request(`${gtinPath}/10/KL8G`, suiteOrigin)).status !== 404);
  // ltLinksetNoRedirect, ltAcceptHeader: the linkset is answered, not redirected to.
  record('ltLinksetNoRedirect', (await request(`${path}?linkType=linkset`, suiteOrigin)).status === 200);
  record('ltAcceptHeader', (await request(`${path}?linkType=all`, { ...suiteOrigin, accept: 'application/linkset+json' })).status === 200);
  // qsPassedOn: a query string is passed on when redirecting.
  record('qsPassedOn', ((await request(`${path}?foo=bar`, suiteOrigin)).headers.get('location') ?? '').includes('foo=bar'), 'warn');
  // specificLinkTypeNotFound: a link type without a link answers 404.
  record('specificLinkTypeNotFound', (await request(`${path}?linkType=gs1:nosuchlt`, suiteOrigin)).status === 404);
  // validLinkset, linksetJsonldCheck, declaredContentType: the linkset, asked for by Accept.
  const got = await request(path, { ...suiteOrigin, accept: 'application/linkset+json' });
  const linksetObject = JSON.parse(got.body) as unknown;
  record('validLinkset', validateGs1Linkset(linksetObject));
  record(
    'linksetJsonldCheck',
    (got.headers.get('link') ?? '')
      .split(',')
      .some((l) => l.includes('rel="http://www.w3.org/ns/json-ld#context"') && l.includes('type="application/ld+json"')),
    'warn',
  );
  record('declaredContentType', (got.headers.get('content-type') ?? '').startsWith('application/linkset+json'));
  if (results.validLinkset !== 'pass') return results;
  // The linkset's links, most specific anchor first, each link type at its most specific level:
  // the default link, then a request for every other link type.
  const linkset = (
    JSON.parse(JSON.stringify(linksetObject).replace(/https:\/\/((ref\.)|(www\.))?gs1\.org\/voc\//gi, 'gs1:')) as { linkset: Record<string, unknown>[] }
  ).linkset;
  type LinkObject = { href: string; type?: string; hreflang?: string[]; context?: string[] | string };
  const seen = new Set<string>();
  results.defaultLinkExists = 'fail';
  let current = uri;
  for (let segments = new URL(uri).pathname.split('/').length; segments > 2; segments -= 2) {
    for (const level of linkset.filter((l) => l.anchor === current)) {
      for (const [linkType, value] of Object.entries(level)) {
        if (linkType === 'anchor' || linkType === 'itemDescription' || linkType === 'description' || seen.has(linkType)) continue;
        seen.add(linkType);
        const links = value as LinkObject[];
        if (linkType === 'gs1:defaultLink') {
          record('defaultLinkExists', true);
          record('singleDefaulLink', links.length === 1);
          if (links.length === 1) record('defaultTarget', (await request(path, suiteOrigin)).headers.get('location') === links[0]!.href);
        } else if (links.length === 1) {
          if (linkType === 'gs1:defaultLinkMulti') record('singleMultiLink', false, 'warn');
          else
            record(
              `loFor${linkType.replace(':', '')}`,
              (await request(`${path}?linkType=${linkType}`, suiteOrigin)).headers.get('location') === links[0]!.href,
            );
        } else {
          // Links of one type whose type, hreflang and context are the same cannot be told apart: 300.
          const same = (a: LinkObject, b: LinkObject) =>
            a.type === b.type &&
            JSON.stringify(a.hreflang ?? null) === JSON.stringify(b.hreflang ?? null) &&
            JSON.stringify(a.context ?? null) === JSON.stringify(b.context ?? null);
          let asked300 = false;
          for (const [i, link] of links.entries()) {
            const alike = links.some((other, j) => j !== i && same(link, other));
            if (alike && asked300) continue;
            const context = link.context === undefined ? '' : `&context=${Array.isArray(link.context) ? link.context[0] : link.context}`;
            const query = linkType === 'gs1:defaultLinkMulti' ? `?${context.slice(1)}` : `?linkType=${encodeURIComponent(linkType)}${context}`;
            const headers = {
              ...suiteOrigin,
              ...(link.type === undefined ? {} : { accept: link.type }),
              ...(link.hreflang === undefined ? {} : { 'accept-language': link.hreflang[0]! }),
            };
            const answer = await request(`${path}${query}`, headers);
            if (alike) {
              asked300 = true;
              record(`loFor${linkType.replace(':', '')}${i}`, answer.status === 300, 'warn');
            } else {
              results[`loFor${linkType.replace(':', '')}${i}`] =
                answer.headers.get('location') === link.href ? 'pass' : answer.status === 300 ? 'warn' : 'fail';
            }
          }
        }
      }
    }
    current = current.slice(0, current.lastIndexOf('/'));
    current = current.slice(0, current.lastIndexOf('/'));
  }
  // linkTypesDefined: every GS1 link type found is one of the vocabulary's.
  record(
    'linkTypesDefined',
    [...seen].filter((lt) => lt.startsWith('gs1:')).every((lt) => vocabularyLinkTypes.has(lt.slice(4))),
    'warn',
  );
  return results;
}

describe('GS1 resolver test suite (gs1/GS1DL-resolver-testsuite): every check it makes of a resolver', () => {
  /** The URIs the suite is run against: a unit's, a lot's and its product's, below the brand's base and under resolverRoot. */
  let uris: Record<'brandBase' | 'root', Record<'unit' | 'lot' | 'gtin', string>>;

  beforeAll(async () => {
    // A unit with links of several types at its product and its own level, as GS1's model linkset has.
    const suiteBrand = await app.seedBrand();
    const { mintBatchId } = await mintCompleted(app.ctx, suiteBrand, 1);
    const mintedLot = 'LOT-SUITE';
    await mintCompleted(app.ctx, suiteBrand, 2, { identityMode: 'batch', lots: [{ lotCode: mintedLot, qty: 2 }] });
    const [{ slug: suiteSlug }] = (await query<{ slug: string }>(app.db.em.fork(), 'select slug from brands where id = ?', [suiteBrand.brandId])) as [
      { slug: string },
    ];
    const [{ serial: unit }] = (await query<{ serial: string }>(app.db.em.fork(), 'select serial from mint_units where mint_batch_id = ?', [mintBatchId])) as [
      { serial: string },
    ];
    // A link with a context does not forward the query: the suite asks for it with `&context=LK` and
    // compares the Location with the bare href (a forwarding link would get `?context=LK` appended).
    const link = (
      linkType: string,
      href: string,
      title: string,
      extra: { hreflang?: string[]; mediaType?: string; context?: string[]; isDefault?: boolean } = {},
    ) => ({
      linkType,
      href,
      title,
      hreflang: extra.hreflang ?? [],
      mediaType: extra.mediaType ?? null,
      context: extra.context ?? [],
      fwqs: extra.context === undefined,
      isDefault: extra.isDefault ?? false,
    });
    await replaceLinks(
      app.ctx,
      { id: suiteBrand.userId },
      {
        brandId: suiteBrand.brandId,
        gtin: suiteBrand.gtin,
        lot: null,
        serial: null,
        links: [
          link('gs1:pip', 'https://d.example/pip', 'Product Info', { hreflang: ['en'], mediaType: 'text/html', isDefault: true }),
          link('gs1:certificationInfo', 'https://d.example/certificates', 'Certificates', { mediaType: 'text/html' }),
          link('gs1:certificationInfo', 'https://d.example/cert-001.pdf', 'Another certificate', { mediaType: 'application/pdf', hreflang: ['en'] }),
          link('gs1:certificationInfo', 'https://d.example/cert-003.pdf', 'Another certificate', {
            mediaType: 'application/pdf',
            hreflang: ['en'],
            context: ['LK'],
          }),
          link('gs1:sustainabilityInfo', 'https://d.example/en/sustainability', 'Sustainability', { hreflang: ['en'], mediaType: 'text/html' }),
          link('gs1:sustainabilityInfo', 'https://d.example/fr/sustainability', 'Sustainability', { hreflang: ['fr'], mediaType: 'text/html' }),
          link('gs1:traceability', 'https://d.example/track-and-trace', 'Track and Trace', { mediaType: 'text/html' }),
          link('gs1:traceability', 'https://d.example/track-and-trace-2', 'Track and Trace', { mediaType: 'text/html' }),
          link('gs1:eifu', 'https://d.example/eifu.pdf', 'Instructions', { mediaType: 'application/pdf' }),
        ],
      },
    );
    await replaceLinks(
      app.ctx,
      { id: suiteBrand.userId },
      {
        brandId: suiteBrand.brandId,
        gtin: suiteBrand.gtin,
        lot: null,
        serial: unit,
        links: [link('gs1:dpp', 'https://d.example/dpp/7132mlkG', 'DPP', { mediaType: 'application/ld+json', isDefault: true })],
      },
    );
    const { resolverRoot } = JSON.parse((await request('/.well-known/gs1resolver')).body) as { resolverRoot: string };
    const under = (base: string) => ({
      unit: `${base}/01/${suiteBrand.gtin}/21/${unit}`,
      lot: `${base}/01/${suiteBrand.gtin}/10/${mintedLot}`,
      gtin: `${base}/01/${suiteBrand.gtin}`,
    });
    uris = { brandBase: under(`/r/${suiteSlug}`), root: under(resolverRoot.slice(origin.length)) };
  });

  for (const [at, level] of [
    ['brandBase', 'unit'],
    ['root', 'unit'],
    ['brandBase', 'lot'],
    ['root', 'lot'],
    ['brandBase', 'gtin'],
    ['root', 'gtin'],
  ] as const) {
    it(`passes every check at a ${level === 'unit' ? 'unit' : level === 'lot' ? 'lot' : 'product'}'s URI ${at === 'root' ? 'under resolverRoot' : "below its brand's base"}, none a warning`, async () => {
      const results = await gs1TestSuite(uris[at][level]);
      expect(
        Object.entries(results).filter(([, status]) => status !== 'pass'),
        JSON.stringify(results),
      ).toEqual([]);
      // The checks made: the suite's 26 fixed ones but isHttps, tlsOK and httpVersion (the deployment's), plus one
      // per link type and per way to tell links of one type apart (9 for this linkset).
      const fixed = [
        'isURL',
        'validDL',
        'plausibleDL',
        'rdFile',
        'corsCheck',
        'linkOnRedirect',
        'legacyLinkHeaders',
        'methodsCheck',
        'reportWith400',
        'noErrorWith200',
        'trailingSlash',
        'basicWalkUp',
        'ltLinksetNoRedirect',
        'ltAcceptHeader',
        'validLinkset',
        'linksetJsonldCheck',
        'declaredContentType',
        'qsPassedOn',
        'defaultLinkExists',
        'singleDefaulLink',
        'defaultTarget',
        'linkTypesDefined',
        'specificLinkTypeNotFound',
      ];
      // The unit's own default (gs1:dpp) is a link type of the unit only; a lot has no links of its own and walks up to its product's.
      const perLink = [
        ...(level === 'unit' ? ['dpp'] : []),
        'pip',
        'eifu',
        'certificationInfo0',
        'certificationInfo1',
        'certificationInfo2',
        'sustainabilityInfo0',
        'sustainabilityInfo1',
        'traceability0',
      ];
      expect(Object.keys(results).sort()).toEqual([...fixed, ...perLink.map((lt) => `loForgs1${lt}`)].sort());
    });
  }
});
