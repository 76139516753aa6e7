// GET /v1/products (cursor pagination) and the /v1 routing errors (404, 405) in the one error body.

import { setTimeout as sleep } from 'node:timers/promises';
import { upsertProduct } from '@mint/usecases';
import { beforeAll, describe, expect, it } from 'vitest';
import { send, useV1, workspaceHeaders, type V1Workspace } from './v1-support.ts';

const { t, ws } = useV1();

beforeAll(async () => {
  for (const sku of ['P-2', 'P-3', 'P-4', 'P-5']) {
    await sleep(5); // distinct created_at, so newest-first order is the creation order
    await upsertProduct(
      t.app.ctx,
      { id: ws.userId },
      {
        brandId: ws.brandId,
        sku,
        name: `Product ${sku}`,
        gtin: null,
        commercialStatus: 'ACTIVE',
        mintReadinessStatus: 'READY',
        passportUrl: null,
      },
    );
  }
});

const list = (query = '', workspace: V1Workspace = ws) => send(t.api, 'GET', `/v1/products${query}`, { headers: workspaceHeaders(workspace) });

describe('GET /v1/products', () => {
  it("pages through the workspace's products, newest first, with an opaque cursor", async () => {
    const first = await list('?limit=2');
    expect(first.status).toBe(200);
    expect(first.body).toEqual({
      ok: true,
      data: [expect.objectContaining({ sku: 'P-5' }), expect.objectContaining({ sku: 'P-4' })],
      meta: { next_cursor: expect.any(String), has_more: true, request_id: first.headers['x-request-id'] },
    });
    expect(first.body.data[0]).toEqual({
      id: expect.any(String),
      sku: 'P-5',
      name: 'Product P-5',
      gtin: null,
      commercial_status: 'ACTIVE',
      mint_readiness_status: 'READY',
      passport_url: null,
      created_at: expect.any(String),
      updated_at: expect.any(String),
    });
    const second = await list(`?limit=2&cursor=${encodeURIComponent(first.body.meta.next_cursor)}`);
    expect(second.body.data.map((p: { sku: string }) => p.sku)).toEqual(['P-3', 'P-2']);
    const last = await list(`?limit=2&cursor=${encodeURIComponent(second.body.meta.next_cursor)}`);
    expect(last.body.data.map((p: { sku: string }) => p.sku)).toEqual(['SKU-1']);
    expect(last.body.meta).toMatchObject({ next_cursor: null, has_more: false });
  });

  it("returns 50 by default and never another workspace's products", async () => {
    const other = await t.workspace();
    const res = await list('', other);
    expect(res.body.data.map((p: { sku: string }) => p.sku)).toEqual(['SKU-1']);
    expect(res.body.data[0].id).toBe(other.productId);
  });

  it('rejects a limit outside 1..100, a tampered cursor and unknown parameters (400 naming them)', async () => {
    for (const [query, message] of [
      ['?limit=101', 'limit: must be an integer from 1 to 100'],
      ['?limit=0', 'limit: must be an integer from 1 to 100'],
      ['?limit=ten', 'limit: must be an integer from 1 to 100'],
      ['?cursor=bm90LWEtY3Vyc29y', 'cursor: is not a cursor returned by this list'],
      ['?page=2', 'page: is not a known query parameter; allowed: limit, cursor'],
      ['?limit=1&limit=2', 'limit: must be given once'],
    ] as const) {
      const res = await list(query);
      expect([query, res.status, res.body.error.code, res.body.error.message]).toEqual([query, 400, 'invalid_request', message]);
    }
  });

  it('needs both credentials and products:read', async () => {
    const anonymous = await send(t.api, 'GET', '/v1/products', { headers: { 'x-workspace-id': ws.brandId } });
    expect([anonymous.status, anonymous.body]).toEqual([
      401,
      {
        ok: false,
        error: { code: 'unauthenticated', message: 'missing bearer token (Authorization: Bearer <token>)' },
        meta: { request_id: anonymous.headers['x-request-id'] },
      },
    ]);
    const minter = await t.workspace(['mint:read']);
    expect((await list('', minter)).status).toBe(403);
  });
});

describe('/v1 routing', () => {
  it('answers 404 for an unknown /v1 path and 405 (with Allow) for a wrong method, in the one error body', async () => {
    const missing = await send(t.api, 'GET', '/v1/nothing-here', { headers: workspaceHeaders(ws) });
    expect([missing.status, missing.body.ok, missing.body.error.code]).toEqual([404, false, 'not_found']);
    const method = await send(t.api, 'DELETE', '/v1/products', { headers: workspaceHeaders(ws) });
    expect([method.status, method.body.error.code, method.headers['allow']]).toEqual([405, 'method_not_allowed', 'GET']);
  });
});
