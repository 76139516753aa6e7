// Abuse of shared keys against a real API process behind an ingress (the test client stands for
// the ingress, trusted by TRUSTED_PROXIES): one client's failed authentications lock out that
// client only, never another client's valid token or API key; a brand can neither claim a
// host the control plane answers on nor hide /healthz or an RPC behind a host it holds; and an
// anonymous scan flood through the ingress is counted into a few rows of the scan ledger, not
// stored one by one (SCAN_FLOOD_WINDOW_MS shortened to 2 s so the counted rows come soon).

import { randomUUID } from 'node:crypto';
import http from 'node:http';
import { createApiKey, maintainScanLedger } from '@mint/usecases';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testInfra } from '../support/context.ts';
import { freshStreamNames } from '../support/nats.ts';
import { mintCompleted } from '../support/pack-fixtures.ts';
import { query } from '../support/sql.ts';
import { setupUseCases, type UseCaseBundle } from '../support/usecases.ts';
import { killAllApis, spawnApi, type ApiProcess } from './support.ts';

let app: UseCaseBundle;
let api: ApiProcess;
const kpisPath = '/mint.v1.MintService/GetMintKpis';

beforeAll(async () => {
  app = await setupUseCases();
  api = await spawnApi({
    databaseUrl: app.database.url,
    natsUrl: testInfra().natsUrl,
    ...freshStreamNames(),
    // RATE_LIMIT_AUTH_FAILURES_PER_ADDRESS keeps its default (120 a minute: two bad requests a second).
    env: {
      TRUSTED_PROXIES: '127.0.0.1/32,::1/128',
      PUBLIC_BASE_URL: 'https://mint.example.com',
      CONTROL_PLANE_HOSTS: 'mint-api.mint.svc.cluster.local,mint.example.com',
      SCAN_FLOOD_WINDOW_MS: '2000',
    },
  });
});
afterAll(async () => {
  await killAllApis();
  await app?.close();
});

interface Answer {
  status: number;
  body: string;
}

/** One request with explicit headers, Host included (fetch cannot set it). */
function request(path: string, options: { method?: string; headers?: Record<string, string>; body?: string } = {}): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port: api.port, path, method: options.method ?? 'GET', headers: options.headers }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode!, body }));
    });
    req.on('error', reject);
    req.end(options.body);
  });
}

const rpc = (path: string, token: string, body: unknown, headers: Record<string, string> = {}) =>
  request(path, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${token}`, ...headers }, body: JSON.stringify(body) });

describe('one bad client behind the ingress', () => {
  it("locks out only itself: 200 bad requests from client A, then B's fresh token and API key and A's working token are served", async () => {
    const [a, b] = [await app.seedBrand(), await app.seedBrand()];
    const clientA = { 'x-forwarded-for': '203.0.113.7' };
    const clientB = { 'x-forwarded-for': '198.51.100.9' };
    // A's own token worked before A's bad requests began.
    expect((await rpc(kpisPath, a.token, { brand_id: a.brandId }, clientA)).status).toBe(200);
    const started = Date.now();
    const statuses: number[] = [];
    for (let i = 0; i < 200; i++) statuses.push((await rpc(kpisPath, `forged-${i}`, { brand_id: b.brandId }, clientA)).status);
    const refused = statuses.filter((s) => s === 429).length;
    console.log(
      `lockout behind a proxy: client A sent 200 bad requests in ${Date.now() - started} ms: ${statuses.filter((s) => s === 401).length} answered 401, ${refused} locked out (429)`,
    );
    expect(statuses.slice(0, 120)).toEqual(Array(120).fill(401));
    expect(refused).toBe(80);
    // B, behind the same ingress, is another client: its token, never used before, and its API key work.
    expect((await rpc(kpisPath, b.token, { brand_id: b.brandId }, clientB)).status).toBe(200);
    const key = await createApiKey(app.ctx, { brandId: b.brandId, name: 'client-b', scopes: ['products:read'] });
    const v1 = await request('/v1/products', {
      headers: { authorization: `Bearer ${b.token}`, 'x-api-key': key.key, 'x-workspace-id': b.brandId, ...clientB },
    });
    expect(v1.status).toBe(200);
    // Working tokens pass A's lockout (A's own, and B's); a token never seen to work, sent from A, waits.
    expect((await rpc(kpisPath, a.token, { brand_id: a.brandId }, clientA)).status).toBe(200);
    expect((await rpc(kpisPath, b.token, { brand_id: b.brandId }, clientA)).status).toBe(200);
    const c = await app.seedBrand();
    expect((await rpc(kpisPath, c.token, { brand_id: c.brandId }, clientA)).status).toBe(429);
  });
});

describe('hosts the control plane answers on', () => {
  it('refuses claims of the public host, its subdomains and a control-plane host; /healthz and RPCs answer on a claimed host', async () => {
    const brand = await app.seedBrand();
    const claim = async (domain: string) => {
      const answer = await rpc('/mint.v1.ResolverService/SetBrandResolverDomain', brand.token, { brand_id: brand.brandId, domain });
      return [domain, answer.status, (JSON.parse(answer.body) as { message?: string }).message ?? 'ok'];
    };
    expect(await claim('mint-api.mint.svc.cluster.local')).toEqual([
      'mint-api.mint.svc.cluster.local',
      400,
      'domain: must not be a host the service itself answers on (CONTROL_PLANE_HOSTS)',
    ]);
    expect(await claim('api.mint.example.com')).toEqual([
      'api.mint.example.com',
      400,
      "domain: must not be a subdomain of the service's public host (mint.example.com) outside a zone delegated to brands (BRAND_DOMAIN_DELEGATED_ZONES)",
    ]);
    expect(await claim('mint.example.com')).toEqual(['mint.example.com', 400, "domain: must not be the service's own public host"]);
    const domain = `id-${randomUUID().slice(0, 8)}.brand.example`;
    expect(await claim(domain)).toEqual([domain, 200, 'ok']);
    // The API process reloads its brand domain table on NOTIFY; wait until the host is the brand's.
    const until = Date.now() + 5_000;
    const servedAs = async () =>
      (JSON.parse((await request('/.well-known/gs1resolver', { headers: { host: domain } })).body) as { resolverRoot?: string }).resolverRoot;
    while ((await servedAs()) !== `https://${domain}`) {
      if (Date.now() > until) throw new Error('the domain never became a brand domain');
      await new Promise((r) => setTimeout(r, 50));
    }
    const health = await request('/healthz', { headers: { host: domain } });
    expect([health.status, JSON.parse(health.body)]).toEqual([200, { ok: true }]);
    const kpis = await rpc(kpisPath, brand.token, { brand_id: brand.brandId }, { host: domain });
    expect(kpis.status).toBe(200);
    // Anything else on the host is the brand's resolver: its root is not the control plane's.
    expect((await request('/', { headers: { host: domain } })).status).toBe(404);
  });
});

