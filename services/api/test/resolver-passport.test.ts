// The hosted passport through the resolver: a phone's scan gets the passport page (sections in
// its language, inherited unit -> lot -> model), a machine the UNTP credential (valid against the
// vendored UNTP DPP schema), the JSON and linkset answers name it; restricted sections never reach
// a public answer and do reach a holder of their class, each such read audited; earlier versions
// stay readable at their own URL, linked as predecessor-version.

import { sign } from 'node:crypto';
import http from 'node:http';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { Writable } from 'node:stream';
import { createLogger } from '@mint/runtime';
import { gunzipSync } from 'node:zlib';
import {
  createPassportSigner,
  setBrandResolverDomain,
  upsertLink,
  setPassportStyle,
  importPassports,
  issuePassportAccessKey,
  publishPassport,
  revokePassportAccessKey,
  rotatePassportSigningKey,
  updatePassportDraft,
} from '@mint/usecases';
import { compactVerify, decodeJwt, decodeProtectedHeader, importJWK, type JWK } from 'jose';
import Ajv2020 from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { chromium } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mintCompleted } from '../../../test/support/pack-fixtures.ts';
import { query, run, setPassportUrl } from '../../../test/support/sql.ts';
import { setupUseCases, type SeededBrand, type UseCaseBundle } from '../../../test/support/usecases.ts';
import { startApi, type RunningApi } from '../src/start.ts';

let app: UseCaseBundle;
let api: RunningApi;
let base: string;
let brand: SeededBrand;
let slug: string;
let serial: string;
let repairKey: string;
let authorityKey: string;
/** Every Ed25519 signature the resolver's signer made. */
let signatures = 0;
const browserAccept = 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8';
/** Words only the restricted sections hold. */
const secretMaterial = 'Cobalt-Nickel-Blend';
const secretDiligence = 'Smelter audit 2026';

const model = {
  description: { en: 'Traction battery 300 Ah', de: 'Traktionsbatterie 300 Ah' },
  manufacturer: { name: 'Example Cells GmbH', id: 'https://example.com/company/42' },
  facility: { name: 'Plant Leipzig', id: 'https://example.com/facility/7', country: 'DE' },
  productionDate: '2026-03-01',
  countryOfProduction: 'DE',
  dimensions: { weight: { value: 42.5, unit: 'KGM' } },
  materials: [{ name: { en: secretMaterial }, massFraction: 0.2, recycledMassFraction: 0.1, hazardous: true }],
  emissions: { carbonFootprint: 61.5, declaredUnit: 'EA', operationalScope: 'CradleToGate', primarySourcedRatio: 0.4, method: 'EU 2023/1542 Annex II' },
  circularity: { recyclableContent: 0.8, repairInstructions: { url: 'https://example.com/repair', name: { en: 'Repair guide', de: 'Reparaturanleitung' } } },
  conformity: [{ description: { en: 'CE marking' }, topic: 'governance.compliance', certificate: { url: 'https://example.com/ce.pdf' } }],
  dueDiligence: [{ statement: { en: secretDiligence }, link: { url: 'https://example.com/dd' } }],
  access: { materials: 'legitimate_interest', dueDiligence: 'authority' },
};

beforeAll(async () => {
  app = await setupUseCases();
  brand = await app.seedBrand();
  const { mintBatchId } = await mintCompleted(app.ctx, brand, 2);
  [{ slug }] = (await query<{ slug: string }>(app.db.em.fork(), 'select slug from brands where id = ?', [brand.brandId])) as [{ slug: string }];
  [{ serial }] = (await query<{ serial: string }>(app.db.em.fork(), 'select serial from mint_units where mint_batch_id = ? order by seq', [mintBatchId])) as [
    { serial: string },
  ];
  const owner = { id: brand.userId };
  await updatePassportDraft(app.ctx, owner, {
    brandId: brand.brandId,
    productId: brand.productId,
    lot: null,
    serial: null,
    content: model,
    expectedRevision: null,
  });
  await publishPassport(app.ctx, owner, { brandId: brand.brandId, productId: brand.productId, lot: null, serial: null });
  await importPassports(app.ctx, owner, {
    brandId: brand.brandId,
    publish: true,
    entries: [
      { productId: brand.productId, gtin: null, lot: 'L42', serial: null, content: { emissions: { ...model.emissions, carbonFootprint: 55.25 } } },
      {
        productId: brand.productId,
        gtin: null,
        lot: null,
        serial,
        content: {
          extensions: [{ term: 'https://example.com/voc#stateOfHealth', name: { en: 'State of health', de: 'Gesundheitszustand' }, value: 97, unit: 'P1' }],
        },
      },
    ],
  });
  await setPassportStyle(app.ctx, owner, { brandId: brand.brandId, logoUrl: 'https://cdn.example.com/acme-logo.png', colour: '#0055AA' });
  const expiresAt = new Date(Date.now() + 86_400_000);
  repairKey = (await issuePassportAccessKey(app.ctx, owner, { brandId: brand.brandId, name: 'Repair Co', accessClass: 'legitimate_interest', expiresAt })).key;
  authorityKey = (await issuePassportAccessKey(app.ctx, owner, { brandId: brand.brandId, name: 'Market surveillance', accessClass: 'authority', expiresAt }))
    .key;
  api = await startApi({
    ctx: app.ctx,
    config: { port: 0, host: '127.0.0.1', shutdownTimeoutMs: 2_000 },
    logger: createLogger({ logLevel: 'silent' }, {}, new Writable({ write: (_c, _e, done) => done() })),
    readiness: async () => ({ ok: true, checks: {} }),
    passportSigner: createPassportSigner(app.ctx, {
      signWith: (input, key) => {
        signatures++;
        return sign(null, input, key);
      },
    }),
  });
  base = `http://127.0.0.1:${api.port}`;
});
afterAll(async () => {
  await api?.close();
  await app?.close();
});

