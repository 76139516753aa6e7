import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { query, run, storedOrDerivedUnitId } from '../../../test/support/sql.ts';
import { ConflictError, IllegalStateError, InvalidInputError, NotFoundError, type ActivationMode, type BatchStatus, type IdentityMode } from '@mint/domain';
import {
  activateMintUnits,
  createMintBatchFromJob,
  createMintBatchFromJobDeprecation,
  getMintBatch,
  getMintKpis,
  listMintEvents,
  preflightMintBatch,
  processMintJobBatch,
  setMintBatchStatus,
  submitMintRequest,
  upsertProductionBatch,
} from '@mint/usecases';
import { setupUseCases, type SeededBrand, type UseCaseBundle } from '../../../test/support/usecases.ts';

let app: UseCaseBundle;
beforeAll(async () => {
  app = await setupUseCases();
});
afterAll(() => app.close());

const actorOf = (brand: SeededBrand) => ({ id: brand.userId });

/** Submits a job and, unless `run` is false, runs it to completion. */
async function mint(
  brand: SeededBrand,
  quantity: number,
  activationMode: ActivationMode = 'active_at_mint',
  options: { run?: boolean; identityMode?: IdentityMode } = {},
) {
  const result = await submitMintRequest(app.ctx, actorOf(brand), {
    brandId: brand.brandId,
    productId: brand.productId,
    productBatchId: null,
    requestedQuantity: quantity,
    identityMode: options.identityMode ?? 'serial',
    activationMode,
    lots: [],
    idempotencyKey: null,
  });
  if (!result.ok) throw new Error('blocked');
  if (options.run !== false) {
    for (let i = 0; i < 100; i++) if ((await processMintJobBatch(app.ctx, brand.brandId, result.mintJobId, 500)).done) break;
  }
  return result;
}

async function batchStatus(batchId: string): Promise<string> {
  const [row] = await query<{ status: string }>(app.db.em.fork(), `select status from mint_batches where id = ?`, [batchId]);
  return row!.status;
}

async function eventsOf(brand: SeededBrand, entityId: string) {
  return (await listMintEvents(app.ctx, brand.brandId, { limit: 100, cursor: null, eventType: null, entityType: null, entityId })).items;
}

/** active_tokens recomputed from the units: active units of batches that are not voided. */
async function activeUnitsOutsideVoided(brandId: string): Promise<number> {
  const [row] = await query<{ n: string }>(
    app.db.em.fork(),
    `select count(*) as n from mint_units u join mint_batches b on b.brand_id = u.brand_id and b.id = u.mint_batch_id
     where u.brand_id = ? and u.status = 'active' and b.status <> 'voided'`,
    [brandId],
  );
  return Number(row!.n);
}

/** exported_printed recomputed from the batches: the minted quantity of those now printed or applied. */
async function printedOrApplied(brandId: string): Promise<number> {
  const [row] = await query<{ n: string | null }>(
    app.db.em.fork(),
    `select sum(minted_quantity) as n from mint_batches where brand_id = ? and status in ('printed', 'applied')`,
    [brandId],
  );
  return Number(row!.n ?? 0);
}

async function rejection(work: Promise<unknown>): Promise<unknown> {
  return work.then(
    () => 'resolved',
    (e: unknown) => e,
  );
}

