// The resolver's link model end to end: ResolverService (roles, API key scopes, validation, one
// default per level under concurrent writers, audit events, ReplaceLinks, CSV import) and the
// resolver answering over the links (walk-up, unknown lots and serials, language, context, fwqs,
// cache invalidation across two API processes on one database).

import { randomUUID } from 'node:crypto';
import { Code, createClient, type Client } from '@connectrpc/connect';
import { createConnectTransport } from '@connectrpc/connect-node';
import { CommercialStatus, LinkLevel, MintReadinessStatus, ProductImportStatus, ResolverService } from '@mint/contract';
import type { Role } from '@mint/domain';
import { createApiKey, createUser, grantRole, issueAccessToken, runProductImport } from '@mint/usecases';
import { beforeAll, describe, expect, it } from 'vitest';
import { mintCompleted } from '../../../test/support/pack-fixtures.ts';
import { query } from '../../../test/support/sql.ts';
import { useUseCases } from '../../../test/support/usecases.ts';
import { bearer, codeOf, errorOf, inProcessApi, testApiPool, type InProcessApi } from './support.ts';

const { app, brand } = useUseCases();
let api: InProcessApi;
let slug: string;
let serial: string;
const startApiInstance = testApiPool(app);
/** Another API process on the file's database; its base URL. */
const startInstance = async () => (await startApiInstance()).baseUrl;

async function userWith(role: Role): Promise<string> {
  const user = await createUser(app.ctx, { email: `${randomUUID()}@test.example`, name: 'Someone' });
  await grantRole(app.ctx, brand.brandId, user.id, role);
  return issueAccessToken(app.ctx, user.id);
}
const owner = () => bearer(brand.token);
const link = (fields: Record<string, unknown> = {}) => ({
  brandId: brand.brandId,
  gtin: brand.gtin,
  linkType: 'gs1:sustainabilityInfo',
  href: 'https://acme.example/sustainability',
  title: 'Sustainability',
  ...fields,
});

async function get(base: string, path: string, headers: Record<string, string> = {}) {
  const response = await fetch(`${base}${path}`, { headers, redirect: 'manual' });
  return { status: response.status, location: response.headers.get('location'), body: await response.text() };
}

beforeAll(async () => {
  api = inProcessApi(app);
  const minted = await mintCompleted(app.ctx, brand, 2);
  await mintCompleted(app.ctx, brand, 4, { identityMode: 'batch', lots: [{ lotCode: 'LOT-1', qty: 4 }] });
  [{ slug }] = (await query<{ slug: string }>(app.db.em.fork(), 'select slug from brands where id = ?', [brand.brandId])) as [{ slug: string }];
  [{ serial }] = (await query<{ serial: string }>(app.db.em.fork(), 'select serial from mint_units where mint_batch_id = ? order by seq limit 1', [
    minted.mintBatchId,
  ])) as [{ serial: string }];
});

