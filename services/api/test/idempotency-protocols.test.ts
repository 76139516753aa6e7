// One idempotency key, every protocol: SubmitMintRequest over Connect and gRPC (@grpc/grpc-js) and
// /v1/rpc/submit_mint_request answer a key reused with a different request alike (a conflict naming
// the key), and concurrent requests under one key never surface a deadlock or a 500.

import { randomUUID } from 'node:crypto';
import * as grpc from '@grpc/grpc-js';
import { ActivationMode, IdentityMode, MintService } from '@mint/contract';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { query } from '../../../test/support/sql.ts';
import { setupUseCases, type SeededBrand, type UseCaseBundle } from '../../../test/support/usecases.ts';
import { grpcUnaryCall, postJson, startTestApi, type TestApi } from './support.ts';

let app: UseCaseBundle;
let api: TestApi;
let brand: SeededBrand;

beforeAll(async () => {
  app = await setupUseCases();
  api = await startTestApi(app);
  brand = await app.seedBrand();
});

afterAll(async () => {
  await api?.close();
  await app?.close();
});

type Protocol = 'connect' | 'grpc' | 'v1';
/** What one request got: the key's job, a conflict (with the message shown to the caller), or anything else. */
type Outcome = { kind: 'job'; jobId: string; duplicate: boolean } | { kind: 'conflict'; message: string } | { kind: 'other'; detail: string };

/** Submits `quantity` serial units under `key` over `protocol` and classifies the answer. */
async function submit(protocol: Protocol, key: string, quantity: number): Promise<Outcome> {
  const auth = { authorization: `Bearer ${brand.token}` };
  if (protocol === 'grpc') {
    const r = await grpcUnaryCall(
      api.port,
      MintService.method.submitMintRequest,
      {
        brandId: brand.brandId,
        productId: brand.productId,
        requestedQuantity: quantity,
        identityMode: IdentityMode.SERIAL,
        activationMode: ActivationMode.ACTIVE_AT_MINT,
        idempotencyKey: key,
      },
      auth,
    );
    if ('response' in r)
      return r.response.ok
        ? { kind: 'job', jobId: r.response.mintJobId ?? '', duplicate: r.response.isDuplicate ?? false }
        : { kind: 'other', detail: 'blocked' };
    if (r.error.code === grpc.status.ALREADY_EXISTS) return { kind: 'conflict', message: r.error.details };
    return { kind: 'other', detail: `grpc ${r.error.code} ${r.error.details}` };
  }
  if (protocol === 'connect') {
    const res = await postJson(
      api,
      '/mint.v1.MintService/SubmitMintRequest',
      {
        brand_id: brand.brandId,
        product_id: brand.productId,
        requested_quantity: quantity,
        identity_mode: 'IDENTITY_MODE_SERIAL',
        activation_mode: 'ACTIVATION_MODE_ACTIVE_AT_MINT',
        idempotency_key: key,
      },
      auth,
    );
    const body = (await res.json()) as { ok?: boolean; mint_job_id?: string; is_duplicate?: boolean; code?: string; message?: string };
    if (res.status === 200 && body.ok) return { kind: 'job', jobId: body.mint_job_id!, duplicate: body.is_duplicate! };
    if (res.status === 409 && body.code === 'already_exists') return { kind: 'conflict', message: body.message! };
    return { kind: 'other', detail: `connect ${res.status} ${JSON.stringify(body)}` };
  }
  const res = await postJson(
    api,
    '/v1/rpc/submit_mint_request',
    {
      _brand_id: brand.brandId,
      _product_id: brand.productId,
      _requested_quantity: quantity,
      _identity_mode: 'serial',
      _activation_mode: 'active_at_mint',
      _idempotency_key: key,
    },
    auth,
  );
  const body = (await res.json()) as { ok?: boolean; mint_job_id?: string; is_duplicate?: boolean; error?: { code: string; message: string } };
  if (res.status === 200 && body.ok) return { kind: 'job', jobId: body.mint_job_id!, duplicate: body.is_duplicate! };
  if (res.status === 422 && body.error?.code === 'idempotency_key_reused') return { kind: 'conflict', message: body.error.message };
  return { kind: 'other', detail: `v1 ${res.status} ${JSON.stringify(body)}` };
}

describe('one idempotency key across Connect, gRPC and /v1', () => {
  it('answers the same key with another request as a conflict naming the key on every protocol, and leaves the job as it is', async () => {
    const key = randomUUID();
    const first = await submit('connect', key, 10);
    expect(first).toMatchObject({ kind: 'job', duplicate: false });
    for (const protocol of ['connect', 'grpc', 'v1'] as const) {
      const again = await submit(protocol, key, 10);
      expect(again).toEqual({ kind: 'job', jobId: (first as { jobId: string }).jobId, duplicate: true });
      const other = await submit(protocol, key, 11);
      expect(other.kind).toBe('conflict');
      expect((other as { message: string }).message).toContain(key);
    }
    const [job] = await query<{ requested_quantity: number }>(
      app.db.em.fork(),
      'select requested_quantity from mint_jobs where brand_id = ? and idempotency_key = ?',
      [brand.brandId, key],
    );
    expect(job?.requested_quantity).toBe(10);
  });

  it('creates exactly one job from 100 concurrent mixed-body requests under one key: the others are replays or conflicts, never a 500', async () => {
    const key = randomUUID();
    const protocols: Protocol[] = ['connect', 'grpc', 'v1'];
    const requests = Array.from({ length: 100 }, (_, i) => ({ protocol: protocols[i % 3]!, quantity: i % 2 === 0 ? 20 : 30 }));
    const outcomes = await Promise.all(requests.map((r) => submit(r.protocol, key, r.quantity)));
    expect(outcomes.filter((o) => o.kind === 'other')).toEqual([]);
    const jobs = await query<{ id: string; requested_quantity: number }>(
      app.db.em.fork(),
      'select id, requested_quantity from mint_jobs where brand_id = ? and idempotency_key = ?',
      [brand.brandId, key],
    );
    expect(jobs).toHaveLength(1);
    const winner = jobs[0]!;
    outcomes.forEach((o, i) => {
      // The winner's body gets the job (once new, then as replays); the other body a conflict.
      if (requests[i]!.quantity === winner.requested_quantity) expect(o).toMatchObject({ kind: 'job', jobId: winner.id });
      else expect(o).toMatchObject({ kind: 'conflict', message: expect.stringContaining(key) });
    });
    expect(outcomes.filter((o) => o.kind === 'job' && !o.duplicate)).toHaveLength(1);
    // Every protocol answered both ways.
    for (const protocol of protocols) {
      const kinds = new Set(outcomes.filter((_, i) => requests[i]!.protocol === protocol).map((o) => o.kind));
      expect(kinds).toEqual(new Set(['job', 'conflict']));
    }
  });
});