const unitPath = (s: string, lot?: string) => `/r/${slug}/01/${brand.gtin}${lot === undefined ? '' : `/10/${lot}`}/21/${s}`;
async function get(path: string, headers: Record<string, string> = {}) {
  const response = await fetch(`${base}${path}`, { headers: { accept: browserAccept, ...headers }, redirect: 'manual' });
  return { status: response.status, type: response.headers.get('content-type'), headers: response.headers, body: await response.text() };
}
const restrictedReads = async () =>
  (
    await query<{ payload: { access_class: string; sections: string[]; representation: string } }>(
      app.db.em.fork(),
      `select payload from mint_events where brand_id = ? and event_type = 'passport_restricted_read' order by occurred_at`,
      [brand.brandId],
    )
  ).map((r) => r.payload);

/** The vc+jwt answer at `path` with its payload decoded to text (a JWS carries it base64url-encoded). */
async function signedAsText(path: string, headers: Record<string, string> = {}) {
  const answer = await get(path, { accept: 'application/vc+jwt', ...headers });
  return { ...answer, body: answer.status === 200 ? JSON.stringify(decodeJwt(answer.body)) : answer.body };
}

/** Every public answer about the unit, its lot and its product, in each representation. */
const publicAnswers = async () => {
  const answers = [];
  for (const path of [unitPath(serial), unitPath(serial, 'L42'), `/r/${slug}/01/${brand.gtin}/10/L42`, `/r/${slug}/01/${brand.gtin}`]) {
    for (const accept of [browserAccept, 'application/json', 'application/linkset+json', 'application/ld+json'])
      answers.push({ path, accept, ...(await get(path, { accept })) });
    answers.push({ path, accept: 'gs1:dpp', ...(await get(`${path}?linkType=gs1:dpp`)) });
    answers.push({ path, accept: 'version 1', ...(await get(`${path}?passportVersion=1`)) });
    answers.push({ path, accept: 'application/vc+jwt', ...(await signedAsText(path)) });
  }
  return answers;
};

