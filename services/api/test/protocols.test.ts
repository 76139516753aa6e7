// One port, every protocol: Connect (JSON and binary) over HTTP/1.1 and HTTP/2, gRPC and
// gRPC-Web, the gRPC health service, /healthz and /readyz, request ids, graceful shutdown.

import http2 from 'node:http2';
import { request as httpRequest } from 'node:http';
import { gzipSync } from 'node:zlib';
import { Code, ConnectError, createClient } from '@connectrpc/connect';
import { createConnectTransport, createGrpcTransport, createGrpcWebTransport } from '@connectrpc/connect-node';
import * as grpc from '@grpc/grpc-js';
import { IdentityMode, MintBatchStatus, MintService } from '@mint/contract';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { useUseCases } from '../../../test/support/usecases.ts';
import { Health, HealthCheckResponse_ServingStatus } from '@mint/http';
import { grpcUnaryCall, startTestApi, submitOverJson, type TestApi } from './support.ts';

const { app, brand } = useUseCases();
let api: TestApi;
let batchId: string;

beforeAll(async () => {
  api = await startTestApi(app);
  // One batch to read back through every protocol, created through the API itself.
  const res = await submitOverJson(api, brand, {
    requested_quantity: 25,
    identity_mode: 'IDENTITY_MODE_SERIAL',
    activation_mode: 'ACTIVATION_MODE_ACTIVE_AT_MINT',
  });
  expect(res.status).toBe(200);
  const body = (await res.json()) as { ok: boolean; mint_batch_id: string; status: string };
  // The spec's field names, and every field present even at its zero value.
  expect(body).toMatchObject({ ok: true, status: 'MINT_JOB_STATUS_QUEUED', is_duplicate: false, blocking_reasons: [] });
  batchId = body.mint_batch_id;
});

afterAll(() => api?.close());

const auth = () => ({ authorization: `Bearer ${brand.token}` });

