import { listEvents, type EventRecord, unitOfWork } from '@mint/db';
import { resolvePageSize, toPage, type Cursor, type Page } from '@mint/domain';
import type { UseCaseContext } from '../context.ts';

/** Default page size of list_mint_events. */
export const defaultEventPageSize = 50;

/** Parameters of {@link listMintEvents}; null filters match everything. */
export interface ListMintEventsQuery {
  /** Page size, 1..100; 50 when null. */
  readonly limit: number | null;
  /** Position after the last row of the previous page (occurred_at, id); null for the first page. */
  readonly cursor: Cursor | null;
  /** Only events of this type, e.g. mint_job_completed. */
  readonly eventType: string | null;
  /** Only events about this kind of entity, e.g. mint_batch. */
  readonly entityType: string | null;
  /** Only events about this entity (a uuid as text). */
  readonly entityId: string | null;
}

/**
 * A page of the brand's audit events, newest first by (occurred_at, id), optionally filtered by
 * event type, entity type and entity id (all equality; empty strings count as unset).
 */
export async function listMintEvents(ctx: UseCaseContext, brandId: string, query: ListMintEventsQuery): Promise<Page<EventRecord>> {
  const size = resolvePageSize(query.limit, defaultEventPageSize);
  const filter = {
    eventType: query.eventType || null,
    entityType: query.entityType || null,
    entityId: query.entityId || null,
  };
  const rows = await listEvents(unitOfWork(ctx.db), brandId, size + 1, query.cursor, filter);
  return toPage(rows, size, (e) => ({ at: e.occurredAt, id: e.id }));
}
