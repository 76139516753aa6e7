// Following a mint job without a stream: GetMintJob over Connect JSON, over a real @grpc/grpc-js
// client, GET /v1/mint/jobs/{id} and the named operation get_mint_job, on the real server (a job
// followed to COMPLETED, another brand's job refused, a bad id named). And ListPayloadPacks of one
// batch when the brand's newest 100 packs are all of other batches.

import { randomUUID } from 'node:crypto';
import { Code, createClient, type Client } from '@connectrpc/connect';
import { createConnectTransport } from '@connectrpc/connect-node';
import * as grpc from '@grpc/grpc-js';
import { MintJobStatus, MintService } from '@mint/contract';
import { createRequestedPack } from '@mint/db';
import { beforeAll, describe, expect, it } from 'vitest';
import { errorOf, grpcUnaryCall, postJson, submitOverJson } from './support.ts';
import { send, useV1, workspaceHeaders, type V1Workspace } from './v1-support.ts';

const { t, ws } = useV1();
let other: V1Workspace;
let mint: Client<typeof MintService>;
const auth = (w: V1Workspace = ws) => ({ authorization: `Bearer ${w.token}` });

/** GetMintJob as a Connect JSON call; returns the status and the parsed body. */
async function getJobJson(jobId: string, w: V1Workspace = ws, brandId = w.brandId): Promise<{ status: number; body: any }> {
  const res = await postJson(t.api, '/mint.v1.MintService/GetMintJob', { brand_id: brandId, mint_job_id: jobId }, auth(w));
  return { status: res.status, body: await res.json() };
}

/** Submits a serial job of `quantity` units for `w` over Connect JSON; returns its job and batch ids. */
async function submit(quantity: number, w: V1Workspace = ws): Promise<{ mint_job_id: string; mint_batch_id: string }> {
  const res = await submitOverJson(t.api, w, {
    requested_quantity: quantity,
    identity_mode: 'IDENTITY_MODE_SERIAL',
    activation_mode: 'ACTIVATION_MODE_ACTIVE_AT_MINT',
  });
  expect(res.status).toBe(200);
  return (await res.json()) as { mint_job_id: string; mint_batch_id: string };
}

beforeAll(async () => {
  other = await t.workspace();
  mint = createClient(MintService, createConnectTransport({ baseUrl: t.api.baseUrl, httpVersion: '1.1', useBinaryFormat: false }));
});