describe('the passport page', () => {
  it('shows a unit its passport, inherited from the lot and the model, in the asked language, small and without script', async () => {
    const page = await get(unitPath(serial, 'L42'), { 'accept-language': 'de-DE,de;q=0.9' });
    expect([page.status, page.type]).toEqual([200, 'text/html; charset=utf-8']);
    for (const shown of [
      '<img src="https://cdn.example.com/acme-logo.png"',
      'border-top:6px solid #0055aa',
      'Produktpass',
      'Echt',
      '<dt>Charge</dt><dd>L42</dd>',
      `<dt>Seriennummer</dt><dd>${serial}</dd>`,
      `<dd>${brand.gtin}</dd>`,
      'Traktionsbatterie 300 Ah',
      'Example Cells GmbH',
      'Reparaturanleitung',
      'Gesundheitszustand',
      '97',
      '55,25',
      'Passversion 1',
    ]) {
      expect(page.body, shown).toContain(shown);
    }
    expect(page.body).not.toMatch(/<script/i);
    expect(Buffer.byteLength(page.body)).toBeLessThan(50 * 1024);
    expect(page.headers.get('cache-control')).toBe('private, no-store');
    // Without the lot in the path, the model's footprint.
    expect((await get(unitPath(serial), { 'accept-language': 'en' })).body).toContain('61.5 kg CO₂e');
  });

  it('never shows restricted sections to the public, in any answer', async () => {
    const answers = [
      await get(unitPath(serial)),
      await get(unitPath(serial), { accept: 'application/json' }),
      await get(unitPath(serial), { accept: 'application/linkset+json' }),
      await get(unitPath(serial), { accept: 'application/ld+json' }),
      await get(`${unitPath(serial)}?linkType=gs1:dpp`),
      await get(`/r/${slug}/01/${brand.gtin}`),
      await get(unitPath(serial), { 'x-passport-key': 'pp_notakey' }),
    ];
    for (const a of [...answers, await signedAsText(unitPath(serial))]) {
      expect(a.status).toBe(200);
      expect(a.body).not.toContain(secretMaterial);
      expect(a.body).not.toContain(secretDiligence);
    }
    expect(answers[0]!.body).toContain('Some sections are shown only to authorised repairers, recyclers or authorities.');
    expect(await restrictedReads()).toEqual([]);
  });

  it('shows a holder the sections of its class (an authority both), in the page, the JSON and the credential, each read audited', async () => {
    const repair = await get(unitPath(serial), { 'x-passport-key': repairKey });
    expect([repair.body.includes(secretMaterial), repair.body.includes(secretDiligence)]).toEqual([true, false]);
    expect(repair.body).toContain('Shown to repairers and recyclers credential holders only');
    const json = JSON.parse((await get(unitPath(serial), { accept: 'application/json', authorization: `Bearer ${authorityKey}` })).body) as {
      passport: { content: Record<string, unknown>; restricted_sections: string[] };
    };
    expect(json.passport.restricted_sections).toEqual(['materials', 'dueDiligence']);
    const credential = (await get(unitPath(serial), { accept: 'application/ld+json', 'x-passport-key': authorityKey })).body;
    expect([credential.includes(secretMaterial), credential.includes(secretDiligence)]).toEqual([true, true]);
    expect((await restrictedReads()).map((e) => [e.access_class, e.sections, e.representation])).toEqual([
      ['legitimate_interest', ['materials'], 'html'],
      ['authority', ['materials', 'dueDiligence'], 'json'],
      ['authority', ['materials', 'dueDiligence'], 'ld+json'],
    ]);
  });

  it('keeps restricted sections out of every public answer after holders read them: kept pages, JSON and signatures included', async () => {
    // Holders read every representation first, so each is rendered, derived or signed and kept for them.
    for (const key of [repairKey, authorityKey]) {
      for (const path of [unitPath(serial), unitPath(serial, 'L42'), `/r/${slug}/01/${brand.gtin}`]) {
        for (const accept of [browserAccept, 'application/json', 'application/ld+json'])
          expect((await get(path, { accept, 'x-passport-key': key })).body).toContain(secretMaterial);
        expect((await signedAsText(path, { 'x-passport-key': key })).body).toContain(secretMaterial);
      }
    }
    const answers = await publicAnswers();
    expect(answers.length).toBe(28);
    for (const a of answers) {
      expect(a.status, `${a.path} ${a.accept}`).toBeLessThan(300);
      expect(a.body, `${a.path} ${a.accept}`).not.toContain(secretMaterial);
      expect(a.body, `${a.path} ${a.accept}`).not.toContain(secretDiligence);
    }
    // The same public answers a second time (now served from what the resolver keeps) are the same.
    const again = await publicAnswers();
    for (const a of again) expect(a.body.includes(secretMaterial) || a.body.includes(secretDiligence), `${a.path} ${a.accept}`).toBe(false);
    expect(again.map((a) => a.status)).toEqual(answers.map((a) => a.status));
  });

  it("writes the page in the reader's language with fallbacks: the page's words in English, German or French, the brand's texts in the nearest language it wrote", async () => {
    const cases: [string, string, string, string][] = [
      ['fr-CH, fr;q=0.9', 'fr', 'Passeport produit', 'Repair guide'], // no French text written: English, then the brand's first language
      ['de-AT, en;q=0.5', 'de', 'Produktpass', 'Reparaturanleitung'],
      ['ja, de;q=0.3', 'de', 'Produktpass', 'Reparaturanleitung'],
      ['ja', 'en', 'Product passport', 'Repair guide'],
    ];
    for (const [language, lang, words, text] of cases) {
      const page = await get(unitPath(serial, 'L42'), { 'accept-language': language });
      expect([page.status, page.body.includes(`<html lang="${lang}">`), page.body.includes(words), page.body.includes(text)], language).toEqual([
        200,
        true,
        true,
        true,
      ]);
    }
  });

  it('reads a revoked credential as the public', async () => {
    const owner = { id: brand.userId };
    const issued = await issuePassportAccessKey(app.ctx, owner, {
      brandId: brand.brandId,
      name: 'Former repairer',
      accessClass: 'legitimate_interest',
      expiresAt: new Date(Date.now() + 86_400_000),
    });
    expect((await get(unitPath(serial), { 'x-passport-key': issued.key })).body).toContain(secretMaterial);
    await revokePassportAccessKey(app.ctx, owner, { brandId: brand.brandId, id: issued.credential.id });
    expect((await get(unitPath(serial), { 'x-passport-key': issued.key })).body).not.toContain(secretMaterial);
    // An expired credential too, in every representation.
    const expiring = await issuePassportAccessKey(app.ctx, owner, {
      brandId: brand.brandId,
      name: 'Short-term recycler',
      accessClass: 'legitimate_interest',
      expiresAt: new Date(Date.now() + 86_400_000),
    });
    expect((await get(unitPath(serial), { 'x-passport-key': expiring.key, accept: 'application/json' })).body).toContain(secretMaterial);
    await run(app.db.em.fork(), `update passport_access_keys set expires_at = now() - interval '1 second' where id = ?`, [expiring.credential.id]);
    for (const accept of [browserAccept, 'application/json', 'application/ld+json']) {
      expect((await get(unitPath(serial), { 'x-passport-key': expiring.key, accept })).body, accept).not.toContain(secretMaterial);
    }
    expect((await signedAsText(unitPath(serial), { 'x-passport-key': expiring.key })).body).not.toContain(secretMaterial);
  });

  it('keeps a never-issued serial on its own 404 page, and a product with an external passport URL on its redirect', async () => {
    const fake = await get(unitPath('NEVERISSUED9'));
    expect([fake.status, fake.body.includes('Not issued by this brand'), fake.body.includes('Product passport')]).toEqual([404, true, false]);
    expect((await get(unitPath('NEVERISSUED9'), { accept: 'application/ld+json' })).status).toBe(404);
    const other = await app.seedBrand();
    const { mintBatchId } = await mintCompleted(app.ctx, other, 1);
    await setPassportUrl(app.db.em.fork(), other.brandId, 'https://passports.example/elsewhere');
    await updatePassportDraft(
      app.ctx,
      { id: other.userId },
      { brandId: other.brandId, productId: other.productId, lot: null, serial: null, content: { description: { en: 'x' } }, expectedRevision: null },
    );
    await publishPassport(app.ctx, { id: other.userId }, { brandId: other.brandId, productId: other.productId, lot: null, serial: null });
    const [{ slug: otherSlug }] = (await query<{ slug: string }>(app.db.em.fork(), 'select slug from brands where id = ?', [other.brandId])) as [
      { slug: string },
    ];
    const [{ serial: s }] = (await query<{ serial: string }>(app.db.em.fork(), 'select serial from mint_units where mint_batch_id = ?', [mintBatchId])) as [
      { serial: string },
    ];
    const plain = await get(`/r/${otherSlug}/01/${other.gtin}/21/${s}`);
    expect([plain.status, plain.headers.get('location')]).toEqual([307, 'https://passports.example/elsewhere']);
    expect((await get(`/r/${otherSlug}/01/${other.gtin}/21/${s}?linkType=gs1:dpp`)).body).toContain('Product passport');
  });
});

