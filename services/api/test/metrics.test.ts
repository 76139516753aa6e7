// What an operator scraping the API's /metrics sees after clients mint, and what its log lines
// carry: RPC and route counts and latency by method and code, jobs by status, the outbox lag, a
// request id on every line of a request, and no secrets.

import { Code, ConnectError, createClient, type Client } from '@connectrpc/connect';
import { createConnectTransport } from '@connectrpc/connect-node';
import { ActivationMode, IdentityMode, MintService } from '@mint/contract';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { scrape, sampleValue } from '../../../test/support/prometheus.ts';
import { setupUseCases, type SeededBrand, type UseCaseBundle } from '../../../test/support/usecases.ts';
import { startTestApi, type TestApi } from './support.ts';

let app: UseCaseBundle;
let api: TestApi;
let brand: SeededBrand;
let mint: Client<typeof MintService>;
const as = (requestId?: string) => ({
  headers: { authorization: `Bearer ${brand.token}`, ...(requestId === undefined ? {} : { 'x-request-id': requestId }) },
});

beforeAll(async () => {
  app = await setupUseCases();
  // A plain route besides /metrics, standing in for the /v1 routes and the resolver.
  api = await startTestApi(app, {
    httpRoutes: [
      {
        methods: ['GET'],
        path: '/plain/*',
        handler: ({ res }) => {
          res.statusCode = 204;
          res.end();
        },
      },
    ],
  });
  brand = await app.seedBrand();
  mint = createClient(MintService, createConnectTransport({ baseUrl: api.baseUrl, httpVersion: '2' }));
});

afterAll(async () => {
  await api?.close();
  await app?.close();
});

describe('/metrics on the API', () => {
  it('exposes RPC and route counts and latency by method and code, jobs by status and the outbox lag after a mint', async () => {
    const submitted = await mint.submitMintRequest(
      {
        brandId: brand.brandId,
        productId: brand.productId,
        requestedQuantity: 30,
        identityMode: IdentityMode.SERIAL,
        activationMode: ActivationMode.ACTIVE_AT_MINT,
        idempotencyKey: randomUUID(),
      },
      as(),
    );
    let cycles = 0;
    for (let done = false; !done; cycles++) {
      done = (await mint.processMintJobBatch({ brandId: brand.brandId, jobId: submitted.mintJobId!, maxUnits: 10 }, as())).done;
    }
    const missing = await mint.getMintBatch({ brandId: brand.brandId, mintBatchId: randomUUID() }, as()).catch((e: unknown) => ConnectError.from(e).code);
    expect(missing).toBe(Code.NotFound);
    const unauthenticated = await mint.getMintBatch({ brandId: brand.brandId, mintBatchId: randomUUID() }).catch((e: unknown) => ConnectError.from(e).code);
    expect(unauthenticated).toBe(Code.Unauthenticated);
    expect((await fetch(`${api.baseUrl}/healthz`)).status).toBe(200);
    expect((await fetch(`${api.baseUrl}/plain/a1b2c3?x=1`)).status).toBe(204);
    expect((await fetch(`${api.baseUrl}/plain/ffee99`)).status).toBe(204);
    expect((await fetch(`${api.baseUrl}/nope/a1`)).status).toBe(404);
    expect((await fetch(`${api.baseUrl}/probe-${randomUUID()}`)).status).toBe(404);

    const samples = await scrape(`${api.baseUrl}/metrics`);
    const rpc = (method: string, code: string) => ({ method: `mint.v1.MintService/${method}`, code });
    expect(sampleValue(samples, 'minting_rpc_requests_total', rpc('SubmitMintRequest', 'ok'))).toBe(1);
    expect(sampleValue(samples, 'minting_rpc_requests_total', rpc('ProcessMintJobBatch', 'ok'))).toBe(cycles);
    expect(sampleValue(samples, 'minting_rpc_requests_total', rpc('GetMintBatch', 'not_found'))).toBe(1);
    expect(sampleValue(samples, 'minting_rpc_requests_total', rpc('GetMintBatch', 'unauthenticated'))).toBe(1);
    expect(sampleValue(samples, 'minting_rpc_duration_seconds_count', rpc('ProcessMintJobBatch', 'ok'))).toBe(cycles);
    expect(sampleValue(samples, 'minting_rpc_duration_seconds_bucket', { ...rpc('SubmitMintRequest', 'ok'), le: '+Inf' })).toBe(1);
    expect(sampleValue(samples, 'minting_rpc_duration_seconds_sum', rpc('SubmitMintRequest', 'ok'))).toBeGreaterThan(0);

    expect(sampleValue(samples, 'minting_http_requests_total', { method: 'GET', route: '/healthz', code: '200' })).toBe(1);
    // The route label is the matched route's pattern, so paths cannot grow the series.
    expect(sampleValue(samples, 'minting_http_requests_total', { method: 'GET', route: '/plain/*', code: '204' })).toBe(2);
    expect(sampleValue(samples, 'minting_http_request_duration_seconds_count', { method: 'GET', route: '/plain/*', code: '204' })).toBe(2);
    // Paths outside the route table (and not RPCs) count under one label, whatever they are.
    expect(sampleValue(samples, 'minting_http_requests_total', { method: 'GET', route: 'unmatched', code: '404' })).toBe(2);
    expect(samples.filter((s) => s.name === 'minting_http_requests_total' && /nope|probe/.test(s.labels['route'] ?? ''))).toEqual([]);
    // RPCs are not counted again as plain routes.
    expect(samples.filter((s) => s.name === 'minting_http_requests_total' && s.labels['route']?.includes('MintService'))).toEqual([]);

    expect(sampleValue(samples, 'minting_jobs', { status: 'COMPLETED' })).toBe(1);
    expect(sampleValue(samples, 'minting_jobs', { status: 'QUEUED' })).toBe(0);
    expect(sampleValue(samples, 'minting_jobs', { status: 'FAILED' })).toBe(0);
    // Nothing relays the outbox in this process: the submitted job's message waits there.
    expect(sampleValue(samples, 'minting_outbox_pending_messages')).toBe(1);
    expect(sampleValue(samples, 'minting_outbox_oldest_age_seconds')).toBeGreaterThanOrEqual(0);
    expect(sampleValue(samples, 'minting_metric_source_errors_total', { source: 'jobs' })).toBeUndefined();
    expect(sampleValue(samples, 'minting_process_resident_memory_bytes')).toBeGreaterThan(0);

    const second = await scrape(`${api.baseUrl}/metrics`);
    expect(sampleValue(second, 'minting_http_requests_total', { method: 'GET', route: '/metrics', code: '200' })).toBe(1);
  });

  it('answers other methods on /metrics with 405', async () => {
    const res = await fetch(`${api.baseUrl}/metrics`, { method: 'POST' });
    expect(res.status).toBe(405);
    expect(res.headers.get('allow')).toBe('GET, HEAD');
  });
});

