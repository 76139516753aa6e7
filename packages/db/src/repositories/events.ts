import { randomUUID } from 'node:crypto';
import type { NewEvent } from '@mint/domain';
import type { Em } from '../orm.ts';
import { run } from './sql.ts';

/** Appends audit events in the entity manager's transaction, all stamped `at`. */
export async function appendEvents(em: Em, at: Date, events: readonly NewEvent[]): Promise<void> {
  for (const e of events) {
    await run(
      em,
      `insert into mint_events (brand_id, id, occurred_at, event_type, entity_type, entity_id, payload, actor)
       values (?, ?, ?, ?, ?, ?, ?::jsonb, ?)`,
      [e.brandId, randomUUID(), at, e.eventType, e.entityType, e.entityId, JSON.stringify(e.payload), e.actor],
    );
  }
}
