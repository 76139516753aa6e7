// CORS of Connect, gRPC-Web and /v1: the preflight matrix of allowed and refused origins, the
// headers Connect and gRPC-Web need, credentials only for listed origins (never with `*`), and the
// resolver's own public CORS left as it is.

import { cors } from '@connectrpc/connect';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { setupUseCases, type SeededBrand, type UseCaseBundle } from '../../../test/support/usecases.ts';
import { startTestApi, type TestApi } from './support.ts';

const consoleOrigin = 'https://console.example.com';
const strangerOrigin = 'https://evil.example';

let app: UseCaseBundle;
let api: TestApi;
let wildcardApi: TestApi;
let closedApi: TestApi;
let brand: SeededBrand;

beforeAll(async () => {
  app = await setupUseCases();
  brand = await app.seedBrand();
  api = await startTestApi(app, { config: { corsAllowedOrigins: [consoleOrigin, 'http://localhost:5173'] } });
  wildcardApi = await startTestApi(app, { config: { corsAllowedOrigins: ['*'] } });
  closedApi = await startTestApi(app);
});
afterAll(async () => {
  await Promise.all([api?.close(), wildcardApi?.close(), closedApi?.close()]);
  await app?.close();
});

/** The paths of each protocol family: a Connect unary RPC (also gRPC-Web's path), a server stream and a /v1 route. */
const paths = {
  connect: '/mint.v1.MintService/GetMintKpis',
  stream: '/mint.v1.MintService/WatchMintJob',
  v1: '/v1/mint/jobs',
} as const;

function preflight(target: TestApi, path: string, origin: string, requestHeaders: string): Promise<Response> {
  return fetch(`${target.baseUrl}${path}`, {
    method: 'OPTIONS',
    headers: { origin, 'access-control-request-method': 'POST', 'access-control-request-headers': requestHeaders },
  });
}

const listOf = (value: string | null) =>
  (value ?? '')
    .split(',')
    .map((s) => s.trim().toLowerCase())
    .filter((s) => s !== '');

describe('CORS preflight', () => {
  for (const [family, path] of Object.entries(paths)) {
    it(`allows a listed origin with credentials on ${family} (${path})`, async () => {
      const res = await preflight(api, path, consoleOrigin, 'content-type,authorization,connect-protocol-version,x-grpc-web,x-user-agent,idempotency-key');
      expect(res.status).toBe(204);
      expect(res.headers.get('access-control-allow-origin')).toBe(consoleOrigin);
      expect(res.headers.get('access-control-allow-credentials')).toBe('true');
      expect(listOf(res.headers.get('vary'))).toContain('origin');
      const allowed = listOf(res.headers.get('access-control-allow-headers'));
      for (const header of [...cors.allowedHeaders, 'authorization', 'x-api-key', 'idempotency-key']) expect(allowed).toContain(header.toLowerCase());
      const methods = listOf(res.headers.get('access-control-allow-methods'));
      for (const method of cors.allowedMethods) expect(methods).toContain(method.toLowerCase());
    });

    it(`refuses an origin that is not listed on ${family}, with no CORS header`, async () => {
      const res = await preflight(api, path, strangerOrigin, 'content-type,authorization');
      expect(res.status).toBe(403);
      expect(res.headers.get('access-control-allow-origin')).toBeNull();
      expect(res.headers.get('access-control-allow-credentials')).toBeNull();
      expect(((await res.json()) as { message: string }).message).toContain('CORS_ALLOWED_ORIGINS');
    });

    it(`answers * without credentials when every origin is allowed, on ${family}`, async () => {
      const res = await preflight(wildcardApi, path, strangerOrigin, 'content-type');
      expect(res.status).toBe(204);
      expect(res.headers.get('access-control-allow-origin')).toBe('*');
      expect(res.headers.get('access-control-allow-credentials')).toBeNull();
    });

    it(`allows no origin when the setting is unset, on ${family}`, async () => {
      const res = await preflight(closedApi, path, consoleOrigin, 'content-type');
      expect(res.status).toBe(403);
      expect(res.headers.get('access-control-allow-origin')).toBeNull();
    });
  }
});

describe('CORS on answers', () => {
  it('lets a listed origin read a Connect answer and its status headers', async () => {
    const res = await fetch(`${api.baseUrl}${paths.connect}`, {
      method: 'POST',
      headers: { origin: consoleOrigin, 'content-type': 'application/json', authorization: `Bearer ${brand.token}` },
      body: JSON.stringify({ brand_id: brand.brandId }),
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('access-control-allow-origin')).toBe(consoleOrigin);
    expect(res.headers.get('access-control-allow-credentials')).toBe('true');
    const exposed = listOf(res.headers.get('access-control-expose-headers'));
    for (const header of [...cors.exposedHeaders, 'x-request-id']) expect(exposed).toContain(header.toLowerCase());
  });

  it('lets a listed origin read a gRPC-Web answer with grpc-status exposed', async () => {
    const res = await fetch(`${api.baseUrl}${paths.connect}`, {
      method: 'POST',
      headers: { origin: consoleOrigin, 'content-type': 'application/grpc-web+proto', 'x-grpc-web': '1', authorization: `Bearer ${brand.token}` },
      body: new Uint8Array(5), // one empty message: brand_id missing, answered in gRPC-Web's own way
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('access-control-allow-origin')).toBe(consoleOrigin);
    expect(listOf(res.headers.get('access-control-expose-headers'))).toEqual(expect.arrayContaining(['grpc-status', 'grpc-message']));
  });

  it('gives a /v1 answer to a listed origin and none to a stranger', async () => {
    const listed = await fetch(`${api.baseUrl}/v1/products`, {
      headers: { origin: consoleOrigin, authorization: `Bearer ${brand.token}`, 'x-workspace-id': brand.brandId },
    });
    expect(listed.headers.get('access-control-allow-origin')).toBe(consoleOrigin);
    const stranger = await fetch(`${api.baseUrl}/v1/products`, {
      headers: { origin: strangerOrigin, authorization: `Bearer ${brand.token}`, 'x-workspace-id': brand.brandId },
    });
    expect(stranger.headers.get('access-control-allow-origin')).toBeNull();
  });

  it('keeps the resolver public: any origin, no credentials', async () => {
    const res = await fetch(`${closedApi.baseUrl}/.well-known/gs1resolver`, { headers: { origin: strangerOrigin } });
    expect(res.headers.get('access-control-allow-origin')).toBe('*');
    expect(res.headers.get('access-control-allow-credentials')).toBeNull();
  });
});
