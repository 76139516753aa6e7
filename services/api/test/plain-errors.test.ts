// The answers the HTTP layer gives before any RPC or route runs carry the plain JSON error body
// naming what to change: a path nothing serves (404, listing what is served), a wrong method on an
// RPC path (405 with Allow), a missing or unsupported Content-Type (415, naming the accepted
// ones), a bidirectional stream over HTTP/1.1 (505); over HTTP/1.1 and HTTP/2 alike.

import http2 from 'node:http2';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { useUseCases } from '../../../test/support/usecases.ts';
import { startTestApi, type TestApi } from './support.ts';

const { app, brand } = useUseCases();
let api: TestApi;
let bare: TestApi;

beforeAll(async () => {
  api = await startTestApi(app);
  bare = await startTestApi(app, { config: { consoleEnabled: false } });
});

afterAll(async () => {
  await api?.close();
  await bare?.close();
});

const rpc = '/mint.v1.MintService/GetMintBatch';
const auth = () => ({ authorization: `Bearer ${brand.token}` });

/** The status, a header and the parsed JSON body of an answer. */
async function answer(res: Response, header = 'allow') {
  expect(res.headers.get('content-type')).toMatch(/^application\/json/);
  return { status: res.status, [header]: res.headers.get(header), body: (await res.json()) as { ok: boolean; error: string; message: string } };
}

describe('unknown paths', () => {
  it('answer GET / with a JSON 404 naming what the server serves', async () => {
    const { status, body } = await answer(await fetch(`${api.baseUrl}/`));
    expect(status).toBe(404);
    expect(body).toMatchObject({ ok: false, error: 'not_found' });
    for (const served of ['/console/', '/v1/', '/v1/openapi.json', '/r/', 'mint.v1.MintService', '/healthz']) expect(body.message).toContain(served);
  });

  it('leave out what is not mounted (no console when CONSOLE_ENABLED=false), on any method', async () => {
    const { status, body } = await answer(await fetch(`${bare.baseUrl}/nothing/here`, { method: 'POST', body: '{}' }));
    expect(status).toBe(404);
    expect(body.message).toMatch(/^nothing is served at \/nothing\/here; /);
    expect(body.message).not.toContain('/console/');
    expect(body.message).toContain('/v1/');
  });

  it('answer a wrong method on a plain route with 405 naming the methods to use, in the body of its family', async () => {
    const health = await answer(await fetch(`${api.baseUrl}/healthz`, { method: 'DELETE' }));
    expect([health.status, health.allow, health.body]).toEqual([
      405,
      'GET, HEAD',
      { ok: false, error: 'method_not_allowed', message: 'DELETE is not allowed on /healthz: use GET or HEAD' },
    ]);
    const v1 = await fetch(`${api.baseUrl}/v1/mint/jobs/00000000-0000-4000-8000-000000000000`, { method: 'DELETE', headers: auth() });
    const v1Body = (await v1.json()) as { error: { code: string; message: string } };
    expect([v1.status, v1.headers.get('allow'), v1Body.error]).toEqual([
      405,
      'GET',
      {
        code: 'method_not_allowed',
        message: 'DELETE is not allowed on /v1/mint/jobs/00000000-0000-4000-8000-000000000000: use GET',
      },
    ]);
    const resolver = await answer(await fetch(`${api.baseUrl}/r/acme/01/09506000134352`, { method: 'POST', headers: { accept: 'application/json' } }));
    expect([resolver.status, resolver.allow, resolver.body.message]).toEqual([
      405,
      'GET, HEAD, OPTIONS',
      'POST is not allowed on /r/acme/01/09506000134352: use GET, HEAD or OPTIONS',
    ]);
  });

  it('answer an unknown RPC path with the same JSON 404', async () => {
    const res = await fetch(`${api.baseUrl}/mint.v1.MintService/NoSuchMethod`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...auth() },
      body: '{}',
    });
    const { status, body } = await answer(res);
    expect(status).toBe(404);
    expect(body.message).toContain('mint.v1.MintService');
  });
});

