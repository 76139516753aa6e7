import type { Em } from '../orm.ts';
import { changed, first, rows } from './kysely.ts';

/** An outbox message: a job (or import) to hand to the bus. */
export interface OutboxRow {
  /** Position in the outbox; delete it by this once published. */
  readonly id: string;
  /** mint or import. */
  readonly kind: 'mint' | 'import';
  readonly jobId: string;
  readonly brandId: string;
}

/**
 * Up to `limit` outbox messages, oldest first, read without a lock: several relays may read the
 * same ones, and {@link takeOutboxMessage} decides which of them publishes each.
 */
export async function listOutboxMessages(em: Em, limit: number): Promise<OutboxRow[]> {
  const found = await rows(em, (db) => db.selectFrom('outbox').select(['id', 'kind', 'job_id', 'brand_id']).orderBy('id').limit(limit));
  return found.map((r) => ({ id: String(r.id), kind: r.kind as OutboxRow['kind'], jobId: r.job_id, brandId: r.brand_id }));
}

/**
 * Deletes a message by its key (brand_id, id) inside the caller's transaction; true when this
 * caller deleted it. A second relay's delete of the same message waits for the first one's
 * transaction and then deletes nothing, so exactly one relay publishes it (before its commit: a
 * failed publish rolls the delete back).
 */
export async function takeOutboxMessage(em: Em, row: Pick<OutboxRow, 'id' | 'brandId'>): Promise<boolean> {
  return (await changed(em, (db) => db.deleteFrom('outbox').where('brand_id', '=', row.brandId).where('id', '=', row.id))) === 1;
}

/** Messages waiting in the outbox and when the oldest was written (null when there is none). */
export async function readOutboxBacklog(em: Em): Promise<{ pending: number; oldest: Date | null }> {
  const row = await first(em, (db) => db.selectFrom('outbox').select((eb) => [eb.fn.countAll().as('pending'), eb.fn.min('created_at').as('oldest')]));
  return { pending: Number(row?.pending ?? 0), oldest: row?.oldest == null ? null : new Date(row.oldest) };
}