describe('GetMintJob', () => {
  it('follows a job over Connect JSON from QUEUED through PROCESSING to COMPLETED with minted quantity = requested', async () => {
    const submitted = await submit(25);
    const queued = await getJobJson(submitted.mint_job_id);
    expect(queued.status).toBe(200);
    expect(queued.body).toEqual({
      ok: true,
      job: {
        mint_job_id: submitted.mint_job_id,
        status: 'MINT_JOB_STATUS_QUEUED',
        scope_type: 'serial',
        requested_quantity: 25,
        minted_quantity: 0,
        mint_batch_id: submitted.mint_batch_id,
        created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
        updated_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
      },
    });
    const seen: [string, number][] = [];
    for (let cycle = 0; cycle < 10; cycle++) {
      const done = await mint.processMintJobBatch({ brandId: ws.brandId, jobId: submitted.mint_job_id, maxUnits: 10 }, { headers: auth() });
      const { body } = await getJobJson(submitted.mint_job_id);
      seen.push([body.job.status, body.job.minted_quantity]);
      if (done.done) break;
    }
    expect(seen).toEqual([
      ['MINT_JOB_STATUS_PROCESSING', 10],
      ['MINT_JOB_STATUS_PROCESSING', 20],
      ['MINT_JOB_STATUS_COMPLETED', 25],
    ]);
    const completed = await getJobJson(submitted.mint_job_id);
    expect(completed.body.job).toMatchObject({ status: 'MINT_JOB_STATUS_COMPLETED', minted_quantity: 25, requested_quantity: 25 });
    expect(completed.body.job.failure_reason).toBeUndefined();
    expect(Date.parse(completed.body.job.updated_at)).toBeGreaterThanOrEqual(Date.parse(completed.body.job.created_at));
  });

  it('answers a real @grpc/grpc-js client, and refuses it without credentials', async () => {
    const submitted = await submit(7);
    await mint.processMintJobBatch({ brandId: ws.brandId, jobId: submitted.mint_job_id }, { headers: auth() });
    const ok = await grpcUnaryCall(t.api.port, MintService.method.getMintJob, { brandId: ws.brandId, mintJobId: submitted.mint_job_id }, auth());
    if (!('response' in ok)) throw ok.error;
    expect(ok.response.job).toMatchObject({
      mintJobId: submitted.mint_job_id,
      status: MintJobStatus.COMPLETED,
      scopeType: 'serial',
      requestedQuantity: 7,
      mintedQuantity: 7,
      mintBatchId: submitted.mint_batch_id,
    });
    const denied = await grpcUnaryCall(t.api.port, MintService.method.getMintJob, { brandId: ws.brandId, mintJobId: submitted.mint_job_id });
    expect('error' in denied && denied.error.code).toBe(grpc.status.UNAUTHENTICATED);
    const foreign = await grpcUnaryCall(t.api.port, MintService.method.getMintJob, { brandId: other.brandId, mintJobId: submitted.mint_job_id }, auth(other));
    expect('error' in foreign && foreign.error.code).toBe(grpc.status.NOT_FOUND);
  });

  it("refuses another brand's job: NotFound under the caller's own brand, PermissionDenied under the job's brand", async () => {
    const submitted = await submit(3);
    const underOwn = await errorOf(mint.getMintJob({ brandId: other.brandId, mintJobId: submitted.mint_job_id }, { headers: auth(other) }));
    expect([underOwn.code, underOwn.rawMessage]).toEqual([Code.NotFound, `mint job ${submitted.mint_job_id} not found`]);
    const underTheirs = await errorOf(mint.getMintJob({ brandId: ws.brandId, mintJobId: submitted.mint_job_id }, { headers: auth(other) }));
    expect(underTheirs.code).toBe(Code.PermissionDenied);
    expect((await getJobJson(randomUUID())).status).toBe(404);
  });

  it('names a bad job id on Connect (InvalidArgument, mint_job_id)', async () => {
    const { status, body } = await getJobJson('job-42');
    expect(status).toBe(400);
    expect(body.code).toBe('invalid_argument');
    expect(body.message).toContain('mint_job_id');
  });
});

describe('GET /v1/mint/jobs/{id}', () => {
  const get = (id: string, w: V1Workspace = ws, headers: Record<string, string> = {}) =>
    send(t.api, 'GET', `/v1/mint/jobs/${encodeURIComponent(id)}`, { headers: { ...workspaceHeaders(w), ...headers } });

  it('shows a job followed to COMPLETED with minted_quantity = requested_quantity, in the /v1 body', async () => {
    const submitted = await submit(12);
    const before = await get(submitted.mint_job_id, ws, { 'x-request-id': 'job-read-1' });
    expect(before.status).toBe(200);
    expect(before.body).toEqual({
      ok: true,
      data: {
        mint_job_id: submitted.mint_job_id,
        status: 'QUEUED',
        scope_type: 'serial',
        requested_quantity: 12,
        minted_quantity: 0,
        mint_batch_id: submitted.mint_batch_id,
        created_at: expect.any(String),
        updated_at: expect.any(String),
        failure_reason: null,
      },
      meta: { request_id: 'job-read-1' },
    });
    await mint.processMintJobBatch({ brandId: ws.brandId, jobId: submitted.mint_job_id }, { headers: auth() });
    const after = await get(submitted.mint_job_id);
    expect(after.body.data).toMatchObject({ status: 'COMPLETED', minted_quantity: 12, requested_quantity: 12, failure_reason: null });
  });

  it("answers 404 for another workspace's job and 403 for a workspace the caller has no role in", async () => {
    const submitted = await submit(2);
    const foreign = await get(submitted.mint_job_id, other);
    expect([foreign.status, foreign.body.error.code, foreign.body.error.message]).toEqual([404, 'not_found', `mint job ${submitted.mint_job_id} not found`]);
    const intruder = await get(submitted.mint_job_id, other, { 'x-workspace-id': ws.brandId });
    expect([intruder.status, intruder.body.ok]).toEqual([403, false]);
  });

  it('names a bad id (400, field id, the value sent) and needs both credentials', async () => {
    const bad = await get('not-a-job');
    expect(bad.status).toBe(400);
    expect(bad.body.error.code).toBe('invalid_request');
    expect(bad.body.error.message).toBe('id: must be a uuid (got "not-a-job")');
    const noKey = await send(t.api, 'GET', `/v1/mint/jobs/${randomUUID()}`, { headers: { authorization: `Bearer ${ws.token}`, 'x-workspace-id': ws.brandId } });
    expect(noKey.status).toBe(401);
  });

  it('is the named operation get_mint_job too', async () => {
    const submitted = await submit(4);
    const res = await postJson(t.api, '/v1/rpc/get_mint_job', { _brand_id: ws.brandId, _mint_job_id: submitted.mint_job_id }, auth());
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({
      ok: true,
      job: { mint_job_id: submitted.mint_job_id, status: 'QUEUED', minted_quantity: 0, requested_quantity: 4 },
    });
  });
});

