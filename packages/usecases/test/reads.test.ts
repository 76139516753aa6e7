import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { query, run, storedOrDerivedUnitId } from '../../../test/support/sql.ts';
import { InvalidInputError, encodeCursor, resolveCursor, type ActivationMode, type Cursor, type Page } from '@mint/domain';
import {
  createUseCaseContext,
  getMintKpis,
  listMintEvents,
  listMintUnits,
  listPayloadPacks,
  processMintJobBatch,
  submitMintRequest,
  type UseCaseContext,
} from '@mint/usecases';
import { setupUseCases, type SeededBrand, type UseCaseBundle } from '../../../test/support/usecases.ts';

let app: UseCaseBundle;
beforeAll(async () => {
  app = await setupUseCases();
});
afterAll(() => app.close());

/** A context whose clock stands still at `at`, so every chunk of a job shares one created_at. */
const frozen = (at: Date): UseCaseContext => createUseCaseContext({ db: app.db, publicBaseUrl: 'http://127.0.0.1:8080', clock: () => at });

/** Submits a serial job and runs it to completion in chunks of `chunk` units. */
async function mint(ctx: UseCaseContext, brand: SeededBrand, quantity: number, activationMode: ActivationMode = 'active_at_mint', chunk = 100) {
  const result = await submitMintRequest(
    ctx,
    { id: brand.userId },
    {
      brandId: brand.brandId,
      productId: brand.productId,
      productBatchId: null,
      requestedQuantity: quantity,
      identityMode: 'serial',
      activationMode,
      lots: [],
      idempotencyKey: null,
    },
  );
  if (!result.ok) throw new Error('blocked');
  for (let i = 0; i < 1000; i++) if ((await processMintJobBatch(ctx, brand.brandId, result.mintJobId, chunk)).done) break;
  return result;
}

/** Ids of the brand's units in list order (created_at desc, id desc), straight from SQL. */
async function unitIdsInOrder(brandId: string): Promise<string[]> {
  const rows = await query<{ id: string }>(
    app.db.em.fork(),
    `select ${storedOrDerivedUnitId()} as id from mint_units where brand_id = ? order by created_at desc, 1 desc`,
    [brandId],
  );
  return rows.map((r) => r.id);
}

type CursorForm = 'two-field' | 'opaque';

/** The cursor a client would send back for `next`, in either wire form, resolved as the API resolves it. */
function sendBack(next: Cursor, form: CursorForm): Cursor | null {
  return form === 'opaque'
    ? resolveCursor({ cursor: encodeCursor(next), atField: 'cursor_created_at', idField: 'cursor_id' })
    : // A protobuf Timestamp travels as an ISO instant: rebuild the Date from text, as a client would.
      resolveCursor({ at: new Date(next.at.toISOString()), id: next.id, atField: 'cursor_created_at', idField: 'cursor_id' });
}

/** Pages through a list to its end, asserting the last-page contract, and returns every id seen in order. */
async function pageAll<T extends { id: string }>(fetch: (cursor: Cursor | null) => Promise<Page<T>>, form: CursorForm, between?: () => Promise<void>) {
  const seen: string[] = [];
  let cursor: Cursor | null = null;
  for (let pages = 0; pages < 10_000; pages++) {
    const page = await fetch(cursor);
    seen.push(...page.items.map((i) => i.id));
    if (!page.hasMore) {
      expect(page.next).toBeNull();
      return seen;
    }
    expect(page.next).not.toBeNull();
    cursor = sendBack(page.next!, form);
    await between?.();
  }
  throw new Error('did not reach the last page');
}

