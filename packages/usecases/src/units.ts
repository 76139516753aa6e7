import { listUnits, type UnitRecord } from '@mint/db';
import { InvalidInputError, isUuid, resolvePageSize, toPage, type Cursor, type Page } from '@mint/domain';
import type { UseCaseContext } from './context.ts';

/** Default page size of list_mint_units. */
export const defaultUnitPageSize = 50;

/** Parameters of {@link listMintUnits}. */
export interface ListMintUnitsQuery {
  /** Page size, 1..100; 50 when null. */
  readonly limit: number | null;
  /** Position after the last row of the previous page; null for the first page. */
  readonly cursor: Cursor | null;
  /** Only this batch's units; a batch of another brand simply yields an empty page. */
  readonly mintBatchId: string | null;
}

/**
 * A page of the brand's units, newest first by (created_at, id), each with the SKU of its batch's
 * product (null when the product is gone). Reads at most limit+1 index entries at any depth.
 */
export async function listMintUnits(ctx: UseCaseContext, brandId: string, query: ListMintUnitsQuery): Promise<Page<UnitRecord>> {
  const size = resolvePageSize(query.limit, defaultUnitPageSize);
  if (query.mintBatchId !== null && !isUuid(query.mintBatchId)) {
    throw new InvalidInputError([{ field: 'mint_batch_id', message: 'must be a uuid' }]);
  }
  const rows = await listUnits(ctx.db.em.fork(), brandId, size + 1, query.cursor, query.mintBatchId);
  return toPage(rows, size, (u) => ({ at: u.createdAt, id: u.id }));
}