describe('the passport for machines', () => {
  it('answers application/ld+json with a UNTP DPP credential valid against the vendored UNTP schema', async () => {
    const answer = await get(unitPath(serial, 'L42'), { accept: 'application/ld+json' });
    expect([answer.status, answer.type]).toEqual([200, 'application/ld+json']);
    const credential = JSON.parse(answer.body) as Record<string, any>;
    const schema = JSON.parse(
      readFileSync(new URL('../../../test/fixtures/standards/untp-dpp/untp-dpp-untp-dpp-schema.json', import.meta.url), 'utf8'),
    ) as object;
    const ajv = new Ajv2020.default({ strict: false, allErrors: true });
    addFormats.default(ajv);
    const validate = ajv.compile(schema);
    expect(validate(credential), JSON.stringify(validate.errors)).toBe(true);
    expect(credential['@context'].slice(0, 2)).toEqual(['https://www.w3.org/ns/credentials/v2', 'https://test.uncefact.org/vocabulary/untp/dpp/working/']);
    expect(credential.issuer.id).toBe('did:web:127.0.0.1%3A8080');
    expect(credential.credentialSubject.granularityLevel).toBe('item');
    expect(credential.credentialSubject.product).toMatchObject({ serialNumber: serial, batchNumber: 'L42', registeredId: brand.gtin });
    expect(credential.credentialSubject.emissionsScorecard.carbonFootprint).toBe(55.25);
    // A machine asking for gs1:dpp by link type gets the same credential.
    const byType = await get(`${unitPath(serial, 'L42')}?linkType=gs1:dpp`, { accept: 'application/json' });
    expect(JSON.parse(byType.body).credentialSubject.product.serialNumber).toBe(serial);
  });
});

/** Verifies a vc+jwt with the key its header names, found in the served did.json (as a did:web resolver would fetch it), not with the project's code. */
async function verifyWithDidWeb(
  jws: string,
  host = '127.0.0.1%3A8080',
  didJson: () => Promise<string> = async () => (await fetch(`${base}/.well-known/did.json`)).text(),
): Promise<Record<string, any>> {
  const header = decodeProtectedHeader(jws);
  const did = (header.kid as string).split('#')[0]!;
  expect(did).toBe(`did:web:${host}`);
  const doc = JSON.parse(await didJson()) as { id: string; verificationMethod: { id: string; publicKeyJwk: JWK }[] };
  expect(doc.id).toBe(did);
  const method = doc.verificationMethod.find((m) => m.id === header.kid);
  expect(method, 'the signing key is listed in did.json').toBeDefined();
  const { payload, protectedHeader } = await compactVerify(jws, await importJWK(method!.publicKeyJwk, 'EdDSA'));
  expect([protectedHeader.alg, protectedHeader.typ, protectedHeader.cty]).toEqual(['EdDSA', 'vc+jwt', 'vc']);
  return JSON.parse(new TextDecoder().decode(payload)) as Record<string, any>;
}