describe('an anonymous scan flood behind the ingress', () => {
  it('is counted into a few rows: 3,000 scans of one never-minted serial from one client and 1,000 guessed serials from another', async () => {
    const brand = await app.seedBrand();
    await mintCompleted(app.ctx, brand, 3);
    const [{ slug }] = (await query<{ slug: string }>(app.db.em.fork(), 'select slug from brands where id = ?', [brand.brandId])) as [{ slug: string }];
    // Today's partition made beforehand, as the executor's sweeper does.
    await maintainScanLedger(app.ctx, { retentionDays: 0 });
    const scan = (serial: string, client: string) =>
      request(`/r/${slug}/01/${brand.gtin}/21/${serial}`, { headers: { accept: 'application/json', 'x-forwarded-for': client } });
    const started = Date.now();
    const answers: number[] = [];
    // The flood: one address scanning one serial the brand never minted, as fast as it can.
    for (let i = 0; i < 3_000; i += 50)
      answers.push(...(await Promise.all(Array.from({ length: 50 }, () => scan('NEVERMINTED', '203.0.113.50')))).map((a) => a.status));
    // Then a sweep of guessed serials from another address.
    for (let i = 0; i < 1_000; i += 50)
      answers.push(...(await Promise.all(Array.from({ length: 50 }, (_, j) => scan(`GUESS${i + j}`, '198.51.100.60')))).map((a) => a.status));
    const floodMs = Date.now() - started;
    // Every scan is answered (the identity's JSON, saying the serial is unknown), whatever is stored.
    expect(new Set(answers)).toEqual(new Set([200]));
    const ledger = async () =>
      (
        await query<{ rows: string; scans: string; sampled: string; flood: string | null }>(
          app.db.em.fork(),
          `select count(*)::text as rows, coalesce(sum(scans), 0)::text as scans, count(*) filter (where identifier is null)::text as sampled,
              sum(scans) filter (where identifier = 'NEVERMINTED')::text as flood
         from scan_events where brand_id = ?`,
          [brand.brandId],
        )
      )[0]!;
    let found = await ledger();
    for (let i = 0; i < 200 && Number(found.scans) < 4_000; i++) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      found = await ledger();
    }
    const windows = Math.ceil((Date.now() - started) / 2_000) + 1;
    console.log(
      `scan flood behind a proxy: 4,000 anonymous scans in ${floodMs} ms stored as ${found.rows} rows` +
        ` (${found.sampled} sampled), counting ${found.scans} scans; the one serial's 3,000 counted exactly: ${found.flood}`,
    );
    expect(Number(found.scans)).toBe(4_000);
    expect(Number(found.flood)).toBe(3_000);
    expect(Number(found.sampled)).toBeGreaterThanOrEqual(1);
    // Per 2 s window at most: the serial's row and its counted repeats, the brand's 100 never-issued serials one by one, one sampled row.
    expect(Number(found.rows)).toBeLessThanOrEqual(windows * 103);
    expect(Number(found.rows)).toBeLessThan(400);
  }, 120_000);
});
