import type { ActivationMode, BatchMove, BatchStatus, Cursor, IdentityMode, Lot } from '@mint/domain';
import type { Kysely, QueryCreator } from 'kysely';
import type { Em } from '../orm.ts';
import type { Tables } from '../tables.ts';
import { changed, rows } from './kysely.ts';

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
  /** The batch's place in its brand's serial space (its units' serials encode it); null: serials minted before, or a lot batch. */
  readonly serialOrdinal: number | null;
  readonly createdAt: Date;
  readonly updatedAt: Date;
  readonly productName: string | null;
  readonly productSku: string | null;
  readonly lots: readonly Lot[];
}

/**
 * The columns of a {@link BatchRecord}: the batch aliased `b`, its product's name and SKU from the
 * product aliased `p`. For statements that read a batch beside other rows ({@link toBatchRecords}).
 */
export const batchColumns = [
  'b.id',
  'b.brand_id',
  'b.mint_job_id',
  'b.product_id',
  'b.production_batch_id',
  'b.status',
  'b.identity_mode',
  'b.activation_mode',
  'b.requested_quantity',
  'b.minted_quantity',
  'b.resolver_base_url',
  'b.gtin',
  'b.serial_ordinal',
  'b.created_at',
  'b.updated_at',
  'p.name as product_name',
  'p.sku as product_sku',
] as const;

/** The batches with their products' name and SKU, for the read side. */
function selectBatches(db: Kysely<Tables>, brandId: string) {
  return db
    .selectFrom('mint_batches as b')
    .leftJoin('products as p', (join) => join.onRef('p.brand_id', '=', 'b.brand_id').onRef('p.id', '=', 'b.product_id'))
    .select(batchColumns)
    .where('b.brand_id', '=', brandId);
}

/** A row of {@link batchColumns}. */
export type BatchRow = Awaited<ReturnType<ReturnType<typeof selectBatches>['execute']>>[number];

/** Batch rows of the brand as records, with the lots of those in lot mode (one more query when there are any). */
export async function toBatchRecords(em: Em, brandId: string, batches: readonly BatchRow[]): Promise<BatchRecord[]> {
  const lotBatchIds = batches.filter((r) => r.identity_mode === 'batch').map((r) => r.id);
  const lots =
    lotBatchIds.length === 0
      ? []
      : await rows(em, (db) =>
          db
            .selectFrom('mint_lots')
            .select(['mint_batch_id', 'lot_code', 'qty'])
            .where('brand_id', '=', brandId)
            .where('mint_batch_id', 'in', lotBatchIds)
            .orderBy('lot_code'),
        );
  return batches.map((r) => ({
    id: r.id,
    brandId: r.brand_id,
    mintJobId: r.mint_job_id,
    productId: r.product_id,
    productBatchId: r.production_batch_id,
    status: r.status as BatchStatus,
    identityMode: r.identity_mode as IdentityMode,
    activationMode: r.activation_mode as ActivationMode,
    requestedQuantity: r.requested_quantity,
    mintedQuantity: r.minted_quantity,
    resolverBaseUrl: r.resolver_base_url,
    gtin: r.gtin,
    serialOrdinal: r.serial_ordinal === null ? null : Number(r.serial_ordinal),
    createdAt: new Date(r.created_at),
    updatedAt: new Date(r.updated_at),
    productName: r.product_name,
    productSku: r.product_sku,
    lots: lots.filter((l) => l.mint_batch_id === r.id).map((l) => ({ lotCode: l.lot_code, qty: l.qty })),
  }));
}

/** One batch of the brand, or null when it does not exist there. */
export async function findBatch(em: Em, brandId: string, batchId: string): Promise<BatchRecord | null> {
  const found = await rows(em, (db) => selectBatches(db, brandId).where('b.id', '=', batchId));
  return (await toBatchRecords(em, brandId, found))[0] ?? null;
}

/** The batch of a job, or null. */
export async function findBatchOfJob(em: Em, brandId: string, jobId: string): Promise<BatchRecord | null> {
  const found = await rows(em, (db) => selectBatches(db, brandId).where('b.mint_job_id', '=', jobId));
  return (await toBatchRecords(em, brandId, found))[0] ?? null;
}

/** Up to `take` batches of the brand strictly after `cursor`, newest first by (created_at, id). */
export async function listBatches(em: Em, brandId: string, take: number, cursor: Cursor | null): Promise<BatchRecord[]> {
  const page = await rows(em, (db) =>
    selectBatches(db, brandId)
      .$if(cursor !== null, (q) => q.where((eb) => eb(eb.refTuple('b.created_at', 'b.id'), '<', eb.tuple(cursor!.at, cursor!.id))))
      .orderBy('b.created_at', 'desc')
      .orderBy('b.id', 'desc')
      .limit(take),
  );
  return toBatchRecords(em, brandId, page);
}

/** Applies a batch move as a compare-and-set; false when the batch was no longer in `move.from`. */
export async function moveBatchStatus(em: Em, brandId: string, batchId: string, move: BatchMove, at: Date): Promise<boolean> {
  return (await changed(em, (db) => batchMoveUpdate(db, brandId, batchId, move, at))) === 1;
}

/** The update of {@link moveBatchStatus}, for statements that make the move beside other writes. */
export function batchMoveUpdate(db: QueryCreator<Tables>, brandId: string, batchId: string, move: BatchMove, at: Date) {
  return db
    .updateTable('mint_batches')
    .set({ status: move.to, updated_at: at })
    .where('brand_id', '=', brandId)
    .where('id', '=', batchId)
    .where('status', '=', move.from);
}

/**
 * Advances a batch's minted quantity from exactly `expected` by `count` (compare-and-set), which
 * makes a chunk exactly-once: a repeated or concurrent chunk finds another value and changes nothing.
 */
export async function advanceMinted(em: Em, brandId: string, batchId: string, expected: number, count: number, at: Date): Promise<boolean> {
  return (
    (await changed(em, (db) =>
      db
        .updateTable('mint_batches')
        .set((eb) => ({ minted_quantity: eb('minted_quantity', '+', count), updated_at: at }))
        .where('brand_id', '=', brandId)
        .where('id', '=', batchId)
        .where('minted_quantity', '=', expected),
    )) === 1
  );
}