describe('listMintUnits', () => {
  it('pages newest first over 300 units sharing one created_at, identically with the two-field and the opaque cursor', async () => {
    const brand = await app.seedBrand();
    const tie = new Date('2026-01-01T00:00:00.000Z');
    await mint(frozen(tie), brand, 300, 'active_at_mint', 100);
    await mint(frozen(new Date(tie.getTime() + 1)), brand, 40, 'active_at_mint', 40);
    await mint(frozen(new Date(tie.getTime() - 1)), brand, 25, 'active_at_mint', 25);
    const truth = await unitIdsInOrder(brand.brandId);
    expect(truth).toHaveLength(365);
    const [ties] = await query<{ n: string }>(app.db.em.fork(), `select count(*) as n from mint_units where brand_id = ? and created_at = ?`, [
      brand.brandId,
      tie,
    ]);
    expect(Number(ties!.n)).toBe(300);

    for (const form of ['two-field', 'opaque'] as const) {
      const seen = await pageAll((cursor) => listMintUnits(app.ctx, brand.brandId, { limit: 7, cursor, mintBatchId: null }), form);
      expect(seen).toEqual(truth);
    }
    const first = await listMintUnits(app.ctx, brand.brandId, { limit: null, cursor: null, mintBatchId: null });
    expect(first.items).toHaveLength(50);
    const all = await listMintUnits(app.ctx, brand.brandId, { limit: 100, cursor: null, mintBatchId: null });
    expect(all.items.map((u) => u.id)).toEqual(truth.slice(0, 100));
  });

  it('returns every unit that existed at the start exactly once while units are inserted concurrently, some with the same created_at', async () => {
    const brand = await app.seedBrand();
    const tie = new Date('2026-02-01T00:00:00.000Z');
    const { mintBatchId } = await mint(frozen(tie), brand, 400, 'active_at_mint', 100);
    const initial = await unitIdsInOrder(brand.brandId);

    let inserting = true;
    let inserted = 0;
    let seq = 10_000;
    const inserter = (async () => {
      // Rows in the middle of the tie group (same created_at, random ids), older and newer rows, and real chunks.
      const other = await submitMintRequest(
        app.ctx,
        { id: brand.userId },
        {
          brandId: brand.brandId,
          productId: brand.productId,
          productBatchId: null,
          requestedQuantity: 100_000,
          identityMode: 'serial',
          activationMode: 'active_at_mint',
          lots: [],
          idempotencyKey: null,
        },
      );
      if (!other.ok) throw new Error('blocked');
      while (inserting) {
        for (const at of [tie, new Date(tie.getTime() - 60_000), new Date()]) {
          seq += 1;
          inserted += await run(
            app.db.em.fork(),
            `insert into mint_units (brand_id, id, mint_batch_id, seq, serial, status, created_at)
             values (?, ?, ?, ?, ?, 'active', ?)`,
            [brand.brandId, randomUUID(), mintBatchId, seq, `S${seq}`, at],
          );
        }
        inserted += (await processMintJobBatch(app.ctx, brand.brandId, other.mintJobId, 50)).insertedCount;
      }
    })();

    try {
      for (const form of ['two-field', 'opaque'] as const) {
        const seen = await pageAll(
          (cursor) => listMintUnits(app.ctx, brand.brandId, { limit: 13, cursor, mintBatchId: null }),
          form,
          () => new Promise((resolve) => setTimeout(resolve, 2)),
        );
        expect(new Set(seen).size).toBe(seen.length);
        const seenSet = new Set(seen);
        expect(initial.filter((id) => !seenSet.has(id))).toEqual([]);
        // The rows that existed at the start keep their relative order.
        expect(seen.filter((id) => initial.includes(id))).toEqual(initial);
      }
    } finally {
      inserting = false;
      await inserter;
    }
    expect(inserted).toBeGreaterThan(0);
  });

  it('filters by batch and carries the product SKU, null once the product is gone', async () => {
    const brand = await app.seedBrand();
    const a = await mint(app.ctx, brand, 30);
    const b = await mint(app.ctx, brand, 20);
    const pageA = await listMintUnits(app.ctx, brand.brandId, { limit: 100, cursor: null, mintBatchId: a.mintBatchId });
    expect(pageA.items).toHaveLength(30);
    expect(pageA.hasMore).toBe(false);
    expect(new Set(pageA.items.map((u) => u.mintBatchId))).toEqual(new Set([a.mintBatchId]));
    expect(pageA.items[0]).toMatchObject({ productSku: 'SKU-1', status: 'active', gtin: brand.gtin });
    expect(pageA.items[0]!.resolverUrl).toContain(pageA.items[0]!.serial);
    const byBatchPaged = await pageAll((cursor) => listMintUnits(app.ctx, brand.brandId, { limit: 6, cursor, mintBatchId: b.mintBatchId }), 'opaque');
    expect(byBatchPaged).toHaveLength(20);

    // Another brand's batch id yields nothing, exactly like a batch that does not exist.
    const other = await app.seedBrand();
    expect((await listMintUnits(app.ctx, other.brandId, { limit: 10, cursor: null, mintBatchId: a.mintBatchId })).items).toEqual([]);
    expect((await listMintUnits(app.ctx, other.brandId, { limit: 10, cursor: null, mintBatchId: null })).items).toEqual([]);

    await run(app.db.em.fork(), `delete from products where brand_id = ? and id = ?`, [brand.brandId, brand.productId]);
    const gone = await listMintUnits(app.ctx, brand.brandId, { limit: 5, cursor: null, mintBatchId: null });
    expect(gone.items.map((u) => u.productSku)).toEqual([null, null, null, null, null]);
  });

  it('answers page sizes outside 1..100, a bad batch id and tampered or malformed cursors with InvalidInputError naming the field', async () => {
    const brandId = randomUUID();
    const fieldsOf = async (work: () => unknown) => {
      const error = await Promise.resolve()
        .then(work)
        .catch((e: unknown) => e);
      expect(error).toBeInstanceOf(InvalidInputError);
      return (error as InvalidInputError).violations.map((v) => v.field);
    };
    for (const limit of [0, -1, 101, 1.5]) {
      expect(await fieldsOf(() => listMintUnits(app.ctx, brandId, { limit, cursor: null, mintBatchId: null }))).toEqual(['limit']);
      expect(await fieldsOf(() => listMintEvents(app.ctx, brandId, { limit, cursor: null, eventType: null, entityType: null, entityId: null }))).toEqual([
        'limit',
      ]);
      expect(await fieldsOf(() => listPayloadPacks(app.ctx, brandId, { limit, cursor: null }))).toEqual(['limit']);
    }
    expect(await fieldsOf(() => listMintUnits(app.ctx, brandId, { limit: 10, cursor: null, mintBatchId: 'nope' }))).toEqual(['mint_batch_id']);

    const valid = encodeCursor({ at: new Date('2026-01-01T00:00:00.000Z'), id: randomUUID() });
    const resolve = (input: Partial<Parameters<typeof resolveCursor>[0]>) => () =>
      resolveCursor({ atField: 'cursor_created_at', idField: 'cursor_id', ...input });
    const tampered = [
      'not a cursor',
      '!!!!',
      '',
      valid.slice(0, -3),
      `${valid}AA`,
      valid.replace(/^./, (c) => (c === 'W' ? 'X' : 'W')),
      Buffer.from('{"at":"2026-01-01T00:00:00.000Z"}').toString('base64url'),
      Buffer.from(JSON.stringify(['2026-01-01T00:00:00.000Z', 'not-a-uuid'])).toString('base64url'),
      Buffer.from(JSON.stringify(['2026-01-01', randomUUID()])).toString('base64url'),
      Buffer.from(JSON.stringify(['2026-13-45T99:00:00.000Z', randomUUID()])).toString('base64url'),
      Buffer.from(JSON.stringify([1767225600000, randomUUID()])).toString('base64url'),
      Buffer.from(JSON.stringify(['2026-01-01T00:00:00.000Z', randomUUID(), 'extra'])).toString('base64url'),
    ].filter((t) => t !== '');
    for (const cursor of tampered) expect(await fieldsOf(resolve({ cursor }))).toEqual(['cursor']);
    expect(await fieldsOf(resolve({ at: new Date() }))).toEqual(['cursor_id']);
    expect(await fieldsOf(resolve({ id: randomUUID() }))).toEqual(['cursor_created_at']);
    expect(await fieldsOf(resolve({ at: new Date(), id: 'x' }))).toEqual(['cursor_id']);
    expect(await fieldsOf(resolve({ cursor: valid, at: new Date(), id: randomUUID() }))).toEqual(['cursor']);
    expect(resolve({ cursor: valid })()).not.toBeNull();
  });
});