describe('ListPayloadPacks of one batch', () => {
  it("returns the batch's packs when the brand's newest 100 packs are all of other batches", async () => {
    const brand = await t.workspace();
    const [target, busy, busier] = [await submit(1, brand), await submit(1, brand), await submit(1, brand)];
    const spec = { purpose: 'request', profile: { formats: ['csv'], seqFrom: null, seqTo: null, symbology: 'qr', layout: null } } as const;
    const em = t.app.db.em.fork();
    const start = Date.now() - 3_600_000;
    const ours: string[] = [];
    for (let i = 0; i < 3; i++) ours.unshift(await createRequestedPack(em, brand.brandId, target.mint_batch_id, new Date(start + i), spec));
    // 120 newer packs of two other batches.
    for (let i = 0; i < 120; i++) await createRequestedPack(em, brand.brandId, (i % 2 === 0 ? busy : busier).mint_batch_id, new Date(start + 1000 + i), spec);
    const as = { headers: auth(brand) };

    const newest = await mint.listPayloadPacks({ brandId: brand.brandId, limit: 100 }, as);
    expect(newest.packs.filter((p) => p.mintBatchId === target.mint_batch_id)).toEqual([]);

    const filtered = await mint.listPayloadPacks({ brandId: brand.brandId, mintBatchId: target.mint_batch_id }, as);
    expect(filtered.packs.map((p) => p.id)).toEqual(ours);
    expect(filtered.hasMore).toBe(false);
    const first = await mint.listPayloadPacks({ brandId: brand.brandId, mintBatchId: target.mint_batch_id, limit: 2 }, as);
    const second = await mint.listPayloadPacks({ brandId: brand.brandId, mintBatchId: target.mint_batch_id, limit: 2, cursor: first.nextCursor! }, as);
    expect([...first.packs, ...second.packs].map((p) => p.id)).toEqual(ours);
    expect([first.hasMore, second.hasMore]).toEqual([true, false]);

    // The named operation takes the same filter.
    const named = await postJson(t.api, '/v1/rpc/list_payload_packs', { _brand_id: brand.brandId, _mint_batch_id: target.mint_batch_id }, auth(brand));
    expect(((await named.json()) as { packs: { id: string }[] }).packs.map((p) => p.id)).toEqual(ours);

    // Another brand's batch lists nothing; a bad batch id is named.
    expect((await mint.listPayloadPacks({ brandId: ws.brandId, mintBatchId: target.mint_batch_id }, { headers: auth() })).packs).toEqual([]);
    const bad = await errorOf(mint.listPayloadPacks({ brandId: brand.brandId, mintBatchId: 'batch-1' }, as));
    expect([bad.code, bad.rawMessage]).toEqual([Code.InvalidArgument, expect.stringContaining('mint_batch_id')]);
  });
});
