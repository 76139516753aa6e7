// GET /v1/openapi.json: an OpenAPI 3.1 document whose schemas (JSON Schema 2020-12, checked with
// ajv) describe the real responses of every /v1 route, successes and errors alike.

import { randomUUID } from 'node:crypto';
import { runProductImport } from '@mint/usecases';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { beforeAll, describe, expect, it } from 'vitest';
import { namedOperations } from '@mint/wire';
import { send, useV1, workspaceHeaders, type V1Response } from './v1-support.ts';

const { t, ws } = useV1();
let doc: any;
let ajv: Ajv2020;

beforeAll(async () => {
  const res = await send(t.api, 'GET', '/v1/openapi.json');
  expect(res.status).toBe(200);
  doc = res.body;
  ajv = new Ajv2020({ strict: false, allErrors: true });
  (addFormats as unknown as (a: Ajv2020) => void)(ajv);
  ajv.addSchema(doc, 'openapi.json');
});

/** Validates a real response against the document's schema for its path template, method and status. */
function conforms(template: string, method: string, res: V1Response): void {
  const operation = doc.paths[template]?.[method];
  expect(operation, `${method} ${template} is described`).toBeDefined();
  const response = operation.responses[String(res.status)];
  expect(response, `${method} ${template} describes status ${res.status}`).toBeDefined();
  const schema = response.content['application/json'].schema;
  const validate = ajv.compile({ $ref: `openapi.json${schema.$ref ? schema.$ref : ''}`, ...(schema.$ref ? {} : schema) });
  const valid = validate(res.body);
  expect(valid ? [] : validate.errors, `${method} ${template} ${res.status}: ${res.text.slice(0, 300)}`).toEqual([]);
}

const mintBody = () => ({ product_id: ws.productId, requested_quantity: 3, identity_mode: 'serial', activation_mode: 'active_at_mint' });