/** The bits of a served status list credential, verified as above. */
async function revokedBits(listUrl: string): Promise<(i: number) => boolean> {
  const served = await fetch(listUrl.replace('http://127.0.0.1:8080', base));
  expect([served.status, served.headers.get('content-type')]).toEqual([200, 'application/vc+jwt']);
  return bitsOf(await verifyWithDidWeb(await served.text()));
}

/** The revocation bits of a verified status list credential. */
function bitsOf(list: Record<string, any>): (i: number) => boolean {
  expect(list.type).toEqual(['VerifiableCredential', 'BitstringStatusListCredential']);
  const bytes = gunzipSync(Buffer.from((list.credentialSubject.encodedList as string).slice(1), 'base64url'));
  expect(bytes.length).toBeGreaterThanOrEqual(16_384);
  return (i) => (bytes[i >> 3]! & (0x80 >> (i & 7))) !== 0;
}

describe('signed credentials', () => {
  it('answers application/vc+jwt with an EdDSA JWS that verifies against the did.json of the resolver host; a tampered byte fails', async () => {
    const answer = await get(unitPath(serial, 'L42'), { accept: 'application/vc+jwt' });
    expect([answer.status, answer.type]).toEqual([200, 'application/vc+jwt']);
    const credential = await verifyWithDidWeb(answer.body);
    expect(credential.credentialSubject.product.serialNumber).toBe(serial);
    expect(credential.credentialStatus).toMatchObject({
      type: 'BitstringStatusListEntry',
      statusPurpose: 'revocation',
      statusListCredential: `http://127.0.0.1:8080/.well-known/passport-status/${slug}`,
    });
    const [h, p, sig] = answer.body.split('.') as [string, string, string];
    const payload = Buffer.from(p, 'base64url');
    payload[payload.indexOf('L42')] = 'M'.charCodeAt(0);
    await expect(verifyWithDidWeb(`${h}.${payload.toString('base64url')}.${sig}`)).rejects.toThrow(/signature verification failed/);
  });
});

describe('versions', () => {
  it('lists the passport in the linkset with predecessor-version links, and keeps earlier versions at their own URL', async () => {
    const owner = { id: brand.userId };
    const key = { brandId: brand.brandId, productId: brand.productId, lot: null, serial: null };
    await updatePassportDraft(app.ctx, owner, {
      ...key,
      content: { ...model, description: { en: 'Traction battery 300 Ah, second edition' } },
      expectedRevision: null,
    });
    await publishPassport(app.ctx, owner, key);
    await new Promise((resolve) => setTimeout(resolve, 1_100)); // the other process's cache, at most a second
    const gtinPath = `/r/${slug}/01/${brand.gtin}`;
    const linkset = JSON.parse((await get(gtinPath, { accept: 'application/linkset+json' })).body) as { linkset: Record<string, unknown>[] };
    const own = linkset.linkset[linkset.linkset.length - 1]!;
    expect(own['https://ref.gs1.org/voc/dpp']).toBeDefined();
    expect(own['predecessor-version']).toEqual([{ href: `http://127.0.0.1:8080${gtinPath}?passportVersion=1`, title: 'Passport version 1' }]);
    const current = await get(gtinPath, { 'accept-language': 'en' });
    expect(current.body).toContain('second edition');
    // A product page with its passport is never kept by a shared cache (a publish is not a link change the proxy is purged on).
    expect([current.headers.get('cache-control'), current.headers.get('surrogate-key')]).toEqual(['private, no-store', null]);
    const earlier = await get(`${gtinPath}?passportVersion=1`, { 'accept-language': 'en' });
    expect([
      earlier.status,
      earlier.body.includes('second edition'),
      earlier.body.includes('This is an earlier version; the current one is version 2.'),
    ]).toEqual([200, false, true]);
    expect((await get(`${gtinPath}?passportVersion=7`)).status).toBe(404);
    // The superseded version's credential shows revoked in the served status list; the current one does not.
    const v1 = JSON.parse((await get(`${gtinPath}?passportVersion=1`, { accept: 'application/ld+json' })).body) as Record<string, any>;
    const v2 = JSON.parse((await get(gtinPath, { accept: 'application/ld+json' })).body) as Record<string, any>;
    const revoked = await revokedBits(v1.credentialStatus.statusListCredential as string);
    expect([revoked(Number(v1.credentialStatus.statusListIndex)), revoked(Number(v2.credentialStatus.statusListIndex))]).toEqual([true, false]);
    expect((await get(`${gtinPath}?passportVersion=x`)).status).toBe(400);
  });
});

