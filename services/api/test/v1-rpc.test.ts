// POST /v1/rpc/{operation}: a contract test per named operation of the spec (response keys
// against the spec's field lists, lowercase wire values), and its auth and input errors.

import { randomUUID } from 'node:crypto';
import { query, run } from '../../../test/support/sql.ts';
import { createUser, grantRole, issueAccessToken, upsertProductionBatch } from '@mint/usecases';
import { beforeAll, describe, expect, it } from 'vitest';
import { send, useV1, type V1Response } from './v1-support.ts';

const { t, ws } = useV1();
let productionBatchId: string;

beforeAll(async () => {
  const { productionBatch } = await upsertProductionBatch(
    t.app.ctx,
    { id: ws.userId },
    { brandId: ws.brandId, productId: ws.productId, code: 'ERP-1', status: 'READY', quantity: 1000 },
  );
  productionBatchId = productionBatch.id;
});

const rpc = (operation: string, params: Record<string, unknown>, token: string | null = ws.token, headers: Record<string, string> = {}): Promise<V1Response> =>
  send(t.api, 'POST', `/v1/rpc/${operation}`, { json: params, headers: { ...(token === null ? {} : { authorization: `Bearer ${token}` }), ...headers } });
const keys = (value: object) => Object.keys(value).sort();
const sorted = (...names: string[]) => [...names].sort();

/** The spec's field lists (section 2 and 4, family A). */
const spec = {
  submitSuccess: ['ok', 'mint_job_id', 'mint_batch_id', 'status', 'is_duplicate'],
  submitBlocked: ['ok', 'blocking_reasons', 'product_id', 'product_batch_id'],
  preflight: ['id', 'status', 'preflight_result', 'blocking_reasons', 'scope_type', 'requested_quantity', 'created_at'],
  batch: [
    'id',
    'status',
    'identity_mode',
    'activation_mode',
    'requested_quantity',
    'minted_quantity',
    'resolver_base_url',
    'created_at',
    'product_id',
    'product_sku',
  ],
  listBatches: ['ok', 'batches', 'has_more', 'next_cursor_created_at', 'next_cursor_id', 'next_cursor'],
  listUnits: ['ok', 'units', 'has_more', 'next_cursor_created_at', 'next_cursor_id'],
  unitAtLeast: ['id', 'created_at', 'product_sku', 'status'],
  listEvents: ['ok', 'events', 'has_more', 'next_cursor_occurred_at', 'next_cursor_id'],
  eventAtLeast: ['id', 'occurred_at', 'event_type', 'entity_type', 'entity_id'],
  process: ['ok', 'done', 'inserted_count', 'minted_quantity', 'requested_quantity'],
  kpis: ['ok', 'total_tokens_minted', 'active_tokens', 'batches_created', 'exported_printed'],
  pack: ['id', 'brand_id', 'mint_batch_id', 'status', 'storage_path', 'created_at', 'updated_at'],
  listPacks: ['ok', 'packs', 'has_more', 'next_cursor_created_at', 'next_cursor_id'],
};

async function submitted(quantity = 4): Promise<{ jobId: string; batchId: string }> {
  const res = await rpc('submit_mint_request', {
    _brand_id: ws.brandId,
    _product_id: ws.productId,
    _requested_quantity: quantity,
    _identity_mode: 'serial',
    _activation_mode: 'first_scan',
  });
  return { jobId: res.body.mint_job_id, batchId: res.body.mint_batch_id };
}