describe('Connect over HTTP/1.1', () => {
  it('answers a JSON POST from fetch, with the request id echoed', async () => {
    const res = await fetch(`${api.baseUrl}/mint.v1.MintService/GetMintBatch`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-request-id': 'req-h1-json', ...auth() },
      body: JSON.stringify({ brand_id: brand.brandId, mint_batch_id: batchId }),
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('x-request-id')).toBe('req-h1-json');
    const body = (await res.json()) as { ok: boolean; batch: Record<string, unknown> };
    expect(body.ok).toBe(true);
    expect(body.batch).toMatchObject({
      id: batchId,
      status: 'MINT_BATCH_STATUS_DRAFT',
      identity_mode: 'IDENTITY_MODE_SERIAL',
      activation_mode: 'ACTIVATION_MODE_ACTIVE_AT_MINT',
      requested_quantity: 25,
      minted_quantity: 0,
      product_id: brand.productId,
      product_name: 'Product One',
      product_sku: 'SKU-1',
    });
    expect(typeof body.batch['created_at']).toBe('string');
  });

  it('really is HTTP/1.1 on the wire', async () => {
    const version = await new Promise<string>((resolve, reject) => {
      const req = httpRequest(`${api.baseUrl}/healthz`, (res) => {
        res.resume();
        resolve(res.httpVersion);
      });
      req.on('error', reject);
      req.end();
    });
    expect(version).toBe('1.1');
  });

  it('serves the Connect binary format and gRPC-Web', async () => {
    for (const transport of [
      createConnectTransport({ baseUrl: api.baseUrl, httpVersion: '1.1', useBinaryFormat: true }),
      createGrpcWebTransport({ baseUrl: api.baseUrl, httpVersion: '1.1' }),
    ]) {
      const client = createClient(MintService, transport);
      const res = await client.getMintBatch({ brandId: brand.brandId, mintBatchId: batchId }, { headers: auth() });
      expect(res.batch?.id).toBe(batchId);
      expect(res.batch?.status).toBe(MintBatchStatus.DRAFT);
    }
  });

  it('answers a Connect binary body that does not decode with invalid_argument, not internal', async () => {
    const res = await fetch(`${api.baseUrl}/mint.v1.MintService/GetMintBatch`, {
      method: 'POST',
      headers: { 'content-type': 'application/proto', ...auth() },
      body: new Uint8Array([0x0a, 0xff, 0xff, 0xff, 0xff, 0x0f, 0x01]),
    });
    expect(res.status).toBe(400);
    const body = (await res.json()) as { code: string; message: string };
    expect(body.code).toBe('invalid_argument');
    expect(body.message).toMatch(/^request body is not a mint\.v1\.GetMintBatchRequest message/);
  });

  it('answers a body that does not match its Content-Encoding with invalid_argument, and decodes one that does', async () => {
    const json = JSON.stringify({ brand_id: brand.brandId, mint_batch_id: batchId });
    const call = (body: Uint8Array) =>
      fetch(`${api.baseUrl}/mint.v1.MintService/GetMintBatch`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'content-encoding': 'gzip', ...auth() },
        body,
      });
    const bad = await call(new TextEncoder().encode(json));
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { code: string }).code).toBe('invalid_argument');
    const good = await call(gzipSync(json));
    expect(good.status).toBe(200);
    expect(((await good.json()) as { batch: { id: string } }).batch.id).toBe(batchId);
  });

  it('answers an undecodable message with invalid_argument in every protocol, streaming or not', async () => {
    const garbage = new Uint8Array([0x0a, 0xff, 0xff, 0xff, 0xff, 0x0f, 0x01]);
    const framed = (data: Uint8Array, flags = 0) => {
      const bytes = new Uint8Array(5 + data.byteLength);
      bytes[0] = flags;
      new DataView(bytes.buffer).setUint32(1, data.byteLength);
      bytes.set(data, 5);
      return bytes;
    };
    /** The frames of an enveloped response body. */
    const frames = (bytes: Uint8Array) => {
      const out: { flags: number; text: string }[] = [];
      for (let at = 0; at + 5 <= bytes.byteLength; ) {
        const length = new DataView(bytes.buffer, bytes.byteOffset + at + 1, 4).getUint32(0);
        out.push({ flags: bytes[at]!, text: new TextDecoder().decode(bytes.subarray(at + 5, at + 5 + length)) });
        at += 5 + length;
      }
      return out;
    };
    const post = async (rpc: string, headers: Record<string, string>, body: Uint8Array) => {
      const res = await fetch(`${api.baseUrl}/mint.v1.MintService/${rpc}`, { method: 'POST', headers: { ...headers, ...auth() }, body });
      return { status: res.status, headers: res.headers, frames: frames(new Uint8Array(await res.arrayBuffer())) };
    };

    // Connect server streaming: the error travels in the end-of-stream message.
    for (const [headers, body, reason] of [
      [{}, framed(garbage), /^request body is not a mint\.v1\.WatchMintJobRequest message/],
      [{ 'connect-content-encoding': 'gzip' }, framed(garbage, 1), /^request message is not valid gzip/],
      [{}, framed(garbage).subarray(0, 8), /^request body ends inside a message/],
    ] as const) {
      const res = await post('WatchMintJob', { 'content-type': 'application/connect+proto', ...headers }, body);
      expect(res.status).toBe(200);
      const end = res.frames.find((f) => f.flags === 2);
      const error = (JSON.parse(end!.text) as { error: { code: string; message: string } }).error;
      expect(error.code).toBe('invalid_argument');
      expect(error.message).toMatch(reason);
    }

    // gRPC-Web: grpc-status 3 in the trailer frame.
    const web = await post('GetMintBatch', { 'content-type': 'application/grpc-web+proto' }, framed(garbage));
    const trailer = web.frames.find((f) => (f.flags & 0x80) === 0x80)?.text ?? `${web.headers.get('grpc-status')}`;
    expect(trailer).toMatch(/grpc-status: ?3/i);

    // gRPC through @grpc/grpc-js, unary and server streaming, with bytes that are no message.
    const Client = grpc.makeGenericClientConstructor(
      {
        unary: {
          path: '/mint.v1.MintService/GetMintBatch',
          requestStream: false,
          responseStream: false,
          requestSerialize: () => Buffer.from(garbage),
          responseDeserialize: (b: Buffer) => b,
        },
        stream: {
          path: '/mint.v1.MintService/WatchMintJob',
          requestStream: false,
          responseStream: true,
          requestSerialize: () => Buffer.from(garbage),
          responseDeserialize: (b: Buffer) => b,
        },
      } as unknown as grpc.ServiceDefinition,
      'MintService',
    );
    const client = new Client(`127.0.0.1:${api.port}`, grpc.credentials.createInsecure()) as unknown as Record<string, Function> & grpc.Client;
    const md = new grpc.Metadata();
    md.set('authorization', auth().authorization);
    try {
      const unary = await new Promise<grpc.ServiceError | null>((resolve) =>
        client['unary']!.call(client, {}, md, (error: grpc.ServiceError | null) => resolve(error)),
      );
      expect(unary?.code).toBe(grpc.status.INVALID_ARGUMENT);
      expect(unary?.details).toMatch(/^request body is not a mint\.v1\.GetMintBatchRequest message/);
      const streamed = await new Promise<grpc.ServiceError>((resolve) => {
        const call = client['stream']!.call(client, {}, md) as grpc.ClientReadableStream<Buffer>;
        call.on('data', () => {});
        call.on('error', resolve);
      });
      expect(streamed.code).toBe(grpc.status.INVALID_ARGUMENT);
      expect(streamed.details).toMatch(/^request body is not a mint\.v1\.WatchMintJobRequest message/);
    } finally {
      client.close();
    }
  });

  it('generates a request id when the client sends none (or a malformed one)', async () => {
    const a = await fetch(`${api.baseUrl}/healthz`);
    const b = await fetch(`${api.baseUrl}/healthz`, { headers: { 'x-request-id': 'bad id with spaces' } });
    expect(a.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
    expect(b.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
    expect(a.headers.get('x-request-id')).not.toBe(b.headers.get('x-request-id'));
  });
});