describe('kept pages', () => {
  it('shows each unit its own serial on a page rendered once per product and language, escaped, a never-issued one on its 404 page', async () => {
    const [{ other }] = (await query<{ other: string }>(
      app.db.em.fork(),
      'select serial as other from mint_units where mint_batch_id = (select mint_batch_id from mint_units where serial = ?) and serial <> ? limit 1',
      [serial, serial],
    )) as [{ other: string }];
    const pages = await Promise.all([other, serial].map(async (s) => ({ s, page: await get(unitPath(s), { 'accept-language': 'en' }) })));
    for (const { s, page } of pages) {
      expect([page.status, page.body.includes(`<dd>${s}</dd>`), pages.some((o) => o.s !== s && page.body.includes(o.s))]).toEqual([200, true, false]);
    }
    const forged = await Promise.all(
      ['NOPE<b>1', 'NOPE<i>22'].map(async (s) => ({ s, page: await get(unitPath(encodeURIComponent(s)), { 'accept-language': 'en' }) })),
    );
    for (const { s, page } of forged) {
      expect([page.status, page.body.includes(s), page.body.includes(`<dd>${s.replace('<', '&#60;').replace('>', '&#62;')}</dd>`)]).toEqual([404, false, true]);
    }
    const without = forged.map(({ s, page }) => page.body.replace(s.replace('<', '&#60;').replace('>', '&#62;'), ''));
    expect(without[0]).toBe(without[1]);
  });
});

describe('credentials signed at publish', () => {
  it('signs the model and lot credentials when a version is published, so their requests sign nothing; an item is signed once, on its first request', async () => {
    const owner = { id: brand.userId };
    const before = signatures;
    await importPassports(app.ctx, owner, {
      brandId: brand.brandId,
      publish: true,
      entries: [{ productId: brand.productId, gtin: null, lot: 'L42', serial: null, content: { emissions: { ...model.emissions, carbonFootprint: 54.75 } } }],
    });
    // The publish arrives on the link-change feed; the replica signs the lot's new credential (the
    // model's version is unchanged: its credential, signed at its own publish, is kept).
    for (let waited = 0; signatures < before + 1 && waited < 5_000; waited += 50) await new Promise((resolve) => setTimeout(resolve, 50));
    expect(signatures).toBe(before + 1);
    const gtinPath = `/r/${slug}/01/${brand.gtin}`;
    const machine = { accept: 'application/vc+jwt' };
    const modelJws = await get(gtinPath, machine);
    const lotJws = await get(`${gtinPath}/10/L42`, machine);
    expect([modelJws.status, lotJws.status]).toEqual([200, 200]);
    expect(signatures).toBe(before + 1);
    const lot = await verifyWithDidWeb(lotJws.body);
    expect([lot.credentialSubject.granularityLevel, lot.credentialSubject.emissionsScorecard.carbonFootprint]).toEqual(['batch', 54.75]);
    expect((await verifyWithDidWeb(modelJws.body)).credentialSubject.granularityLevel).toBe('model');
    // An item's credential is derived and signed on its first request, then kept.
    const item = await get(unitPath(serial, 'L42'), machine);
    const again = await get(unitPath(serial, 'L42'), machine);
    expect([item.status, again.body === item.body, signatures]).toEqual([200, true, before + 2]);
  });
});

/** One request to the API with the Host header of a brand domain (fetch cannot set it). */
function onHost(host: string, path: string, headers: Record<string, string> = {}): Promise<{ status: number; type: string | undefined; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port: api.port, path, headers: { host, accept: browserAccept, ...headers } }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode!, type: res.headers['content-type'], body }));
    });
    req.on('error', reject);
    req.end();
  });
}