describe('ResolverService', () => {
  it('lets owners and admins write, every role read, and API keys only with links:write / links:read', async () => {
    for (const [role, write, read] of [
      ['owner', 'ok', 'ok'],
      ['admin', 'ok', 'ok'],
      ['member', Code.PermissionDenied, 'ok'],
      ['viewer', Code.PermissionDenied, 'ok'],
    ] as const) {
      const token = await userWith(role);
      expect(await codeOf(api.resolver.upsertLink(link({ href: `https://acme.example/${role}` }), bearer(token))), role).toBe(write);
      expect(await codeOf(api.resolver.listLinks({ brandId: brand.brandId }, bearer(token))), role).toBe(read);
    }
    const keyOf = async (scopes: ('links:write' | 'links:read' | 'products:write')[]) => ({
      headers: { 'x-api-key': (await createApiKey(app.ctx, { brandId: brand.brandId, name: scopes.join('+'), scopes })).key },
    });
    const writer = await keyOf(['links:write']);
    const reader = await keyOf(['links:read']);
    const unrelated = await keyOf(['products:write']);
    expect(await codeOf(api.resolver.upsertLink(link({ href: 'https://acme.example/key' }), writer))).toBe('ok');
    expect(await codeOf(api.resolver.listLinks({ brandId: brand.brandId }, writer))).toBe(Code.PermissionDenied);
    expect(await codeOf(api.resolver.listLinks({ brandId: brand.brandId }, reader))).toBe('ok');
    expect(await codeOf(api.resolver.upsertLink(link({ href: 'https://acme.example/key2' }), reader))).toBe(Code.PermissionDenied);
    expect(await codeOf(api.resolver.deleteLink({ brandId: brand.brandId, linkId: randomUUID() }, unrelated))).toBe(Code.PermissionDenied);
    await api.resolver.replaceLinks({ brandId: brand.brandId, gtin: brand.gtin, lot: 'ROLES', links: [] }, owner());
  });

  it('names the offending field: not https, unknown link type, a second default, bad AI 10 / AI 21 syntax, no title', async () => {
    const cases: [Record<string, unknown>, string][] = [
      [{ href: 'http://acme.example/x' }, 'href'],
      [{ linkType: 'gs1:noSuchType' }, 'link_type'],
      [{ lot: 'a b' }, 'lot'],
      // Characters AI 82 allows but mint lots refuse (they need escaping in a Digital Link path), and a dot-segment.
      [{ lot: 'LOT"1' }, 'lot'],
      [{ lot: 'LOT%1' }, 'lot'],
      [{ lot: 'LOT/1' }, 'lot'],
      [{ lot: 'LOT?1' }, 'lot'],
      [{ lot: '..' }, 'lot'],
      [{ serial: 'x'.repeat(21) }, 'serial'],
      [{ gtin: '09506000134353' }, 'gtin'],
      [{ title: ' ' }, 'title'],
      [{ hreflang: ['english'] }, 'hreflang[0]'],
    ];
    for (const [fields, field] of cases) {
      const error = await errorOf(api.resolver.upsertLink(link(fields), owner()));
      expect([error.code, error.rawMessage], field).toEqual([Code.InvalidArgument, expect.stringContaining(`${field}:`)]);
    }
    const twoDefaults = await errorOf(
      api.resolver.replaceLinks(
        {
          brandId: brand.brandId,
          gtin: brand.gtin,
          lot: 'LOT-X',
          links: [
            { linkType: 'gs1:pip', href: 'https://a.example/1', title: 'One', isDefault: true },
            { linkType: 'gs1:pip', href: 'https://a.example/2', title: 'Two', isDefault: true },
          ],
        },
        owner(),
      ),
    );
    expect([twoDefaults.code, twoDefaults.rawMessage]).toEqual([Code.InvalidArgument, expect.stringContaining('links[1].is_default: a second default')]);
    expect((await api.resolver.listLinks({ brandId: brand.brandId, level: LinkLevel.LOT }, owner())).links.filter((l) => l.lot === 'LOT-X')).toEqual([]);
  });

  it('keeps exactly one default when 20 writers make their link the default of one level at once (the last writer wins)', async () => {
    const answers = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        api.resolver.upsertLink(
          {
            brandId: brand.brandId,
            gtin: brand.gtin,
            serial: 'RACE-1',
            linkType: 'gs1:instructions',
            href: `https://acme.example/race/${i}`,
            title: `Race ${i}`,
            isDefault: true,
          },
          owner(),
        ),
      ),
    );
    expect(answers.every((a) => a.created && a.link?.isDefault)).toBe(true);
    const level = (await api.resolver.listLinks({ brandId: brand.brandId, level: LinkLevel.SERIAL, limit: 100 }, owner())).links.filter(
      (l) => l.serial === 'RACE-1',
    );
    expect(level).toHaveLength(20);
    expect(level.filter((l) => l.isDefault)).toHaveLength(1);
    // Deleting the default makes the oldest remaining link the default.
    const current = level.find((l) => l.isDefault)!;
    await api.resolver.deleteLink({ brandId: brand.brandId, linkId: current.id }, owner());
    const after = (await api.resolver.listLinks({ brandId: brand.brandId, level: LinkLevel.SERIAL, limit: 100 }, owner())).links.filter(
      (l) => l.serial === 'RACE-1',
    );
    expect([after.length, after.filter((l) => l.isDefault).length]).toEqual([19, 1]);
    expect(await codeOf(api.resolver.deleteLink({ brandId: brand.brandId, linkId: current.id }, owner()))).toBe(Code.NotFound);
  });

  it('writes an audit event for every change', async () => {
    const { link: written } = await api.resolver.upsertLink(
      link({ gtin: undefined, href: 'https://acme.example/audit', linkType: 'https://gs1.org/voc/certificationInfo' }),
      owner(),
    );
    expect(written).toMatchObject({ level: LinkLevel.BRAND, linkType: 'https://ref.gs1.org/voc/certificationInfo' });
    await api.resolver.deleteLink({ brandId: brand.brandId, linkId: written!.id }, owner());
    await api.resolver.replaceLinks(
      { brandId: brand.brandId, gtin: brand.gtin, lot: 'AUDIT', links: [{ linkType: 'gs1:pip', href: 'https://a.example/a', title: 'A' }] },
      owner(),
    );
    const events = await query<{ event_type: string; entity_id: string; actor: string }>(
      app.db.em.fork(),
      "select event_type, entity_id, actor from mint_events where brand_id = ? and entity_type = 'resolver_link' order by occurred_at, event_type",
      [brand.brandId],
    );
    expect(events).toEqual(
      expect.arrayContaining([
        { event_type: 'resolver_link_upserted', entity_id: written!.id, actor: brand.userId },
        { event_type: 'resolver_link_deleted', entity_id: written!.id, actor: brand.userId },
        { event_type: 'resolver_links_replaced', entity_id: `lot:${brand.gtin}:AUDIT`, actor: brand.userId },
      ]),
    );
  });

  it('imports links from CSV through the import machinery, with per-row errors', async () => {
    const csv = [
      'gtin,lot,serial,link_type,href,title,hreflang,is_default',
      `${brand.gtin},LOT-CSV,,gs1:recallStatus,https://acme.example/recall,Recall,,true`,
      `${brand.gtin},LOT-CSV,,gs1:pip,https://acme.example/pip-en,Page,en|en-GB,`,
      `${brand.gtin},LOT-CSV,,gs1:instructions,https://acme.example/x,Second default,,true`,
      `${brand.gtin},,,gs1:pip,http://insecure.example,Insecure,,`,
      `${brand.gtin},,,gs1:nope,https://acme.example/n,Nope,,`,
      `${brand.gtin},LOT-CSV,,gs1:pip,https://acme.example/pip-en,Page again,en,`,
      `${brand.gtin},LOT&CSV,,gs1:pip,https://acme.example/pip-amp,Page,,`,
      // Link types and true/false in any case, as the product import reads its statuses.
      `${brand.gtin},LOT-CASE,,GS1:CertificationInfo,https://acme.example/cert,Certificate,,TRUE`,
      `${brand.gtin},LOT-CASE,,https://ref.gs1.org/voc/RECALLSTATUS,https://acme.example/recall-case,Recall,,No`,
      `${brand.gtin},LOT-CASE,,gs1:pip,https://acme.example/pip-case,Page,,maybe`,
    ].join('\n');
    const started = await api.resolver.startLinkImport({ brandId: brand.brandId, csv: new TextEncoder().encode(csv) }, owner());
    expect(started.import?.status).toBe(ProductImportStatus.QUEUED);
    expect(await runProductImport(app.ctx, brand.brandId, started.import!.id)).toEqual({ kind: 'finished', status: 'COMPLETED' });
    const done = (await api.resolver.getLinkImport({ brandId: brand.brandId, importId: started.import!.id }, owner())).import!;
    expect([done.status, done.totalRows, done.importedRows, done.failedRows]).toEqual([ProductImportStatus.COMPLETED, 10, 4, 6]);
    expect(done.errors.map((e) => [e.row, e.field])).toEqual([
      [3, 'is_default'],
      [4, 'href'],
      [5, 'link_type'],
      [6, 'href'],
      [7, 'lot'],
      [10, 'is_default'],
    ]);
    // The row errors of enum-like cells list what the column takes.
    expect(done.errors[2]!.message).toMatch(
      /^"gs1:nope" must be one of the GS1 Web Vocabulary 1\.16's link types: gs1:activityIdeas, .*gs1:pip, .*\(in any case, or as https:\/\/ref\.gs1\.org\/voc\/\{name\}\)$/,
    );
    expect(done.errors[5]!.message).toBe('must be true or false (or yes, no, 1, 0, in any case), or empty for the default');
    const caseLinks = (await api.resolver.listLinks({ brandId: brand.brandId, gtin: brand.gtin, level: LinkLevel.LOT, limit: 100 }, owner())).links.filter(
      (l) => l.lot === 'LOT-CASE',
    );
    expect(caseLinks.map((l) => [l.linkType, l.isDefault]).sort()).toEqual([
      ['https://ref.gs1.org/voc/certificationInfo', true],
      ['https://ref.gs1.org/voc/recallStatus', false],
    ]);
    // A repeated link is refused as a repeated product is; a lot code follows the mint lots' rule.
    expect(done.errors[3]!.message).toBe('already appears in row 2 with this level and link type; each link once per file');
    expect(done.errors[4]!.message).toBe("must be 1 to 20 characters of A-Z a-z 0-9 ! ' ( ) * + , . : ; = _ -");
    const lot = await get(await startInstance(), `/r/${slug}/01/${brand.gtin}/10/LOT-CSV?linkType=gs1:recallStatus`);
    expect([lot.status, lot.location]).toEqual([307, 'https://acme.example/recall']);
    expect(await codeOf(api.resolver.startLinkImport({ brandId: brand.brandId, csv: new TextEncoder().encode('sku,name\nA,B') }, owner()))).toBe(
      Code.InvalidArgument,
    );
  });

  it('leaves each level with the one default a link-by-link upsert of the rows would, 500 rows a transaction', async () => {
    const other = await app.seedBrand();
    const as = bearer(other.token);
    // Before the import: a lot level with a default, a serial level whose default the import names again without is_default.
    await api.resolver.upsertLink(
      { brandId: other.brandId, gtin: other.gtin, lot: 'KEEP', linkType: 'gs1:pip', href: 'https://o.example/old', title: 'Old', isDefault: true } as never,
      as,
    );
    await api.resolver.upsertLink(
      { brandId: other.brandId, gtin: other.gtin, serial: 'S1', linkType: 'gs1:pip', href: 'https://o.example/s1', title: 'S1', isDefault: true } as never,
      as,
    );
    const rows = [
      'gtin,lot,serial,link_type,href,title,is_default',
      // The brand level, new: its first row becomes its default.
      ',,,gs1:pip,https://o.example/brand-1,B1,',
      ',,,gs1:instructions,https://o.example/brand-2,B2,',
      // The GTIN level, new: the row marked default wins over the earlier one.
      `${other.gtin},,,gs1:pip,https://o.example/g-1,G1,`,
      `${other.gtin},,,gs1:instructions,https://o.example/g-2,G2,true`,
      // The lot level: a new default demotes the old one.
      `${other.gtin},KEEP,,gs1:instructions,https://o.example/new,New,true`,
      // The serial level: the default named again without is_default stays the default, its title updated.
      `${other.gtin},,S1,gs1:pip,https://o.example/s1,S1 again,`,
      `${other.gtin},,S1,gs1:instructions,https://o.example/s1-2,S1 two,`,
      // 600 serial levels of one link each, so the rows span two transactions: each link its level's default.
      ...Array.from({ length: 600 }, (_, i) => `${other.gtin},,N${i},gs1:pip,https://o.example/n/${i},N${i},`),
    ];
    const started = await api.resolver.startLinkImport({ brandId: other.brandId, csv: new TextEncoder().encode(rows.join('\n')) }, as);
    expect(await runProductImport(app.ctx, other.brandId, started.import!.id)).toEqual({ kind: 'finished', status: 'COMPLETED' });
    const done = (await api.resolver.getLinkImport({ brandId: other.brandId, importId: started.import!.id }, as)).import!;
    expect([done.importedRows, done.failedRows]).toEqual([607, 0]);
    const stored = await query<{ level: string; qualifier: string; href: string; title: string; is_default: boolean }>(
      app.db.em.fork(),
      'select level, qualifier, href, title, is_default from resolver_links where brand_id = ? order by level, qualifier, href',
      [other.brandId],
    );
    const defaults = stored.filter((l) => l.is_default);
    expect(defaults.filter((l) => !l.qualifier.startsWith('N')).map((l) => [l.level, l.qualifier, l.href])).toEqual([
      ['brand', '', 'https://o.example/brand-1'],
      ['gtin', '', 'https://o.example/g-2'],
      ['lot', 'KEEP', 'https://o.example/new'],
      ['serial', 'S1', 'https://o.example/s1'],
    ]);
    expect(defaults.filter((l) => l.qualifier.startsWith('N'))).toHaveLength(600);
    expect(stored.find((l) => l.href === 'https://o.example/s1')?.title).toBe('S1 again');
    // One default a level, whatever the level.
    expect(new Set(defaults.map((l) => `${l.level} ${l.qualifier}`)).size).toBe(defaults.length);
  });

  it("makes UpsertProduct's passport_url the product's gs1:pip default link and keeps it in step", async () => {
    const other = await app.seedBrand();
    const upsert = (passportUrl: string | undefined) =>
      api.catalog.upsertProduct(
        {
          brandId: other.brandId,
          sku: 'SKU-1',
          name: 'Product One',
          gtin: other.gtin,
          commercialStatus: CommercialStatus.ACTIVE,
          mintReadinessStatus: MintReadinessStatus.READY,
          passportUrl,
        },
        bearer(other.token),
      );
    const linksOf = async () =>
      (await api.resolver.listLinks({ brandId: other.brandId, gtin: other.gtin }, bearer(other.token))).links.map((l) => [l.linkType, l.href, l.isDefault]);
    await upsert('https://passports.example/one');
    expect(await linksOf()).toEqual([['https://ref.gs1.org/voc/pip', 'https://passports.example/one', true]]);
    await upsert('https://passports.example/two');
    expect(await linksOf()).toEqual([['https://ref.gs1.org/voc/pip', 'https://passports.example/two', true]]);
    await upsert(undefined);
    expect(await linksOf()).toEqual([]);
  });
});

