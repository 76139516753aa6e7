import { findBatch, listBatches, type BatchRecord, unitOfWork } from '@mint/db';
import { NotFoundError, resolvePageSize, toPage, type Cursor, type Page } from '@mint/domain';
import type { UseCaseContext } from '../context.ts';

/** Default page size of list_mint_batches. */
export const defaultBatchPageSize = 20;

/** One batch of the brand with its product's name and SKU; NotFoundError when missing or another brand's. */
export async function getMintBatch(ctx: UseCaseContext, brandId: string, batchId: string): Promise<BatchRecord> {
  const batch = await findBatch(unitOfWork(ctx.db), brandId, batchId);
  if (batch === null) throw new NotFoundError(`mint batch ${batchId} not found`);
  return batch;
}

/** A page of the brand's batches, newest first by (created_at, id); 20 per page unless `limit` says otherwise (1..100). */
export async function listMintBatches(
  ctx: UseCaseContext,
  brandId: string,
  query: { readonly limit: number | null; readonly cursor: Cursor | null },
): Promise<Page<BatchRecord>> {
  const size = resolvePageSize(query.limit, defaultBatchPageSize);
  const rows = await listBatches(unitOfWork(ctx.db), brandId, size + 1, query.cursor);
  return toPage(rows, size, (b) => ({ at: b.createdAt, id: b.id }));
}
