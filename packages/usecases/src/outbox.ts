import { query, run } from '@mint/db';
import type { UseCaseContext } from './context.ts';

/** A job the relay hands to the bus. */
export interface OutboxJob {
  readonly kind: 'mint' | 'import';
  readonly id: string;
  readonly brandId: string;
}

/**
 * Publishes up to `limit` outbox messages, oldest first, and deletes each once the bus accepted
 * it. Rows are locked with SKIP LOCKED so several relays can run; a publish failure leaves the
 * rest for the next pass. Publishing twice is harmless: the bus deduplicates on the job id.
 * Returns the number published.
 */
export async function relayOutbox(ctx: UseCaseContext, publish: (job: OutboxJob) => Promise<void>, limit = 100): Promise<number> {
  return ctx.db.em.fork().transactional(async (em) => {
    const rows = await query<{ id: string; kind: 'mint' | 'import'; job_id: string; brand_id: string }>(
      em,
      `select id, kind, job_id, brand_id from outbox order by id limit ? for update skip locked`,
      [limit],
    );
    let published = 0;
    for (const row of rows) {
      await publish({ kind: row.kind, id: row.job_id, brandId: row.brand_id });
      await run(em, `delete from outbox where id = ?`, [row.id]);
      published++;
    }
    return published;
  });
}

/** Messages waiting in the outbox and the age of the oldest in milliseconds (for metrics). */
export async function outboxLag(ctx: UseCaseContext): Promise<{ pending: number; oldestAgeMs: number }> {
  const [row] = await query<{ pending: string; oldest: Date | null }>(ctx.db.em.fork(), `select count(*) as pending, min(created_at) as oldest from outbox`);
  return { pending: Number(row?.pending ?? 0), oldestAgeMs: row?.oldest ? ctx.clock().getTime() - new Date(row.oldest).getTime() : 0 };
}