describe('listMintEvents', () => {
  it('pages newest first over events sharing one occurred_at and filters by event type, entity type and entity id', async () => {
    const brand = await app.seedBrand();
    const tie = new Date('2026-03-01T00:00:00.000Z');
    const jobs = [];
    for (let i = 0; i < 6; i++) jobs.push(await mint(frozen(tie), brand, 10, 'active_at_mint', 5));
    const truth = (
      await query<{ id: string }>(app.db.em.fork(), `select id from mint_events where brand_id = ? order by occurred_at desc, id desc`, [brand.brandId])
    ).map((r) => r.id);
    // Per job: queued, batch created, started, 2 chunks, completed, batch status changed.
    expect(truth).toHaveLength(6 * 7);
    const noFilter = { eventType: null, entityType: null, entityId: null };
    for (const form of ['two-field', 'opaque'] as const) {
      expect(await pageAll((cursor) => listMintEvents(app.ctx, brand.brandId, { limit: 4, cursor, ...noFilter }), form)).toEqual(truth);
    }
    const first = await listMintEvents(app.ctx, brand.brandId, { limit: null, cursor: null, ...noFilter });
    expect(first.items).toHaveLength(42);
    expect(first.hasMore).toBe(false);

    const completed = await listMintEvents(app.ctx, brand.brandId, { limit: 4, cursor: null, ...noFilter, eventType: 'mint_job_completed' });
    expect(completed.items.map((e) => e.eventType)).toEqual(Array(4).fill('mint_job_completed'));
    expect(completed.hasMore).toBe(true);
    const allCompleted = await pageAll(
      (cursor) => listMintEvents(app.ctx, brand.brandId, { limit: 4, cursor, ...noFilter, eventType: 'mint_job_completed' }),
      'opaque',
    );
    expect(new Set(allCompleted).size).toBe(6);

    const batchId = jobs[2]!.mintBatchId;
    const ofBatch = await listMintEvents(app.ctx, brand.brandId, { limit: 50, cursor: null, ...noFilter, entityType: 'mint_batch', entityId: batchId });
    expect(ofBatch.items.map((e) => e.eventType).sort()).toEqual([
      'mint_batch_created',
      'mint_batch_status_changed',
      'mint_job_completed',
      'mint_job_started',
      'mint_units_created',
      'mint_units_created',
    ]);
    expect(ofBatch.items.every((e) => e.entityId === batchId && e.entityType === 'mint_batch')).toBe(true);
    const statusChange = ofBatch.items.find((e) => e.eventType === 'mint_batch_status_changed')!;
    expect(statusChange.payload).toMatchObject({ from: 'draft', to: 'minted' });
    expect(statusChange.occurredAt).toEqual(tie);
    const ofJobs = await listMintEvents(app.ctx, brand.brandId, { limit: 100, cursor: null, ...noFilter, entityType: 'mint_job' });
    // Only the submit's mint_job_queued stays an event of the job; the executor's are the batch's.
    expect(ofJobs.items.map((e) => e.eventType)).toEqual(Array(6).fill('mint_job_queued'));
    expect((await listMintEvents(app.ctx, brand.brandId, { limit: 10, cursor: null, ...noFilter, eventType: 'no_such_type' })).items).toEqual([]);
    // Another brand sees none of them, even filtering by this brand's entity id.
    const other = await app.seedBrand();
    expect((await listMintEvents(app.ctx, other.brandId, { limit: 10, cursor: null, ...noFilter, entityId: batchId })).items).toEqual([]);
  });
});

