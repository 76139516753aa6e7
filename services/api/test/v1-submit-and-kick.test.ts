// POST /v1/mint/submit-and-kick: the spec's submit + kick with its own error codes, one bounded
// processing cycle, and a failed kick that never loses the job.

import { randomUUID } from 'node:crypto';
import { query } from '../../../test/support/sql.ts';
import { createApiKey, createUser, grantRole, issueAccessToken, processMintJobBatch, relayOutbox, upsertProduct, type OutboxJob } from '@mint/usecases';
import { describe, expect, it } from 'vitest';
import { startTestApi, type TestApi } from './support.ts';
import { send, useV1 } from './v1-support.ts';

const { t, ws } = useV1();
const path = '/v1/mint/submit-and-kick';

const body = (over: Record<string, unknown> = {}) => ({
  brand_id: ws.brandId,
  product_id: ws.productId,
  requested_quantity: 5,
  identity_mode: 'serial',
  activation_mode: 'active_at_mint',
  ...over,
});
const kick = (json: unknown, token: string | null = ws.token, api: TestApi = t.api) =>
  send(api, 'POST', path, { json, headers: token === null ? {} : { authorization: `Bearer ${token}` } });

async function jobOf(jobId: string) {
  const [row] = await query<{ status: string; lease_owner: string | null; minted: number }>(
    t.app.db.em.fork(),
    `select j.status, j.lease_owner, b.minted_quantity as minted from mint_jobs j join mint_batches b on b.mint_job_id = j.id and b.brand_id = j.brand_id where j.id = ?`,
    [jobId],
  );
  return row!;
}

/** The spec's error body with `code`. */
const errorShape = (code: string) => ({
  ok: false,
  brand_id: null,
  mint_job_id: null,
  mint_batch_id: null,
  kicked: false,
  error_code: code,
  error_message: expect.any(String),
});

