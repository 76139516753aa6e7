import { listOutboxMessages, readOutboxBacklog, takeOutboxMessage, unitOfWork, transaction } from '@mint/db';
import type { UseCaseContext } from '../context.ts';

/** A job the relay hands to the bus. */
export interface OutboxJob {
  readonly kind: 'mint' | 'import';
  readonly id: string;
  readonly brandId: string;
}

/**
 * Publishes up to `limit` outbox messages, oldest first, and deletes each once the bus accepted
 * it. Candidates are read without a lock; each message is then taken by a delete on its key and
 * published in that delete's transaction, so of several relays exactly one publishes it and a
 * publish failure rolls its delete back (the rest wait for the next pass). Publishing twice is
 * harmless anyway: the bus deduplicates on the job id. Returns the number published.
 */
export async function relayOutbox(ctx: UseCaseContext, publish: (job: OutboxJob) => Promise<void>, limit = 100): Promise<number> {
  let published = 0;
  for (const row of await listOutboxMessages(unitOfWork(ctx.db), limit)) {
    await transaction(ctx.db, async (em) => {
      if (!(await takeOutboxMessage(em, row))) return;
      await publish({ kind: row.kind, id: row.jobId, brandId: row.brandId });
      published++;
    });
  }
  return published;
}

/** Messages waiting in the outbox and the age of the oldest in milliseconds (for metrics). */
export async function outboxLag(ctx: UseCaseContext): Promise<{ pending: number; oldestAgeMs: number }> {
  const { pending, oldest } = await readOutboxBacklog(unitOfWork(ctx.db));
  return { pending, oldestAgeMs: oldest === null ? 0 : ctx.clock().getTime() - oldest.getTime() };
}
