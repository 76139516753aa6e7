import {
  createRequestedPack,
  storedPackProfile,
  findPackRecord,
  listPacks,
  readBatchState,
  readPackSource,
  type PackRecord,
  unitOfWork,
  transaction,
} from '@mint/db';
import {
  InvalidInputError,
  NotFoundError,
  isUuid,
  resolvePackProfile,
  resolvePageSize,
  toPage,
  type Cursor,
  type PackProfileInput,
  type Page,
} from '@mint/domain';
import type { PackStore } from '@mint/store';
import type { UseCaseContext } from '../context.ts';

/** Default page size of list_payload_packs. */
export const defaultPackPageSize = 20;

/**
 * A page of the brand's payload packs, newest first by (created_at, id), only those of
 * `mintBatchId` when given (a batch of another brand, or none, lists nothing); 20 per page unless
 * `limit` says otherwise (1..100). Packs carry their relative storage path only, never a URL.
 */
export async function listPayloadPacks(
  ctx: UseCaseContext,
  brandId: string,
  query: { readonly limit: number | null; readonly cursor: Cursor | null; readonly mintBatchId?: string | null },
): Promise<Page<PackRecord>> {
  const size = resolvePageSize(query.limit, defaultPackPageSize);
  const mintBatchId = query.mintBatchId ?? null;
  if (mintBatchId !== null && !isUuid(mintBatchId)) {
    throw new InvalidInputError([{ field: 'mint_batch_id', message: `must be a uuid (got ${JSON.stringify(String(mintBatchId).slice(0, 100))})` }]);
  }
  const rows = await listPacks(unitOfWork(ctx.db), brandId, size + 1, query.cursor, mintBatchId);
  return toPage(rows, size, (k) => ({ at: k.createdAt, id: k.id }));
}

/** Parameters of {@link createPayloadPack}; the profile as the transport received it. */
export interface CreatePayloadPackInput extends PackProfileInput {
  readonly brandId: string;
  readonly mintBatchId: string;
}

/**
 * Asks for a payload pack of a batch with its own profile (CreatePayloadPack): formats, an optional
 * unit range, symbology and label layout, checked by the domain's {@link resolvePackProfile}, then
 * a pending pack that the executor's pack worker generates. A batch may have any number of packs.
 * Missing or foreign batch: NotFoundError; voided or not yet minted: IllegalStateError; bad fields
 * (a layout must fit its page): InvalidInputError naming them. Nothing is written unless
 * every check passed. Returns the pack as listed.
 */
export async function createPayloadPack(ctx: UseCaseContext, input: CreatePayloadPackInput): Promise<PackRecord> {
  if (!isUuid(input.mintBatchId)) throw new InvalidInputError([{ field: 'mint_batch_id', message: 'must be a uuid' }]);
  const id = await transaction(ctx.db, async (em) => {
    const batch = await readBatchState(em, input.brandId, input.mintBatchId);
    const source = await readPackSource(em, input.brandId, input.mintBatchId);
    if (batch === null || source === null) throw new NotFoundError(`mint batch ${input.mintBatchId} not found`);
    const profile = resolvePackProfile(input, {
      status: batch.status,
      identityMode: batch.identityMode,
      mintedQuantity: batch.mintedQuantity,
      gtin: source.gtin,
    });
    return createRequestedPack(em, input.brandId, input.mintBatchId, ctx.clock(), { purpose: 'request', profile: storedPackProfile(profile) });
  });
  const pack = await findPackRecord(unitOfWork(ctx.db), input.brandId, id);
  if (pack === null) throw new NotFoundError(`payload pack ${id} not found`);
  return pack;
}

/**
 * How long the leftovers of an interrupted pack write wait before {@link sweepPackStore} deletes
 * them: one hour, far longer than any pack takes to write (a 1,000,000-unit pack about a minute, a
 * 100,000-label PDF a few minutes), so a write still going on is never touched.
 */
export const packLeftoverAgeMs = 60 * 60_000;

/**
 * Deletes what interrupted pack writes left in the store (see {@link PackStore.sweep}) once older
 * than `leftoverAgeMs`: an executor killed while writing a pack leaves its files behind, and the
 * pack is written again whole under a new generation by the next claim. Returns how many
 * leftovers were deleted.
 */
export async function sweepPackStore(ctx: UseCaseContext, store: PackStore, leftoverAgeMs = packLeftoverAgeMs): Promise<number> {
  return store.sweep(new Date(ctx.clock().getTime() - leftoverAgeMs));
}
