import { randomUUID } from 'node:crypto';
import { createRequire } from 'node:module';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { query } from '../../../test/support/sql.ts';
import { IdempotencyKeyReusedError, InvalidInputError, type MintRequest } from '@mint/domain';
import { openDatabase } from '@mint/db';
import { createUseCaseContext, preflightMintBatch, submitMintRequest, upsertProduct, upsertProductionBatch } from '@mint/usecases';
import { nextGtin, setupUseCases, testJwtSecret, type SeededBrand, type UseCaseBundle } from '../../../test/support/usecases.ts';

let app: UseCaseBundle;
let brand: SeededBrand;
beforeAll(async () => {
  app = await setupUseCases();
  brand = await app.seedBrand();
});
afterAll(() => app.close());

const actor = () => ({ id: brand.userId });
const request = (overrides: Partial<MintRequest> = {}): MintRequest => ({
  brandId: brand.brandId,
  productId: brand.productId,
  productBatchId: null,
  requestedQuantity: 100,
  identityMode: 'serial',
  activationMode: 'active_at_mint',
  lots: [],
  idempotencyKey: null,
  ...overrides,
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
    const [job] = await query<{ status: string; scope_type: string }>(app.db.em.fork(), `select status, scope_type from mint_jobs where id = ?`, [
      result.mintJobId,
    ]);
    expect(job).toEqual({ status: 'QUEUED', scope_type: 'serial' });
    const [batch] = await query<{ status: string; mint_job_id: string; minted_quantity: number }>(
      app.db.em.fork(),
      `select status, mint_job_id, minted_quantity from mint_batches where id = ?`,
      [result.mintBatchId],
    );
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
      brandId: brand.brandId,
      sku: 'SKU-DRAFT',
      name: 'Draft',
      gtin: null,
      commercialStatus: 'DRAFT',
      mintReadinessStatus: 'NOT_READY',
      passportUrl: null,
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
      brandId: brand.brandId,
      productId: brand.productId,
      code: 'PB-PLANNED',
      status: 'PLANNED',
      quantity: 50,
    });
    const codes = async (productBatchId: string) => {
      const r = await submitMintRequest(app.ctx, actor(), request({ productBatchId }));
      return r.ok ? [] : r.blockingReasons.map((x) => x.code);
    };
    expect(await codes(randomUUID())).toEqual(['PRODUCTION_BATCH_NOT_FOUND']);
    expect(await codes(planned.id)).toEqual(['PRODUCTION_BATCH_NOT_READY', 'PRODUCTION_BATCH_QUANTITY_EXCEEDED']);
    const { product: other } = await upsertProduct(app.ctx, actor(), {
      brandId: brand.brandId,
      sku: 'SKU-OTHER',
      name: 'Other',
      gtin: null,
      commercialStatus: 'ACTIVE',
      mintReadinessStatus: 'READY',
      passportUrl: null,
    });
    const { productionBatch: foreignProduct } = await upsertProductionBatch(app.ctx, actor(), {
      brandId: brand.brandId,
      productId: other.id,
      code: 'PB-OTHER',
      status: 'READY',
      quantity: null,
    });
    expect(await codes(foreignProduct.id)).toEqual(['PRODUCTION_BATCH_PRODUCT_MISMATCH']);
    const { productionBatch: ready } = await upsertProductionBatch(app.ctx, actor(), {
      brandId: brand.brandId,
      productId: brand.productId,
      code: 'PB-READY',
      status: 'READY',
      quantity: 100,
    });
    expect(await submitMintRequest(app.ctx, actor(), request({ productBatchId: ready.id }))).toMatchObject({ ok: true });
  });

  it('rejects bad input naming the field and writes nothing', async () => {
    const jobsBefore = await count('mint_jobs');
    const cases: [Partial<MintRequest>, string][] = [
      [{ requestedQuantity: 0 }, 'requested_quantity'],
      [{ requestedQuantity: 1_000_001 }, 'requested_quantity'],
      [{ lots: [{ lotCode: 'L1', qty: 100 }] }, 'lots'],
      [
        {
          identityMode: 'batch',
          lots: [
            { lotCode: 'L1', qty: 60 },
            { lotCode: 'L2', qty: 30 },
          ],
        },
        'lots',
      ],
      [
        {
          identityMode: 'batch',
          lots: [
            { lotCode: 'L1', qty: 50 },
            { lotCode: 'L1', qty: 50 },
          ],
        },
        'lots[1].lot_code',
      ],
      [
        {
          identityMode: 'batch',
          lots: [
            { lotCode: 'L1', qty: 50 },
            { lotCode: '..', qty: 50 },
          ],
        },
        'lots[1].lot_code',
      ],
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

/** The statements (their SQL) the pg driver sends while `run` runs, in order. */
async function statementsOf<T>(run: () => Promise<T>): Promise<{ result: T; statements: string[] }> {
  const pg = createRequire(import.meta.resolve('@mint/db'))('pg') as { Client: { prototype: { query: (...args: unknown[]) => unknown } } };
  const statements: string[] = [];
  const original = pg.Client.prototype.query;
  pg.Client.prototype.query = function (this: unknown, ...args: unknown[]) {
    const first = args[0] as string | { text?: unknown };
    statements.push(typeof first === 'string' ? first : String(first.text));
    return original.apply(this, args);
  };
  try {
    return { result: await run(), statements };
  } finally {
    pg.Client.prototype.query = original;
  }
}

describe('submitMintRequest of a product read before', () => {
  it('writes in one statement once the product was read, and reads again when the product changed since', async () => {
    const own = await app.seedBrand();
    const req = (overrides: Partial<MintRequest> = {}) => request({ brandId: own.brandId, productId: own.productId, ...overrides });
    const by = { id: own.userId };
    const first = await statementsOf(() => submitMintRequest(app.ctx, by, req()));
    expect(first.result.ok).toBe(true);
    expect(first.statements).toHaveLength(2);
    const second = await statementsOf(() => submitMintRequest(app.ctx, by, req()));
    expect(second.result.ok).toBe(true);
    expect(second.statements).toHaveLength(1);

    // The product stops being mintable: the remembered rows no longer match, nothing is written, and the fresh read blocks it.
    await upsertProduct(app.ctx, by, {
      brandId: own.brandId,
      sku: 'SKU-1',
      name: 'Product One',
      gtin: own.gtin,
      commercialStatus: 'ACTIVE',
      mintReadinessStatus: 'NOT_READY',
      passportUrl: null,
    });
    const jobsBefore = await count('mint_jobs', own.brandId);
    const blocked = await submitMintRequest(app.ctx, by, req());
    expect(blocked.ok).toBe(false);
    if (blocked.ok) return;
    expect(blocked.blockingReasons.map((r) => r.code)).toEqual(['MINT_READINESS_NOT_READY']);
    expect(await count('mint_jobs', own.brandId)).toBe(jobsBefore);
    expect(await count('mint_batches', own.brandId)).toBe(jobsBefore);
    expect(await count('outbox', own.brandId)).toBe(jobsBefore);
  });

  it('freezes the current GTIN and resolver base on the batch, and re-checks a production batch that changed', async () => {
    const own = await app.seedBrand();
    const by = { id: own.userId };
    const { productionBatch } = await upsertProductionBatch(app.ctx, by, {
      brandId: own.brandId,
      productId: own.productId,
      code: 'PB-1',
      status: 'READY',
      quantity: 100,
    });
    const req = (overrides: Partial<MintRequest> = {}) =>
      request({ brandId: own.brandId, productId: own.productId, productBatchId: productionBatch.id, ...overrides });
    expect(await submitMintRequest(app.ctx, by, req())).toMatchObject({ ok: true });

    const gtin = nextGtin();
    await upsertProduct(app.ctx, by, {
      brandId: own.brandId,
      sku: 'SKU-1',
      name: 'Product One',
      gtin,
      commercialStatus: 'ACTIVE',
      mintReadinessStatus: 'READY',
      passportUrl: null,
    });
    await query(app.db.em.fork(), `update brands set resolver_base_url = 'https://id.moved.example' where id = ?`, [own.brandId]);
    const moved = await submitMintRequest(app.ctx, by, req());
    if (!moved.ok) throw new Error('blocked');
    const [batch] = await query<{ gtin: string; resolver_base_url: string }>(
      app.db.em.fork(),
      'select gtin, resolver_base_url from mint_batches where id = ?',
      [moved.mintBatchId],
    );
    expect(batch).toEqual({ gtin, resolver_base_url: 'https://id.moved.example' });

    await upsertProductionBatch(app.ctx, by, { brandId: own.brandId, productId: own.productId, code: 'PB-1', status: 'READY', quantity: 50 });
    const over = await submitMintRequest(app.ctx, by, req());
    expect(over.ok ? [] : over.blockingReasons.map((r) => r.code)).toEqual(['PRODUCTION_BATCH_QUANTITY_EXCEEDED']);
    expect(await submitMintRequest(app.ctx, by, req({ requestedQuantity: 50 }))).toMatchObject({ ok: true });
  });

  it("keeps its statements' plans in each database session, and prepares nothing by name behind a transaction pooler", async () => {
    const own = await app.seedBrand();
    const prepared = async (options: { directUrl?: string }) => {
      // One connection, so the session that ran the submits answers the question.
      const db = await openDatabase({ url: app.database.url }, { poolSize: 1, ...options });
      try {
        const ctx = createUseCaseContext({ db, publicBaseUrl: 'http://127.0.0.1:8080', jwtSecret: testJwtSecret });
        for (let i = 0; i < 3; i++)
          expect(await submitMintRequest(ctx, { id: own.userId }, request({ brandId: own.brandId, productId: own.productId }))).toMatchObject({ ok: true });
        return (await query<{ name: string }>(db.em.fork(), 'select name from pg_prepared_statements order by name')).map((r) => r.name);
      } finally {
        await db.close(true);
      }
    };
    // Opened at the database itself: the submit's write is parsed and planned once per connection.
    expect(await prepared({})).toContain('insert_draft_batch');
    // DATABASE_DIRECT_URL given apart: DATABASE_URL may be a transaction pooler, where a statement
    // prepared on one server connection is unknown on the next, so nothing is prepared by name.
    expect(await prepared({ directUrl: app.database.url })).toEqual([]);
    expect(await count('mint_jobs', own.brandId)).toBe(6);
  });

  it("answers a repeated key with the key's job, and a reused key with a different request with IdempotencyKeyReusedError", async () => {
    const own = await app.seedBrand();
    const by = { id: own.userId };
    const req = (overrides: Partial<MintRequest> = {}) => request({ brandId: own.brandId, productId: own.productId, ...overrides });
    expect(await submitMintRequest(app.ctx, by, req())).toMatchObject({ ok: true });
    const key = randomUUID();
    const first = await submitMintRequest(app.ctx, by, req({ idempotencyKey: key }));
    const again = await submitMintRequest(app.ctx, by, req({ idempotencyKey: key }));
    expect(first.ok).toBe(true);
    expect(again).toEqual({ ...first, isDuplicate: true });
    const reused = await submitMintRequest(app.ctx, by, req({ idempotencyKey: key, requestedQuantity: 7 })).catch((e: unknown) => e);
    expect(reused).toBeInstanceOf(IdempotencyKeyReusedError);
    expect(await count('mint_jobs', own.brandId)).toBe(2);
  });
});

describe('preflightMintBatch', () => {
  it('stores a pass with a PREFLIGHTED job, and a blocked verdict with reasons', async () => {
    const { productionBatch } = await upsertProductionBatch(app.ctx, actor(), {
      brandId: brand.brandId,
      productId: brand.productId,
      code: 'PB-PRE',
      status: 'READY',
      quantity: 10,
    });
    const input = {
      brandId: brand.brandId,
      productId: brand.productId,
      productionBatchId: productionBatch.id,
      identityMode: 'serial' as const,
      idempotencyKey: null,
    };
    const pass = await preflightMintBatch(app.ctx, actor(), { ...input, requestedQuantity: 10 });
    expect(pass).toMatchObject({ status: 'preflight_pass', preflightResult: 'pass', blockingReasons: [], scopeType: 'serial', requestedQuantity: 10 });
    const [job] = await query<{ status: string }>(app.db.em.fork(), `select status from mint_jobs where id = ?`, [pass.mintJobId]);
    expect(job!.status).toBe('PREFLIGHTED');
    const blocked = await preflightMintBatch(app.ctx, actor(), { ...input, requestedQuantity: 11 });
    expect(blocked).toMatchObject({ status: 'preflight_blocked', preflightResult: 'blocked', mintJobId: null });
    expect(blocked.blockingReasons.map((r) => r.code)).toEqual(['PRODUCTION_BATCH_QUANTITY_EXCEEDED']);
  });
});
