// Rate limits and their standard answers: 429 with Retry-After on plain HTTP, resource_exhausted on
// RPCs (Connect and gRPC), per credential on the control plane and per client address on the
// resolver, downloads and failed authentications. Each answer names the setting behind it.

import { randomBytes } from 'node:crypto';
import { MintService } from '@mint/contract';
import { createFsPackStore } from '@mint/store';
import { createApiKey } from '@mint/usecases';
import * as grpc from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tempStoreDir } from '../../../test/support/pack-fixtures.ts';
import { setupUseCases, type SeededBrand, type UseCaseBundle } from '../../../test/support/usecases.ts';
import { grpcUnaryCall, startTestApi, type TestApi } from './support.ts';

let app: UseCaseBundle;
let api: TestApi;
let store: Awaited<ReturnType<typeof tempStoreDir>>;

const limits = { rateLimitPerCredential: 5, rateLimitResolverPerAddress: 4, rateLimitDownloadsPerAddress: 3, rateLimitAuthFailuresPerAddress: 3 };

beforeAll(async () => {
  app = await setupUseCases();
  store = await tempStoreDir();
  api = await startTestApi(app, {
    config: limits,
    downloads: { keys: [{ id: 'k1', secret: randomBytes(32) }], store: createFsPackStore(store.dir) },
  });
});
afterAll(async () => {
  await api?.close();
  await store?.remove();
  await app?.close();
});