describe('/metrics restricted', () => {
  it('requires the scrape token when METRICS_TOKEN is set', async () => {
    const token = 'scrape-token-0123456789';
    const guarded = await startTestApi(app, { config: { metricsToken: token } });
    try {
      const anonymous = await fetch(`${guarded.baseUrl}/metrics`);
      expect(anonymous.status).toBe(401);
      expect(await anonymous.text()).not.toContain('minting_');
      expect((await fetch(`${guarded.baseUrl}/metrics`, { headers: { authorization: 'Bearer wrong-token-0123456789' } })).status).toBe(401);
      const scraped = await fetch(`${guarded.baseUrl}/metrics`, { headers: { authorization: `Bearer ${token}` } });
      expect(scraped.status).toBe(200);
      expect(await scraped.text()).toContain('minting_jobs');
    } finally {
      await guarded.close();
    }
  });

  it('serves /metrics only on METRICS_PORT when it is set', async () => {
    const separate = await startTestApi(app, { config: { metricsPort: 0 } });
    try {
      expect(separate.metricsPort).toEqual(expect.any(Number));
      expect(separate.metricsPort).not.toBe(separate.port);
      expect((await fetch(`${separate.baseUrl}/metrics`)).status).toBe(404);
      const scraped = await fetch(`http://127.0.0.1:${separate.metricsPort}/metrics`);
      expect(scraped.status).toBe(200);
      expect(await scraped.text()).toContain('minting_jobs');
      // Nothing but the scrape and the probes answers there.
      expect((await fetch(`http://127.0.0.1:${separate.metricsPort}/v1/products`)).status).toBe(404);
    } finally {
      await separate.close();
    }
  });
});

describe('API logs', () => {
  it('carries the request id on every line of a request, for RPCs and plain routes, and never a secret', async () => {
    const rpcId = `rpc-${randomUUID()}`;
    const routeId = `route-${randomUUID()}`;
    await mint.getMintBatch({ brandId: brand.brandId, mintBatchId: randomUUID() }, as(rpcId)).catch(() => undefined);
    const res = await fetch(`${api.baseUrl}/plain/x9?sig=s3cr3t-signature&token=t0p-s3cr3t`, {
      headers: { 'x-request-id': routeId, authorization: `Bearer ${brand.token}`, 'x-api-key': 'mk_live_s3cr3t' },
    });
    expect(res.headers.get('x-request-id')).toBe(routeId);
    const generated = (await fetch(`${api.baseUrl}/plain/y`)).headers.get('x-request-id');
    expect(generated).toMatch(/^[0-9a-f-]{36}$/);
    await api.close();

    const rpcLines = api.logs.filter((l) => l['requestId'] === rpcId);
    expect(rpcLines).toContainEqual(expect.objectContaining({ rpc: 'mint.v1.MintService/GetMintBatch', code: 'not_found' }));
    const routeLines = api.logs.filter((l) => l['requestId'] === routeId);
    expect(routeLines).toEqual([expect.objectContaining({ msg: 'http', method: 'GET', path: '/plain/x9', status: 204 })]);
    expect(api.logs.filter((l) => l['requestId'] === generated)).toHaveLength(1);
    // Every line written while serving a request belongs to one.
    const requestLines = api.logs.filter((l) => l['msg'] === 'rpc' || l['msg'] === 'http' || l['msg'] === 'rpc failed');
    expect(requestLines.length).toBeGreaterThan(3);
    for (const line of requestLines) expect(line['requestId'], JSON.stringify(line)).toEqual(expect.any(String));
    const raw = api.rawLogs();
    for (const secret of [brand.token, 's3cr3t-signature', 't0p-s3cr3t', 'mk_live_s3cr3t']) expect(raw).not.toContain(secret);
  });
});