describe('resolution over links', () => {
  let base: string;
  beforeAll(async () => {
    base = await startInstance();
    const w = (fields: Record<string, unknown>) => api.resolver.upsertLink({ brandId: brand.brandId, ...fields } as never, owner());
    await w({ linkType: 'gs1:pip', href: 'https://acme.example/brand', title: 'Acme', isDefault: true });
    await w({ gtin: brand.gtin, linkType: 'gs1:pip', href: 'https://acme.example/product', title: 'Product page', mediaType: 'text/html', isDefault: true });
    await w({ gtin: brand.gtin, linkType: 'gs1:pip', href: 'https://acme.example/product/en-GB', title: 'Product page (UK)', hreflang: ['en-GB'] });
    await w({ gtin: brand.gtin, linkType: 'gs1:pip', href: 'https://acme.example/product/de', title: 'Produktseite', hreflang: ['de'] });
    await w({ gtin: brand.gtin, linkType: 'gs1:instructions', href: 'https://acme.example/manual?v=1', title: 'Manual', fwqs: false });
    await w({ gtin: brand.gtin, linkType: 'gs1:certificationInfo', href: 'https://acme.example/cert-eu', title: 'EU', context: ['eu'] });
    await w({ gtin: brand.gtin, linkType: 'gs1:certificationInfo', href: 'https://acme.example/cert-us', title: 'US', context: ['us'] });
    await w({ gtin: brand.gtin, lot: 'LOT-1', linkType: 'gs1:recallStatus', href: 'https://acme.example/recall/lot-1', title: 'Recall', isDefault: true });
    await w({ gtin: brand.gtin, serial, linkType: 'gs1:sustainabilityInfo', href: 'https://acme.example/unit', title: 'This unit' });
  });

  it('walks up serial -> lot -> GTIN -> brand, the most specific default winning', async () => {
    expect((await get(base, `/r/${slug}/01/${brand.gtin}/21/${serial}`)).location).toBe('https://acme.example/unit');
    expect((await get(base, `/r/${slug}/01/${brand.gtin}/21/${serial}?linkType=gs1:instructions`)).location).toBe('https://acme.example/manual?v=1');
    expect((await get(base, `/r/${slug}/01/${brand.gtin}/10/LOT-1`)).location).toBe('https://acme.example/recall/lot-1');
    expect((await get(base, `/r/${slug}/01/${brand.gtin}/10/LOT-1?linkType=gs1:pip`)).location).toBe('https://acme.example/product');
    expect((await get(base, `/r/${slug}/01/${brand.gtin}`)).location).toBe('https://acme.example/product');
    const linkset = JSON.parse((await get(base, `/r/${slug}/01/${brand.gtin}/10/LOT-1/21/${serial}`, { accept: 'application/linkset+json' })).body) as {
      linkset: Record<string, unknown>[];
    };
    expect(linkset.linkset.map((l) => l.anchor)).toEqual([
      `http://127.0.0.1:8080/r/${slug}`,
      `http://127.0.0.1:8080/r/${slug}/01/${brand.gtin}`,
      `http://127.0.0.1:8080/r/${slug}/01/${brand.gtin}/10/LOT-1`,
      `http://127.0.0.1:8080/r/${slug}/01/${brand.gtin}/10/LOT-1/21/${serial}`,
    ]);
    expect(linkset.linkset.flatMap((l) => (l['https://ref.gs1.org/voc/defaultLink'] as unknown[] | undefined) ?? [])).toEqual([
      { href: 'https://acme.example/unit', title: 'This unit' },
    ]);
    expect(linkset.linkset[1]!['https://ref.gs1.org/voc/pip']).toEqual(
      expect.arrayContaining([{ href: 'https://acme.example/product/en-GB', title: 'Product page (UK)', hreflang: ['en-GB'] }]),
    );
    expect((await get(base, `/r/${slug}/01/${brand.gtin}?linkType=gs1:epil`)).status).toBe(404);
  });

  it('resolves an unknown lot through the GTIN, and an unknown serial through the GTIN flagged unknown in JSON, linkset and scan event', async () => {
    expect((await get(base, `/r/${slug}/01/${brand.gtin}/10/NO-SUCH-LOT`)).location).toBe('https://acme.example/product');
    const path = `/r/${slug}/01/${brand.gtin}/21/NEVERMINTED`;
    // A browser gets the not-issued page (404); JSON and the linkset walk up, flagged unknown.
    expect([(await get(base, path)).status, (await get(base, path)).location]).toEqual([404, null]);
    expect(JSON.parse((await get(base, path, { accept: 'application/json' })).body)).toMatchObject({ target: 'https://acme.example/product' });
    expect(JSON.parse((await get(base, path, { accept: 'application/json' })).body)).toMatchObject({ unit: { serial: 'NEVERMINTED', known: false } });
    const linkset = JSON.parse((await get(base, path, { accept: 'application/linkset+json' })).body) as { linkset: { itemDescription: string }[] };
    expect(linkset.linkset.at(-1)!.itemDescription).toContain('unknown');
    let scans: { unit_known: boolean | null; link_type: string | null }[] = [];
    for (let i = 0; i < 100 && scans.length < 3; i++) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      scans = await query(app.db.em.fork(), "select unit_known, link_type from scan_events where brand_id = ? and identifier = 'NEVERMINTED' order by id", [
        brand.brandId,
      ]);
    }
    // The browser got the not-issued page, so no link was served to any of them.
    expect(scans).toEqual([
      { unit_known: false, link_type: null },
      { unit_known: false, link_type: null },
      { unit_known: false, link_type: null },
    ]);
  });

  it('picks among links of one type by Accept-Language (en-GB, then en, then the default) and by context', async () => {
    const pip = `/r/${slug}/01/${brand.gtin}?linkType=gs1:pip`;
    expect((await get(base, pip, { 'accept-language': 'en-GB,en;q=0.8' })).location).toBe('https://acme.example/product/en-GB');
    expect((await get(base, pip, { 'accept-language': 'de-AT, en;q=0.5' })).location).toBe('https://acme.example/product/de');
    expect((await get(base, pip, { 'accept-language': 'fr' })).location).toBe('https://acme.example/product');
    expect((await get(base, `/r/${slug}/01/${brand.gtin}`, { 'accept-language': 'de' })).location).toBe('https://acme.example/product/de');
    const cert = `/r/${slug}/01/${brand.gtin}?linkType=gs1:certificationInfo`;
    expect((await get(base, `${cert}&context=us`)).location).toBe('https://acme.example/cert-us&context=us'.replace('&', '?'));
    expect((await get(base, `${cert}&context=eu`)).location).toBe('https://acme.example/cert-eu?context=eu');
  });

  it('forwards the query string unless the link says fwqs: false', async () => {
    expect((await get(base, `/r/${slug}/01/${brand.gtin}?17=261231`)).location).toBe('https://acme.example/product?17=261231');
    expect((await get(base, `/r/${slug}/01/${brand.gtin}?linkType=gs1:instructions&17=261231`)).location).toBe('https://acme.example/manual?v=1');
  });

  it('serves an edit made through one API process from another within a second', async () => {
    const [one, two] = [await startInstance(), await startInstance()];
    const path = `/r/${slug}/01/${brand.gtin}?linkType=gs1:traceability`;
    expect((await get(two, path)).status).toBe(404);
    const client: Client<typeof ResolverService> = createClient(ResolverService, createConnectTransport({ baseUrl: one, httpVersion: '1.1' }));
    await client.upsertLink(
      { brandId: brand.brandId, gtin: brand.gtin, linkType: 'gs1:traceability', href: 'https://acme.example/trace/1', title: 'Trace' },
      owner(),
    );
    const waitFor = async (href: string) => {
      const started = Date.now();
      let location: string | null = null;
      while (Date.now() - started < 1_000 && location !== href) location = (await get(two, path)).location;
      expect(location).toBe(href);
    };
    await waitFor('https://acme.example/trace/1');
    await client.replaceLinks(
      {
        brandId: brand.brandId,
        gtin: brand.gtin,
        links: [
          { linkType: 'gs1:pip', href: 'https://acme.example/product', title: 'Product page', isDefault: true },
          { linkType: 'gs1:traceability', href: 'https://acme.example/trace/2', title: 'Trace' },
        ],
      },
      owner(),
    );
    await waitFor('https://acme.example/trace/2');
  });
});