const kpis = (brand: SeededBrand) =>
  fetch(`${api.baseUrl}/mint.v1.MintService/GetMintKpis`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${brand.token}` },
    body: JSON.stringify({ brand_id: brand.brandId }),
  });

/** Sends `count` requests at once; their answers in order. */
async function burst(count: number, send: () => Promise<Response>): Promise<Response[]> {
  return Promise.all(Array.from({ length: count }, send));
}

/**
 * Checks a burst of 20 against a limit of `limit` per window: every answer is allowed or refused,
 * at least `limit` pass and at most two windows' worth (a loaded machine may spread the burst over
 * a window boundary), the rest are refused.
 */
function expectLimited(statuses: readonly (number | string)[], allowed: number | string, refused: number | string, limit: number): void {
  const passed = statuses.filter((s) => s === allowed).length;
  expect(statuses.filter((s) => s !== allowed && s !== refused)).toEqual([]);
  expect(passed).toBeGreaterThanOrEqual(limit);
  expect(passed).toBeLessThanOrEqual(2 * limit);
}

describe('per credential', () => {
  it('answers resource_exhausted (HTTP 429 on Connect) past RATE_LIMIT_PER_CREDENTIAL, and other credentials are not affected', async () => {
    const brand = await app.seedBrand();
    const other = await app.seedBrand();
    const answers = await burst(20, () => kpis(brand));
    expectLimited(
      answers.map((r) => r.status),
      200,
      429,
      limits.rateLimitPerCredential,
    );
    const refused = answers.find((r) => r.status === 429)!;
    const body = (await refused.json()) as { code: string; message: string };
    expect(body.code).toBe('resource_exhausted');
    expect(body.message).toContain('RATE_LIMIT_PER_CREDENTIAL');
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect((await kpis(other)).status).toBe(200);
  });

  it('answers RESOURCE_EXHAUSTED over gRPC', async () => {
    const brand = await app.seedBrand();
    const calls = await Promise.all(
      Array.from({ length: 20 }, () =>
        grpcUnaryCall(api.port, MintService.method.getMintKpis, { brandId: brand.brandId } as never, { authorization: `Bearer ${brand.token}` }),
      ),
    );
    expectLimited(
      calls.map((c) => ('error' in c ? c.error.code : grpc.status.OK)),
      grpc.status.OK,
      grpc.status.RESOURCE_EXHAUSTED,
      limits.rateLimitPerCredential,
    );
  });

  it('answers /v1 with 429 rate_limited and Retry-After', async () => {
    const brand = await app.seedBrand();
    const key = await createApiKey(app.ctx, { brandId: brand.brandId, name: 'rate', scopes: ['products:read'] });
    const answers = await burst(20, () =>
      fetch(`${api.baseUrl}/v1/products`, {
        headers: { authorization: `Bearer ${brand.token}`, 'x-api-key': key.key, 'x-workspace-id': brand.brandId },
      }),
    );
    expectLimited(
      answers.map((r) => r.status),
      200,
      429,
      limits.rateLimitPerCredential,
    );
    const refused = answers.find((r) => r.status === 429)!;
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(await refused.json()).toMatchObject({ ok: false, error: { code: 'rate_limited', message: expect.stringContaining('RATE_LIMIT_PER_CREDENTIAL') } });
  });
});

describe('per client address', () => {
  it('limits resolver scans (each a scan event) with 429 and Retry-After', async () => {
    const answers = await burst(20, () => fetch(`${api.baseUrl}/r/no-such-brand/01/09506000134352/21/abc`, { redirect: 'manual' }));
    const statuses = answers.map((r) => r.status);
    const passed = statuses.filter((s) => s !== 429).length;
    expect(passed).toBeGreaterThanOrEqual(limits.rateLimitResolverPerAddress);
    expect(passed).toBeLessThanOrEqual(2 * limits.rateLimitResolverPerAddress);
    const refused = answers.find((r) => r.status === 429)!;
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    // The resolver answers in its own way (an HTML page for a browser), naming the setting.
    expect(await refused.text()).toContain('RATE_LIMIT_RESOLVER_PER_ADDRESS');
  });

  it('limits downloads per minute with 429 and Retry-After', async () => {
    const answers = await burst(5, () => fetch(`${api.baseUrl}/downloads/packs/00000000-0000-4000-8000-000000000000.zip?exp=1&kid=k1&sig=x`));
    const statuses = answers.map((r) => r.status);
    expect(statuses.filter((s) => s === 429)).toHaveLength(2);
    const refused = answers.find((r) => r.status === 429)!;
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(1);
    expect(Number(refused.headers.get('retry-after'))).toBeLessThanOrEqual(60);
  });

  it('refuses an address after RATE_LIMIT_AUTH_FAILURES_PER_ADDRESS failed authentications, valid credentials not seen to work before included', async () => {
    const brand = await app.seedBrand();
    const bad = { 'content-type': 'application/json', authorization: 'Bearer not-a-token' };
    for (let i = 0; i < limits.rateLimitAuthFailuresPerAddress; i++) {
      const res = await fetch(`${api.baseUrl}/mint.v1.MintService/GetMintKpis`, {
        method: 'POST',
        headers: bad,
        body: JSON.stringify({ brand_id: brand.brandId }),
      });
      expect(res.status).toBe(401);
    }
    const rpc = await kpis(brand);
    expect(rpc.status).toBe(429);
    expect(((await rpc.json()) as { message: string }).message).toContain('RATE_LIMIT_AUTH_FAILURES_PER_ADDRESS');
    const v1 = await fetch(`${api.baseUrl}/v1/products`, { headers: { authorization: `Bearer ${brand.token}`, 'x-workspace-id': brand.brandId } });
    expect(v1.status).toBe(429);
    expect(Number(v1.headers.get('retry-after'))).toBeGreaterThan(1);
    const grpcCall = await grpcUnaryCall(api.port, MintService.method.getMintKpis, { brandId: brand.brandId } as never, {
      authorization: `Bearer ${brand.token}`,
    });
    expect('error' in grpcCall && grpcCall.error.code).toBe(grpc.status.RESOURCE_EXHAUSTED);
    // Public routes stay open.
    expect((await fetch(`${api.baseUrl}/healthz`)).status).toBe(200);
  });
});

describe('behind trusted proxies (TRUSTED_PROXIES)', () => {
  const failures = 3;
  let proxied: TestApi;
  let direct: TestApi;
  beforeAll(async () => {
    // The test client is the ingress: loopback is trusted, the client is named in X-Forwarded-For / Forwarded.
    proxied = await startTestApi(app, { config: { rateLimitAuthFailuresPerAddress: failures, trustedProxies: ['127.0.0.1/32', '::1/128'] } });
    // Here loopback is not a trusted proxy: forwarding headers are ignored, whoever sends them.
    direct = await startTestApi(app, { config: { rateLimitAuthFailuresPerAddress: failures, trustedProxies: ['10.0.0.0/8'] } });
  });
  afterAll(async () => {
    await proxied?.close();
    await direct?.close();
  });

  const call = (on: TestApi, token: string, brandId: string, forwarded: Record<string, string>) =>
    fetch(`${on.baseUrl}/mint.v1.MintService/GetMintKpis`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token}`, ...forwarded },
      body: JSON.stringify({ brand_id: brandId }),
    });

  it("locks out the client that fails, by its forwarded address, while another client's valid token and a token that worked before keep working", async () => {
    const [b, c, d] = [await app.seedBrand(), await app.seedBrand(), await app.seedBrand()];
    const clientA = { 'x-forwarded-for': '203.0.113.7, 10.9.8.7' };
    // C's token (over RPC) and C's token and key (over /v1) worked from A's address before A went bad.
    const cKey = await createApiKey(app.ctx, { brandId: c.brandId, name: 'proxied', scopes: ['products:read'] });
    const cProducts = () =>
      fetch(`${proxied.baseUrl}/v1/products`, {
        headers: { authorization: `Bearer ${c.token}`, 'x-api-key': cKey.key, 'x-workspace-id': c.brandId, ...clientA },
      });
    expect((await call(proxied, c.token, c.brandId, clientA)).status).toBe(200);
    expect((await cProducts()).status).toBe(200);
    // The forwarding chain is walked from the right: 10.9.8.7 is not trusted here, so it is the client.
    const clientAHop = { 'x-forwarded-for': '10.9.8.7' };
    const statuses = [];
    for (let i = 0; i < failures + 20; i++) statuses.push((await call(proxied, 'not-a-token', b.brandId, clientAHop)).status);
    expect(statuses.slice(0, failures)).toEqual(Array(failures).fill(401));
    expect(new Set(statuses.slice(failures))).toEqual(new Set([429]));
    // A's address is locked for credentials not seen to work: a fresh token from it waits.
    const fresh = await call(proxied, d.token, d.brandId, clientA);
    expect(fresh.status).toBe(429);
    expect(((await fresh.json()) as { message: string }).message).toContain('RATE_LIMIT_AUTH_FAILURES_PER_ADDRESS');
    // C's working token passes A's lockout; B behind the same proxy is another client (X-Forwarded-For and RFC 7239 Forwarded).
    expect((await call(proxied, c.token, c.brandId, clientA)).status).toBe(200);
    expect((await cProducts()).status).toBe(200);
    expect((await call(proxied, b.token, b.brandId, { 'x-forwarded-for': '198.51.100.9' })).status).toBe(200);
    expect((await call(proxied, b.token, b.brandId, { forwarded: 'for="[2001:db8::9]:4711";proto=https' })).status).toBe(200);
    const key = await createApiKey(app.ctx, { brandId: b.brandId, name: 'proxied', scopes: ['products:read'] });
    const v1 = await fetch(`${proxied.baseUrl}/v1/products`, {
      headers: { authorization: `Bearer ${b.token}`, 'x-api-key': key.key, 'x-workspace-id': b.brandId, 'x-forwarded-for': '198.51.100.10' },
    });
    expect(v1.status).toBe(200);
  });

  it("ignores an untrusted peer's X-Forwarded-For: changing it does not escape the lockout", async () => {
    const brand = await app.seedBrand();
    const statuses = [];
    for (let i = 0; i < failures + 5; i++)
      statuses.push((await call(direct, 'not-a-token', brand.brandId, { 'x-forwarded-for': `198.51.100.${i + 1}` })).status);
    expect(statuses.slice(0, failures)).toEqual(Array(failures).fill(401));
    expect(new Set(statuses.slice(failures))).toEqual(new Set([429]));
    expect((await call(direct, 'not-a-token', brand.brandId, { forwarded: 'for=192.0.2.200' })).status).toBe(429);
  });
});