describe('setMintBatchStatus', () => {
  it('walks minted -> exported -> printed -> applied with an audit event per move and counts printed units once (exported alone does not count)', async () => {
    const brand = await app.seedBrand();
    const { mintBatchId } = await mint(brand, 700);
    const other = await mint(brand, 50);
    const steps: [BatchStatus, number][] = [
      ['exported', 0],
      ['printed', 700],
      ['applied', 700],
    ];
    for (const [status, exportedPrinted] of steps) {
      const batch = await setMintBatchStatus(app.ctx, actorOf(brand), { brandId: brand.brandId, mintBatchId, status, reason: `to ${status}` });
      expect(batch.status).toBe(status);
      expect((await getMintKpis(app.ctx, brand.brandId)).exportedPrinted).toBe(exportedPrinted);
    }
    await setMintBatchStatus(app.ctx, actorOf(brand), { brandId: brand.brandId, mintBatchId: other.mintBatchId, status: 'exported', reason: null });
    expect(await getMintKpis(app.ctx, brand.brandId)).toEqual({ totalTokensMinted: 750, activeTokens: 750, batchesCreated: 2, exportedPrinted: 700 });
    await setMintBatchStatus(app.ctx, actorOf(brand), { brandId: brand.brandId, mintBatchId: other.mintBatchId, status: 'printed', reason: null });
    expect((await getMintKpis(app.ctx, brand.brandId)).exportedPrinted).toBe(750);
    expect(await printedOrApplied(brand.brandId)).toBe(750);
    const moves = (await eventsOf(brand, mintBatchId)).filter((e) => e.eventType === 'mint_batch_status_changed').reverse();
    expect(moves.map((e) => e.payload)).toEqual([
      { from: 'draft', to: 'minted' },
      { from: 'minted', to: 'exported', reason: 'to exported', actor: brand.userId },
      { from: 'exported', to: 'printed', reason: 'to printed', actor: brand.userId },
      { from: 'printed', to: 'applied', reason: 'to applied', actor: brand.userId },
    ]);
    expect(moves.slice(1).every((e) => e.actor === brand.userId)).toBe(true);
  });

  it('refuses illegal moves with IllegalStateError and changes nothing', async () => {
    const brand = await app.seedBrand();
    const draft = await mint(brand, 10, 'active_at_mint', { run: false });
    const minted = await mint(brand, 10);
    const cases: [string, BatchStatus][] = [
      [draft.mintBatchId, 'exported'],
      [draft.mintBatchId, 'minted'],
      [draft.mintBatchId, 'draft'],
      [minted.mintBatchId, 'printed'],
      [minted.mintBatchId, 'minted'],
      [minted.mintBatchId, 'draft'],
    ];
    for (const [mintBatchId, status] of cases) {
      const before = await batchStatus(mintBatchId);
      expect(await rejection(setMintBatchStatus(app.ctx, actorOf(brand), { brandId: brand.brandId, mintBatchId, status, reason: null }))).toBeInstanceOf(
        IllegalStateError,
      );
      expect(await batchStatus(mintBatchId)).toBe(before);
    }
    for (const status of ['exported', 'printed', 'applied'] as const) {
      await setMintBatchStatus(app.ctx, actorOf(brand), { brandId: brand.brandId, mintBatchId: minted.mintBatchId, status, reason: null });
    }
    const eventsBefore = (await eventsOf(brand, minted.mintBatchId)).length;
    expect(
      await rejection(setMintBatchStatus(app.ctx, actorOf(brand), { brandId: brand.brandId, mintBatchId: minted.mintBatchId, status: 'voided', reason: null })),
    ).toBeInstanceOf(IllegalStateError);
    expect(await batchStatus(minted.mintBatchId)).toBe('applied');
    expect(await eventsOf(brand, minted.mintBatchId)).toHaveLength(eventsBefore);
    expect((await getMintKpis(app.ctx, brand.brandId)).exportedPrinted).toBe(10);
  });

  it("hides other brands' batches as NotFound and names bad fields", async () => {
    const brand = await app.seedBrand();
    const other = await app.seedBrand();
    const { mintBatchId } = await mint(other, 5);
    expect(
      await rejection(setMintBatchStatus(app.ctx, actorOf(brand), { brandId: brand.brandId, mintBatchId, status: 'exported', reason: null })),
    ).toBeInstanceOf(NotFoundError);
    expect(
      await rejection(setMintBatchStatus(app.ctx, actorOf(brand), { brandId: brand.brandId, mintBatchId: randomUUID(), status: 'exported', reason: null })),
    ).toBeInstanceOf(NotFoundError);
    expect(await batchStatus(mintBatchId)).toBe('minted');
    const bad = await rejection(
      setMintBatchStatus(app.ctx, actorOf(brand), {
        brandId: brand.brandId,
        mintBatchId: 'x',
        status: 'shipped' as BatchStatus,
        reason: 'r'.repeat(501),
      }),
    );
    expect(bad).toBeInstanceOf(InvalidInputError);
    expect((bad as InvalidInputError).violations.map((v) => v.field)).toEqual(['mint_batch_id', 'status', 'reason']);
  });

  it('takes a printed batch out of exported_printed when it is voided; an applied one stays (it cannot be voided)', async () => {
    const brand = await app.seedBrand();
    const misprint = await mint(brand, 30);
    const shipped = await mint(brand, 20);
    for (const batch of [misprint, shipped]) {
      for (const status of ['exported', 'printed'] as const) {
        await setMintBatchStatus(app.ctx, actorOf(brand), { brandId: brand.brandId, mintBatchId: batch.mintBatchId, status, reason: null });
      }
    }
    await setMintBatchStatus(app.ctx, actorOf(brand), { brandId: brand.brandId, mintBatchId: shipped.mintBatchId, status: 'applied', reason: null });
    expect((await getMintKpis(app.ctx, brand.brandId)).exportedPrinted).toBe(50);
    await setMintBatchStatus(app.ctx, actorOf(brand), { brandId: brand.brandId, mintBatchId: misprint.mintBatchId, status: 'voided', reason: 'misprint' });
    expect((await getMintKpis(app.ctx, brand.brandId)).exportedPrinted).toBe(20);
    expect(await printedOrApplied(brand.brandId)).toBe(20);
  });

  it('lets exactly one of two concurrent identical moves win (compare-and-set)', async () => {
    const brand = await app.seedBrand();
    const { mintBatchId } = await mint(brand, 40);
    for (let round = 0; round < 3; round++) {
      const target: BatchStatus = (['exported', 'printed', 'applied'] as const)[round]!;
      const results = await Promise.allSettled(
        Array.from({ length: 4 }, () => setMintBatchStatus(app.ctx, actorOf(brand), { brandId: brand.brandId, mintBatchId, status: target, reason: null })),
      );
      expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
      for (const r of results) if (r.status === 'rejected') expect(r.reason instanceof ConflictError || r.reason instanceof IllegalStateError).toBe(true);
    }
    const moves = (await eventsOf(brand, mintBatchId)).filter((e) => e.eventType === 'mint_batch_status_changed');
    expect(moves).toHaveLength(4);
    expect((await getMintKpis(app.ctx, brand.brandId)).exportedPrinted).toBe(40);
  });

  it("voiding withdraws the batch's active units from active_tokens and blocks their activation", async () => {
    const brand = await app.seedBrand();
    const live = await mint(brand, 300);
    const manual = await mint(brand, 200, 'first_scan');
    const keep = await mint(brand, 100);
    const someIds = (
      await query<{ id: string }>(app.db.em.fork(), `select ${storedOrDerivedUnitId()} as id from mint_units where mint_batch_id = ? order by seq limit 50`, [
        manual.mintBatchId,
      ])
    ).map((r) => r.id);
    expect(await activateMintUnits(app.ctx, actorOf(brand), { brandId: brand.brandId, unitIds: someIds })).toEqual({ activatedCount: 50 });
    expect((await getMintKpis(app.ctx, brand.brandId)).activeTokens).toBe(450);

    await setMintBatchStatus(app.ctx, actorOf(brand), { brandId: brand.brandId, mintBatchId: live.mintBatchId, status: 'voided', reason: 'recall' });
    await setMintBatchStatus(app.ctx, actorOf(brand), { brandId: brand.brandId, mintBatchId: manual.mintBatchId, status: 'exported', reason: null });
    await setMintBatchStatus(app.ctx, actorOf(brand), { brandId: brand.brandId, mintBatchId: manual.mintBatchId, status: 'voided', reason: 'misprint' });
    expect(await getMintKpis(app.ctx, brand.brandId)).toEqual({ totalTokensMinted: 600, activeTokens: 100, batchesCreated: 3, exportedPrinted: 0 });
    expect(await activeUnitsOutsideVoided(brand.brandId)).toBe(100);
    const voidEvent = (await eventsOf(brand, live.mintBatchId)).find((e) => e.eventType === 'mint_batch_status_changed' && e.payload['to'] === 'voided');
    expect(voidEvent?.payload).toEqual({ from: 'minted', to: 'voided', reason: 'recall', actor: brand.userId, withdrawn_active_units: 300 });

    expect(await rejection(activateMintUnits(app.ctx, actorOf(brand), { brandId: brand.brandId, mintBatchId: manual.mintBatchId }))).toBeInstanceOf(
      IllegalStateError,
    );
    const inactiveIds = (
      await query<{ id: string }>(
        app.db.em.fork(),
        `select ${storedOrDerivedUnitId()} as id from mint_units where mint_batch_id = ? and status = 'inactive' limit 5`,
        [manual.mintBatchId],
      )
    ).map((r) => r.id);
    expect(await rejection(activateMintUnits(app.ctx, actorOf(brand), { brandId: brand.brandId, unitIds: inactiveIds }))).toBeInstanceOf(IllegalStateError);
    expect((await getMintKpis(app.ctx, brand.brandId)).activeTokens).toBe(100);
    expect(
      await rejection(setMintBatchStatus(app.ctx, actorOf(brand), { brandId: brand.brandId, mintBatchId: live.mintBatchId, status: 'voided', reason: null })),
    ).toBeInstanceOf(IllegalStateError);
    void keep;
  });

  it('voiding a draft batch fails its unfinished job in the same transaction, so nothing more is minted', async () => {
    const brand = await app.seedBrand();
    const { mintJobId, mintBatchId } = await mint(brand, 1000, 'active_at_mint', { run: false });
    await processMintJobBatch(app.ctx, brand.brandId, mintJobId, 100);
    await processMintJobBatch(app.ctx, brand.brandId, mintJobId, 100);
    await setMintBatchStatus(app.ctx, actorOf(brand), { brandId: brand.brandId, mintBatchId, status: 'voided', reason: 'wrong product' });
    const [job] = await query<{ status: string; last_error: string }>(app.db.em.fork(), `select status, last_error from mint_jobs where id = ?`, [mintJobId]);
    expect(job).toEqual({ status: 'FAILED', last_error: 'mint batch voided' });
    const failed = (await eventsOf(brand, mintBatchId)).find((e) => e.eventType === 'mint_job_failed');
    expect(failed).toMatchObject({ entityType: 'mint_batch', entityId: mintBatchId });
    expect(failed?.payload).toMatchObject({ reason: 'mint batch voided', from: 'PROCESSING', mint_job_id: mintJobId });
    expect(await processMintJobBatch(app.ctx, brand.brandId, mintJobId, 100)).toMatchObject({ insertedCount: 0, status: 'FAILED' });
    expect(await getMintKpis(app.ctx, brand.brandId)).toMatchObject({ totalTokensMinted: 200, activeTokens: 0 });
  });
});