describe('named operations: response shapes of the spec', () => {
  it('submit_mint_request: success, idempotent hit and blocked', async () => {
    const key = randomUUID();
    const params = {
      _brand_id: ws.brandId,
      _product_id: ws.productId,
      _product_batch_id: productionBatchId,
      _requested_quantity: 6,
      _identity_mode: 'batch',
      _activation_mode: 'active_at_mint',
      _lots: [{ lot_code: 'L-1', qty: 6 }],
      _idempotency_key: key,
    };
    const first = await rpc('submit_mint_request', params);
    expect(first.status).toBe(200);
    expect(keys(first.body)).toEqual(sorted(...spec.submitSuccess));
    expect(first.body).toMatchObject({ ok: true, status: 'QUEUED', is_duplicate: false });
    const again = await rpc('submit_mint_request', params);
    expect(again.body).toEqual({ ...first.body, is_duplicate: true });
    const blocked = await rpc('submit_mint_request', { ...params, _idempotency_key: randomUUID(), _requested_quantity: 5000, _lots: null });
    expect(blocked.status).toBe(200);
    expect(keys(blocked.body)).toEqual(sorted(...spec.submitBlocked));
    expect(blocked.body).toMatchObject({ ok: false, product_id: ws.productId, product_batch_id: productionBatchId });
    expect(blocked.body.blocking_reasons.length).toBeGreaterThan(0);
  });

  it('preflight_mint_batch returns a preflight record', async () => {
    const res = await rpc('preflight_mint_batch', { _brand_id: ws.brandId, _product_id: ws.productId, _batch_id: productionBatchId, _requested_quantity: 10 });
    expect(keys(res.body)).toEqual(sorted('ok', 'mint_job_id', ...spec.preflight));
    expect(res.body).toMatchObject({
      ok: true,
      status: 'preflight_pass',
      preflight_result: 'pass',
      blocking_reasons: [],
      scope_type: 'batch',
      requested_quantity: 10,
    });
  });

  it('create_mint_batch_from_job (deprecated) gives the preflighted job its batch', async () => {
    const pre = await rpc('preflight_mint_batch', { _brand_id: ws.brandId, _product_id: ws.productId, _batch_id: productionBatchId, _requested_quantity: 3 });
    const res = await rpc('create_mint_batch_from_job', {
      _brand_id: ws.brandId,
      _mint_job_id: pre.body.mint_job_id,
      _activation_mode: 'first_scan',
      _lots: [{ lot_code: 'X', qty: 3 }],
    });
    expect(res.status).toBe(200);
    expect(keys(res.body)).toEqual(sorted('ok', 'mint_job_id', 'mint_batch_id', 'status', 'deprecation'));
    expect(res.body).toMatchObject({ ok: true, mint_job_id: pre.body.mint_job_id, status: 'QUEUED', deprecation: expect.stringContaining('deprecated') });
  });

  it('process_mint_job_batch runs cycles until done', async () => {
    const { jobId } = await submitted(5);
    const first = await rpc('process_mint_job_batch', { _brand_id: ws.brandId, _job_id: jobId, _max_units: 3 });
    expect(keys(first.body)).toEqual(sorted(...spec.process));
    expect(first.body).toEqual({ ok: true, done: false, inserted_count: 3, minted_quantity: 3, requested_quantity: 5 });
    const second = await rpc('process_mint_job_batch', { _brand_id: ws.brandId, _job_id: jobId });
    expect(second.body).toEqual({ ok: true, done: true, inserted_count: 2, minted_quantity: 5, requested_quantity: 5 });
  });

  it('list_mint_batches and get_mint_batch_by_id speak lowercase wire values', async () => {
    const { batchId } = await submitted(2);
    const list = await rpc('list_mint_batches', { _brand_id: ws.brandId, _limit: 1 });
    expect(keys(list.body)).toEqual(sorted(...spec.listBatches));
    expect(keys(list.body.batches[0])).toEqual(sorted(...spec.batch));
    expect(list.body.batches[0]).toMatchObject({ id: batchId, status: 'draft', identity_mode: 'serial', activation_mode: 'first_scan', product_sku: 'SKU-1' });
    expect(list.body.has_more).toBe(true);
    const next = await rpc('list_mint_batches', {
      _brand_id: ws.brandId,
      _limit: 1,
      _cursor_created_at: list.body.next_cursor_created_at,
      _cursor_id: list.body.next_cursor_id,
    });
    expect(next.body.batches[0].id).not.toBe(batchId);
    const one = await rpc('get_mint_batch_by_id', { _brand_id: ws.brandId, _mint_batch_id: batchId });
    expect(keys(one.body)).toEqual(['batch', 'ok']);
    expect(keys(one.body.batch)).toEqual(sorted(...spec.batch, 'product_name'));
    expect(one.body.batch).toMatchObject({ product_name: 'Product One', product_sku: 'SKU-1', requested_quantity: 2, minted_quantity: 0 });
  });

  it('list_mint_units pages units with product_sku, null cursors on the last page', async () => {
    const { jobId, batchId } = await submitted(3);
    await rpc('process_mint_job_batch', { _brand_id: ws.brandId, _job_id: jobId });
    const res = await rpc('list_mint_units', { _brand_id: ws.brandId, _mint_batch_id: batchId, _limit: 10 });
    expect(keys(res.body)).toEqual(sorted(...spec.listUnits));
    expect(res.body.units).toHaveLength(3);
    expect(keys(res.body.units[0])).toEqual(expect.arrayContaining(spec.unitAtLeast));
    expect(res.body.units[0]).toMatchObject({ product_sku: 'SKU-1', status: 'inactive' });
    expect(res.body).toMatchObject({ has_more: false, next_cursor_created_at: null, next_cursor_id: null });
  });

  it('list_mint_events filters by event and entity', async () => {
    const { jobId, batchId } = await submitted(1);
    await rpc('process_mint_job_batch', { _brand_id: ws.brandId, _job_id: jobId });
    const res = await rpc('list_mint_events', { _brand_id: ws.brandId, _event_type: 'mint_job_completed', _limit: 50 });
    expect(keys(res.body)).toEqual(sorted(...spec.listEvents));
    expect(keys(res.body.events[0])).toEqual(expect.arrayContaining(spec.eventAtLeast));
    expect(res.body.events.every((e: { event_type: string }) => e.event_type === 'mint_job_completed')).toBe(true);
    const forBatch = await rpc('list_mint_events', { _brand_id: ws.brandId, _entity_type: 'mint_batch', _entity_id: batchId });
    expect(forBatch.body.events.length).toBeGreaterThan(0);
    expect(forBatch.body.events.every((e: { entity_id: string }) => e.entity_id === batchId)).toBe(true);
  });

  it("list_mint_events answers the spec's filter example: a batch's mint_job_completed by event type, entity type and batch id", async () => {
    const { jobId, batchId } = await submitted(2);
    const other = await submitted(2);
    await rpc('process_mint_job_batch', { _brand_id: ws.brandId, _job_id: jobId });
    await rpc('process_mint_job_batch', { _brand_id: ws.brandId, _job_id: other.jobId });
    const res = await rpc('list_mint_events', { _brand_id: ws.brandId, _event_type: 'mint_job_completed', _entity_type: 'mint_batch', _entity_id: batchId });
    expect(res.status).toBe(200);
    expect(res.body.events).toHaveLength(1);
    expect(res.body.events[0]).toMatchObject({ event_type: 'mint_job_completed', entity_type: 'mint_batch', entity_id: batchId });
    expect(res.body.events[0].payload).toMatchObject({ mint_job_id: jobId, minted_quantity: 2 });
    // The batch's history lists all of its processing: started, units created, completed.
    const history = await rpc('list_mint_events', { _brand_id: ws.brandId, _entity_type: 'mint_batch', _entity_id: batchId });
    expect(history.body.events.map((e: { event_type: string }) => e.event_type).sort()).toEqual([
      'mint_batch_created',
      'mint_batch_status_changed',
      'mint_job_completed',
      'mint_job_started',
      'mint_units_created',
    ]);
  });

  it('get_mint_kpis returns the four KPI fields', async () => {
    const res = await rpc('get_mint_kpis', { _brand_id: ws.brandId });
    expect(keys(res.body)).toEqual(sorted(...spec.kpis));
    expect(res.body.exported_printed).toBe(0);
    expect(res.body.batches_created).toBeGreaterThan(0);
  });

  it('list_payload_packs returns packs without signed URLs', async () => {
    const { batchId } = await submitted(1);
    await run(
      t.app.db.em.fork(),
      `insert into payload_packs (brand_id, id, mint_batch_id, status, storage_path, created_at, updated_at) values (?, ?, ?, 'pending', null, now(), now())`,
      [ws.brandId, randomUUID(), batchId],
    );
    const res = await rpc('list_payload_packs', { _brand_id: ws.brandId });
    expect(keys(res.body)).toEqual(sorted(...spec.listPacks));
    expect(keys(res.body.packs[0])).toEqual(sorted(...spec.pack));
    expect(res.body.packs[0]).toMatchObject({ brand_id: ws.brandId, mint_batch_id: batchId, status: 'pending', storage_path: null });
  });
});

