// The MintService and CatalogService RPCs end to end through the interceptor chain and the
// handlers (in process, through createRouterTransport): what a client sends and gets back, field
// by field, for each RPC that has a use case.

import { timestampDate } from '@bufbuild/protobuf/wkt';
import { Code, createClient, type Client } from '@connectrpc/connect';
import {
  ActivationMode,
  type CatalogService,
  CommercialStatus,
  IdentityMode,
  MintBatchStatus,
  MintJobStatus,
  MintReadinessStatus,
  MintService,
  MintUnitStatus,
  ProductionBatchStatus,
} from '@mint/contract';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { nextGtin, setupUseCases, type SeededBrand, type UseCaseBundle } from '../../../test/support/usecases.ts';
import { bearer, codeOf, errorOf, inProcessApi } from './support.ts';
import { PayloadPackStatus } from '@mint/contract';

let app: UseCaseBundle;
let brand: SeededBrand;
let mint: Client<typeof MintService>;
let catalog: Client<typeof CatalogService>;
const as = () => bearer(brand.token);

/** Runs processing cycles of `max` units until the job is done; returns every cycle's answer. */
async function runToCompletion(jobId: string, max = 10) {
  const cycles = [];
  for (let i = 0; i < 100; i++) {
    const cycle = await mint.processMintJobBatch({ brandId: brand.brandId, jobId, maxUnits: max }, as());
    cycles.push(cycle);
    if (cycle.done) return cycles;
  }
  throw new Error('job did not complete');
}

beforeAll(async () => {
  app = await setupUseCases();
  ({ mint, catalog } = inProcessApi(app, { setMintBatchStatusEnabled: true }));
  brand = await app.seedBrand();
});

afterAll(async () => {
  await app?.close();
});