describe('credentials signed on first request', () => {
  it('signs a lot credential in another language, for a holder and on a brand domain each once, on its first request, and keeps each', async () => {
    const machine = { accept: 'application/vc+jwt' };
    const lotPath = `/r/${slug}/01/${brand.gtin}/10/L42`;
    const english = await get(lotPath, machine);
    expect((await verifyWithDidWeb(english.body)).credentialSubject.circularityScorecard.repairInformation.linkName).toBe('Repair guide');
    // Another language: signed on its first request, then the kept signature.
    let before = signatures;
    const german = await get(lotPath, { ...machine, 'accept-language': 'de' });
    const germanAgain = await get(lotPath, { ...machine, 'accept-language': 'de' });
    expect([german.status, germanAgain.body === german.body, german.body === english.body, signatures]).toEqual([200, true, false, before + 1]);
    expect((await verifyWithDidWeb(german.body)).credentialSubject.circularityScorecard.repairInformation.linkName).toBe('Reparaturanleitung');
    // A holder: its own credential with its class's sections, signed once and kept; each read audited.
    const audited = (await restrictedReads()).length;
    before = signatures;
    const held = await get(lotPath, { ...machine, 'x-passport-key': repairKey });
    const heldAgain = await get(lotPath, { ...machine, 'x-passport-key': repairKey });
    expect([held.status, heldAgain.body === held.body, signatures]).toEqual([200, true, before + 1]);
    const heldCredential = JSON.stringify(await verifyWithDidWeb(held.body));
    expect([heldCredential.includes(secretMaterial), heldCredential.includes(secretDiligence)]).toEqual([true, false]);
    expect((await restrictedReads()).slice(audited).map((e) => [e.access_class, e.sections, e.representation])).toEqual([
      ['legitimate_interest', ['materials'], 'vc+jwt'],
      ['legitimate_interest', ['materials'], 'vc+jwt'],
    ]);
    expect(JSON.stringify(decodeJwt((await get(lotPath, machine)).body))).not.toContain(secretMaterial);
    // A brand domain: its own did:web issuer, did.json and status list, its credentials signed once and kept.
    const domain = 'id.passport-test.example';
    await setBrandResolverDomain(app.ctx, { id: brand.userId }, { brandId: brand.brandId, domain });
    const onDomain = (path: string, headers: Record<string, string> = {}) => onHost(domain, path, headers);
    let first = await onDomain(`/01/${brand.gtin}/10/L42`, machine);
    for (const until = Date.now() + 15_000; first.status !== 200 && Date.now() < until; await new Promise((r) => setTimeout(r, 100))) {
      first = await onDomain(`/01/${brand.gtin}/10/L42`, machine);
    }
    expect([first.status, first.type]).toEqual([200, 'application/vc+jwt']);
    before = signatures;
    expect((await onDomain(`/01/${brand.gtin}/10/L42`, machine)).body).toBe(first.body);
    expect(signatures).toBe(before);
    const domainDidJson = async () => {
      const served = await onDomain('/.well-known/did.json');
      expect([served.status, served.type]).toEqual([200, 'application/did+json']);
      return served.body;
    };
    expect(JSON.parse(await domainDidJson()).id).toBe(`did:web:${domain}`);
    const onDomainCredential = await verifyWithDidWeb(first.body, domain, domainDidJson);
    expect(onDomainCredential.issuer.id).toBe(`did:web:${domain}`);
    expect(onDomainCredential.credentialSubject.id).toBe(`https://${domain}/01/${brand.gtin}/10/L42`);
    // The resolver host's did.json does not vouch for the domain's issuer: the kid names the domain.
    await expect(verifyWithDidWeb(first.body)).rejects.toThrow();
    // The domain's status list, verified against the domain's did.json: the superseded model version revoked, the current one not.
    const statusUrl = new URL(onDomainCredential.credentialStatus.statusListCredential as string);
    expect(statusUrl.origin).toBe(`https://${domain}`);
    const list = await onDomain(statusUrl.pathname);
    expect([list.status, list.type]).toEqual([200, 'application/vc+jwt']);
    const revoked = bitsOf(await verifyWithDidWeb(list.body, domain, domainDidJson));
    const v1 = JSON.parse((await onDomain(`/01/${brand.gtin}?passportVersion=1`, { accept: 'application/ld+json' })).body) as Record<string, any>;
    const current = JSON.parse((await onDomain(`/01/${brand.gtin}`, { accept: 'application/ld+json' })).body) as Record<string, any>;
    expect([v1.issuer.id, revoked(Number(v1.credentialStatus.statusListIndex)), revoked(Number(current.credentialStatus.statusListIndex))]).toEqual([
      `did:web:${domain}`,
      true,
      false,
    ]);
    await setBrandResolverDomain(app.ctx, { id: brand.userId }, { brandId: brand.brandId, domain: '' });
  }, 60_000);
});

describe('on every replica', () => {
  it('shows a publish on every API process within a second: its page, JSON, credential and signed credential', async () => {
    const second = await startApi({
      ctx: app.ctx,
      config: { port: 0, host: '127.0.0.1', shutdownTimeoutMs: 2_000 },
      logger: createLogger({ logLevel: 'silent' }, {}, new Writable({ write: (_c, _e, done) => done() })),
      readiness: async () => ({ ok: true, checks: {} }),
    });
    try {
      const gtinPath = `/r/${slug}/01/${brand.gtin}`;
      const replicas = [base, `http://127.0.0.1:${second.port}`];
      const at = (origin: string, accept: string) =>
        fetch(`${origin}${gtinPath}`, { headers: { accept, 'accept-language': 'en' } }).then(async (r) => r.text());
      /** Whether a replica's answers all show version `v` with its words. */
      const shows = async (origin: string, v: number, words: string) => {
        const [page, json, ld, jwt] = await Promise.all([
          at(origin, browserAccept),
          at(origin, 'application/json'),
          at(origin, 'application/ld+json'),
          at(origin, 'application/vc+jwt'),
        ]);
        return (
          page.includes(words) &&
          (JSON.parse(json) as { passport: { version: number } }).passport.version === v &&
          (JSON.parse(ld) as { id: string }).id.endsWith(`?passportVersion=${v}`) &&
          (decodeJwt(jwt) as { id: string }).id.endsWith(`?passportVersion=${v}`)
        );
      };
      const current = (JSON.parse(await at(base, 'application/json')) as { passport: { version: number } }).passport.version;
      // Both processes have the current version kept (levels, page, signatures).
      for (const origin of replicas) expect(await shows(origin, current, 'second edition'), origin).toBe(true);
      const owner = { id: brand.userId };
      const key = { brandId: brand.brandId, productId: brand.productId, lot: null, serial: null };
      await updatePassportDraft(app.ctx, owner, {
        ...key,
        content: { ...model, description: { en: 'Traction battery 300 Ah, third edition' } },
        expectedRevision: null,
      });
      await publishPassport(app.ctx, owner, key);
      const published = Date.now();
      const seenAfter: number[] = [];
      for (const origin of replicas) {
        while (!(await shows(origin, current + 1, 'third edition')) && Date.now() - published < 3_000) await new Promise((r) => setTimeout(r, 20));
        seenAfter.push(Date.now() - published);
      }
      console.log(`passport publish seen on both API processes after ${seenAfter.join(' and ')} ms`);
      for (const ms of seenAfter) expect(ms).toBeLessThan(1_000);
    } finally {
      await second.close();
    }
  }, 30_000);
});