describe('HTTP/2 cleartext on the same port', () => {
  it('serves Connect, gRPC-Web and gRPC clients of connect-node', async () => {
    for (const transport of [
      createConnectTransport({ baseUrl: api.baseUrl, httpVersion: '2' }),
      createGrpcWebTransport({ baseUrl: api.baseUrl, httpVersion: '2' }),
      createGrpcTransport({ baseUrl: api.baseUrl }),
    ]) {
      const client = createClient(MintService, transport);
      let echoed: string | null = null;
      const res = await client.listMintBatches(
        { brandId: brand.brandId },
        { headers: { ...auth(), 'x-request-id': 'req-h2-rpc' }, onHeader: (header) => (echoed = header.get('x-request-id')) },
      );
      expect(echoed).toBe('req-h2-rpc');
      expect(res.batches.map((b) => b.id)).toContain(batchId);
      expect(res.batches[0]?.productName).toBeUndefined(); // list items carry no product_name
      expect(res.batches[0]?.productSku).toBe('SKU-1');
    }
  });

  it('serves a real @grpc/grpc-js client', async () => {
    const ok = await grpcUnaryCall(api.port, MintService.method.getMintBatch, { brandId: brand.brandId, mintBatchId: batchId }, auth());
    expect('response' in ok && ok.response.batch?.identityMode).toBe(IdentityMode.SERIAL);

    const denied = await grpcUnaryCall(api.port, MintService.method.getMintBatch, { brandId: brand.brandId, mintBatchId: batchId });
    expect('error' in denied && denied.error.code).toBe(grpc.status.UNAUTHENTICATED);
  });

  it('answers a raw HTTP/2 request with :status and the request id', async () => {
    const session = http2.connect(api.baseUrl);
    try {
      const headers = await new Promise<http2.IncomingHttpHeaders>((resolve, reject) => {
        const stream = session.request({ ':path': '/healthz', 'x-request-id': 'req-h2' });
        stream.on('response', resolve);
        stream.on('error', reject);
        stream.resume();
        stream.end();
      });
      expect(headers[':status']).toBe(200);
      expect(headers['x-request-id']).toBe('req-h2');
    } finally {
      session.close();
    }
  });
});

describe('health', () => {
  it('/healthz is public and says the process is alive', async () => {
    const res = await fetch(`${api.baseUrl}/healthz`);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ ok: true });
  });

  it('/readyz reports the dependency checks', async () => {
    const res = await fetch(`${api.baseUrl}/readyz`);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ ok: true, checks: { database: 'ok' } });
  });

  it('grpc.health.v1.Health/Check answers SERVING to gRPC and Connect clients without credentials', async () => {
    const viaGrpc = await grpcUnaryCall(api.port, Health.method.check, { service: '' });
    expect('response' in viaGrpc && viaGrpc.response.status).toBe(HealthCheckResponse_ServingStatus.SERVING);
    const client = createClient(Health, createConnectTransport({ baseUrl: api.baseUrl, httpVersion: '1.1' }));
    expect((await client.check({ service: 'mint.v1.MintService' })).status).toBe(HealthCheckResponse_ServingStatus.SERVING);
    await expect(client.check({ service: 'no.such.Service' })).rejects.toMatchObject({ code: Code.NotFound });
  });

  it('reports not ready (503, NOT_SERVING) when a dependency is down', async () => {
    const sick = await startTestApi(app, { readiness: async () => ({ ok: false, checks: { database: 'ok', bus: 'unavailable: connection refused' } }) });
    try {
      const res = await fetch(`${sick.baseUrl}/readyz`);
      expect(res.status).toBe(503);
      expect(await res.json()).toEqual({ ok: false, checks: { database: 'ok', bus: 'unavailable: connection refused' } });
      expect((await fetch(`${sick.baseUrl}/healthz`)).status).toBe(200);
      const check = await grpcUnaryCall(sick.port, Health.method.check, {});
      expect('response' in check && check.response.status).toBe(HealthCheckResponse_ServingStatus.NOT_SERVING);
    } finally {
      await sick.close();
    }
  });
});

