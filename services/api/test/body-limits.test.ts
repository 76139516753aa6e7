// Nothing costly before credentials: an RPC that is not public is answered from its headers
// before any body byte is read or inflated, and bodies are bounded per operation on their
// inflated size.

import http2 from 'node:http2';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { setupUseCases, type SeededBrand, type UseCaseBundle } from '../../../test/support/usecases.ts';
import { startTestApi, type TestApi } from './support.ts';

let app: UseCaseBundle;
let api: TestApi;
let brand: SeededBrand;
const submitPath = '/mint.v1.MintService/SubmitMintRequest';
const importPath = '/mint.v1.CatalogService/StartProductImport';

/** A JSON object padded with `size` bytes of whitespace: 40 KB of gzip for 39 MiB inflated. */
const padded = (size: number, fields = '') => Buffer.concat([Buffer.from(`{${fields}`), Buffer.alloc(size, 0x20), Buffer.from('}')]);
const bomb = gzipSync(padded(39 * 1024 * 1024), { level: 9 });

beforeAll(async () => {
  app = await setupUseCases();
  api = await startTestApi(app);
  brand = await app.seedBrand();
});
afterAll(async () => {
  await api?.close();
  await app?.close();
});

const post = (path: string, body: Uint8Array, headers: Record<string, string> = {}) =>
  fetch(`${api.baseUrl}${path}`, { method: 'POST', body, headers: { 'content-type': 'application/json', ...headers } });

describe('a gzip bomb', () => {
  it('is answered unauthenticated to an anonymous caller without being inflated', async () => {
    expect(bomb.byteLength).toBeLessThan(64 * 1024);
    const before = process.memoryUsage();
    const res = await post(submitPath, bomb, { 'content-encoding': 'gzip' });
    expect(res.status).toBe(401);
    expect(await res.json()).toMatchObject({ code: 'unauthenticated' });
    const after = process.memoryUsage();
    // Inflating it would hold 39 MiB at once (and parse it); nothing near that is allocated.
    expect(after.arrayBuffers - before.arrayBuffers).toBeLessThan(8 * 1024 * 1024);
  });

  it('is refused resource_exhausted to an authenticated caller once 64 KiB are inflated', async () => {
    const res = await post(submitPath, bomb, { 'content-encoding': 'gzip', authorization: `Bearer ${brand.token}` });
    expect(res.status).toBe(429);
    expect(await res.json()).toMatchObject({ code: 'resource_exhausted', message: expect.stringContaining('65536') });
  });

  it('as gRPC-Web messages is refused past the limit too', async () => {
    const message = gzipSync(Buffer.alloc(1024 * 1024));
    const frame = Buffer.alloc(5 + message.byteLength);
    frame[0] = 1;
    frame.writeUInt32BE(message.byteLength, 1);
    message.copy(frame, 5);
    const res = await fetch(`${api.baseUrl}${submitPath}`, {
      method: 'POST',
      body: frame,
      headers: { 'content-type': 'application/grpc-web+proto', 'grpc-encoding': 'gzip', authorization: `Bearer ${brand.token}` },
    });
    expect(res.headers.get('grpc-status') ?? (await res.text())).toMatch(/^8$|grpc-status:\s*8/);
  });
});

describe('per-operation body limits', () => {
  it('refuses an uncompressed body past 64 KiB on an ordinary RPC', async () => {
    const res = await post(submitPath, padded(70 * 1024), { authorization: `Bearer ${brand.token}` });
    expect(res.status).toBe(429);
    expect(await res.json()).toMatchObject({ code: 'resource_exhausted' });
  });

  it('lets an import RPC carry a file well past 64 KiB', async () => {
    const csv = `sku,name,gtin,commercial_status,mint_readiness_status,passport_url\n${Array.from({ length: 4000 }, (_, i) => `SKU-${i},Product ${i},,ACTIVE,READY,`).join('\n')}\n`;
    expect(csv.length).toBeGreaterThan(100 * 1024);
    const res = await post(importPath, Buffer.from(JSON.stringify({ brand_id: brand.brandId, csv: Buffer.from(csv).toString('base64') })), {
      authorization: `Bearer ${brand.token}`,
    });
    const body = (await res.json()) as Record<string, unknown>;
    expect(body['code']).not.toBe('resource_exhausted');
  });

  it('answers an anonymous call before its body arrives (nothing is read before credentials)', async () => {
    const session = http2.connect(api.baseUrl);
    try {
      const stream = session.request({ ':method': 'POST', ':path': submitPath, 'content-type': 'application/json', 'content-encoding': 'gzip' });
      // The first bytes of the body only; the rest never comes.
      stream.write(bomb.subarray(0, 1024));
      const headers = await new Promise<http2.IncomingHttpHeaders>((resolve, reject) => {
        stream.once('response', resolve);
        stream.once('error', reject);
        setTimeout(() => reject(new Error('no answer while the body was still open')), 3_000);
      });
      expect(headers[':status']).toBe(401);
      stream.close();
    } finally {
      session.close();
    }
  });
});
