// Brand resolver domains end to end: SetBrandResolverDomain (owners only, validation, uniqueness
// under concurrent claims, audit), and the resolver answering on a brand's own domain (the root
// path, its containers at /00/{sscc}, the description file, CORS, linkset, isolation from other brands, the control plane's paths
// never hidden by a claimed host), hosts the service answers on refused as claims, new units carrying the domain while old ones keep resolving at /r/{slug}, and another API
// process picking a change up through NOTIFY.

import { randomUUID } from 'node:crypto';
import http from 'node:http';
import { Code } from '@connectrpc/connect';
import type { Role } from '@mint/domain';
import { apiKeyScopes, ssccOf } from '@mint/domain';
import { createApiKey, createUser, grantRole, issueAccessToken, mintContainers, setContainerSettings, upsertLink } from '@mint/usecases';
import { beforeAll, describe, expect, it } from 'vitest';
import { mintCompleted } from '../../../test/support/pack-fixtures.ts';
import { query, unitsWithUrls } from '../../../test/support/sql.ts';
import { useUseCases, type SeededBrand } from '../../../test/support/usecases.ts';
import { bearer, codeOf, errorOf, inProcessApi, startTestApi, testApiPool, type InProcessApi } from './support.ts';

const { app, brand: a } = useUseCases();
let api: InProcessApi;
let b: SeededBrand;
let slugA: string;
let slugB: string;
/** Serials of A minted before A had a domain, and of B. */
let oldSerialA: string;
let serialB: string;
const startApiInstance = testApiPool(app);
/** Another API process on the file's database; its port. */
const startInstance = async () => (await startApiInstance()).port;
const domainA = `id-${randomUUID().slice(0, 8)}.brand-a.example`;

interface Answer {
  status: number;
  location: string | undefined;
  body: string;
  headers: http.IncomingHttpHeaders;
}

/** One request with an explicit Host header (fetch cannot set it). */
function request(
  port: number,
  host: string,
  path: string,
  options: { method?: string; headers?: Record<string, string>; body?: string } = {},
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, path, method: options.method ?? 'GET', headers: { host, ...options.headers } }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode!, location: res.headers.location, body, headers: res.headers }));
    });
    req.on('error', reject);
    req.end(options.body);
  });
}

async function userWith(brand: SeededBrand, role: Role): Promise<string> {
  const user = await createUser(app.ctx, { email: `${randomUUID()}@test.example`, name: 'Someone' });
  await grantRole(app.ctx, brand.brandId, user.id, role);
  return issueAccessToken(app.ctx, user.id);
}
const slugOf = async (brand: SeededBrand) =>
  ((await query<{ slug: string }>(app.db.em.fork(), 'select slug from brands where id = ?', [brand.brandId])) as [{ slug: string }])[0].slug;
const serialsOf = async (batchId: string) =>
  await query<{ serial: string; resolver_url: string }>(
    app.db.em.fork(),
    `select serial, resolver_url from ${unitsWithUrls} where mint_batch_id = ? order by seq`,
    [batchId],
  );
const setDomain = (brand: SeededBrand, domain: string, token = brand.token) =>
  api.resolver.setBrandResolverDomain({ brandId: brand.brandId, domain }, bearer(token));

/** Waits until `check` passes (a change reaches another process through NOTIFY). */
async function eventually(check: () => Promise<boolean>, ms = 5_000): Promise<void> {
  const until = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > until) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 50));
  }
}

let port: number;

beforeAll(async () => {
  api = inProcessApi(app);
  b = await app.seedBrand();
  [slugA, slugB] = [await slugOf(a), await slugOf(b)];
  oldSerialA = (await serialsOf((await mintCompleted(app.ctx, a, 2)).mintBatchId))[0]!.serial;
  serialB = (await serialsOf((await mintCompleted(app.ctx, b, 2)).mintBatchId))[0]!.serial;
  const actor = { id: a.userId };
  await upsertLink(app.ctx, actor, {
    brandId: a.brandId,
    gtin: a.gtin,
    lot: null,
    serial: null,
    linkType: 'gs1:pip',
    href: 'https://a.example/product',
    title: 'A product',
    hreflang: [],
    mediaType: null,
    context: [],
    fwqs: true,
    isDefault: true,
  });
  await upsertLink(
    app.ctx,
    { id: b.userId },
    {
      brandId: b.brandId,
      gtin: b.gtin,
      lot: null,
      serial: null,
      linkType: 'gs1:pip',
      href: 'https://b.example/product',
      title: 'B product',
      hreflang: [],
      mediaType: null,
      context: [],
      fwqs: true,
      isDefault: true,
    },
  );
  port = await startInstance();
});

