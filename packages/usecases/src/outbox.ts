import { deleteOutboxMessage, lockOutboxMessages, readOutboxBacklog } from '@mint/db';
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
    let published = 0;
    for (const row of await lockOutboxMessages(em, limit)) {
      await publish({ kind: row.kind, id: row.jobId, brandId: row.brandId });
      await deleteOutboxMessage(em, row.id);
      published++;
    }
    return published;
  });
}

/** Messages waiting in the outbox and the age of the oldest in milliseconds (for metrics). */
export async function outboxLag(ctx: UseCaseContext): Promise<{ pending: number; oldestAgeMs: number }> {
  const { pending, oldest } = await readOutboxBacklog(ctx.db.em.fork());
  return { pending, oldestAgeMs: oldest === null ? 0 : ctx.clock().getTime() - oldest.getTime() };
}