describe('the OpenAPI document', () => {
  it('is OpenAPI 3.1 and describes every named operation', () => {
    expect(doc.openapi).toBe('3.1.0');
    for (const name of Object.keys(namedOperations)) expect(doc.paths[`/v1/rpc/${name}`]?.post, name).toBeDefined();
  });

  it('fails a response that differs from the description (the check can fail)', () => {
    const validate = ajv.compile({ $ref: 'openapi.json#/components/schemas/MintJobCreated' });
    const good = {
      ok: true,
      data: { mint_job_id: randomUUID(), mint_batch_id: randomUUID(), status: 'QUEUED', is_duplicate: false },
      meta: { request_id: 'r' },
    };
    expect(validate(good)).toBe(true);
    expect(validate({ ...good, extra: 1 })).toBe(false);
    expect(validate({ ...good, data: { ...good.data, status: 'queued' } })).toBe(false);
    expect(validate({ ...good, data: { ...good.data, mint_job_id: 'not-a-uuid' } })).toBe(false);
  });

  it('describes submit + kick responses: success, blocked and each error code', async () => {
    const path = '/v1/mint/submit-and-kick';
    const body = { brand_id: ws.brandId, ...mintBody() };
    conforms(path, 'post', await send(t.api, 'POST', path, { json: body, headers: { authorization: `Bearer ${ws.token}` } }));
    conforms(path, 'post', await send(t.api, 'POST', path, { json: body }));
    conforms(path, 'post', await send(t.api, 'POST', path, { json: body, headers: { authorization: 'Bearer nope' } }));
    conforms(path, 'post', await send(t.api, 'POST', path, { json: { ...body, extra: 1 }, headers: { authorization: `Bearer ${ws.token}` } }));
    const other = await t.workspace();
    conforms(path, 'post', await send(t.api, 'POST', path, { json: body, headers: { authorization: `Bearer ${other.token}` } }));
  });

  it('describes create mint job: 202, replay, 400, 401, 403, 413, 415, 422', async () => {
    const path = '/v1/mint/jobs';
    const key = randomUUID();
    const headers = { ...workspaceHeaders(ws), 'idempotency-key': key };
    const first = await send(t.api, 'POST', path, { json: mintBody(), headers });
    expect(first.status).toBe(202);
    conforms(path, 'post', first);
    conforms(path, 'post', await send(t.api, 'POST', path, { json: mintBody(), headers }));
    conforms(path, 'post', await send(t.api, 'POST', path, { json: { ...mintBody(), requested_quantity: 4 }, headers }));
    conforms(path, 'post', await send(t.api, 'POST', path, { json: { nope: true }, headers: { ...headers, 'idempotency-key': randomUUID() } }));
    conforms(path, 'post', await send(t.api, 'POST', path, { json: mintBody(), headers: { 'idempotency-key': key } }));
    conforms(path, 'post', await send(t.api, 'POST', path, { json: mintBody(), headers: { ...headers, 'x-workspace-id': randomUUID() } }));
    conforms(path, 'post', await send(t.api, 'POST', path, { raw: 'x'.repeat(2 * 1024 * 1024), headers: { ...headers, 'content-type': 'application/json' } }));
    conforms(path, 'post', await send(t.api, 'POST', path, { raw: 'a=b', headers: { ...headers, 'content-type': 'text/plain' } }));
  });

  it('describes imports and products', async () => {
    const csv = 'sku,name,commercial_status,mint_readiness_status\nOA-1,OpenAPI,ACTIVE,READY\nOA-2,,ACTIVE,READY\n';
    const started = await send(t.api, 'POST', '/v1/imports/products', { raw: csv, headers: { ...workspaceHeaders(ws), 'content-type': 'text/csv' } });
    expect(started.status).toBe(202);
    conforms('/v1/imports/products', 'post', started);
    conforms(
      '/v1/imports/products',
      'post',
      await send(t.api, 'POST', '/v1/imports/products', { raw: 'sku,"x\n', headers: { ...workspaceHeaders(ws), 'content-type': 'text/csv' } }),
    );
    await runProductImport(t.app.ctx, ws.brandId, started.body.data.id);
    const done = await send(t.api, 'GET', `/v1/imports/products/${started.body.data.id}`, { headers: workspaceHeaders(ws) });
    expect(done.body.data.failed_rows).toBe(1);
    conforms('/v1/imports/products/{id}', 'get', done);
    conforms('/v1/imports/products/{id}', 'get', await send(t.api, 'GET', `/v1/imports/products/${randomUUID()}`, { headers: workspaceHeaders(ws) }));
    const page = await send(t.api, 'GET', '/v1/products?limit=1', { headers: workspaceHeaders(ws) });
    expect(page.body.meta.has_more).toBe(true);
    conforms('/v1/products', 'get', page);
    conforms('/v1/products', 'get', await send(t.api, 'GET', '/v1/products?limit=500', { headers: workspaceHeaders(ws) }));
  });

  it("describes every named operation's response", async () => {
    const rpc = async (name: string, params: Record<string, unknown>) => {
      const res = await send(t.api, 'POST', `/v1/rpc/${name}`, { json: params, headers: { authorization: `Bearer ${ws.token}` } });
      conforms(`/v1/rpc/${name}`, 'post', res);
      return res.body;
    };
    const b = ws.brandId;
    const sub = await rpc('submit_mint_request', {
      _brand_id: b,
      _product_id: ws.productId,
      _requested_quantity: 2,
      _identity_mode: 'serial',
      _activation_mode: 'first_scan',
    });
    await rpc('submit_mint_request', {
      _brand_id: b,
      _product_id: ws.productId,
      _product_batch_id: randomUUID(),
      _requested_quantity: 2,
      _identity_mode: 'serial',
      _activation_mode: 'first_scan',
    });
    await rpc('process_mint_job_batch', { _brand_id: b, _job_id: sub.mint_job_id });
    await rpc('list_mint_batches', { _brand_id: b, _limit: 1 });
    await rpc('get_mint_batch_by_id', { _brand_id: b, _mint_batch_id: sub.mint_batch_id });
    await rpc('list_mint_units', { _brand_id: b, _limit: 1 });
    await rpc('list_mint_events', { _brand_id: b, _limit: 2 });
    await rpc('get_mint_kpis', { _brand_id: b });
    const created = await rpc('create_payload_pack', {
      _brand_id: b,
      _mint_batch_id: sub.mint_batch_id,
      _formats: ['epcis', 'csv'],
      _seq_from: 1,
      _seq_to: 2,
      _layout: { paper: 'letter', rows: 7 },
    });
    expect(created.pack).toMatchObject({
      status: 'pending',
      formats: ['csv', 'epcis'],
      seq_from: 1,
      seq_to: 2,
      purpose: 'request',
      layout: { paper: 'letter', rows: 7, dpi: 203 },
    });
    for (const bad of [{ _formats: ['gif'] }, { _formats: ['csv'], _seq_to: 3 }]) {
      const res = await send(t.api, 'POST', '/v1/rpc/create_payload_pack', {
        json: { _brand_id: b, _mint_batch_id: sub.mint_batch_id, ...bad },
        headers: { authorization: `Bearer ${ws.token}` },
      });
      conforms('/v1/rpc/create_payload_pack', 'post', res);
      expect([res.status, JSON.stringify(res.body)]).toEqual([400, expect.stringMatching(Object.keys(bad).at(-1)!)]);
    }
    await rpc('list_payload_packs', { _brand_id: b });
    await rpc('preflight_mint_batch', { _brand_id: b, _product_id: ws.productId, _batch_id: randomUUID(), _requested_quantity: 1 });
    await rpc('get_mint_batch_by_id', { _brand_id: b, _mint_batch_id: randomUUID() });
    await rpc('list_mint_batches', { _brand_id: b, _bogus: 1 });
  });
});
