import type { ActivationMode, BatchMove, BatchStatus, Cursor, IdentityMode, Lot } from '@mint/domain';
import type { Em } from '../orm.ts';
import { query, run } from './sql.ts';

/** A batch as the read side shows it, with its product's name and SKU (null when the product is gone). */
export interface BatchRecord {
  readonly id: string;
  readonly brandId: string;
  readonly mintJobId: string;
  readonly productId: string;
  readonly productBatchId: string | null;
  readonly status: BatchStatus;
  readonly identityMode: IdentityMode;
  readonly activationMode: ActivationMode;
  readonly requestedQuantity: number;
  readonly mintedQuantity: number;
  readonly resolverBaseUrl: string;
  readonly gtin: string | null;
  readonly createdAt: Date;
  readonly updatedAt: Date;
  readonly productName: string | null;
  readonly productSku: string | null;
  readonly lots: readonly Lot[];
}

interface BatchRow {
  id: string; brand_id: string; mint_job_id: string; product_id: string; production_batch_id: string | null;
  status: BatchStatus; identity_mode: IdentityMode; activation_mode: ActivationMode;
  requested_quantity: number; minted_quantity: number; resolver_base_url: string; gtin: string | null;
  created_at: Date; updated_at: Date; product_name: string | null; product_sku: string | null;
}

const selectBatch = `
  select b.id, b.brand_id, b.mint_job_id, b.product_id, b.production_batch_id, b.status, b.identity_mode,
         b.activation_mode, b.requested_quantity, b.minted_quantity, b.resolver_base_url, b.gtin,
         b.created_at, b.updated_at, p.name as product_name, p.sku as product_sku
  from mint_batches b
  left join products p on p.brand_id = b.brand_id and p.id = b.product_id`;

async function withLots(em: Em, brandId: string, rows: readonly BatchRow[]): Promise<BatchRecord[]> {
  const lotBatchIds = rows.filter((r) => r.identity_mode === 'batch').map((r) => r.id);
  const lots = lotBatchIds.length === 0 ? [] : await query<{ mint_batch_id: string; lot_code: string; qty: number }>(
    em,
    `select mint_batch_id, lot_code, qty from mint_lots where brand_id = ? and mint_batch_id = any(?::uuid[]) order by lot_code`,
    [brandId, `{${lotBatchIds.join(',')}}`],
  );
  return rows.map((r) => ({
    id: r.id, brandId: r.brand_id, mintJobId: r.mint_job_id, productId: r.product_id, productBatchId: r.production_batch_id,
    status: r.status, identityMode: r.identity_mode, activationMode: r.activation_mode,
    requestedQuantity: r.requested_quantity, mintedQuantity: r.minted_quantity, resolverBaseUrl: r.resolver_base_url,
    gtin: r.gtin, createdAt: new Date(r.created_at), updatedAt: new Date(r.updated_at),
    productName: r.product_name, productSku: r.product_sku,
    lots: lots.filter((l) => l.mint_batch_id === r.id).map((l) => ({ lotCode: l.lot_code, qty: l.qty })),
  }));
}

/** One batch of the brand, or null when it does not exist there. */
export async function findBatch(em: Em, brandId: string, batchId: string): Promise<BatchRecord | null> {
  const rows = await query<BatchRow>(em, `${selectBatch} where b.brand_id = ? and b.id = ?`, [brandId, batchId]);
  return (await withLots(em, brandId, rows))[0] ?? null;
}

/** The batch of a job, or null. */
export async function findBatchOfJob(em: Em, brandId: string, jobId: string): Promise<BatchRecord | null> {
  const rows = await query<BatchRow>(em, `${selectBatch} where b.brand_id = ? and b.mint_job_id = ?`, [brandId, jobId]);
  return (await withLots(em, brandId, rows))[0] ?? null;
}

/** Up to `take` batches of the brand strictly after `cursor`, newest first by (created_at, id). */
export async function listBatches(em: Em, brandId: string, take: number, cursor: Cursor | null): Promise<BatchRecord[]> {
  const rows = cursor === null
    ? await query<BatchRow>(em, `${selectBatch} where b.brand_id = ? order by b.created_at desc, b.id desc limit ?`, [brandId, take])
    : await query<BatchRow>(
        em,
        `${selectBatch} where b.brand_id = ? and (b.created_at, b.id) < (?, ?) order by b.created_at desc, b.id desc limit ?`,
        [brandId, cursor.at, cursor.id, take],
      );
  return withLots(em, brandId, rows);
}

/** Applies a batch move as a compare-and-set; false when the batch was no longer in `move.from`. */
export async function moveBatchStatus(em: Em, brandId: string, batchId: string, move: BatchMove, at: Date): Promise<boolean> {
  return (await run(em, `update mint_batches set status = ?, updated_at = ? where brand_id = ? and id = ? and status = ?`, [
    move.to, at, brandId, batchId, move.from,
  ])) === 1;
}

/**
 * Advances a batch's minted quantity from exactly `expected` by `count` (compare-and-set), which
 * makes a chunk exactly-once: a repeated or concurrent chunk finds another value and changes nothing.
 */
export async function advanceMinted(em: Em, brandId: string, batchId: string, expected: number, count: number, at: Date): Promise<boolean> {
  return (await run(
    em,
    `update mint_batches set minted_quantity = minted_quantity + ?, updated_at = ? where brand_id = ? and id = ? and minted_quantity = ?`,
    [count, at, brandId, batchId, expected],
  )) === 1;
}

/**
 * Adds `count` to a batch's minted quantity and returns the new total. For chunks written by
 * several writers at once: exactly-once comes from (mint_batch_id, seq) in the same transaction,
 * and the row lock orders the writers, so exactly one of them sees the requested quantity reached.
 */
export async function addMinted(em: Em, brandId: string, batchId: string, count: number, at: Date): Promise<number> {
  const [row] = await query<{ minted_quantity: number }>(
    em,
    `update mint_batches set minted_quantity = minted_quantity + ?, updated_at = ? where brand_id = ? and id = ? returning minted_quantity`,
    [count, at, brandId, batchId],
  );
  if (!row) throw new Error(`mint batch ${batchId} not found`);
  return row.minted_quantity;
}