describe('activateMintUnits', () => {
  it('activates a first_scan batch once: activated_at set, active_tokens up by exactly the count, one event; a repeat changes nothing', async () => {
    const brand = await app.seedBrand();
    const { mintBatchId } = await mint(brand, 1200, 'first_scan');
    expect(await getMintKpis(app.ctx, brand.brandId)).toMatchObject({ totalTokensMinted: 1200, activeTokens: 0 });
    expect(await activateMintUnits(app.ctx, actorOf(brand), { brandId: brand.brandId, mintBatchId })).toEqual({ activatedCount: 1200 });
    const [units] = await query<{ active: string; stamped: string }>(
      app.db.em.fork(),
      `select count(*) filter (where status = 'active') as active, count(activated_at) as stamped from mint_units where mint_batch_id = ?`,
      [mintBatchId],
    );
    expect(units).toEqual({ active: '1200', stamped: '1200' });
    expect((await getMintKpis(app.ctx, brand.brandId)).activeTokens).toBe(1200);
    expect(await activateMintUnits(app.ctx, actorOf(brand), { brandId: brand.brandId, mintBatchId })).toEqual({ activatedCount: 0 });
    expect((await getMintKpis(app.ctx, brand.brandId)).activeTokens).toBe(1200);
    const activations = (await eventsOf(brand, mintBatchId)).filter((e) => e.eventType === 'mint_units_activated');
    expect(activations.map((e) => [e.entityType, e.payload, e.actor])).toEqual([['mint_batch', { activated_count: 1200, target: 'mint_batch' }, brand.userId]]);
  });

  it('activates named units of the brand only, ignoring foreign and unknown ids, idempotently', async () => {
    const brand = await app.seedBrand();
    const other = await app.seedBrand();
    const a = await mint(brand, 30, 'first_scan');
    const b = await mint(brand, 30, 'first_scan');
    const foreign = await mint(other, 10, 'first_scan');
    const ids = async (batchId: string, n: number) =>
      (
        await query<{ id: string }>(app.db.em.fork(), `select ${storedOrDerivedUnitId()} as id from mint_units where mint_batch_id = ? order by seq limit ?`, [
          batchId,
          n,
        ])
      ).map((r) => r.id);
    const mine = [...(await ids(a.mintBatchId, 7)), ...(await ids(b.mintBatchId, 3))];
    const foreignIds = await ids(foreign.mintBatchId, 4);
    const request = [...mine, ...foreignIds, randomUUID(), mine[0]!];
    expect(await activateMintUnits(app.ctx, actorOf(brand), { brandId: brand.brandId, unitIds: request })).toEqual({ activatedCount: 10 });
    expect(await activateMintUnits(app.ctx, actorOf(brand), { brandId: brand.brandId, unitIds: request })).toEqual({ activatedCount: 0 });
    expect((await getMintKpis(app.ctx, brand.brandId)).activeTokens).toBe(10);
    expect((await getMintKpis(app.ctx, other.brandId)).activeTokens).toBe(0);
    const [foreignActive] = await query<{ n: string }>(app.db.em.fork(), `select count(*) as n from mint_units where mint_batch_id = ? and status = 'active'`, [
      foreign.mintBatchId,
    ]);
    expect(foreignActive!.n).toBe('0');
    const onA = (await eventsOf(brand, a.mintBatchId)).filter((e) => e.eventType === 'mint_units_activated');
    expect(onA).toHaveLength(1);
    expect(onA[0]!.payload).toMatchObject({ activated_count: 7, target: 'unit_ids' });
    expect([...(onA[0]!.payload['unit_ids'] as string[])].sort()).toEqual(mine.slice(0, 7).sort());
    // Only foreign ids: nothing happens and nothing tells whether they exist.
    expect(await activateMintUnits(app.ctx, actorOf(brand), { brandId: brand.brandId, unitIds: foreignIds })).toEqual({ activatedCount: 0 });
    expect(await rejection(activateMintUnits(app.ctx, actorOf(brand), { brandId: brand.brandId, mintBatchId: foreign.mintBatchId }))).toBeInstanceOf(
      NotFoundError,
    );
  });

  it('names bad input: no ids, too many ids, ids that are not uuids', async () => {
    const brand = await app.seedBrand();
    const fields = async (unitIds: string[]) => {
      const e = await rejection(activateMintUnits(app.ctx, actorOf(brand), { brandId: brand.brandId, unitIds }));
      expect(e).toBeInstanceOf(InvalidInputError);
      return (e as InvalidInputError).violations.map((v) => v.field);
    };
    expect(await fields([])).toEqual(['unit_ids.ids']);
    expect(await fields(Array.from({ length: 1001 }, () => randomUUID()))).toEqual(['unit_ids.ids']);
    expect(await fields([randomUUID(), 'nope'])).toEqual(['unit_ids.ids[1]']);
    expect(await rejection(activateMintUnits(app.ctx, actorOf(brand), { brandId: brand.brandId, mintBatchId: 'nope' }))).toBeInstanceOf(InvalidInputError);
  });

  it('keeps active_tokens equal to the active units of non-voided batches under concurrent activations and voids', async () => {
    for (let round = 0; round < 3; round++) {
      const brand = await app.seedBrand();
      const batches = [await mint(brand, 400, 'first_scan'), await mint(brand, 400, 'first_scan')];
      const unitIds = (
        await query<{ id: string }>(
          app.db.em.fork(),
          `select ${storedOrDerivedUnitId()} as id from mint_units where mint_batch_id = ? order by seq limit 150`,
          [batches[1]!.mintBatchId],
        )
      ).map((r) => r.id);
      const work = [
        activateMintUnits(app.ctx, actorOf(brand), { brandId: brand.brandId, mintBatchId: batches[0]!.mintBatchId }),
        activateMintUnits(app.ctx, actorOf(brand), { brandId: brand.brandId, mintBatchId: batches[0]!.mintBatchId }),
        activateMintUnits(app.ctx, actorOf(brand), { brandId: brand.brandId, unitIds }),
        setMintBatchStatus(app.ctx, actorOf(brand), { brandId: brand.brandId, mintBatchId: batches[round % 2]!.mintBatchId, status: 'voided', reason: null }),
        activateMintUnits(app.ctx, actorOf(brand), { brandId: brand.brandId, mintBatchId: batches[1]!.mintBatchId }),
      ];
      const results = await Promise.allSettled(work);
      for (const r of results) if (r.status === 'rejected') expect(r.reason).toBeInstanceOf(IllegalStateError);
      expect(results[3]!.status).toBe('fulfilled');
      const activated = results.slice(0, 5).reduce((sum, r) => sum + (r.status === 'fulfilled' && 'activatedCount' in r.value ? r.value.activatedCount : 0), 0);
      const [total] = await query<{ n: string }>(app.db.em.fork(), `select count(*) as n from mint_units where brand_id = ? and status = 'active'`, [
        brand.brandId,
      ]);
      expect(activated).toBe(Number(total!.n));
      expect((await getMintKpis(app.ctx, brand.brandId)).activeTokens).toBe(await activeUnitsOutsideVoided(brand.brandId));
    }
  });
});

