// The executor's payload pack worker: picks up the pending pack a completed job left behind,
// generates it, and moves its batch to exported; stops cleanly.

import { Writable } from 'node:stream';
import { query } from '../../../test/support/sql.ts';
import { createLogger } from '@mint/runtime';
import { createFsPackStore } from '@mint/store';
import { createPayloadPack } from '@mint/usecases';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mintCompleted, tempStoreDir } from '../../../test/support/pack-fixtures.ts';
import { setupUseCases, type UseCaseBundle } from '../../../test/support/usecases.ts';
import { startPackWorker } from '../src/pack-worker.ts';

let app: UseCaseBundle;
let storeDir: { dir: string; remove(): Promise<void> };
beforeAll(async () => {
  app = await setupUseCases();
  storeDir = await tempStoreDir();
});
afterAll(async () => {
  await app.close();
  await storeDir.remove();
});

const logger = createLogger({ logLevel: 'silent' }, {}, new Writable({ write: (_c, _e, done) => done() }));

async function state(batchId: string) {
  const [row] = await query<{ pack: string; storage_path: string | null; unit_count: number | null; batch: string }>(
    app.db.em.fork(),
    `select k.status as pack, k.storage_path, k.unit_count, b.status as batch from payload_packs k join mint_batches b on b.id = k.mint_batch_id where k.mint_batch_id = ?`,
    [batchId],
  );
  return row!;
}

describe('startPackWorker', () => {
  it('generates the pending packs of completed jobs and exports their batches, then stops', async () => {
    const brand = await app.seedBrand();
    const first = await mintCompleted(app.ctx, brand, 1_500);
    const worker = startPackWorker({ ctx: app.ctx, store: createFsPackStore(storeDir.dir), logger, pollIntervalMs: 20 });
    try {
      const second = await mintCompleted(app.ctx, brand, 40);
      for (let i = 0; i < 300; i++) {
        if ((await state(first.mintBatchId)).pack === 'ready' && (await state(second.mintBatchId)).pack === 'ready') break;
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      expect(await state(first.mintBatchId)).toMatchObject({ pack: 'ready', unit_count: 1_500, batch: 'exported' });
      expect(await state(second.mintBatchId)).toMatchObject({ pack: 'ready', unit_count: 40, batch: 'exported' });
      expect((await state(first.mintBatchId)).storage_path).toMatch(new RegExp(`^${brand.brandId}/[0-9a-f-]{36}$`));
    } finally {
      await worker.stop();
    }
  });
});

/** A requested PDF pack of a minted batch (labels drawn on the label thread). */
const pdfPack = async (brandId: string, mintBatchId: string) =>
  (
    await createPayloadPack(app.ctx, {
      brandId,
      mintBatchId,
      formats: ['pdf'],
      seqFrom: null,
      seqTo: null,
      symbology: null,
      layout: null,
    })
  ).id;
async function packRow(id: string) {
  const [row] = await query<{ status: string; attempts: number }>(app.db.em.fork(), 'select status, attempts from payload_packs where id = ?', [id]);
  return row!;
}
/** A logger whose lines are kept. */
function keptLogger() {
  const lines: Record<string, unknown>[] = [];
  return {
    lines,
    logger: createLogger(
      { logLevel: 'info' },
      {},
      new Writable({
        write: (chunk, _e, done) => {
          lines.push(JSON.parse(String(chunk)));
          done();
        },
      }),
    ),
  };
}

describe('long packs', () => {
  it('keeps the lease of a PDF pack whose pages take longer than the lease: two executors, one claim, one generation', async () => {
    const brand = await app.seedBrand();
    const { mintBatchId } = await mintCompleted(app.ctx, brand, 300);
    const store = createFsPackStore(storeDir.dir);
    const first = keptLogger();
    const second = keptLogger();
    // One page of 5,000 units holds every label: before the lease was renewed on a clock, the only
    // renewal came after the page was drawn, seconds after a 400 ms lease had lapsed.
    const options = { ctx: app.ctx, store, pollIntervalMs: 20, leaseMs: 400, pageSize: 5_000, concurrency: 1 };
    const a = startPackWorker({ ...options, logger: first.logger });
    await new Promise((resolve) => setTimeout(resolve, 200));
    const id = await pdfPack(brand.brandId, mintBatchId);
    const b = startPackWorker({ ...options, logger: second.logger });
    try {
      for (let i = 0; i < 1_500 && (await packRow(id)).status !== 'ready'; i++) await new Promise((resolve) => setTimeout(resolve, 20));
    } finally {
      await Promise.all([a.stop(), b.stop()]);
    }
    expect(await packRow(id)).toEqual({ status: 'ready', attempts: 1 });
    const ended = [...first.lines, ...second.lines].filter((line) => line.packId === id);
    expect(ended.map((line) => line.result)).toEqual(['ready']);
  }, 120_000);

  it("starts another brand's pack while one brand's long PDFs are generating, and never runs two of one brand at once", async () => {
    const big = await app.seedBrand();
    const small = await app.seedBrand();
    const bigBatch = await mintCompleted(app.ctx, big, 400);
    const smallBatch = await mintCompleted(app.ctx, small, 10);
    const store = createFsPackStore(storeDir.dir);
    // The big brand's completion pack and two PDFs are queued before the small brand's pack.
    const pdfs = [await pdfPack(big.brandId, bigBatch.mintBatchId), await pdfPack(big.brandId, bigBatch.mintBatchId)];
    const smallPack = await pdfPack(small.brandId, smallBatch.mintBatchId);
    const worker = startPackWorker({ ctx: app.ctx, store, logger, pollIntervalMs: 20, concurrency: 2, perBrand: 1 });
    let bigAtOnce = 0;
    try {
      for (let i = 0; i < 10_000; i++) {
        const rows = await query<{ id: string; brand_id: string; status: string }>(
          app.db.em.fork(),
          'select id, brand_id, status from payload_packs where brand_id = any(?::uuid[])',
          [`{${big.brandId},${small.brandId}}`],
        );
        bigAtOnce = Math.max(bigAtOnce, rows.filter((r) => r.brand_id === big.brandId && r.status === 'generating').length);
        if (rows.every((r) => r.status === 'ready')) break;
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
    } finally {
      await worker.stop();
    }
    expect(bigAtOnce).toBe(1);
    expect((await Promise.all(pdfs.map(packRow))).map((r) => r.status)).toEqual(['ready', 'ready']);
    // Before: one pack at a time, first come first served, so the small pack waited for both PDFs.
    // When each became ready is read from the rows (their last update), not from the polls above,
    // which a loaded machine may space out past the moment that matters.
    const readyAt = new Map(
      (
        await query<{ id: string; updated_at: Date }>(app.db.em.fork(), 'select id, updated_at from payload_packs where id = any(?::uuid[])', [
          `{${[...pdfs, smallPack].join(',')}}`,
        ])
      ).map((r) => [r.id, new Date(r.updated_at).getTime()]),
    );
    expect(readyAt.get(smallPack)).toBeLessThan(Math.max(...pdfs.map((id) => readyAt.get(id)!)));
  }, 120_000);
});