describe('listPayloadPacks', () => {
  it('pages newest first, 20 by default and at most 100, with relative storage paths and never a URL', async () => {
    const brand = await app.seedBrand();
    const { mintBatchId } = await mint(app.ctx, brand, 5);
    const tie = new Date('2026-04-01T00:00:00.000Z');
    for (let i = 0; i < 130; i++) {
      const ready = i % 2 === 0;
      await run(
        app.db.em.fork(),
        `insert into payload_packs (brand_id, id, mint_batch_id, status, storage_path, unit_count, created_at, updated_at) values (?, ?, ?, ?, ?, ?, ?, ?)`,
        [
          brand.brandId,
          randomUUID(),
          mintBatchId,
          ready ? 'ready' : 'pending',
          ready ? `${brand.brandId}/${mintBatchId}/pack-${i}.zip` : null,
          ready ? 5 : null,
          i < 60 ? tie : new Date(tie.getTime() + i),
          tie,
        ],
      );
    }
    const truth = (
      await query<{ id: string }>(app.db.em.fork(), `select id from payload_packs where brand_id = ? order by created_at desc, id desc`, [brand.brandId])
    ).map((r) => r.id);
    const first = await listPayloadPacks(app.ctx, brand.brandId, { limit: null, cursor: null });
    expect(first.items.map((k) => k.id)).toEqual(truth.slice(0, 20));
    expect(first.hasMore).toBe(true);
    expect((await listPayloadPacks(app.ctx, brand.brandId, { limit: 100, cursor: null })).items).toHaveLength(100);
    for (const form of ['two-field', 'opaque'] as const) {
      expect(await pageAll((cursor) => listPayloadPacks(app.ctx, brand.brandId, { limit: 9, cursor }), form)).toEqual(truth);
    }
    for (const pack of first.items) {
      expect(Object.keys(pack).sort()).toEqual([
        'brandId',
        'createdAt',
        'id',
        'mintBatchId',
        'profile',
        'purpose',
        'status',
        'storagePath',
        'unitCount',
        'updatedAt',
      ]);
      expect(JSON.stringify(pack)).not.toMatch(/https?:/);
      if (pack.status === 'pending') expect(pack.storagePath).toBeNull();
    }
    expect((await listPayloadPacks(app.ctx, (await app.seedBrand()).brandId, { limit: null, cursor: null })).items).toEqual([]);
  });
});