describe('RPC paths', () => {
  it('answer a GET with 405, Allow: POST and a body naming the method to use', async () => {
    const { status, allow, body } = await answer(await fetch(`${api.baseUrl}${rpc}`, { headers: auth() }));
    expect([status, allow]).toEqual([405, 'POST']);
    expect(body).toEqual({ ok: false, error: 'method_not_allowed', message: 'GET is not allowed on mint.v1.MintService/GetMintBatch: call it with POST' });
  });

  it('answer a POST without Content-Type with 415 naming the accepted content types', async () => {
    const { status, body } = await answer(await fetch(`${api.baseUrl}${rpc}`, { method: 'POST', headers: auth(), body: new Uint8Array([123, 125]) }));
    expect(status).toBe(415);
    expect(body.error).toBe('unsupported_media_type');
    expect(body.message).toMatch(/^the request has no Content-Type: mint\.v1\.MintService\/GetMintBatch takes /);
    for (const type of ['application/json', 'application/proto', 'application/grpc', 'application/grpc-web']) expect(body.message).toContain(type);
  });

  it('answer a wrong Content-Type with 415 naming it, and a unary call in a streaming type likewise', async () => {
    const form = await answer(
      await fetch(`${api.baseUrl}${rpc}`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded', ...auth() }, body: 'a=1' }),
    );
    expect(form.status).toBe(415);
    expect(form.body.message).toContain('Content-Type "application/x-www-form-urlencoded" is not accepted');
    const streaming = await answer(
      await fetch(`${api.baseUrl}${rpc}`, { method: 'POST', headers: { 'content-type': 'application/connect+json', ...auth() }, body: '{}' }),
    );
    expect(streaming.status).toBe(415);
    expect(streaming.body.message).toContain('application/json or application/proto (Connect)');
  });

  it('name the streaming content types for a server stream (WatchMintJob)', async () => {
    const res = await fetch(`${api.baseUrl}/mint.v1.MintService/WatchMintJob`, {
      method: 'POST',
      headers: { 'content-type': 'text/plain', ...auth() },
      body: '{}',
    });
    const { status, body } = await answer(res);
    expect(status).toBe(415);
    expect(body.message).toContain('application/connect+json or application/connect+proto (Connect)');
  });

  it('answer a bidirectional stream over HTTP/1.1 with 505 and a body asking for HTTP/2', async () => {
    const res = await fetch(`${api.baseUrl}/grpc.reflection.v1.ServerReflection/ServerReflectionInfo`, {
      method: 'POST',
      headers: { 'content-type': 'application/grpc' },
      body: new Uint8Array(0),
    });
    const { status, body } = await answer(res, 'connection');
    expect(status).toBe(505);
    expect(body).toMatchObject({ error: 'http_version_not_supported', message: expect.stringContaining('over HTTP/2') });
  });

  it('give the same bodies over HTTP/2', async () => {
    const session = http2.connect(api.baseUrl);
    try {
      const request = (headers: http2.OutgoingHttpHeaders, body?: string) =>
        new Promise<{ status: number; allow: unknown; body: string }>((resolve, reject) => {
          const stream = session.request(headers);
          let text = '';
          let head: http2.IncomingHttpHeaders = {};
          stream.on('response', (h) => {
            head = h;
          });
          stream.setEncoding('utf8');
          stream.on('data', (chunk: string) => {
            text += chunk;
          });
          stream.on('end', () => resolve({ status: Number(head[':status']), allow: head['allow'], body: text }));
          stream.on('error', reject);
          stream.end(body);
        });
      const get = await request({ ':method': 'GET', ':path': rpc, ...auth() });
      expect([get.status, get.allow, JSON.parse(get.body).error]).toEqual([405, 'POST', 'method_not_allowed']);
      const untyped = await request({ ':method': 'POST', ':path': rpc, ...auth() }, '{}');
      expect([untyped.status, JSON.parse(untyped.body).error]).toEqual([415, 'unsupported_media_type']);
      const root = await request({ ':method': 'GET', ':path': '/' });
      expect([root.status, JSON.parse(root.body).error]).toEqual([404, 'not_found']);
    } finally {
      session.close();
    }
  });
});
