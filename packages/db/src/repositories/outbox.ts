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
 * Up to `limit` outbox messages, oldest first, row-locked until the transaction ends. Rows another
 * relay holds are skipped (SKIP LOCKED), so several relays never publish the same message at once.
 */
export async function lockOutboxMessages(em: Em, limit: number): Promise<OutboxRow[]> {
  const found = await rows(em, (db) => db.selectFrom('outbox').select(['id', 'kind', 'job_id', 'brand_id'])
    .orderBy('id').limit(limit).forUpdate().skipLocked());
  return found.map((r) => ({ id: String(r.id), kind: r.kind as OutboxRow['kind'], jobId: r.job_id, brandId: r.brand_id }));
}

/** Deletes a published outbox message. */
export async function deleteOutboxMessage(em: Em, id: string): Promise<void> {
  await changed(em, (db) => db.deleteFrom('outbox').where('id', '=', id));
}

/** Messages waiting in the outbox and when the oldest was written (null when there is none). */
export async function readOutboxBacklog(em: Em): Promise<{ pending: number; oldest: Date | null }> {
  const row = await first(em, (db) => db.selectFrom('outbox').select((eb) => [eb.fn.countAll().as('pending'), eb.fn.min('created_at').as('oldest')]));
  return { pending: Number(row?.pending ?? 0), oldest: row?.oldest == null ? null : new Date(row.oldest) };
}