describe('createMintBatchFromJob (deprecated)', () => {
  async function preflightedJob(brand: SeededBrand, quantity: number, identityMode: IdentityMode = 'serial') {
    const { productionBatch } = await upsertProductionBatch(app.ctx, actorOf(brand), {
      brandId: brand.brandId,
      productId: brand.productId,
      code: `PB-${randomUUID().slice(0, 8)}`,
      status: 'READY',
      quantity: null,
    });
    const pass = await preflightMintBatch(app.ctx, actorOf(brand), {
      brandId: brand.brandId,
      productId: brand.productId,
      productionBatchId: productionBatch.id,
      requestedQuantity: quantity,
      identityMode,
      idempotencyKey: null,
    });
    if (pass.mintJobId === null) throw new Error('preflight blocked');
    return pass.mintJobId;
  }

  it('gives a PREFLIGHTED job its batch, queues it with an outbox message and events, and the executor mints it', async () => {
    const brand = await app.seedBrand();
    const mintJobId = await preflightedJob(brand, 250);
    const result = await createMintBatchFromJob(app.ctx, actorOf(brand), { brandId: brand.brandId, mintJobId, activationMode: 'first_scan', lots: [] });
    expect(result).toMatchObject({ mintJobId, status: 'QUEUED', deprecation: createMintBatchFromJobDeprecation });
    expect(result.deprecation).toBe('create_mint_batch_from_job is deprecated; use submit_mint_request');
    const batch = await getMintBatch(app.ctx, brand.brandId, result.mintBatchId);
    expect(batch).toMatchObject({
      status: 'draft',
      mintJobId,
      activationMode: 'first_scan',
      identityMode: 'serial',
      requestedQuantity: 250,
      gtin: brand.gtin,
      productSku: 'SKU-1',
    });
    expect(batch.resolverBaseUrl).toMatch(/^http/);
    const [job] = await query<{ status: string }>(app.db.em.fork(), `select status from mint_jobs where id = ?`, [mintJobId]);
    expect(job!.status).toBe('QUEUED');
    const outbox = await query<{ kind: string }>(app.db.em.fork(), `select kind from outbox where job_id = ?`, [mintJobId]);
    expect(outbox).toEqual([{ kind: 'mint' }]);
    expect((await eventsOf(brand, mintJobId)).map((e) => e.eventType)).toEqual(['mint_job_queued']);
    expect((await eventsOf(brand, result.mintBatchId)).map((e) => e.eventType)).toEqual(['mint_batch_created']);
    expect((await getMintKpis(app.ctx, brand.brandId)).batchesCreated).toBe(1);

    for (let i = 0; i < 10; i++) if ((await processMintJobBatch(app.ctx, brand.brandId, mintJobId, 100)).done) break;
    expect(await getMintBatch(app.ctx, brand.brandId, result.mintBatchId)).toMatchObject({ status: 'minted', mintedQuantity: 250 });
    expect(await getMintKpis(app.ctx, brand.brandId)).toEqual({ totalTokensMinted: 250, activeTokens: 0, batchesCreated: 1, exportedPrinted: 0 });

    expect(
      await rejection(createMintBatchFromJob(app.ctx, actorOf(brand), { brandId: brand.brandId, mintJobId, activationMode: 'first_scan', lots: [] })),
    ).toBeInstanceOf(IllegalStateError);
  });

  it('refuses a job that already has a batch, a job in another status, and a foreign or unknown job, writing nothing', async () => {
    const brand = await app.seedBrand();
    const other = await app.seedBrand();
    const submitted = await mint(brand, 10, 'active_at_mint', { run: false });
    const completed = await mint(brand, 10);
    const foreignJob = await preflightedJob(other, 10);
    const batchesBefore = (await getMintKpis(app.ctx, brand.brandId)).batchesCreated;
    const call = (mintJobId: string, brandId = brand.brandId) =>
      rejection(createMintBatchFromJob(app.ctx, actorOf(brand), { brandId, mintJobId, activationMode: 'active_at_mint', lots: [] }));
    expect(await call(submitted.mintJobId)).toBeInstanceOf(IllegalStateError);
    expect(await call(completed.mintJobId)).toBeInstanceOf(IllegalStateError);
    expect(await call(foreignJob)).toBeInstanceOf(NotFoundError);
    expect(await call(randomUUID())).toBeInstanceOf(NotFoundError);
    expect(await call('nope')).toBeInstanceOf(InvalidInputError);
    expect((await getMintKpis(app.ctx, brand.brandId)).batchesCreated).toBe(batchesBefore);
    const [job] = await query<{ status: string }>(app.db.em.fork(), `select status from mint_jobs where id = ?`, [foreignJob]);
    expect(job!.status).toBe('PREFLIGHTED');
  });

  it('validates lots against the job (nothing written on a violation) and stores them for a batch-mode job', async () => {
    const brand = await app.seedBrand();
    const serialJob = await preflightedJob(brand, 100);
    const lotJob = await preflightedJob(brand, 100, 'batch');
    const fields = async (mintJobId: string, lots: { lotCode: string; qty: number }[]) => {
      const e = await rejection(createMintBatchFromJob(app.ctx, actorOf(brand), { brandId: brand.brandId, mintJobId, activationMode: 'active_at_mint', lots }));
      expect(e).toBeInstanceOf(InvalidInputError);
      return (e as InvalidInputError).violations.map((v) => v.field);
    };
    expect(await fields(serialJob, [{ lotCode: 'L1', qty: 100 }])).toEqual(['lots']);
    expect(
      await fields(lotJob, [
        { lotCode: 'L1', qty: 60 },
        { lotCode: 'L2', qty: 30 },
      ]),
    ).toEqual(['lots']);
    expect(
      await fields(lotJob, [
        { lotCode: 'L1', qty: 50 },
        { lotCode: 'L1', qty: 50 },
      ]),
    ).toEqual(['lots[1].lot_code']);
    const [state] = await query<{ status: string; batches: string }>(
      app.db.em.fork(),
      `select j.status, (select count(*) from mint_batches b where b.mint_job_id = j.id) as batches from mint_jobs j where j.id = ?`,
      [lotJob],
    );
    expect(state).toEqual({ status: 'PREFLIGHTED', batches: '0' });

    const result = await createMintBatchFromJob(app.ctx, actorOf(brand), {
      brandId: brand.brandId,
      mintJobId: lotJob,
      activationMode: 'active_at_mint',
      lots: [
        { lotCode: 'L1', qty: 60 },
        { lotCode: 'L2', qty: 40 },
      ],
    });
    expect((await getMintBatch(app.ctx, brand.brandId, result.mintBatchId)).lots).toEqual([
      { lotCode: 'L1', qty: 60 },
      { lotCode: 'L2', qty: 40 },
    ]);
    expect(await processMintJobBatch(app.ctx, brand.brandId, lotJob)).toMatchObject({ done: true, mintedQuantity: 100 });
  });

  it('re-checks preflight: a product that is no longer mintable blocks the job', async () => {
    const brand = await app.seedBrand();
    const mintJobId = await preflightedJob(brand, 10);
    await run(app.db.em.fork(), `update products set commercial_status = 'DISCONTINUED' where id = ?`, [brand.productId]);
    const e = await rejection(
      createMintBatchFromJob(app.ctx, actorOf(brand), { brandId: brand.brandId, mintJobId, activationMode: 'active_at_mint', lots: [] }),
    );
    expect(e).toBeInstanceOf(IllegalStateError);
    expect((e as Error).message).toContain('COMMERCIAL_STATUS_NOT_ACTIVE');
  });

  it('creates exactly one batch when called concurrently for one job', async () => {
    const brand = await app.seedBrand();
    const mintJobId = await preflightedJob(brand, 10);
    const results = await Promise.allSettled(
      Array.from({ length: 6 }, () =>
        createMintBatchFromJob(app.ctx, actorOf(brand), { brandId: brand.brandId, mintJobId, activationMode: 'active_at_mint', lots: [] }),
      ),
    );
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    for (const r of results) if (r.status === 'rejected') expect(r.reason).toBeInstanceOf(IllegalStateError);
    const [n] = await query<{ n: string }>(app.db.em.fork(), `select count(*) as n from mint_batches where mint_job_id = ?`, [mintJobId]);
    expect(n!.n).toBe('1');
    expect((await getMintKpis(app.ctx, brand.brandId)).batchesCreated).toBe(1);
  });
});
