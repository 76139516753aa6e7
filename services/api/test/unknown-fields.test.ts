// Unknown JSON fields are refused with invalid_argument naming the field, on Connect JSON (unary
// and streaming), gRPC-Web JSON and every /v1 body; binary protobuf keeps ignoring unknown fields,
// as the protobuf rules require (a newer client must reach an older server).

import { randomUUID } from 'node:crypto';
import { toBinary, create } from '@bufbuild/protobuf';
import { ListMintBatchesRequestSchema } from '@mint/contract';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { send, setupV1, workspaceHeaders, type V1Setup, type V1Workspace } from './v1-support.ts';

let t: V1Setup;
let ws: V1Workspace;

beforeAll(async () => {
  t = await setupV1();
  ws = await t.workspace();
});
afterAll(async () => {
  await t?.close();
});

const bearer = () => ({ authorization: `Bearer ${ws.token}` });

/** One enveloped message (Connect streaming, gRPC-Web). */
function envelope(data: Uint8Array, flags = 0): Buffer {
  const head = Buffer.alloc(5);
  head[0] = flags;
  head.writeUInt32BE(data.byteLength, 1);
  return Buffer.concat([head, data]);
}

describe('Connect JSON', () => {
  it('refuses a misspelt cursor field on a unary call, naming it, instead of answering page 1', async () => {
    for (const field of ['next_cursor', 'nextCursor']) {
      const res = await fetch(`${t.api.baseUrl}/mint.v1.MintService/ListMintBatches`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...bearer() },
        body: JSON.stringify({ brand_id: ws.brandId, [field]: 'abc' }),
      });
      expect(res.status).toBe(400);
      const body = (await res.json()) as { code: string; message: string };
      expect(body.code).toBe('invalid_argument');
      expect(body.message).toContain(field);
    }
  });

  it('refuses an unknown nested field by its name', async () => {
    const res = await fetch(`${t.api.baseUrl}/mint.v1.MintService/SubmitMintRequest`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...bearer() },
      body: JSON.stringify({
        brand_id: ws.brandId,
        product_id: ws.productId,
        requested_quantity: 10,
        identity_mode: 'IDENTITY_MODE_BATCH',
        activation_mode: 'ACTIVATION_MODE_ACTIVE_AT_MINT',
        lots: [{ lot_code: 'L1', qty: 10, expiry: '2030-01-01' }],
      }),
    });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { message: string }).message).toContain('expiry');
    expect(await t.count('mint_jobs', ws.brandId)).toBe(0);
  });

  it('refuses an unknown field on a Connect server stream (WatchMintJob) as an end-of-stream error', async () => {
    const res = await fetch(`${t.api.baseUrl}/mint.v1.MintService/WatchMintJob`, {
      method: 'POST',
      headers: { 'content-type': 'application/connect+json', ...bearer() },
      body: envelope(Buffer.from(JSON.stringify({ brand_id: ws.brandId, mint_job_id: randomUUID(), jobId: 'x' }))),
    });
    const bytes = Buffer.from(await res.arrayBuffer());
    // The last envelope (flag 2) carries the error.
    const end = JSON.parse(bytes.subarray(5).toString('utf8')) as { error: { code: string; message: string } };
    expect(bytes[0]).toBe(2);
    expect(end.error.code).toBe('invalid_argument');
    expect(end.error.message).toContain('jobId');
  });

  it('refuses an unknown field in gRPC-Web JSON, in the grpc-status trailer', async () => {
    const res = await fetch(`${t.api.baseUrl}/mint.v1.MintService/GetMintKpis`, {
      method: 'POST',
      headers: { 'content-type': 'application/grpc-web+json', 'x-grpc-web': '1', ...bearer() },
      body: envelope(Buffer.from(JSON.stringify({ brand_id: ws.brandId, since: 'yesterday' }))),
    });
    const text = Buffer.from(await res.arrayBuffer()).toString('latin1') + [...res.headers].map(([k, v]) => `${k}: ${v}`).join('\r\n');
    expect(text).toMatch(/grpc-status: ?3/);
    expect(decodeURIComponent(/grpc-message: ?([^\r\n]*)/.exec(text)![1]!)).toContain('since');
  });
});