describe('getMintKpis', () => {
  it('answers zeros for a brand without counters and the counted totals after minting', async () => {
    const brand = await app.seedBrand();
    expect(await getMintKpis(app.ctx, brand.brandId)).toEqual({ totalTokensMinted: 0, activeTokens: 0, batchesCreated: 0, exportedPrinted: 0 });
    await mint(app.ctx, brand, 120, 'active_at_mint', 50);
    await mint(app.ctx, brand, 30, 'first_scan', 50);
    expect(await getMintKpis(app.ctx, brand.brandId)).toEqual({ totalTokensMinted: 150, activeTokens: 120, batchesCreated: 2, exportedPrinted: 0 });
  });
  it('stays exact under concurrent submits and chunks of one brand, which add to separate counter rows instead of queueing for one', async () => {
    const brand = await app.seedBrand();
    const submits = 64;
    const results = await Promise.all(
      Array.from({ length: submits }, (_, i) =>
        submitMintRequest(
          app.ctx,
          { id: brand.userId },
          {
            brandId: brand.brandId,
            productId: brand.productId,
            productBatchId: null,
            requestedQuantity: 10 + (i % 5),
            identityMode: 'serial',
            activationMode: i % 2 === 0 ? 'active_at_mint' : 'first_scan',
            lots: [],
            idempotencyKey: null,
          },
        ),
      ),
    );
    // Half of the jobs minted concurrently, in chunks that also add to the counters.
    await Promise.all(
      results.slice(0, submits / 2).map(async (r) => {
        if (!r.ok) throw new Error('blocked');
        for (let i = 0; i < 100; i++) if ((await processMintJobBatch(app.ctx, brand.brandId, r.mintJobId, 4)).done) break;
      }),
    );
    const [counted] = await query<{ minted: string; active: string }>(
      app.db.em.fork(),
      `select (select count(*) from mint_units where brand_id = ?) as minted, (select count(*) from mint_units where brand_id = ? and status = 'active') as active`,
      [brand.brandId, brand.brandId],
    );
    expect(await getMintKpis(app.ctx, brand.brandId)).toEqual({
      totalTokensMinted: Number(counted!.minted),
      activeTokens: Number(counted!.active),
      batchesCreated: submits,
      exportedPrinted: 0,
    });
    // The writes landed on more than one of the brand's counter rows (one per writing connection).
    const [rowsOfBrand] = await query<{ n: string }>(app.db.em.fork(), 'select count(*) as n from mint_kpis where brand_id = ?', [brand.brandId]);
    expect(Number(rowsOfBrand!.n)).toBeGreaterThan(1);
  });
});
