import { listPacks, type PackRecord } from '@mint/db';
import { resolvePageSize, toPage, type Cursor, type Page } from '@mint/domain';
import type { UseCaseContext } from './context.ts';

/** Default page size of list_payload_packs. */
export const defaultPackPageSize = 20;

/**
 * A page of the brand's payload packs, newest first by (created_at, id); 20 per page unless
 * `limit` says otherwise (1..100). Packs carry their relative storage path only, never a URL.
 */
export async function listPayloadPacks(
  ctx: UseCaseContext,
  brandId: string,
  query: { readonly limit: number | null; readonly cursor: Cursor | null },
): Promise<Page<PackRecord>> {
  const size = resolvePageSize(query.limit, defaultPackPageSize);
  const rows = await listPacks(ctx.db.em.fork(), brandId, size + 1, query.cursor);
  return toPage(rows, size, (k) => ({ at: k.createdAt, id: k.id }));
}
