import { randomUUID } from 'node:crypto';
import type { NewEvent } from '@mint/domain';
import type { Em } from '../orm.ts';
import { changed } from './kysely.ts';

/** Appends audit events in the entity manager's transaction, all stamped `at`; one statement. */
export async function appendEvents(em: Em, at: Date, events: readonly NewEvent[]): Promise<void> {
  if (events.length === 0) return;
  await changed(em, (db) => db.insertInto('mint_events').values(events.map((e) => ({
    brand_id: e.brandId, id: randomUUID(), occurred_at: at, event_type: e.eventType, entity_type: e.entityType, entity_id: e.entityId,
    payload: JSON.stringify(e.payload), actor: e.actor,
  }))));
}