describe('SetBrandResolverDomain', () => {
  it('is for owners only: admins, members, viewers and API keys with every scope are denied', async () => {
    const c = await app.seedBrand();
    for (const role of ['admin', 'member', 'viewer'] as const) {
      expect(await codeOf(setDomain(c, `x.${role}.example`, await userWith(c, role))), role).toBe(Code.PermissionDenied);
    }
    await query(app.db.em.fork(), 'update brands set api_access_enabled = true where id = ?', [c.brandId]);
    const key = (await createApiKey(app.ctx, { brandId: c.brandId, name: 'all', scopes: [...apiKeyScopes] })).key;
    expect(await codeOf(api.resolver.setBrandResolverDomain({ brandId: c.brandId, domain: 'x.key.example' }, { headers: { 'x-api-key': key } }))).toBe(
      Code.PermissionDenied,
    );
    // An owner of another brand is denied on this one.
    expect(await codeOf(setDomain(c, 'x.foreign.example', a.token))).toBe(Code.PermissionDenied);
    const [{ n }] = (await query<{ n: number }>(app.db.em.fork(), 'select count(*)::int as n from brands where id = ? and resolver_domain is not null', [
      c.brandId,
    ])) as [{ n: number }];
    expect(n).toBe(0);
    expect(await codeOf(setDomain(c, `x-${randomUUID().slice(0, 8)}.owner.example`))).toBe('ok');
  });

  it('refuses a malformed domain with InvalidArgument naming the field, writing nothing', async () => {
    const c = await app.seedBrand();
    for (const [domain, message] of [
      ['Id.Brand.example', 'domain: must be lower-case'],
      ['id.brand.example:8443', 'domain: must be a hostname without port'],
      ['10.0.0.7', 'domain: must be a hostname, not an IP address'],
      ['bücher.example', 'domain: must be in IDNA A-label (punycode) form'],
      ['https://id.brand.example/', 'domain: must be a hostname only, without scheme or path'],
      ['localhost', 'domain: must be a fully qualified hostname'],
    ] as const) {
      const error = await errorOf(setDomain(c, domain));
      expect(error.code, domain).toBe(Code.InvalidArgument);
      expect(error.rawMessage, domain).toContain(message);
    }
    const events = await query(app.db.em.fork(), "select 1 from mint_events where brand_id = ? and event_type = 'brand_resolver_domain_set'", [c.brandId]);
    expect(events).toHaveLength(0);
  });

  it('refuses hosts the service answers on: a subdomain of the public host outside a delegated zone, a configured control-plane host, a localhost name', async () => {
    const own = await startTestApi(app, {
      ctx: { ...app.ctx, publicBaseUrl: 'https://mint.example.com' },
      config: { controlPlaneHosts: ['mint-api.mint.svc.cluster.local', 'api.mint.example.com'], brandDomainDelegatedZones: ['brands.mint.example.com'] },
    });
    try {
      const c = await app.seedBrand();
      const claim = async (domain: string) => {
        const res = await fetch(`${own.baseUrl}/mint.v1.ResolverService/SetBrandResolverDomain`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', authorization: `Bearer ${c.token}` },
          body: JSON.stringify({ brand_id: c.brandId, domain }),
        });
        return [domain, res.status, ((await res.json()) as { message?: string }).message ?? 'ok'];
      };
      const subdomain =
        "domain: must not be a subdomain of the service's public host (mint.example.com) outside a zone delegated to brands (BRAND_DOMAIN_DELEGATED_ZONES)";
      const controlPlane = 'domain: must not be a host the service itself answers on (CONTROL_PLANE_HOSTS)';
      expect(await claim('id.mint.example.com')).toEqual(['id.mint.example.com', 400, subdomain]);
      expect(await claim('a.b.mint.example.com')).toEqual(['a.b.mint.example.com', 400, subdomain]);
      expect(await claim('mint-api.mint.svc.cluster.local')).toEqual(['mint-api.mint.svc.cluster.local', 400, controlPlane]);
      expect(await claim('api.mint.example.com')).toEqual(['api.mint.example.com', 400, controlPlane]);
      expect(await claim('api.localhost')).toEqual(['api.localhost', 400, controlPlane]);
      expect(await claim('mint.example.com')).toEqual(['mint.example.com', 400, "domain: must not be the service's own public host"]);
      const events = await query(app.db.em.fork(), "select 1 from mint_events where brand_id = ? and event_type = 'brand_resolver_domain_set'", [c.brandId]);
      expect(events).toHaveLength(0);
      // A zone the operator delegated to brands, and a sibling of the public host, are theirs to claim.
      const delegated = `acme-${randomUUID().slice(0, 8)}.brands.mint.example.com`;
      expect(await claim(delegated)).toEqual([delegated, 200, 'ok']);
      const sibling = `id-${randomUUID().slice(0, 8)}.example.com`;
      expect(await claim(sibling)).toEqual([sibling, 200, 'ok']);
    } finally {
      await own.close();
    }
  });

  it('keeps a domain unique across brands: of two concurrent claims exactly one wins, the other is FailedPrecondition naming the field', async () => {
    const claimants = await Promise.all([app.seedBrand(), app.seedBrand(), app.seedBrand()]);
    const contested = `id-${randomUUID().slice(0, 8)}.contested.example`;
    const outcomes = await Promise.allSettled(claimants.map((c) => setDomain(c, contested)));
    expect(outcomes.filter((o) => o.status === 'fulfilled')).toHaveLength(1);
    for (const o of outcomes.filter((o) => o.status === 'rejected')) {
      const error = await errorOf(Promise.reject((o as PromiseRejectedResult).reason));
      expect(error.code).toBe(Code.FailedPrecondition);
      expect(error.rawMessage).toBe(`domain: ${contested} is already the resolver domain of another brand`);
    }
    const holders = await query(app.db.em.fork(), 'select id from brands where resolver_domain = ?', [contested]);
    expect(holders).toHaveLength(1);
  });
});