describe('links as actions', () => {
  it("lists the identity's links as actions on its passport page (instructions, sustainability, recall) beside the passport's repair instructions", async () => {
    const actions = [
      ['gs1:instructions', 'https://example.com/manual', 'Instructions for use'],
      ['gs1:sustainabilityInfo', 'https://example.com/sustainability', 'Sustainability report'],
      ['gs1:recallStatus', 'https://example.com/recalls', 'Recall notices'],
    ] as const;
    for (const [linkType, href, title] of actions) {
      await upsertLink(
        app.ctx,
        { id: brand.userId },
        {
          brandId: brand.brandId,
          gtin: brand.gtin,
          lot: null,
          serial: null,
          linkType,
          href,
          title,
          hreflang: [],
          mediaType: null,
          context: [],
          fwqs: false,
          isDefault: false,
        },
      );
    }
    let page = await get(unitPath(serial, 'L42'), { 'accept-language': 'en' });
    for (const until = Date.now() + 5_000; !page.body.includes('Recall notices') && Date.now() < until; await new Promise((r) => setTimeout(r, 50))) {
      page = await get(unitPath(serial, 'L42'), { 'accept-language': 'en' });
    }
    expect([page.status, page.headers.get('location')]).toEqual([200, null]);
    for (const [, href, title] of actions) expect(page.body, title).toContain(`<li><a href="${href}">${title}</a></li>`);
    expect(page.body).toContain('<a href="https://example.com/repair">Repair guide</a>');
    expect(page.body).toContain('Product passport');
  });
});

describe('in a real browser', () => {
  it('has no serious or critical axe-core violation and no sideways scrolling at 320 px, for the public and a holder', async () => {
    const browser = await chromium.launch({
      executablePath: '/usr/bin/chromium',
      args: [
        '--headless',
        '--no-sandbox',
        '--disable-gpu',
        '--disable-quic',
        '--no-first-run',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
      ],
    });
    const axe = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');
    try {
      for (const headers of [{}, { 'x-passport-key': authorityKey }] as Record<string, string>[]) {
        const context = await browser.newContext({ viewport: { width: 320, height: 640 }, extraHTTPHeaders: headers, locale: 'fr-FR' });
        const tab = await context.newPage();
        await tab.goto(`${base}${unitPath(serial, 'L42')}`);
        await tab.addScriptTag({ content: axe });
        const { violations, passes } = await tab.evaluate(async () => {
          const result = await (
            globalThis as unknown as { axe: { run(): Promise<{ violations: { id: string; impact: string | null }[]; passes: unknown[] }> } }
          ).axe.run();
          return { violations: result.violations.map((v) => `${v.impact} ${v.id}`), passes: result.passes.length };
        });
        expect(passes).toBeGreaterThan(5);
        expect(violations.filter((v) => v.startsWith('serious') || v.startsWith('critical'))).toEqual([]);
        expect((await tab.evaluate('document.documentElement.scrollWidth - document.documentElement.clientWidth')) as number).toBeLessThanOrEqual(0);
        await context.close();
      }
    } finally {
      await browser.close();
    }
  }, 90_000);
});

// Last: a rotation changes the key the API's signer uses once its key cache (10 s) expires, which
// would re-sign kept credentials in the tests above that count signatures.
describe('signing key rotation', () => {
  it('keeps credentials signed before a key rotation verifiable: the rotated key stays in did.json', async () => {
    const signer = createPassportSigner(app.ctx, { cacheMs: 0 });
    const issuer = 'did:web:127.0.0.1%3A8080';
    const before = await signer.sign({ id: 'urn:example:before' }, issuer);
    const kid = await rotatePassportSigningKey(app.ctx);
    const after = await signer.sign({ id: 'urn:example:after' }, issuer);
    expect(decodeProtectedHeader(after).kid).toBe(`${issuer}#${kid}`);
    const doc = (await signer.didDocument(issuer)) as { verificationMethod: { id: string; publicKeyJwk: JWK }[] };
    for (const jws of [before, after]) {
      const method = doc.verificationMethod.find((m) => m.id === decodeProtectedHeader(jws).kid)!;
      await expect(compactVerify(jws, await importJWK(method.publicKeyJwk, 'EdDSA'))).resolves.toBeDefined();
    }
    const stored = (await query<{ private_sealed: string }>(app.db.em.fork(), 'select private_sealed from passport_signing_keys')).map((r) => r.private_sealed);
    expect(stored.every((v) => v.startsWith('enc:v1:w1:'))).toBe(true);
  });
});