describe('binary protobuf', () => {
  it('ignores unknown fields, as protobuf requires (Connect binary and gRPC-Web)', async () => {
    // Field 999, varint 1: a field a newer contract might add.
    const unknownField = Buffer.from([0xb8, 0x3e, 0x01]);
    const message = Buffer.concat([
      Buffer.from(toBinary(ListMintBatchesRequestSchema, create(ListMintBatchesRequestSchema, { brandId: ws.brandId }))),
      unknownField,
    ]);
    const connect = await fetch(`${t.api.baseUrl}/mint.v1.MintService/ListMintBatches`, {
      method: 'POST',
      headers: { 'content-type': 'application/proto', ...bearer() },
      body: message,
    });
    expect(connect.status).toBe(200);
    const grpcWeb = await fetch(`${t.api.baseUrl}/mint.v1.MintService/ListMintBatches`, {
      method: 'POST',
      headers: { 'content-type': 'application/grpc-web+proto', 'x-grpc-web': '1', ...bearer() },
      body: envelope(message),
    });
    const trailer = Buffer.from(await grpcWeb.arrayBuffer()).toString('latin1');
    expect(grpcWeb.headers.get('grpc-status') ?? /grpc-status: ?(\d+)/.exec(trailer)?.[1]).toBe('0');
  });
});

describe('/v1 bodies', () => {
  /** Every object schema in the OpenAPI document, with where it is. */
  function objectSchemas(node: unknown, at: string, out: [string, Record<string, unknown>][]): [string, Record<string, unknown>][] {
    if (Array.isArray(node)) for (const [i, n] of node.entries()) objectSchemas(n, `${at}[${i}]`, out);
    else if (typeof node === 'object' && node !== null) {
      const schema = node as Record<string, unknown>;
      if (schema['type'] === 'object' || (typeof schema['properties'] === 'object' && !at.endsWith('.properties'))) out.push([at, schema]);
      for (const [key, value] of Object.entries(schema)) objectSchemas(value, `${at}.${key}`, out);
    }
    return out;
  }

  it('lists additionalProperties: false on every object schema of the OpenAPI document', async () => {
    const doc = (await send(t.api, 'GET', '/v1/openapi.json')).body as { components: { schemas: Record<string, unknown> }; paths: unknown };
    const schemas = objectSchemas(doc.components.schemas, 'components.schemas', []);
    objectSchemas(doc.paths, 'paths', schemas);
    expect(schemas.length).toBeGreaterThan(20);
    const open = schemas.filter(([, s]) => s['additionalProperties'] !== false && s['properties'] !== undefined).map(([at]) => at);
    expect(open).toEqual([]);
  });

  it('refuses an unknown field by name on every JSON body route, writing nothing', async () => {
    const doc = (await send(t.api, 'GET', '/v1/openapi.json')).body as {
      paths: Record<string, Record<string, { requestBody?: { content: Record<string, unknown> } }>>;
    };
    const jobs = await t.count('mint_jobs');
    let routes = 0;
    for (const [path, operations] of Object.entries(doc.paths)) {
      for (const [method, operation] of Object.entries(operations)) {
        if (operation.requestBody?.content['application/json'] === undefined) continue;
        routes++;
        const res = await send(t.api, method.toUpperCase(), path, {
          json: { zz_not_a_field: 1 },
          headers: { ...workspaceHeaders(ws), 'idempotency-key': randomUUID() },
        });
        expect([path, res.status]).toEqual([path, 400]);
        expect([path, res.text]).toEqual([path, expect.stringContaining('zz_not_a_field')]);
      }
    }
    expect(routes).toBeGreaterThan(10);
    expect(await t.count('mint_jobs')).toBe(jobs);
  });
});
