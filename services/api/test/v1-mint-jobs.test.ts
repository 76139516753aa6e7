// POST /v1/mint/jobs: workspace credentials, the request id, and Idempotency-Key semantics
// (replay, 422 on another body, 409 while the first runs, workspace scope, expiry).

import { randomUUID } from 'node:crypto';
import { insertIdempotencyKey } from '@mint/db';
import { query, run } from '../../../test/support/sql.ts';
import { idempotencyRetentionMs } from '@mint/domain';
import { requestFingerprint, revokeApiKey, upsertProduct } from '@mint/usecases';
import { describe, expect, it } from 'vitest';
import { send, useV1, workspaceHeaders, type V1Workspace } from './v1-support.ts';

const { t, ws } = useV1();
const path = '/v1/mint/jobs';

const body = (over: Record<string, unknown> = {}) => ({
  product_id: ws.productId,
  requested_quantity: 10,
  identity_mode: 'serial',
  activation_mode: 'first_scan',
  ...over,
});
const create = (json: unknown, key: string | null = randomUUID(), headers: Record<string, string> = {}, workspace: V1Workspace = ws) =>
  send(t.api, 'POST', path, { json, headers: { ...workspaceHeaders(workspace), ...(key === null ? {} : { 'idempotency-key': key }), ...headers } });
const errorOf = (code: string) => ({
  ok: false,
  error: expect.objectContaining({ code, message: expect.any(String) }),
  meta: { request_id: expect.any(String) },
});