describe('mounted HTTP routes', () => {
  it('run before the Connect handlers; unclaimed paths fall through to them', async () => {
    const routed = await startTestApi(app, {
      httpRoutes: [
        {
          methods: ['GET'],
          path: '/v1/ping',
          handler: ({ res }) => {
            res.setHeader('content-type', 'text/plain');
            res.end('pong');
          },
        },
      ],
    });
    try {
      const res = await fetch(`${routed.baseUrl}/v1/ping`);
      expect(await res.text()).toBe('pong');
      expect(res.headers.get('x-request-id')).toBeTruthy();
      expect((await fetch(`${routed.baseUrl}/v1/other`)).status).toBe(404);
    } finally {
      await routed.close();
    }
  });

  it('a throwing route answers 500 without details', async () => {
    const routed = await startTestApi(app, {
      httpRoutes: [
        {
          methods: ['GET'],
          path: '/v1/anything',
          handler: () => {
            throw new Error('secret internals');
          },
        },
      ],
    });
    try {
      const res = await fetch(`${routed.baseUrl}/v1/anything`);
      expect(res.status).toBe(500);
      expect(await res.text()).not.toContain('secret internals');
    } finally {
      await routed.close();
    }
  });
});

describe('logging', () => {
  it('writes one line per RPC with method, code, duration and request id, never the token', async () => {
    const client = createClient(MintService, createConnectTransport({ baseUrl: api.baseUrl, httpVersion: '2' }));
    await client.getMintBatch({ brandId: brand.brandId, mintBatchId: batchId }, { headers: { ...auth(), 'x-request-id': 'log-check-1' } });
    await expect(client.getMintBatch({ brandId: brand.brandId, mintBatchId: batchId }, { headers: { 'x-request-id': 'log-check-2' } })).rejects.toMatchObject({
      code: Code.Unauthenticated,
    });
    const lines = api.logs.filter((l) => l['requestId'] === 'log-check-1' || l['requestId'] === 'log-check-2');
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatchObject({ rpc: 'mint.v1.MintService/GetMintBatch', protocol: 'connect', code: 'ok', userId: brand.userId });
    expect(typeof lines[0]!['durationMs']).toBe('number');
    expect(lines[1]).toMatchObject({ rpc: 'mint.v1.MintService/GetMintBatch', code: 'unauthenticated' });
    expect(api.rawLogs()).not.toContain(brand.token);
  });
});

describe('graceful shutdown', () => {
  it('finishes the in-flight call, then refuses new connections', async () => {
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    let entered!: () => void;
    const inside = new Promise<void>((resolve) => (entered = resolve));
    const slow = await startTestApi(app, {
      readiness: async () => {
        entered();
        await gate;
        return { ok: true, checks: { database: 'ok' } };
      },
    });
    const client = createClient(Health, createConnectTransport({ baseUrl: slow.baseUrl, httpVersion: '2' }));
    const inFlight = client.check({});
    await inside;
    const closed = slow.close();
    // Not ready any more, but the call that was already running is answered.
    await new Promise((resolve) => setTimeout(resolve, 50));
    release();
    expect((await inFlight).status).toBe(HealthCheckResponse_ServingStatus.SERVING);
    await closed;
    await expect(fetch(`${slow.baseUrl}/healthz`)).rejects.toThrow();
  });

  it('ends a streaming call with Unavailable instead of hanging', async () => {
    const streaming = await startTestApi(app);
    const client = createClient(MintService, createConnectTransport({ baseUrl: streaming.baseUrl, httpVersion: '2' }));
    const submitted = await client.submitMintRequest(
      { brandId: brand.brandId, productId: brand.productId, requestedQuantity: 5, identityMode: IdentityMode.SERIAL, activationMode: 1 },
      { headers: auth() },
    );
    const updates: number[] = [];
    const watching = (async () => {
      try {
        for await (const update of client.watchMintJob({ brandId: brand.brandId, mintJobId: submitted.mintJobId! }, { headers: auth() })) {
          updates.push(update.status);
        }
        return undefined;
      } catch (error) {
        return ConnectError.from(error);
      }
    })();
    while (updates.length === 0) await new Promise((resolve) => setTimeout(resolve, 20));
    const started = Date.now();
    await streaming.close();
    const error = await watching;
    expect(error?.code).toBe(Code.Unavailable);
    expect(Date.now() - started).toBeLessThan(4_000);
  });
});
