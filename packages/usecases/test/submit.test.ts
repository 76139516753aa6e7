import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { query } from '../../../test/support/sql.ts';
import { InvalidInputError, type MintRequest } from '@mint/domain';
import { preflightMintBatch, submitMintRequest, upsertProduct, upsertProductionBatch } from '@mint/usecases';
import { setupUseCases, type SeededBrand, type UseCaseBundle } from '../../../test/support/usecases.ts';

let app: UseCaseBundle;
let brand: SeededBrand;
beforeAll(async () => {
  app = await setupUseCases();
  brand = await app.seedBrand();
});
afterAll(() => app.close());

const actor = () => ({ id: brand.userId });
const request = (overrides: Partial<MintRequest> = {}): MintRequest => ({
  brandId: brand.brandId, productId: brand.productId, productBatchId: null, requestedQuantity: 100,
  identityMode: 'serial', activationMode: 'active_at_mint', lots: [], idempotencyKey: null, ...overrides,
});
async function count(table: string, brandId = brand.brandId): Promise<number> {
  const [row] = await query<{ n: string }>(app.db.em.fork(), `select count(*) as n from ${table} where brand_id = ?`, [brandId]);
  return Number(row!.n);
}

describe('submitMintRequest', () => {
  it('creates one QUEUED job, one draft batch and an outbox message, and no units', async () => {
    const before = { jobs: await count('mint_jobs'), outbox: await count('outbox') };
    const result = await submitMintRequest(app.ctx, actor(), request());
    expect(result).toMatchObject({ ok: true, status: 'QUEUED', isDuplicate: false });
    if (!result.ok) throw new Error('blocked');
    const [job] = await query<{ status: string; scope_type: string }>(app.db.em.fork(), `select status, scope_type from mint_jobs where id = ?`, [result.mintJobId]);
    expect(job).toEqual({ status: 'QUEUED', scope_type: 'serial' });
    const [batch] = await query<{ status: string; mint_job_id: string; minted_quantity: number }>(
      app.db.em.fork(), `select status, mint_job_id, minted_quantity from mint_batches where id = ?`, [result.mintBatchId]);
    expect(batch).toEqual({ status: 'draft', mint_job_id: result.mintJobId, minted_quantity: 0 });
    expect(await count('mint_jobs')).toBe(before.jobs + 1);
    expect(await count('outbox')).toBe(before.outbox + 1);
    expect(await count('mint_units')).toBe(0);
  });

  it('returns the existing job with isDuplicate for a repeated idempotency key', async () => {
    const key = randomUUID();
    const first = await submitMintRequest(app.ctx, actor(), request({ idempotencyKey: key }));
    const second = await submitMintRequest(app.ctx, actor(), request({ idempotencyKey: key }));
    expect(first.ok && second.ok).toBe(true);
    if (!first.ok || !second.ok) return;
    expect(second).toEqual({ ...first, isDuplicate: true });
  });

  it('creates exactly one job for 50 concurrent submits with one key', async () => {
    const key = randomUUID();
    const jobsBefore = await count('mint_jobs');
    const results = await Promise.all(Array.from({ length: 50 }, () => submitMintRequest(app.ctx, actor(), request({ idempotencyKey: key }))));
    const ids = new Set(results.map((r) => (r.ok ? r.mintJobId : 'blocked')));
    expect(ids.size).toBe(1);
    expect(results.filter((r) => r.ok && !r.isDuplicate)).toHaveLength(1);
    expect(await count('mint_jobs')).toBe(jobsBefore + 1);
  });

  it('blocks a product that is not ACTIVE and not READY with both spec codes, writing nothing', async () => {
    const { product } = await upsertProduct(app.ctx, actor(), {
      brandId: brand.brandId, sku: 'SKU-DRAFT', name: 'Draft', gtin: null, commercialStatus: 'DRAFT', mintReadinessStatus: 'NOT_READY', passportUrl: null,
    });
    const jobsBefore = await count('mint_jobs');
    const result = await submitMintRequest(app.ctx, actor(), request({ productId: product.id }));
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.blockingReasons.map((r) => r.code)).toEqual(['COMMERCIAL_STATUS_NOT_ACTIVE', 'MINT_READINESS_NOT_READY']);
    expect(result.productId).toBe(product.id);
    expect(await count('mint_jobs')).toBe(jobsBefore);
  });

  it('enforces production-batch linkage: missing, not READY, over quantity, other product', async () => {
    const { productionBatch: planned } = await upsertProductionBatch(app.ctx, actor(), {
      brandId: brand.brandId, productId: brand.productId, code: 'PB-PLANNED', status: 'PLANNED', quantity: 50,
    });
    const codes = async (productBatchId: string) => {
      const r = await submitMintRequest(app.ctx, actor(), request({ productBatchId }));
      return r.ok ? [] : r.blockingReasons.map((x) => x.code);
    };
    expect(await codes(randomUUID())).toEqual(['PRODUCTION_BATCH_NOT_FOUND']);
    expect(await codes(planned.id)).toEqual(['PRODUCTION_BATCH_NOT_READY', 'PRODUCTION_BATCH_QUANTITY_EXCEEDED']);
    const { product: other } = await upsertProduct(app.ctx, actor(), {
      brandId: brand.brandId, sku: 'SKU-OTHER', name: 'Other', gtin: null, commercialStatus: 'ACTIVE', mintReadinessStatus: 'READY', passportUrl: null,
    });
    const { productionBatch: foreignProduct } = await upsertProductionBatch(app.ctx, actor(), {
      brandId: brand.brandId, productId: other.id, code: 'PB-OTHER', status: 'READY', quantity: null,
    });
    expect(await codes(foreignProduct.id)).toEqual(['PRODUCTION_BATCH_PRODUCT_MISMATCH']);
    const { productionBatch: ready } = await upsertProductionBatch(app.ctx, actor(), {
      brandId: brand.brandId, productId: brand.productId, code: 'PB-READY', status: 'READY', quantity: 100,
    });
    expect(await submitMintRequest(app.ctx, actor(), request({ productBatchId: ready.id }))).toMatchObject({ ok: true });
  });

  it('rejects bad input naming the field and writes nothing', async () => {
    const jobsBefore = await count('mint_jobs');
    const cases: [Partial<MintRequest>, string][] = [
      [{ requestedQuantity: 0 }, 'requested_quantity'],
      [{ requestedQuantity: 1_000_001 }, 'requested_quantity'],
      [{ lots: [{ lotCode: 'L1', qty: 100 }] }, 'lots'],
      [{ identityMode: 'batch', lots: [{ lotCode: 'L1', qty: 60 }, { lotCode: 'L2', qty: 30 }] }, 'lots'],
      [{ identityMode: 'batch', lots: [{ lotCode: 'L1', qty: 50 }, { lotCode: 'L1', qty: 50 }] }, 'lots[1].lot_code'],
      [{ identityMode: 'batch', lots: [{ lotCode: 'L1', qty: 50 }, { lotCode: '..', qty: 50 }] }, 'lots[1].lot_code'],
      [{ identityMode: 'batch', lots: [{ lotCode: '.', qty: 100 }] }, 'lots[0].lot_code'],
      [{ identityMode: 'batch', requestedQuantity: 101, lots: Array.from({ length: 101 }, (_, i) => ({ lotCode: `L${i}`, qty: 1 })) }, 'lots'],
      [{ idempotencyKey: 'not-a-uuid' }, 'idempotency_key'],
    ];
    for (const [overrides, field] of cases) {
      const error = await submitMintRequest(app.ctx, actor(), request(overrides)).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(InvalidInputError);
      expect((error as InvalidInputError).violations.map((v) => v.field)).toContain(field);
    }
    expect(await count('mint_jobs')).toBe(jobsBefore);
  });
});

