import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { query, unitsWithUrls } from '../../../test/support/sql.ts';
import type { MintRequest } from '@mint/domain';
import { getMintBatch, listMintBatches, processMintJobBatch, submitMintRequest } from '@mint/usecases';
import { setupUseCases, submitSerial, type SeededBrand, type UseCaseBundle } from '../../../test/support/usecases.ts';

let app: UseCaseBundle;
let brand: SeededBrand;
beforeAll(async () => {
  app = await setupUseCases();
  brand = await app.seedBrand();
});
afterAll(() => app.close());

const submit = (overrides: Partial<MintRequest> = {}) => submitSerial(app.ctx, brand, overrides.requestedQuantity ?? 5000, overrides);
async function eventTypes(entityIds: string[]): Promise<string[]> {
  const rows = await query<{ event_type: string }>(
    app.db.em.fork(),
    `select event_type from mint_events where brand_id = ? and entity_id = any(?::text[]) order by occurred_at, event_type`,
    [brand.brandId, `{${entityIds.join(',')}}`],
  );
  return rows.map((r) => r.event_type);
}

describe('processMintJobBatch', () => {
  it('mints a serial job in chunks up to COMPLETED with gapless seqs, unique serials and GS1 Digital Link URLs', async () => {
    const { mintJobId, mintBatchId } = await submit();
    const cycles = [];
    for (let i = 0; i < 5; i++) {
      const cycle = await processMintJobBatch(app.ctx, brand.brandId, mintJobId, 2000);
      cycles.push(cycle);
      if (cycle.done) break;
    }
    expect(cycles.map((c) => [c.insertedCount, c.mintedQuantity, c.done])).toEqual([
      [2000, 2000, false],
      [2000, 4000, false],
      [1000, 5000, true],
    ]);
    expect(cycles.at(-1)!.status).toBe('COMPLETED');
    const [stats] = await query<{ n: string; min: number; max: number; serials: string; bad_urls: string; inactive: string }>(
      app.db.em.fork(),
      `select count(*) as n, min(seq) as min, max(seq) as max, count(distinct serial) as serials,
              count(*) filter (where resolver_url <> 'http://127.0.0.1:8080/r/' || (select slug from brands where id = brand_id) || '/01/' || ? || '/21/' || serial) as bad_urls,
              count(*) filter (where status <> 'active') as inactive
       from ${unitsWithUrls} where brand_id = ? and mint_batch_id = ?`,
      [brand.gtin, brand.brandId, mintBatchId],
    );
    expect(stats).toEqual({ n: '5000', min: 1, max: 5000, serials: '5000', bad_urls: '0', inactive: '0' });
    const batch = await getMintBatch(app.ctx, brand.brandId, mintBatchId);
    expect(batch).toMatchObject({ status: 'minted', mintedQuantity: 5000, requestedQuantity: 5000, productSku: 'SKU-1', productName: 'Product One' });
    const counts: Record<string, number> = {};
    for (const type of await eventTypes([mintJobId, mintBatchId])) counts[type] = (counts[type] ?? 0) + 1;
    // Four chunk transactions: the first cycle's chunk commits its first 50 units on their own (the lead chunk), then the rest.
    expect(counts).toEqual({
      mint_job_queued: 1,
      mint_batch_created: 1,
      mint_job_started: 1,
      mint_units_created: 4,
      mint_job_completed: 1,
      mint_batch_status_changed: 1,
    });
    const chunks = await query<{ count: number; first_seq: number }>(
      app.db.em.fork(),
      `select (payload->>'count')::int as count, (payload->>'first_seq')::int as first_seq from mint_events
       where brand_id = ? and entity_id = ? and event_type = 'mint_units_created' order by (payload->>'first_seq')::int`,
      [brand.brandId, mintBatchId],
    );
    expect(chunks).toEqual([
      { count: 50, first_seq: 1 },
      { count: 1950, first_seq: 51 },
      { count: 2000, first_seq: 2001 },
      { count: 1000, first_seq: 4001 },
    ]);
    const again = await processMintJobBatch(app.ctx, brand.brandId, mintJobId, 2000);
    expect(again).toEqual({ done: true, insertedCount: 0, mintedQuantity: 5000, requestedQuantity: 5000, status: 'COMPLETED' });
  });

  it('leaves first_scan units inactive', async () => {
    const { mintJobId, mintBatchId } = await submit({ requestedQuantity: 10, activationMode: 'first_scan' });
    expect((await processMintJobBatch(app.ctx, brand.brandId, mintJobId, null)).done).toBe(true);
    const [row] = await query<{ inactive: string }>(
      app.db.em.fork(),
      `select count(*) filter (where status = 'inactive' and activated_at is null) as inactive from mint_units where mint_batch_id = ?`,
      [mintBatchId],
    );
    expect(row!.inactive).toBe('10');
  });

  it('finalises a lot job at once without tokens and confirms its lots', async () => {
    const { mintJobId, mintBatchId } = await submit({
      identityMode: 'batch',
      requestedQuantity: 30,
      lots: [
        { lotCode: 'LOT-A', qty: 10 },
        { lotCode: 'LOT-B', qty: 20 },
      ],
    });
    const cycle = await processMintJobBatch(app.ctx, brand.brandId, mintJobId, null);
    expect(cycle).toEqual({ done: true, insertedCount: 0, mintedQuantity: 30, requestedQuantity: 30, status: 'COMPLETED' });
    const [units] = await query<{ n: string }>(app.db.em.fork(), `select count(*) as n from mint_units where mint_batch_id = ?`, [mintBatchId]);
    expect(units!.n).toBe('0');
    const batch = await getMintBatch(app.ctx, brand.brandId, mintBatchId);
    expect(batch.lots).toEqual([
      { lotCode: 'LOT-A', qty: 10 },
      { lotCode: 'LOT-B', qty: 20 },
    ]);
    expect(await eventTypes([mintBatchId])).toContain('mint_lots_confirmed');
  });

  it('finalises a product-only job at once without identities', async () => {
    const { mintJobId } = await submit({ identityMode: 'batch', requestedQuantity: 7 });
    expect(await processMintJobBatch(app.ctx, brand.brandId, mintJobId, null)).toMatchObject({ done: true, insertedCount: 0, status: 'COMPLETED' });
  });
});

describe('listMintBatches', () => {
  it('pages newest first with keyset cursors and returns every batch once', async () => {
    const other = await app.seedBrand();
    const created: string[] = [];
    for (let i = 0; i < 7; i++) {
      const r = await submitMintRequest(
        app.ctx,
        { id: other.userId },
        {
          brandId: other.brandId,
          productId: other.productId,
          productBatchId: null,
          requestedQuantity: 1,
          identityMode: 'serial',
          activationMode: 'active_at_mint',
          lots: [],
          idempotencyKey: null,
        },
      );
      if (r.ok) created.push(r.mintBatchId);
    }
    const seen: string[] = [];
    let cursor = null;
    for (;;) {
      const page = await listMintBatches(app.ctx, other.brandId, { limit: 3, cursor });
      seen.push(...page.items.map((b) => b.id));
      if (!page.hasMore) {
        expect(page.next).toBeNull();
        break;
      }
      cursor = page.next;
    }
    expect(seen).toHaveLength(7);
    expect(new Set(seen)).toEqual(new Set(created));
    const times = (await listMintBatches(app.ctx, other.brandId, { limit: 100, cursor: null })).items.map((b) => b.createdAt.getTime());
    expect([...times].sort((a, b) => b - a)).toEqual(times);
  });
});