describe('minting', () => {
  it('submits, replays by idempotency key, processes in cycles, and reads the batch back', async () => {
    const idempotencyKey = randomUUID();
    const request = {
      brandId: brand.brandId,
      productId: brand.productId,
      requestedQuantity: 25,
      identityMode: IdentityMode.SERIAL,
      activationMode: ActivationMode.ACTIVE_AT_MINT,
      idempotencyKey,
    };
    const first = await mint.submitMintRequest(request, as());
    expect(first).toMatchObject({ ok: true, status: MintJobStatus.QUEUED, isDuplicate: false, productId: brand.productId, blockingReasons: [] });
    const again = await mint.submitMintRequest(request, as());
    expect(again).toMatchObject({ ok: true, isDuplicate: true, mintJobId: first.mintJobId, mintBatchId: first.mintBatchId });

    const cycles = await runToCompletion(first.mintJobId!, 10);
    expect(cycles.map((c) => [c.insertedCount, c.mintedQuantity, c.done])).toEqual([
      [10, 10, false],
      [10, 20, false],
      [5, 25, true],
    ]);
    expect(cycles.at(-1)).toMatchObject({ ok: true, requestedQuantity: 25, status: MintJobStatus.COMPLETED });

    const { batch } = await mint.getMintBatch({ brandId: brand.brandId, mintBatchId: first.mintBatchId! }, as());
    expect(batch).toMatchObject({
      id: first.mintBatchId,
      mintJobId: first.mintJobId,
      status: MintBatchStatus.MINTED,
      mintedQuantity: 25,
      requestedQuantity: 25,
      identityMode: IdentityMode.SERIAL,
      activationMode: ActivationMode.ACTIVE_AT_MINT,
      productName: 'Product One',
      productSku: 'SKU-1',
      lots: [],
    });
    expect(batch?.productBatchId).toBeUndefined();
    expect(batch?.resolverBaseUrl).toMatch(/^http:\/\/127\.0\.0\.1:8080\//);
    expect(timestampDate(batch!.updatedAt!).getTime()).toBeGreaterThanOrEqual(timestampDate(batch!.createdAt!).getTime());

    const watched = [];
    for await (const update of mint.watchMintJob({ brandId: brand.brandId, mintJobId: first.mintJobId! }, as())) watched.push(update);
    expect(watched).toHaveLength(1);
    expect(watched[0]).toMatchObject({ mintJobId: first.mintJobId, status: MintJobStatus.COMPLETED, mintedQuantity: 25, done: true });
    expect(watched[0]?.failureReason).toBeUndefined();

    const units = await mint.listMintUnits({ brandId: brand.brandId, mintBatchId: first.mintBatchId!, limit: 10 }, as());
    expect(units.units).toHaveLength(10);
    expect(units.hasMore).toBe(true);
    expect(units.units[0]).toMatchObject({ mintBatchId: first.mintBatchId, status: MintUnitStatus.ACTIVE, productSku: 'SKU-1', gtin: brand.gtin });
    expect(units.units[0]?.resolverUrl).toContain(brand.gtin);
    expect(units.units[0]?.activatedAt).toBeDefined();

    // A batch's units in seq order, paged by the last seq shown; one unit found by its serial.
    const bySeq = await mint.listMintUnits({ brandId: brand.brandId, mintBatchId: first.mintBatchId!, limit: 10, afterSeq: 0 }, as());
    expect(bySeq.units.map((u) => u.seq)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    expect([bySeq.hasMore, bySeq.nextCursor ?? '']).toEqual([true, '']);
    const last = await mint.listMintUnits({ brandId: brand.brandId, mintBatchId: first.mintBatchId!, limit: 10, afterSeq: 20 }, as());
    expect([last.units.map((u) => u.seq), last.hasMore]).toEqual([[21, 22, 23, 24, 25], false]);
    const found = await mint.listMintUnits({ brandId: brand.brandId, serial: bySeq.units[6]!.serial }, as());
    expect(found.units.map((u) => [u.seq, u.mintBatchId])).toEqual([[7, first.mintBatchId]]);
    expect((await mint.listMintUnits({ brandId: brand.brandId, serial: 'NO-SUCH-SERIAL' }, as())).units).toEqual([]);
    await expect(mint.listMintUnits({ brandId: brand.brandId, afterSeq: 0 }, as())).rejects.toThrow(/after_seq: needs mint_batch_id/);

    const completed = await mint.listMintEvents({ brandId: brand.brandId, eventType: 'mint_job_completed' }, as());
    expect(completed.events.map((e) => [e.entityType, e.entityId])).toEqual([['mint_batch', first.mintBatchId]]);
    expect(completed.events[0]?.payload).toMatchObject({ mint_job_id: first.mintJobId });
    expect(completed.events[0]?.payload).toBeTypeOf('object');

    const kpis = await mint.getMintKpis({ brandId: brand.brandId }, as());
    expect(kpis).toMatchObject({ ok: true, totalTokensMinted: 25n, activeTokens: 25n, batchesCreated: 1n, exportedPrinted: 0n });

    // The completed job left its batch's pack pending: no storage path until the executor generates it.
    const packs = await mint.listPayloadPacks({ brandId: brand.brandId }, as());
    expect(packs).toMatchObject({ ok: true, hasMore: false });
    expect(packs.packs.map((p) => [p.mintBatchId, p.status, p.storagePath])).toEqual([[first.mintBatchId, PayloadPackStatus.PENDING, undefined]]);
  });

  it('answers a blocked request with ok=false and the blocking reasons, creating nothing', async () => {
    const { product } = await catalog.upsertProduct(
      {
        brandId: brand.brandId,
        sku: 'NOT-READY',
        name: 'Unready',
        commercialStatus: CommercialStatus.SUSPENDED,
        mintReadinessStatus: MintReadinessStatus.NOT_READY,
      },
      as(),
    );
    const before = await mint.getMintKpis({ brandId: brand.brandId }, as());
    const blocked = await mint.submitMintRequest(
      { brandId: brand.brandId, productId: product!.id, requestedQuantity: 5, identityMode: IdentityMode.BATCH, activationMode: ActivationMode.ACTIVE_AT_MINT },
      as(),
    );
    expect(blocked.ok).toBe(false);
    expect(blocked.mintJobId).toBeUndefined();
    expect(blocked.productId).toBe(product!.id);
    expect(blocked.blockingReasons.map((r) => r.code).sort()).toEqual(['COMMERCIAL_STATUS_NOT_ACTIVE', 'MINT_READINESS_NOT_READY']);
    expect(blocked.blockingReasons.every((r) => r.message.length > 0)).toBe(true);
    expect((await mint.getMintKpis({ brandId: brand.brandId }, as())).batchesCreated).toBe(before.batchesCreated);
  });

  it('mints lots in batch mode and pages batches with both cursor forms', async () => {
    const lots = await mint.submitMintRequest(
      {
        brandId: brand.brandId,
        productId: brand.productId,
        requestedQuantity: 30,
        identityMode: IdentityMode.BATCH,
        activationMode: ActivationMode.ACTIVE_AT_MINT,
        lots: [
          { lotCode: 'L-1', qty: 10 },
          { lotCode: 'L-2', qty: 20 },
        ],
      },
      as(),
    );
    const { batch } = await mint.getMintBatch({ brandId: brand.brandId, mintBatchId: lots.mintBatchId! }, as());
    expect(batch?.identityMode).toBe(IdentityMode.BATCH);
    expect(batch?.lots.map((l) => [l.lotCode, l.qty]).sort()).toEqual([
      ['L-1', 10],
      ['L-2', 20],
    ]);

    const all = await mint.listMintBatches({ brandId: brand.brandId, limit: 100 }, as());
    expect(all.hasMore).toBe(false);
    expect(all.nextCursor).toBeUndefined();
    expect(all.nextCursorId).toBeUndefined();
    expect(all.nextCursorCreatedAt).toBeUndefined();
    const ids = all.batches.map((b) => b.id);
    expect(ids.length).toBeGreaterThanOrEqual(2);

    const first = await mint.listMintBatches({ brandId: brand.brandId, limit: 1 }, as());
    expect(first.batches.map((b) => b.id)).toEqual([ids[0]]);
    expect(first.hasMore).toBe(true);
    const byToken = await mint.listMintBatches({ brandId: brand.brandId, limit: 1, cursor: first.nextCursor! }, as());
    const byFields = await mint.listMintBatches(
      { brandId: brand.brandId, limit: 1, cursorCreatedAt: first.nextCursorCreatedAt!, cursorId: first.nextCursorId! },
      as(),
    );
    expect(byToken.batches.map((b) => b.id)).toEqual([ids[1]]);
    expect(byFields.batches.map((b) => b.id)).toEqual([ids[1]]);
  });

  it('preflights, then the deprecated CreateMintBatchFromJob turns the PREFLIGHTED job into a queued batch', async () => {
    const { productionBatch } = await catalog.upsertProductionBatch(
      { brandId: brand.brandId, productId: brand.productId, code: 'PB-1', status: ProductionBatchStatus.READY, quantity: 100 },
      as(),
    );
    const { preflight } = await mint.preflightMintBatch(
      { brandId: brand.brandId, productId: brand.productId, batchId: productionBatch!.id, requestedQuantity: 40 },
      as(),
    );
    expect(preflight).toMatchObject({ status: 'preflight_pass', preflightResult: 'pass', scopeType: 'batch', requestedQuantity: 40, blockingReasons: [] });
    expect(preflight?.mintJobId).toBeDefined();

    const over = await mint.preflightMintBatch(
      { brandId: brand.brandId, productId: brand.productId, batchId: productionBatch!.id, requestedQuantity: 101, identityMode: IdentityMode.SERIAL },
      as(),
    );
    expect(over.preflight).toMatchObject({ preflightResult: 'blocked', scopeType: 'serial' });
    expect(over.preflight?.blockingReasons.length).toBeGreaterThan(0);
    expect(over.preflight?.mintJobId).toBeUndefined();

    const created = await mint.createMintBatchFromJob(
      { brandId: brand.brandId, mintJobId: preflight!.mintJobId!, activationMode: ActivationMode.ACTIVE_AT_MINT },
      as(),
    );
    expect(created).toMatchObject({ ok: true, mintJobId: preflight!.mintJobId, status: MintJobStatus.QUEUED });
    expect(created.deprecation).toContain('deprecated');
    // The job has its batch now; a second call is an illegal state.
    expect(
      await codeOf(
        mint.createMintBatchFromJob({ brandId: brand.brandId, mintJobId: preflight!.mintJobId!, activationMode: ActivationMode.ACTIVE_AT_MINT }, as()),
      ),
    ).toBe(Code.FailedPrecondition);
  });

  it('activates first_scan units once, and moves a batch along its lifecycle', async () => {
    const submitted = await mint.submitMintRequest(
      {
        brandId: brand.brandId,
        productId: brand.productId,
        requestedQuantity: 4,
        identityMode: IdentityMode.SERIAL,
        activationMode: ActivationMode.FIRST_SCAN,
      },
      as(),
    );
    await runToCompletion(submitted.mintJobId!);
    const before = await mint.listMintUnits({ brandId: brand.brandId, mintBatchId: submitted.mintBatchId! }, as());
    expect(before.units.map((u) => u.status)).toEqual(Array(4).fill(MintUnitStatus.INACTIVE));
    expect(before.units[0]?.activatedAt).toBeUndefined();

    const byIds = await mint.activateMintUnits({ brandId: brand.brandId, target: { case: 'unitIds', value: { ids: [before.units[0]!.id] } } }, as());
    expect(byIds.activatedCount).toBe(1);
    const byBatch = await mint.activateMintUnits({ brandId: brand.brandId, target: { case: 'mintBatchId', value: submitted.mintBatchId! } }, as());
    expect(byBatch.activatedCount).toBe(3);
    const repeat = await mint.activateMintUnits({ brandId: brand.brandId, target: { case: 'mintBatchId', value: submitted.mintBatchId! } }, as());
    expect(repeat.activatedCount).toBe(0);
    expect(await codeOf(mint.activateMintUnits({ brandId: brand.brandId }, as()))).toBe(Code.InvalidArgument);

    const voided = await mint.setMintBatchStatus(
      { brandId: brand.brandId, mintBatchId: submitted.mintBatchId!, status: MintBatchStatus.VOIDED, reason: 'labels lost' },
      as(),
    );
    expect(voided.batch).toMatchObject({ id: submitted.mintBatchId, status: MintBatchStatus.VOIDED, productName: 'Product One' });
    expect(await codeOf(mint.setMintBatchStatus({ brandId: brand.brandId, mintBatchId: submitted.mintBatchId!, status: MintBatchStatus.PRINTED }, as()))).toBe(
      Code.FailedPrecondition,
    );
  });

  it('answers Unimplemented for what has no use case yet, and for SetMintBatchStatus unless enabled', async () => {
    expect(await codeOf(mint.createPayloadPackDownloadUrl({ brandId: brand.brandId, packId: randomUUID() }, as()))).toBe(Code.Unimplemented);
    // Imports are implemented (issue 6): a header without the required columns is bad input, an unknown import is not found.
    expect(await codeOf(catalog.startProductImport({ brandId: brand.brandId, csv: new TextEncoder().encode('sku,name\n') }, as()))).toBe(Code.InvalidArgument);
    expect(await codeOf(catalog.getProductImport({ brandId: brand.brandId, importId: randomUUID() }, as()))).toBe(Code.NotFound);
    const client = createClient(MintService, inProcessApi(app).transport);
    const { batches } = await client.listMintBatches({ brandId: brand.brandId, limit: 1 }, as());
    const refused = await errorOf(client.setMintBatchStatus({ brandId: brand.brandId, mintBatchId: batches[0]!.id, status: MintBatchStatus.VOIDED }, as()));
    expect(refused.code).toBe(Code.Unimplemented);
    // The refusal names the setting that serves the call, as the environment and the chart spell it.
    expect(refused.rawMessage).toContain('ENABLE_SET_MINT_BATCH_STATUS=true');
    expect(refused.rawMessage).toContain('api.setMintBatchStatusEnabled');
  });
});

describe('catalog', () => {
  it('creates, updates, reads and pages products', async () => {
    const gtin = nextGtin();
    const created = await catalog.upsertProduct(
      {
        brandId: brand.brandId,
        sku: 'CAT-1',
        name: 'Catalog One',
        gtin,
        commercialStatus: CommercialStatus.DRAFT,
        mintReadinessStatus: MintReadinessStatus.NOT_READY,
        passportUrl: 'https://brand.example/p/cat-1',
      },
      as(),
    );
    expect(created).toMatchObject({ ok: true, created: true });
    expect(created.product).toMatchObject({
      brandId: brand.brandId,
      sku: 'CAT-1',
      name: 'Catalog One',
      gtin,
      commercialStatus: CommercialStatus.DRAFT,
      mintReadinessStatus: MintReadinessStatus.NOT_READY,
      passportUrl: 'https://brand.example/p/cat-1',
    });
    const updated = await catalog.upsertProduct(
      {
        brandId: brand.brandId,
        sku: 'CAT-1',
        name: 'Catalog One v2',
        commercialStatus: CommercialStatus.ACTIVE,
        mintReadinessStatus: MintReadinessStatus.READY,
      },
      as(),
    );
    expect(updated).toMatchObject({ created: false, product: { id: created.product!.id, name: 'Catalog One v2', commercialStatus: CommercialStatus.ACTIVE } });
    expect(updated.product?.gtin).toBeUndefined();
    expect(updated.product?.passportUrl).toBeUndefined();

    const { product } = await catalog.getProduct({ brandId: brand.brandId, productId: created.product!.id }, as());
    expect(product?.name).toBe('Catalog One v2');
    expect(await codeOf(catalog.getProduct({ brandId: brand.brandId, productId: randomUUID() }, as()))).toBe(Code.NotFound);

    const seen: string[] = [];
    let cursor: string | undefined;
    for (let i = 0; i < 20; i++) {
      const page = await catalog.listProducts({ brandId: brand.brandId, limit: 1, ...(cursor === undefined ? {} : { cursor }) }, as());
      seen.push(...page.products.map((p) => p.id));
      if (!page.hasMore) {
        expect(page.nextCursor).toBeUndefined();
        break;
      }
      cursor = page.nextCursor;
    }
    const all = await catalog.listProducts({ brandId: brand.brandId }, as());
    expect(seen).toEqual(all.products.map((p) => p.id));
    expect(seen).toContain(created.product!.id);
  });

  it('upserts production batches by code', async () => {
    const first = await catalog.upsertProductionBatch(
      { brandId: brand.brandId, productId: brand.productId, code: 'ERP-7', status: ProductionBatchStatus.PLANNED },
      as(),
    );
    expect(first).toMatchObject({
      ok: true,
      created: true,
      productionBatch: { code: 'ERP-7', status: ProductionBatchStatus.PLANNED, productId: brand.productId },
    });
    expect(first.productionBatch?.quantity).toBeUndefined();
    const second = await catalog.upsertProductionBatch(
      { brandId: brand.brandId, productId: brand.productId, code: 'ERP-7', status: ProductionBatchStatus.READY, quantity: 500 },
      as(),
    );
    expect(second).toMatchObject({ created: false, productionBatch: { id: first.productionBatch!.id, status: ProductionBatchStatus.READY, quantity: 500 } });
  });
});