describe('a brand domain', () => {
  let newSerialA: string;
  let newUrlA: string;

  beforeAll(async () => {
    const set = await setDomain(a, domainA);
    expect(set).toMatchObject({ ok: true, domain: domainA, resolverBaseUrl: `https://${domainA}`, changed: true });
    expect(await setDomain(a, domainA)).toMatchObject({ changed: false });
    const [unit] = await serialsOf((await mintCompleted(app.ctx, a, 1)).mintBatchId);
    [newSerialA, newUrlA] = [unit!.serial, unit!.resolver_url];
    await eventually(async () => (await request(port, domainA, `/01/${a.gtin}`)).status === 307);
  });

  it('audits the change with the actor, the domain and the previous one', async () => {
    const events = await query<{ actor: string; payload: unknown }>(
      app.db.em.fork(),
      "select actor, payload from mint_events where brand_id = ? and event_type = 'brand_resolver_domain_set'",
      [a.brandId],
    );
    expect(events).toEqual([{ actor: a.userId, payload: { domain: domainA, previous: null, resolver_base_url: `https://${domainA}` } }]);
  });

  it('gives units minted afterwards the domain as resolver base, and leaves earlier units as they were', async () => {
    expect(newUrlA).toBe(`https://${domainA}/01/${a.gtin}/21/${newSerialA}`);
    const [old] = (await query<{ resolver_url: string }>(app.db.em.fork(), `select resolver_url from ${unitsWithUrls} where brand_id = ? and serial = ?`, [
      a.brandId,
      oldSerialA,
    ])) as [{ resolver_url: string }];
    expect(old.resolver_url).toBe(`${app.ctx.publicBaseUrl}/r/${slugA}/01/${a.gtin}/21/${oldSerialA}`);
  });

  it("resolves the brand's identities at the root path, old and new units alike, and both still at /r/{slug}", async () => {
    for (const serial of [oldSerialA, newSerialA]) {
      const onDomain = await request(port, domainA, `/01/${a.gtin}/21/${serial}`);
      expect(onDomain.status, serial).toBe(307);
      expect(onDomain.location).toBe('https://a.example/product');
      expect(onDomain.headers.link).toContain(`<https://${domainA}/01/${a.gtin}/21/${serial}?linkType=linkset>`);
      const onPath = await request(port, '127.0.0.1', `/r/${slugA}/01/${a.gtin}/21/${serial}`);
      expect(onPath.status, serial).toBe(307);
      expect(onPath.headers.link).toContain(`${app.ctx.publicBaseUrl}/r/${slugA}/01/${a.gtin}/21/${serial}?linkType=linkset`);
    }
    expect((await request(port, `${domainA.toUpperCase()}:443`, `/01/${a.gtin}`)).status).toBe(307);
    const json = JSON.parse((await request(port, domainA, `/01/${a.gtin}/21/${newSerialA}`, { headers: { accept: 'application/json' } })).body) as {
      unit: { digital_link: string };
    };
    expect(json.unit.digital_link).toBe(newUrlA);
    const lot = await request(port, domainA, `/01/${a.gtin}/10/NOT-A-LOT`, { headers: { accept: 'application/json' } });
    expect(lot.status).toBe(200);
    // A short GTIN moves to its GTIN-14 on the domain.
    const moved = await request(port, domainA, `/01/${a.gtin.slice(1)}`);
    expect(moved.status).toBe(301);
    expect(moved.location).toBe(`https://${domainA}/01/${a.gtin}`);
    const badCheckDigit = `${a.gtin.slice(0, 13)}${(Number(a.gtin[13]) + 1) % 10}`;
    expect((await request(port, domainA, `/01/${badCheckDigit}`)).status).toBe(400);
    expect((await request(port, domainA, `/01/${a.gtin}/21/%ZZ`)).status).toBe(400);
  });

  it('answers linkType, linkset and CORS as under /r/{slug}, anchored at the domain', async () => {
    const linkset = await request(port, domainA, `/01/${a.gtin}/21/${newSerialA}?linkType=linkset`);
    expect(linkset.status).toBe(200);
    expect(linkset.headers['content-type']).toBe('application/linkset+json');
    const anchors = (JSON.parse(linkset.body) as { linkset: { anchor: string }[] }).linkset.map((l) => l.anchor);
    expect(anchors).toEqual([`https://${domainA}/01/${a.gtin}`, `https://${domainA}/01/${a.gtin}/21/${newSerialA}`]);
    expect((await request(port, domainA, `/01/${a.gtin}?linkType=gs1:pip`)).location).toBe('https://a.example/product');
    expect((await request(port, domainA, `/01/${a.gtin}?linkType=gs1:recallStatus`)).status).toBe(404);
    const preflight = await request(port, domainA, `/01/${a.gtin}`, {
      method: 'OPTIONS',
      headers: { origin: 'https://shop.example', 'access-control-request-method': 'GET' },
    });
    expect(preflight.status).toBe(204);
    expect(preflight.headers['access-control-allow-origin']).toBe('*');
    // OPTIONS names the identity's linkset too, anchored at the domain.
    expect(preflight.headers.link).toBe(`<https://${domainA}/01/${a.gtin}?linkType=linkset>; rel="linkset"; type="application/linkset+json"`);
    expect((await request(port, domainA, `/01/${a.gtin}`)).headers['access-control-allow-origin']).toBe('*');
  });

  it("never resolves another brand's identities: B's GTIN and serial answer 404 on A's domain, a shared GTIN walks up to A's links only", async () => {
    for (const path of [`/01/${b.gtin}/21/${serialB}`, `/01/${b.gtin}`, `/01/${b.gtin}/10/LOT-1`, `/u/${serialB}`, `/r/${slugB}/01/${b.gtin}/21/${serialB}`]) {
      const answer = await request(port, domainA, path, { headers: { accept: 'application/json' } });
      expect(answer.status, path).toBe(404);
      expect(answer.body, path).not.toContain('b.example');
    }
    // B's serial under A's GTIN is a serial A never minted: A's product, flagged unknown, never B's unit.
    const walked = await request(port, domainA, `/01/${a.gtin}/21/${serialB}`, { headers: { accept: 'application/json' } });
    expect(JSON.parse(walked.body)).toMatchObject({ unit: { known: false }, brand: { slug: slugA } });
    // B keeps resolving at its own path on the API host.
    expect((await request(port, '127.0.0.1', `/r/${slugB}/01/${b.gtin}/21/${serialB}`)).location).toBe('https://b.example/product');
  });

  it("answers the brand's containers at /00/{sscc}: state to anyone, contents to the brand, URIs at the domain; another brand's SSCC 404", async () => {
    await setContainerSettings(app.ctx, { id: a.userId }, { brandId: a.brandId, companyPrefix: '0614141', maxDepth: null });
    await setContainerSettings(app.ctx, { id: b.userId }, { brandId: b.brandId, companyPrefix: '7610425', maxDepth: null });
    const [pallet] = (
      await mintContainers(app.ctx, { id: a.userId }, { brandId: a.brandId, level: 'pallet', count: 1, extensionDigit: 0, idempotencyKey: 'p' })
    ).ssccs;
    const [theirs] = (
      await mintContainers(app.ctx, { id: b.userId }, { brandId: b.brandId, level: 'pallet', count: 1, extensionDigit: 0, idempotencyKey: 'p' })
    ).ssccs;
    const json = { accept: 'application/json' };
    const open = await request(port, domainA, `/00/${pallet}`, { headers: json });
    expect(open.status).toBe(200);
    const uri = `https://${domainA}/00/${pallet}`;
    expect(JSON.parse(open.body)).toEqual({
      ok: true,
      sscc: pallet,
      uri,
      level: 'pallet',
      brand: 'Test Brand',
      state: 'commissioned',
      reason: null,
      in_circulation: true,
    });
    expect(open.headers.link).toContain(`<${uri}?linkType=linkset>`);
    // The URI is the one the container's EPCIS events name.
    const minted = await query<{ epcs: string[] }>(
      app.db.em.fork(),
      `select epcs from epcis_events where brand_id = ? and biz_step = 'commissioning' and exists (select from unnest(epcs) e where e like '%/00/' || ?)`,
      [a.brandId, pallet],
    );
    expect(minted.map((e) => e.epcs)).toEqual([[uri]]);
    const asBrand = await request(port, domainA, `/00/${pallet}`, { headers: { ...json, authorization: `Bearer ${a.token}` } });
    expect(JSON.parse(asBrand.body)).toMatchObject({ contents: { container_count: 0, unit_count: 0 } });
    const linkset = await request(port, domainA, `/00/${pallet}?linkType=linkset`);
    expect((JSON.parse(linkset.body) as { linkset: { anchor: string }[] }).linkset[0]!.anchor).toBe(uri);
    expect((await request(port, domainA, `/00/${pallet}`, { method: 'OPTIONS' })).status).toBe(204);
    // Still answered under /r/{slug}.
    expect((await request(port, '127.0.0.1', `/r/${slugA}/00/${pallet}`, { headers: json })).status).toBe(200);
    const foreign = await request(port, domainA, `/00/${theirs}`, { headers: json });
    const unknown = await request(port, domainA, `/00/${ssccOf(1, '0614141', 999_999)}`, { headers: json });
    expect([foreign.status, unknown.status]).toEqual([404, 404]);
    expect(foreign.body).toBe(unknown.body);
    expect((await request(port, domainA, '/00/106141411234567890', { headers: json })).status).toBe(400);
  });

  it('serves the resolver description file with the domain as root', async () => {
    const onDomain = await request(port, domainA, '/.well-known/gs1resolver');
    expect(onDomain.status).toBe(200);
    expect(JSON.parse(onDomain.body)).toMatchObject({ resolverRoot: `https://${domainA}`, supportedPrimaryKeys: ['01'] });
    expect(onDomain.headers['access-control-allow-origin']).toBe('*');
    const own = JSON.parse((await request(port, '127.0.0.1', '/.well-known/gs1resolver')).body) as { resolverRoot: string };
    expect(own.resolverRoot).toBe(`${app.ctx.publicBaseUrl}/r`);
  });

  it("answers the control plane's paths (RPCs, /v1, health, metrics) as the control plane whatever the host, so a claimed host never hides them; other paths 404", async () => {
    const rpc = {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${a.token}` },
      body: JSON.stringify({ brand_id: a.brandId }),
    };
    const key = await createApiKey(app.ctx, { brandId: a.brandId, name: 'domain', scopes: ['products:read'] });
    for (const [path, options] of [
      ['/metrics', {}],
      ['/healthz', {}],
      ['/readyz', {}],
      ['/v1/products', { headers: { authorization: `Bearer ${a.token}`, 'x-api-key': key.key, 'x-workspace-id': a.brandId } }],
      ['/mint.v1.MintService/ListMintBatches', rpc],
      ['/mint.v1.ResolverService/ListLinks', rpc],
      ['/grpc.health.v1.Health/Check', { ...rpc, body: '{}' }],
    ] as const) {
      const onDomain = await request(port, domainA, path, options);
      const onApi = await request(port, '127.0.0.1', path, options);
      expect([path, onDomain.status]).toEqual([path, 200]);
      expect([path, onDomain.headers['content-type']]).toEqual([path, onApi.headers['content-type']]);
    }
    expect(JSON.parse((await request(port, domainA, '/healthz')).body)).toEqual({ ok: true });
    for (const path of ['/', '/r/anything', '/mint.v1.NoSuchService/Call']) expect([path, (await request(port, domainA, path)).status]).toEqual([path, 404]);
    expect((await request(port, domainA, `/01/${a.gtin}`, { method: 'POST', body: '' })).status).toBe(405);
  });

  it('reaches an API process started before the change within a second (NOTIFY), and a removal stops the domain but not /r/{slug}', async () => {
    const c = await app.seedBrand();
    const slugC = await slugOf(c);
    await upsertLink(
      app.ctx,
      { id: c.userId },
      {
        brandId: c.brandId,
        gtin: c.gtin,
        lot: null,
        serial: null,
        linkType: 'gs1:pip',
        href: 'https://c.example/p',
        title: 'C',
        hreflang: [],
        mediaType: null,
        context: [],
        fwqs: true,
        isDefault: true,
      },
    );
    const other = await startInstance();
    const domainC = `id-${randomUUID().slice(0, 8)}.brand-c.example`;
    expect((await request(other, domainC, `/01/${c.gtin}`)).status).toBe(404);
    await setDomain(c, domainC);
    await eventually(async () => (await request(other, domainC, `/01/${c.gtin}`)).location === 'https://c.example/p', 2_000);
    const removed = await setDomain(c, '');
    expect(removed.domain).toBeUndefined();
    expect(removed).toMatchObject({ resolverBaseUrl: `${app.ctx.publicBaseUrl}/r/${slugC}`, changed: true });
    await eventually(async () => (await request(other, domainC, `/01/${c.gtin}`)).status === 404, 2_000);
    expect((await request(other, '127.0.0.1', `/r/${slugC}/01/${c.gtin}`)).location).toBe('https://c.example/p');
    const [brand] = (await query<{ resolver_base_url: string }>(app.db.em.fork(), 'select resolver_base_url from brands where id = ?', [c.brandId])) as [
      { resolver_base_url: string },
    ];
    expect(brand.resolver_base_url).toBe(`${app.ctx.publicBaseUrl}/r/${slugC}`);
  });
});

describe('coalesced link lookups', () => {
  it("gives each of many concurrent scans its own unit's link, on the domain and under /r/{slug}", async () => {
    const batch = await mintCompleted(app.ctx, a, 6);
    const serials = (await serialsOf(batch.mintBatchId)).map((u) => u.serial);
    for (const serial of serials) {
      await upsertLink(
        app.ctx,
        { id: a.userId },
        {
          brandId: a.brandId,
          gtin: a.gtin,
          lot: null,
          serial,
          linkType: 'gs1:pip',
          href: `https://a.example/unit/${serial}`,
          title: serial,
          hreflang: [],
          mediaType: null,
          context: [],
          fwqs: true,
          isDefault: true,
        },
      );
    }
    const scans = Array.from({ length: 60 }, (_, i) => serials[(i * 7) % serials.length]!);
    const answers = await Promise.all(
      scans.map((serial, i) =>
        i % 2 === 0 ? request(port, domainA, `/01/${a.gtin}/21/${serial}`) : request(port, '127.0.0.1', `/r/${slugA}/01/${a.gtin}/21/${serial}`),
      ),
    );
    expect(answers.map((answer) => answer.location)).toEqual(scans.map((serial) => `https://a.example/unit/${serial}`));
  });
});
