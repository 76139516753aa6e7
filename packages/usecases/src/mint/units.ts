import { listUnits, type UnitRecord, unitOfWork } from '@mint/db';
import { InvalidInputError, isUuid, resolvePageSize, toPage, type Cursor, type Page } from '@mint/domain';
import type { UseCaseContext } from '../context.ts';

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
  /** Only the unit with this serial (unique in a brand); null for any. */
  readonly serial?: string | null;
  /** With mintBatchId: the batch's units in seq order, above this seq (0 for the first page); null for newest first. */
  readonly afterSeq?: number | null;
}

/**
 * A page of the brand's units, newest first by (created_at, id), each with the SKU of its batch's
 * product (null when the product is gone). Reads at most limit+1 index entries at any depth.
 * With `afterSeq` (which needs a batch and no cursor) the batch's units come in seq order from
 * the (brand, batch, seq) index instead, and the next page continues after the last seq shown
 * (`next` is null: the seq is the position). `serial` keeps the one unit of that serial.
 */
export async function listMintUnits(ctx: UseCaseContext, brandId: string, query: ListMintUnitsQuery): Promise<Page<UnitRecord>> {
  const size = resolvePageSize(query.limit, defaultUnitPageSize);
  if (query.mintBatchId !== null && !isUuid(query.mintBatchId)) {
    throw new InvalidInputError([{ field: 'mint_batch_id', message: 'must be a uuid' }]);
  }
  const afterSeq = query.afterSeq ?? null;
  if (afterSeq !== null) {
    const v = [];
    if (!Number.isInteger(afterSeq) || afterSeq < 0) v.push({ field: 'after_seq', message: 'must be an integer of 0 or more' });
    if (query.mintBatchId === null) v.push({ field: 'after_seq', message: 'needs mint_batch_id (seq order is within a batch)' });
    if (query.cursor !== null) v.push({ field: 'after_seq', message: 'cannot be combined with a cursor' });
    if (v.length > 0) throw new InvalidInputError(v);
  }
  const serial = query.serial ?? null;
  if (serial !== null && (serial === '' || serial.length > 200)) throw new InvalidInputError([{ field: 'serial', message: 'must be 1 to 200 characters' }]);
  const rows = await listUnits(unitOfWork(ctx.db), brandId, size + 1, query.cursor, query.mintBatchId, { serial, afterSeq });
  const page = toPage(rows, size, (u) => ({ at: u.createdAt, id: u.id }));
  return afterSeq === null ? page : { ...page, next: null };
}