describe('named operations: errors', () => {
  it('needs a session bearer token (401), even with an API key', async () => {
    const res = await rpc('get_mint_kpis', { _brand_id: ws.brandId }, null, { 'x-api-key': ws.apiKey });
    expect([res.status, res.body.error.code]).toEqual([401, 'unauthenticated']);
    expect((await rpc('get_mint_kpis', { _brand_id: ws.brandId }, 'garbage')).status).toBe(401);
  });

  it('refuses a viewer writing (403) and anyone on another brand (403); a foreign batch id is 404', async () => {
    const viewer = await createUser(t.app.ctx, { email: `${randomUUID()}@test.example`, name: 'Viewer' });
    await grantRole(t.app.ctx, ws.brandId, viewer.id, 'viewer');
    const token = await issueAccessToken(t.app.ctx, viewer.id);
    const jobs = await t.count('mint_jobs');
    const write = await rpc(
      'submit_mint_request',
      { _brand_id: ws.brandId, _product_id: ws.productId, _requested_quantity: 1, _identity_mode: 'serial', _activation_mode: 'active_at_mint' },
      token,
    );
    expect([write.status, write.body.error.code]).toEqual([403, 'forbidden']);
    expect(await t.count('mint_jobs')).toBe(jobs);
    expect((await rpc('get_mint_kpis', { _brand_id: ws.brandId }, token)).status).toBe(200);
    const other = await t.workspace();
    expect((await rpc('get_mint_kpis', { _brand_id: other.brandId })).status).toBe(403);
    const { batchId } = await submitted(1);
    const foreign = await rpc('get_mint_batch_by_id', { _brand_id: other.brandId, _mint_batch_id: batchId }, other.token);
    expect([foreign.status, foreign.body.error.code]).toEqual([404, 'not_found']);
  });

  it('names unknown operations (404), unknown and wrongly typed parameters (400), writing nothing', async () => {
    const unknownOp = await rpc('set_mint_batch_status', { _brand_id: ws.brandId });
    expect([unknownOp.status, unknownOp.body.error.code]).toEqual([404, 'not_found']);
    const jobs = await t.count('mint_jobs');
    const unknown = await rpc('submit_mint_request', {
      _brand_id: ws.brandId,
      _product_id: ws.productId,
      _requested_quantity: 1,
      _identity_mode: 'serial',
      _activation_mode: 'active_at_mint',
      brand_id: 'x',
    });
    expect([unknown.status, unknown.body.error.message]).toEqual([400, expect.stringMatching(/^brand_id: is not a known field/)]);
    const typed = await rpc('submit_mint_request', {
      _brand_id: ws.brandId,
      _product_id: 7,
      _requested_quantity: '1',
      _identity_mode: 'SERIAL',
      _activation_mode: 'manual',
    });
    expect(typed.body.error.details.violations.map((v: { field: string }) => v.field)).toEqual([
      '_product_id',
      '_requested_quantity',
      '_identity_mode',
      '_activation_mode',
    ]);
    expect(await t.count('mint_jobs')).toBe(jobs);
    const limit = await rpc('list_mint_batches', { _brand_id: ws.brandId, _limit: 101 });
    expect([limit.status, limit.body.error.message]).toEqual([400, '_limit: must be an integer from 1 to 100']);
    const half = await rpc('list_mint_units', { _brand_id: ws.brandId, _cursor_created_at: new Date().toISOString() });
    expect(half.body.error.message).toBe('_cursor_id: is required together with _cursor_created_at');
    const badTime = await rpc('list_mint_events', { _brand_id: ws.brandId, _cursor_occurred_at: 'yesterday', _cursor_id: randomUUID() });
    expect(badTime.body.error.message).toBe('_cursor_occurred_at: must be an ISO 8601 timestamp');
  });
});

describe('named operations and the executor path', () => {
  it('a job submitted by name is picked up from its outbox row', async () => {
    const { jobId } = await submitted(1);
    const [row] = await query<{ kind: string }>(t.app.db.em.fork(), 'select kind from outbox where job_id = ?', [jobId]);
    expect(row).toEqual({ kind: 'mint' });
  });
});