describe('POST /v1/mint/jobs', () => {
  it('creates a QUEUED job: 202 {ok, data, meta} echoing x-request-id', async () => {
    const res = await create(body(), randomUUID(), { 'x-request-id': 'req-abc-123' });
    expect(res.status).toBe(202);
    expect(res.headers['x-request-id']).toBe('req-abc-123');
    expect(res.body).toEqual({
      ok: true,
      data: { mint_job_id: expect.any(String), mint_batch_id: expect.any(String), status: 'QUEUED', is_duplicate: false },
      meta: { request_id: 'req-abc-123' },
    });
    const [job] = await query<{ status: string; requested_quantity: number }>(
      t.app.db.em.fork(),
      'select status, requested_quantity from mint_jobs where id = ?',
      [res.body.data.mint_job_id],
    );
    expect(job).toEqual({ status: 'QUEUED', requested_quantity: 10 });
  });

  it('generates a request id when none is sent and returns it in the header and meta', async () => {
    const res = await create(body());
    expect(res.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
    expect(res.body.meta.request_id).toBe(res.headers['x-request-id']);
  });

  it('replays the first response for the same key and body, creating one job', async () => {
    const key = `order-${randomUUID()}`;
    const first = await create(body(), key);
    const jobs = await t.count('mint_jobs', ws.brandId);
    // Same body in another key order is the same request.
    const again = await create({ activation_mode: 'first_scan', identity_mode: 'serial', requested_quantity: 10, product_id: ws.productId }, key);
    expect(again.status).toBe(202);
    expect(again.body).toEqual(first.body);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(await t.count('mint_jobs', ws.brandId)).toBe(jobs);
  });

  it('replays the same bytes as the first answer, keys in the same order, for accepted and blocked requests', async () => {
    for (const request of [body(), body({ product_id: randomUUID() })]) {
      const key = `bytes-${randomUUID()}`;
      const first = await create(request, key);
      const again = await create(request, key);
      const third = await create(request, key);
      expect(again.headers['idempotent-replayed']).toBe('true');
      expect(Buffer.from(again.text).equals(Buffer.from(first.text))).toBe(true);
      expect(third.text).toBe(first.text);
      expect([again.status, again.headers['content-type']]).toEqual([first.status, first.headers['content-type']]);
    }
  });

  it('answers 422 idempotency_key_reused for the same key with another body', async () => {
    const key = randomUUID();
    await create(body(), key);
    const jobs = await t.count('mint_jobs', ws.brandId);
    const res = await create(body({ requested_quantity: 11 }), key);
    expect([res.status, res.body]).toEqual([422, errorOf('idempotency_key_reused')]);
    expect(await t.count('mint_jobs', ws.brandId)).toBe(jobs);
  });

  it('answers 409 while the first request with the key still runs, and lets a retry take over a dead one', async () => {
    const key = randomUUID();
    const now = new Date();
    await insertIdempotencyKey(t.app.db.em.fork(), {
      brandId: ws.brandId,
      key,
      route: 'POST /v1/mint/jobs',
      requestHash: requestFingerprint(body()),
      now,
      expiresAt: new Date(now.getTime() + idempotencyRetentionMs),
    });
    const busy = await create(body(), key);
    expect([busy.status, busy.body]).toEqual([409, errorOf('idempotency_request_in_progress')]);
    expect(busy.headers['retry-after']).toBe('1');
    // The first request died two minutes ago: the retry runs.
    await run(t.app.db.em.fork(), `update idempotency_records set created_at = created_at - interval '2 minutes' where brand_id = ? and key = ?`, [
      ws.brandId,
      key,
    ]);
    const retried = await create(body(), key);
    expect(retried.status).toBe(202);
  });

  it('reaches the same job when a request died after submitting and its retry takes the key over', async () => {
    const key = randomUUID();
    const first = await create(body(), key);
    // As if the process died before storing the response: the record is still in_progress, long ago.
    await run(
      t.app.db.em.fork(),
      `update idempotency_records set state = 'in_progress', response_body = null, created_at = created_at - interval '2 minutes' where brand_id = ? and key = ?`,
      [ws.brandId, key],
    );
    const jobs = await t.count('mint_jobs', ws.brandId);
    const retried = await create(body(), key);
    expect(retried.status).toBe(202);
    expect(retried.body.data).toEqual({ ...first.body.data, is_duplicate: true });
    expect(await t.count('mint_jobs', ws.brandId)).toBe(jobs);
  });

  it('scopes keys to the workspace: the same key in another workspace creates its own job', async () => {
    const other = await t.workspace();
    const key = randomUUID();
    const mine = await create(body(), key);
    const theirs = await create(body({ product_id: other.productId }), key, {}, other);
    expect(theirs.status).toBe(202);
    expect(theirs.body.data.mint_job_id).not.toBe(mine.body.data.mint_job_id);
  });

  it('runs the key again once its record expired (kept 24 hours)', async () => {
    const key = randomUUID();
    const first = await create(body(), key);
    const retention = async () => {
      const [kept] = await query<{ hours: string }>(
        t.app.db.em.fork(),
        `select round(extract(epoch from (expires_at - created_at)) / 3600) as hours from idempotency_records where key = ?`,
        [key],
      );
      return Number(kept!.hours);
    };
    expect(await retention()).toBe(24);
    // Still kept: another body is refused; once expired, the key runs again with any body.
    expect((await create(body({ requested_quantity: 12 }), key)).status).toBe(422);
    await run(t.app.db.em.fork(), `update idempotency_records set expires_at = now() - interval '1 second' where brand_id = ? and key = ?`, [ws.brandId, key]);
    const again = await create(body({ requested_quantity: 12 }), key);
    expect(again.status).toBe(202);
    expect(again.body.data.mint_job_id).not.toBe(first.body.data.mint_job_id);
    expect(await retention()).toBe(24);
  });

  it('keeps and replays a blocked request as 422 submit_blocked with the blocking reasons', async () => {
    const { product } = await upsertProduct(
      t.app.ctx,
      { id: ws.userId },
      {
        brandId: ws.brandId,
        sku: `SUSP-${randomUUID()}`,
        name: 'Suspended',
        gtin: null,
        commercialStatus: 'SUSPENDED',
        mintReadinessStatus: 'READY',
        passportUrl: null,
      },
    );
    const key = randomUUID();
    const res = await create(body({ product_id: product.id }), key);
    expect(res.status).toBe(422);
    expect(res.body.error).toEqual({
      code: 'submit_blocked',
      message: expect.any(String),
      details: { blocking_reasons: [expect.objectContaining({ code: 'COMMERCIAL_STATUS_NOT_ACTIVE' })] },
    });
    const again = await create(body({ product_id: product.id }), key);
    expect([again.status, again.body]).toEqual([422, res.body]);
  });

  it('needs the Idempotency-Key header (400 naming it), writing nothing', async () => {
    const records = await t.count('idempotency_records');
    const res = await create(body(), null);
    expect([res.status, res.body]).toEqual([400, errorOf('invalid_request')]);
    expect(res.body.error.message).toBe('Idempotency-Key: is required');
    expect(await t.count('idempotency_records')).toBe(records);
  });

  it('needs both a bearer token and an API key (401), x-workspace-id (400), and access to the workspace (403)', async () => {
    const noKey = await send(t.api, 'POST', path, {
      json: body(),
      headers: { authorization: `Bearer ${ws.token}`, 'x-workspace-id': ws.brandId, 'idempotency-key': 'k1' },
    });
    expect([noKey.status, noKey.body.error.code, noKey.body.error.message]).toEqual([401, 'unauthenticated', 'missing API key (x-api-key header)']);
    const noBearer = await send(t.api, 'POST', path, {
      json: body(),
      headers: { 'x-api-key': ws.apiKey, 'x-workspace-id': ws.brandId, 'idempotency-key': 'k1' },
    });
    expect([noBearer.status, noBearer.body.error.code]).toEqual([401, 'unauthenticated']);
    const noWorkspace = await create(body(), 'k1', { 'x-workspace-id': '' });
    expect([noWorkspace.status, noWorkspace.body.error.message]).toEqual([400, 'x-workspace-id: is required (the workspace, i.e. brand, id)']);
    const other = await t.workspace();
    const foreign = await create(body(), 'k1', { 'x-workspace-id': other.brandId });
    expect([foreign.status, foreign.body]).toEqual([403, errorOf('forbidden')]);
    const readOnly = await t.workspace(['mint:read']);
    const scoped = await create(body({ product_id: readOnly.productId }), 'k1', {}, readOnly);
    expect([scoped.status, scoped.body.error.message]).toEqual([403, 'the API key lacks the mint:write scope']);
    const revoked = await t.workspace();
    const [key] = await query<{ id: string }>(t.app.db.em.fork(), 'select id from api_keys where brand_id = ?', [revoked.brandId]);
    await revokeApiKey(t.app.ctx, revoked.brandId, key!.id);
    const gone = await create(body({ product_id: revoked.productId }), 'k1', {}, revoked);
    expect([gone.status, gone.body.error.code]).toEqual([401, 'unauthenticated']);
  });

  it('rejects malformed JSON, wrong types, unknown fields and a non-JSON media type with a clear 4xx, writing nothing', async () => {
    const jobs = await t.count('mint_jobs');
    const records = await t.count('idempotency_records');
    const headers = { ...workspaceHeaders(ws), 'idempotency-key': randomUUID(), 'content-type': 'application/json' };
    const malformed = await send(t.api, 'POST', path, { raw: '{"product_id":', headers });
    expect([malformed.status, malformed.body.error.code]).toEqual([400, 'invalid_request']);
    expect(malformed.body.error.message).toMatch(/^body: is not valid JSON/);
    const array = await send(t.api, 'POST', path, { raw: '[1,2]', headers });
    expect(array.body.error.message).toBe('body: must be a JSON object');
    const types = await create(body({ requested_quantity: 1.5, lots: 'none' }));
    expect(types.body.error.details.violations).toEqual([
      { field: 'requested_quantity', message: 'must be an integer' },
      { field: 'lots', message: 'must be an array of {lot_code, qty}' },
    ]);
    const unknown = await create(body({ brand_id: ws.brandId }));
    expect([unknown.status, unknown.body.error.message]).toEqual([400, expect.stringMatching(/^brand_id: is not a known field/)]);
    const lot = await create(body({ identity_mode: 'batch', lots: [{ lot_code: 'A', qty: 10, note: 'x' }] }));
    expect(lot.body.error.message).toMatch(/^lots\[0\]\.note: is not a known field/);
    const text = await send(t.api, 'POST', path, { raw: 'product_id=1', headers: { ...headers, 'content-type': 'application/x-www-form-urlencoded' } });
    expect([text.status, text.body.error.code]).toEqual([415, 'unsupported_media_type']);
    expect(await t.count('mint_jobs')).toBe(jobs);
    expect(await t.count('idempotency_records')).toBe(records);
  });

  it('never writes the bearer token or the API key to the log', async () => {
    await create(body());
    await create(body(), randomUUID(), { 'x-workspace-id': randomUUID() });
    const logs = t.api.rawLogs();
    expect(logs).toContain('v1 request refused');
    expect(logs).not.toContain(ws.token);
    expect(logs).not.toContain(ws.apiKey);
  });

  it('answers 413 to a 10 MB body of garbage, writing nothing', async () => {
    const jobs = await t.count('mint_jobs');
    const garbage = Buffer.alloc(10 * 1024 * 1024, 'x{');
    const res = await send(t.api, 'POST', path, {
      raw: garbage,
      headers: { ...workspaceHeaders(ws), 'idempotency-key': randomUUID(), 'content-type': 'application/json' },
    });
    expect([res.status, res.body.error.code]).toEqual([413, 'payload_too_large']);
    expect(await t.count('mint_jobs')).toBe(jobs);
  });
});