describe('preflightMintBatch', () => {
  it('stores a pass with a PREFLIGHTED job, and a blocked verdict with reasons', async () => {
    const { productionBatch } = await upsertProductionBatch(app.ctx, actor(), {
      brandId: brand.brandId, productId: brand.productId, code: 'PB-PRE', status: 'READY', quantity: 10,
    });
    const input = { brandId: brand.brandId, productId: brand.productId, productionBatchId: productionBatch.id, identityMode: 'serial' as const, idempotencyKey: null };
    const pass = await preflightMintBatch(app.ctx, actor(), { ...input, requestedQuantity: 10 });
    expect(pass).toMatchObject({ status: 'preflight_pass', preflightResult: 'pass', blockingReasons: [], scopeType: 'serial', requestedQuantity: 10 });
    const [job] = await query<{ status: string }>(app.db.em.fork(), `select status from mint_jobs where id = ?`, [pass.mintJobId]);
    expect(job!.status).toBe('PREFLIGHTED');
    const blocked = await preflightMintBatch(app.ctx, actor(), { ...input, requestedQuantity: 11 });
    expect(blocked).toMatchObject({ status: 'preflight_blocked', preflightResult: 'blocked', mintJobId: null });
    expect(blocked.blockingReasons.map((r) => r.code)).toEqual(['PRODUCTION_BATCH_QUANTITY_EXCEEDED']);
  });
});
