// POST /v1/imports/products and GET /v1/imports/products/{id}, plus the CatalogService RPCs
// StartProductImport / GetProductImport: the upload is checked and stored, the import worker
// (run here directly; the executor test runs it over JetStream) upserts rows and keeps per-row errors.

import { createClient } from '@connectrpc/connect';
import { createConnectTransport } from '@connectrpc/connect-node';
import { CatalogService, ProductImportStatus } from '@mint/contract';
import { query } from '../../../test/support/sql.ts';
import { maxImportBytes } from '@mint/domain';
import { runProductImport } from '@mint/usecases';
import { describe, expect, it } from 'vitest';
import { nextGtin } from '../../../test/support/usecases.ts';
import { send, useV1, workspaceHeaders, type V1Workspace } from './v1-support.ts';

const { t, ws } = useV1();
const path = '/v1/imports/products';

const upload = (csv: string | Buffer, headers: Record<string, string> = {}, workspace: V1Workspace = ws) =>
  send(t.api, 'POST', path, { raw: csv, headers: { ...workspaceHeaders(workspace), 'content-type': 'text/csv', ...headers } });
const read = (id: string, workspace: V1Workspace = ws) => send(t.api, 'GET', `${path}/${id}`, { headers: workspaceHeaders(workspace) });

async function products(brandId: string): Promise<Record<string, { name: string; gtin: string | null; commercial_status: string }>> {
  const rows = await query<{ sku: string; name: string; gtin: string | null; commercial_status: string }>(
    t.app.db.em.fork(),
    'select sku, name, gtin, commercial_status from products where brand_id = ?',
    [brandId],
  );
  return Object.fromEntries(rows.map((r) => [r.sku, { name: r.name, gtin: r.gtin, commercial_status: r.commercial_status }]));
}