describe('submit + kick', () => {
  it('submits and mints the whole small job in the kick: 200 with kicked=true', async () => {
    const res = await kick(body({ idempotency_key: randomUUID() }));
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      ok: true,
      brand_id: ws.brandId,
      mint_job_id: expect.any(String),
      mint_batch_id: expect.any(String),
      kicked: true,
      is_duplicate: false,
      status: 'QUEUED',
      note: null,
    });
    expect(await jobOf(res.body.mint_job_id)).toEqual({ status: 'COMPLETED', lease_owner: null, minted: 5 });
  });

  it('replays a repeated idempotency_key with is_duplicate=true and no second job', async () => {
    const key = randomUUID();
    const first = await kick(body({ idempotency_key: key }));
    const jobs = await t.count('mint_jobs', ws.brandId);
    const again = await kick(body({ idempotency_key: key }));
    expect(again.status).toBe(200);
    expect(again.body).toMatchObject({ ok: true, is_duplicate: true, mint_job_id: first.body.mint_job_id, mint_batch_id: first.body.mint_batch_id });
    expect(await t.count('mint_jobs', ws.brandId)).toBe(jobs);
  });

  it('kicks at most 20,000 units and leaves the rest to the executor', async () => {
    const res = await kick(body({ requested_quantity: 20_050 }));
    expect(res.body).toMatchObject({ ok: true, kicked: true, note: '20000 of 20050 units minted; the executor mints the rest' });
    expect(await jobOf(res.body.mint_job_id)).toEqual({ status: 'PROCESSING', lease_owner: null, minted: 20_000 });
  });

  it('mints nothing for a lot-mode request but finalises it in the kick', async () => {
    const res = await kick(
      body({
        identity_mode: 'batch',
        requested_quantity: 10,
        lots: [
          { lot_code: 'L1', qty: 4 },
          { lot_code: 'L2', qty: 6 },
        ],
      }),
    );
    expect(res.body).toMatchObject({ ok: true, kicked: true });
    expect((await jobOf(res.body.mint_job_id)).status).toBe('COMPLETED');
  });

  it('answers submit_blocked with HTTP 200 and the blocking reasons when preflight blocks', async () => {
    const { product } = await upsertProduct(
      t.app.ctx,
      { id: ws.userId },
      {
        brandId: ws.brandId,
        sku: 'DRAFT-1',
        name: 'Draft',
        gtin: null,
        commercialStatus: 'DRAFT',
        mintReadinessStatus: 'NOT_READY',
        passportUrl: null,
      },
    );
    const jobs = await t.count('mint_jobs', ws.brandId);
    const res = await kick(body({ product_id: product.id }));
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      ...errorShape('submit_blocked'),
      blocking_reasons: expect.arrayContaining([
        expect.objectContaining({ code: 'COMMERCIAL_STATUS_NOT_ACTIVE' }),
        expect.objectContaining({ code: 'MINT_READINESS_NOT_READY' }),
      ]),
    });
    expect(await t.count('mint_jobs', ws.brandId)).toBe(jobs);
  });

  it('answers missing_auth 401 without an Authorization header, invalid_token 401 for a bad or expired token', async () => {
    const missing = await kick(body(), null);
    expect([missing.status, missing.body]).toEqual([401, errorShape('missing_auth')]);
    const bad = await kick(body(), 'not-a-jwt');
    expect([bad.status, bad.body]).toEqual([401, errorShape('invalid_token')]);
    const expired = await issueAccessToken({ ...t.app.ctx, clock: () => new Date(Date.now() - 2 * 86_400_000) }, ws.userId, 60);
    const old = await kick(body(), expired);
    expect([old.status, old.body]).toEqual([401, errorShape('invalid_token')]);
  });

  it("checks an x-api-key sent with the owner's token: a read-only key is 403, a garbage key 401, and neither mints", async () => {
    const jobs = await t.count('mint_jobs', ws.brandId);
    const readOnly = await t.workspace(['mint:read']);
    const withKey = (apiKey: string) => send(t.api, 'POST', path, { json: body(), headers: { authorization: `Bearer ${ws.token}`, 'x-api-key': apiKey } });
    const foreignKey = await withKey(readOnly.apiKey);
    expect([foreignKey.status, foreignKey.body]).toEqual([403, errorShape('forbidden')]);
    const ownReadOnly = await createApiKey(t.app.ctx, { brandId: ws.brandId, name: 'read only', scopes: ['mint:read'] });
    const readOnlyRes = await withKey(ownReadOnly.key);
    expect([readOnlyRes.status, readOnlyRes.body]).toEqual([403, errorShape('forbidden')]);
    const garbage = await withKey('garbage-key');
    expect([garbage.status, garbage.body]).toEqual([401, errorShape('invalid_token')]);
    expect(await t.count('mint_jobs', ws.brandId)).toBe(jobs);
    const allowed = await withKey(ws.apiKey);
    expect(allowed.body).toMatchObject({ ok: true });
  });

  it('answers forbidden 403 to a member (not owner or admin) and to a user of another brand', async () => {
    const member = await createUser(t.app.ctx, { email: `${randomUUID()}@test.example`, name: 'Member' });
    await grantRole(t.app.ctx, ws.brandId, member.id, 'member');
    const res = await kick(body(), await issueAccessToken(t.app.ctx, member.id));
    expect([res.status, res.body]).toEqual([403, errorShape('forbidden')]);
    const other = await t.workspace();
    const foreign = await kick(body(), other.token);
    expect([foreign.status, foreign.body]).toEqual([403, errorShape('forbidden')]);
  });

  it('answers invalid_request 400 for malformed JSON, wrong types, unknown and missing fields, writing nothing', async () => {
    const jobs = await t.count('mint_jobs');
    const malformed = await send(t.api, 'POST', path, {
      raw: '{"brand_id": ',
      headers: { authorization: `Bearer ${ws.token}`, 'content-type': 'application/json' },
    });
    expect([malformed.status, malformed.body.error_code]).toEqual([400, 'invalid_request']);
    expect(malformed.body.error_message).toMatch(/^body: is not valid JSON/);
    const wrongType = await kick(body({ requested_quantity: '5' }));
    expect([wrongType.status, wrongType.body]).toEqual([400, { ...errorShape('invalid_request'), error_message: 'requested_quantity: must be an integer' }]);
    const unknown = await kick(body({ quantity: 5 }));
    expect(unknown.body.error_message).toMatch(/^quantity: is not a known field/);
    const missing = await kick({ brand_id: ws.brandId });
    expect(missing.body.error_message).toContain('product_id: is required');
    const badMode = await kick(body({ identity_mode: 'SERIAL' }));
    expect(badMode.body.error_message).toBe('identity_mode: must be one of batch, serial');
    expect(await t.count('mint_jobs')).toBe(jobs);
  });

  it('answers submit_failed 400 when the request breaks the mint rules', async () => {
    const jobs = await t.count('mint_jobs');
    const lots = await kick(body({ identity_mode: 'batch', requested_quantity: 10, lots: [{ lot_code: 'A', qty: 3 }] }));
    expect([lots.status, lots.body]).toEqual([
      400,
      { ...errorShape('submit_failed'), error_message: 'lots: quantities sum to 3, must equal requested_quantity 10' },
    ]);
    const tooMany = await kick(body({ requested_quantity: 1_000_001 }));
    expect([tooMany.status, tooMany.body.error_code]).toEqual([400, 'submit_failed']);
    const serialLots = await kick(body({ lots: [{ lot_code: 'A', qty: 5 }] }));
    expect(serialLots.body.error_message).toBe('lots: must not be provided in serial mode');
    expect(await t.count('mint_jobs')).toBe(jobs);
  });

  it('reports kicked=false when the kick fails, and the job is not lost: its outbox message hands it to an executor', async () => {
    // A context whose randomness fails for draws over 16 bytes: the submit succeeds (a batch id draws
    // 6 random bytes), the kick's cycle throws when it makes the brand's serial key (32 bytes), which
    // a brand's first serial batch does: the job is a fresh workspace's first.
    const fresh = await t.workspace();
    const broken = {
      ...t.app.ctx,
      randomFill: (bytes: Uint8Array) => {
        if (bytes.length > 16) throw new Error('entropy source failed');
        t.app.ctx.randomFill(bytes);
      },
    };
    const api = await startTestApi(t.app, { ctx: broken });
    try {
      const res = await kick(body({ brand_id: fresh.brandId, product_id: fresh.productId, requested_quantity: 50 }), fresh.token, api);
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ ok: true, kicked: false, status: 'QUEUED', note: 'the job is queued; the executor will process it' });
      const jobId = res.body.mint_job_id as string;
      expect(await jobOf(jobId)).toMatchObject({ lease_owner: null, minted: 0 });
      // What the executor does: the relay publishes the outbox message, a worker runs cycles.
      const published: OutboxJob[] = [];
      while ((await relayOutbox(t.app.ctx, async (job) => void published.push(job))) > 0);
      expect(published).toContainEqual({ kind: 'mint', id: jobId, brandId: fresh.brandId });
      let cycle;
      do cycle = await processMintJobBatch(t.app.ctx, fresh.brandId, jobId, 20);
      while (!cycle.done);
      expect(await jobOf(jobId)).toEqual({ status: 'COMPLETED', lease_owner: null, minted: 50 });
    } finally {
      await api.close();
    }
  });
});
