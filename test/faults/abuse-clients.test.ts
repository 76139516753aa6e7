// Abuse of shared keys against a real API process behind an ingress (the test client stands for
// the ingress, trusted by TRUSTED_PROXIES): one client's failed authentications lock out that
// client only, never another client's valid token or API key; and a brand can neither claim a
// host the control plane answers on nor hide /healthz or an RPC behind a host it holds.

import { randomUUID } from 'node:crypto';
import http from 'node:http';
import { createApiKey } from '@mint/usecases';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testInfra } from '../support/context.ts';
import { freshStreamNames } from '../support/nats.ts';
import { setupUseCases, type UseCaseBundle } from '../support/usecases.ts';
import { killAllApis, spawnApi, type ApiProcess } from './support.ts';

let app: UseCaseBundle;
let api: ApiProcess;
const kpisPath = '/mint.v1.MintService/GetMintKpis';

beforeAll(async () => {
  app = await setupUseCases();
  api = await spawnApi({
    databaseUrl: app.database.url, natsUrl: testInfra().natsUrl, ...freshStreamNames(),
    // RATE_LIMIT_AUTH_FAILURES_PER_ADDRESS keeps its default (120 a minute: two bad requests a second).
    env: { TRUSTED_PROXIES: '127.0.0.1/32,::1/128', PUBLIC_BASE_URL: 'https://mint.example.com', CONTROL_PLANE_HOSTS: 'mint-api.mint.svc.cluster.local,mint.example.com' },
  });
});
afterAll(async () => {
  await killAllApis();
  await app?.close();
});

interface Answer { status: number; body: string }

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
    console.log(`lockout behind a proxy: client A sent 200 bad requests in ${Date.now() - started} ms: ${statuses.filter((s) => s === 401).length} answered 401, ${refused} locked out (429)`);
    expect(statuses.slice(0, 120)).toEqual(Array(120).fill(401));
    expect(refused).toBe(80);
    // B, behind the same ingress, is another client: its token, never used before, and its API key work.
    expect((await rpc(kpisPath, b.token, { brand_id: b.brandId }, clientB)).status).toBe(200);
    const key = await createApiKey(app.ctx, { brandId: b.brandId, name: 'client-b', scopes: ['products:read'] });
    const v1 = await request('/v1/products', { headers: { authorization: `Bearer ${b.token}`, 'x-api-key': key.key, 'x-workspace-id': b.brandId, ...clientB } });
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
    expect(await claim('mint-api.mint.svc.cluster.local')).toEqual(['mint-api.mint.svc.cluster.local', 400, 'domain: must not be a host the service itself answers on (CONTROL_PLANE_HOSTS)']);
    expect(await claim('api.mint.example.com')).toEqual(['api.mint.example.com', 400,
      "domain: must not be a subdomain of the service's public host (mint.example.com) outside a zone delegated to brands (BRAND_DOMAIN_DELEGATED_ZONES)"]);
    expect(await claim('mint.example.com')).toEqual(['mint.example.com', 400, "domain: must not be the service's own public host"]);
    const domain = `id-${randomUUID().slice(0, 8)}.brand.example`;
    expect(await claim(domain)).toEqual([domain, 200, 'ok']);
    // The API process reloads its brand domain table on NOTIFY; wait until the host is the brand's.
    const until = Date.now() + 5_000;
    const servedAs = async () => (JSON.parse((await request('/.well-known/gs1resolver', { headers: { host: domain } })).body) as { resolverRoot?: string }).resolverRoot;
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