describe('product CSV import over /v1', () => {
  it("stores a QUEUED import (202, Location) that the worker completes, keeping each bad row's error without blocking the good ones", async () => {
    const gtin = nextGtin();
    const csv = [
      'sku,name,gtin,commercial_status,mint_readiness_status,passport_url',
      `A-1,"Alpha, the first",${gtin},ACTIVE,READY,https://example.com/a`,
      // Enum values in any case: as the Products table shows them (draft) and as the API writes them.
      'B-2,Beta,,draft,not_ready,',
      'C-3,,,ACTIVE,READY,',
      'D-4,Delta,12345,ACTIVE,READY,',
      'E-5,Echo,,ACTIVE,MAYBE,',
      'A-1,Alpha again,,ACTIVE,READY,',
      'F-6,Foxtrot,,ACTIVE',
      `G-7,Golf,${gtin},ACTIVE,READY,`,
      `SKU-1,Product One renamed,${ws.gtin},Active, ready ,`,
    ].join('\n');
    const res = await upload(csv);
    expect(res.status).toBe(202);
    expect(res.body).toEqual({
      ok: true,
      data: {
        id: expect.any(String),
        status: 'QUEUED',
        total_rows: 9,
        imported_rows: 0,
        failed_rows: 0,
        errors: [],
        created_at: expect.any(String),
        finished_at: null,
      },
      meta: { request_id: res.headers['x-request-id'] },
    });
    const id = res.body.data.id as string;
    expect(res.headers['location']).toBe(`/v1/imports/products/${id}`);
    const [outbox] = await query<{ kind: string }>(t.app.db.em.fork(), 'select kind from outbox where job_id = ?', [id]);
    expect(outbox).toEqual({ kind: 'import' });

    expect(await runProductImport(t.app.ctx, ws.brandId, id)).toEqual({ kind: 'finished', status: 'COMPLETED' });
    const done = await read(id);
    expect(done.status).toBe(200);
    expect(done.body.data).toMatchObject({ status: 'COMPLETED', total_rows: 9, imported_rows: 3, failed_rows: 6, finished_at: expect.any(String) });
    expect(done.body.data.errors).toEqual([
      { row: 3, field: 'name', message: 'must be 1 to 300 characters' },
      { row: 4, field: 'gtin', message: 'must be a GTIN-8, -12, -13 or -14 with a valid check digit' },
      { row: 5, field: 'mint_readiness_status', message: 'must be one of not_ready, ready (in any case)' },
      { row: 6, field: 'sku', message: '"A-1" already appears in row 1; each SKU once per file' },
      { row: 7, field: null, message: 'has 4 fields, the header row has 6' },
      { row: 8, field: 'gtin', message: 'already appears in row 1; each GTIN once per file' },
    ]);
    const stored = await products(ws.brandId);
    expect(stored['A-1']).toEqual({ name: 'Alpha, the first', gtin, commercial_status: 'ACTIVE' });
    expect(stored['B-2']).toEqual({ name: 'Beta', gtin: null, commercial_status: 'DRAFT' });
    expect(stored['SKU-1']).toMatchObject({ name: 'Product One renamed', commercial_status: 'ACTIVE' });
    expect(Object.keys(stored).sort()).toEqual(['A-1', 'B-2', 'SKU-1']);
    // A repeated delivery of the finished import changes nothing.
    expect(await runProductImport(t.app.ctx, ws.brandId, id)).toEqual({ kind: 'finished', status: 'COMPLETED' });
    expect((await read(id)).body.data.imported_rows).toBe(3);
  });

  it('rejects a row whose GTIN another product of the brand holds', async () => {
    const res = await upload(`sku,name,gtin,commercial_status,mint_readiness_status\nOTHER,Other,${ws.gtin},ACTIVE,READY\nFINE,Fine,,ACTIVE,READY\n`);
    await runProductImport(t.app.ctx, ws.brandId, res.body.data.id);
    const done = await read(res.body.data.id);
    expect(done.body.data).toMatchObject({
      imported_rows: 1,
      failed_rows: 1,
      errors: [{ row: 1, field: 'gtin', message: 'is already used by product "SKU-1" of this brand' }],
    });
  });

  it('rejects broken quoting with 400 naming the line, and writes nothing', async () => {
    const before = await t.count('product_imports');
    const outbox = await t.count('outbox');
    const res = await upload('sku,name,commercial_status,mint_readiness_status\nA,"unclosed,ACTIVE,READY\nB,"bad"quote,ACTIVE,READY\n');
    expect([res.status, res.body.error.code]).toEqual([400, 'invalid_request']);
    expect(res.body.error.message).toMatch(/^csv: line \d+: Invalid Closing Quote/);
    expect(await t.count('product_imports')).toBe(before);
    expect(await t.count('outbox')).toBe(outbox);
  });

  it('rejects a bad header row, an empty file and a header without rows (400), writing nothing', async () => {
    const before = await t.count('product_imports');
    const unknown = await upload('sku,name,colour,commercial_status,mint_readiness_status\nA,B,red,ACTIVE,READY\n');
    expect(unknown.body.error.message).toMatch(/^csv: unknown column "colour" in the header row/);
    const missing = await upload('sku,name\nA,B\n');
    expect(missing.body.error.message).toBe(
      'csv: the header row lacks the required column "commercial_status"; csv: the header row lacks the required column "mint_readiness_status"',
    );
    expect((await upload('')).body.error.message).toBe('csv: is empty; it needs a header row and at least one data row');
    expect((await upload('sku,name,commercial_status,mint_readiness_status\n')).body.error.message).toBe('csv: has a header row but no data rows');
    expect(await t.count('product_imports')).toBe(before);
  });

  it('answers 413 to a body over 32 MiB and 415 to another media type, writing nothing', async () => {
    const before = await t.count('product_imports');
    const header = 'sku,name,commercial_status,mint_readiness_status\n';
    const big = Buffer.concat([Buffer.from(header), Buffer.alloc(maxImportBytes, 'a,b,ACTIVE,READY\n')]);
    const tooBig = await upload(big);
    expect([tooBig.status, tooBig.body.error.code]).toEqual([413, 'payload_too_large']);
    const chunked = await upload(big, { 'transfer-encoding': 'chunked', 'content-length': '' });
    expect(chunked.status).toBe(413);
    const json = await upload('{"sku":"A"}', { 'content-type': 'application/json' });
    expect([json.status, json.body.error.code]).toEqual([415, 'unsupported_media_type']);
    expect(await t.count('product_imports')).toBe(before);
  });

  it("needs products:write to upload and products:read to read; another workspace's import is 404", async () => {
    const reader = await t.workspace(['products:read']);
    const denied = await upload('sku,name,commercial_status,mint_readiness_status\nA,B,ACTIVE,READY\n', {}, reader);
    expect([denied.status, denied.body.error.message]).toEqual([403, 'the API key lacks the products:write scope']);
    const mine = await upload('sku,name,commercial_status,mint_readiness_status\nA,B,ACTIVE,READY\n');
    expect((await read(mine.body.data.id, reader)).status).toBe(404);
    expect((await read('2b3c5e1a-0000-4000-8000-000000000000')).status).toBe(404);
    const anonymous = await send(t.api, 'GET', `${path}/${mine.body.data.id}`);
    expect([anonymous.status, anonymous.body.error.code]).toEqual([401, 'unauthenticated']);
  });

  it('serves the same imports through the CatalogService RPCs', async () => {
    const catalog = createClient(CatalogService, createConnectTransport({ baseUrl: t.api.baseUrl, httpVersion: '1.1' }));
    const headers = { authorization: `Bearer ${ws.token}` };
    const started = await catalog.startProductImport(
      {
        brandId: ws.brandId,
        csv: new TextEncoder().encode('sku,name,commercial_status,mint_readiness_status\nRPC-1,Via RPC,ACTIVE,READY\nRPC-2,,ACTIVE,READY\n'),
      },
      { headers },
    );
    expect(started.import).toMatchObject({ status: ProductImportStatus.QUEUED, totalRows: 2 });
    await runProductImport(t.app.ctx, ws.brandId, started.import!.id);
    const got = await catalog.getProductImport({ brandId: ws.brandId, importId: started.import!.id }, { headers });
    expect(got.import).toMatchObject({ status: ProductImportStatus.COMPLETED, importedRows: 1, failedRows: 1, errors: [{ row: 2, field: 'name' }] });
    await expect(catalog.startProductImport({ brandId: ws.brandId, csv: new TextEncoder().encode('sku,"x\n') }, { headers })).rejects.toThrow(/csv: line/);
  });
});
