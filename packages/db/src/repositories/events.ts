import { randomUUID } from 'node:crypto';
import { sql, type QueryCreator, type RawBuilder } from 'kysely';
import type { NewEvent } from '@mint/domain';
import type { Em } from '../orm.ts';
import type { Tables } from '../tables.ts';
import { onCitus } from '../distribution.ts';
import { inTransaction } from './catalog.ts';
import { changed } from './kysely.ts';

/**
 * The body of the webhook delivery of the event aliased `e`: `{ type, timestamp, data }`, `data`
 * being the event as ListMintEvents shows it.
 */
function deliveryBody(): RawBuilder<string> {
  return sql<string>`jsonb_build_object('type', e.event_type, 'timestamp', e.occurred_at, 'data', jsonb_build_object(
    'id', e.id, 'brand_id', e.brand_id, 'event_type', e.event_type, 'entity_type', e.entity_type, 'entity_id', e.entity_id,
    'occurred_at', e.occurred_at, 'actor', e.actor, 'payload', e.payload))`;
}

/**
 * True when the endpoint aliased `w` gets the event aliased `e`: its filter wants the type (an empty
 * filter wants all), and an event about an endpoint (webhook_endpoint_created, _updated,
 * _secret_rotated) goes to that endpoint alone, never to the brand's others: managing N endpoints
 * then writes N deliveries, not N². (A deleted or disabled endpoint gets none: it is gone or off.)
 */
function endpointWants(): RawBuilder<boolean> {
  return sql<boolean>`(cardinality(w.event_types) = 0 or e.event_type = any(w.event_types))
    and (e.entity_type <> 'webhook_endpoint' or e.entity_id = w.id::text)`;
}

/**
 * Appends audit events in the entity manager's transaction, all stamped `at`, and in the same
 * statement the webhook deliveries they cause: one pending delivery per event and enabled endpoint
 * of the event's brand whose filter wants the event's type (an empty filter wants all). An event
 * never exists without its deliveries, and a rolled-back change leaves neither. The fan-out stays in
 * the writer's statement, bounded by the endpoints a brand may have (`WEBHOOK_MAX_ENDPOINTS_PER_BRAND`,
 * 20 by default): at most that many rows per event, one index-backed join, against an outbox hop
 * that would give up the guarantee that an event and its deliveries commit together.
 */
export async function appendEvents(em: Em, at: Date, events: readonly NewEvent[]): Promise<void> {
  if (events.length === 0) return;
  if (await onCitus(em)) return appendEventsRouted(em, at, events);
  await changed(em, (db) => eventDeliveries(db.with('e', (qc) => eventsInsert(qc, at, events))));
}

/**
 * {@link appendEvents} on Citus, in one transaction: the events, then per brand its deliveries from
 * its events just written, each statement routed to the brand's shard. (As one statement, Citus
 * joins the inserted events with every shard's endpoints through the coordinator: ~50 ms.)
 */
async function appendEventsRouted(em: Em, at: Date, events: readonly NewEvent[]): Promise<void> {
  const rows = events.map((e) => ({
    brand_id: e.brandId, id: randomUUID(), occurred_at: at, event_type: e.eventType, entity_type: e.entityType, entity_id: e.entityId,
    payload: JSON.stringify(e.payload), actor: e.actor,
  }));
  await inTransaction(em, async (em) => {
    await changed(em, (db) => db.insertInto('mint_events').values(rows));
    for (const brandId of new Set(rows.map((r) => r.brand_id))) {
      const ids = rows.filter((r) => r.brand_id === brandId).map((r) => r.id);
      await changed(em, (db) => db.insertInto('webhook_deliveries')
        .columns(['brand_id', 'id', 'endpoint_id', 'event_id', 'event_type', 'body', 'status', 'attempts', 'next_attempt_at', 'created_at', 'updated_at'])
        .expression((eb) => eb.selectFrom('mint_events as e')
          .innerJoin('webhook_endpoints as w', (join) => join.onRef('w.brand_id', '=', 'e.brand_id'))
          .where('e.brand_id', '=', brandId).where('w.brand_id', '=', brandId)
          .where('e.id', '=', eb.fn.any(eb.cast<string[]>(eb.val(ids), sql`uuid[]`)))
          .where('w.enabled', '=', true)
          .where(endpointWants())
          .select(deliveryColumns())));
    }
  });
}

/**
 * The insert of `events`, all stamped `at`, returning {@link insertedEventColumns}: a statement's
 * CTE `e`, which its {@link eventDeliveries} follow. `qc` is seen with the schema alone (the
 * statement's other CTEs stay in it).
 */
export function eventsInsert<DB extends Tables>(qc: QueryCreator<DB>, at: Date, events: readonly NewEvent[]) {
  return (qc as unknown as QueryCreator<Tables>).insertInto('mint_events').values(events.map((e) => ({
    brand_id: e.brandId, id: randomUUID(), occurred_at: at, event_type: e.eventType, entity_type: e.entityType, entity_id: e.entityId,
    payload: JSON.stringify(e.payload), actor: e.actor,
  }))).returning(insertedEventColumns);
}

/** The columns of the events a statement inserts, as its CTE `e` returns them for {@link eventDeliveries}. */
export const insertedEventColumns = ['brand_id', 'id', 'occurred_at', 'event_type', 'entity_type', 'entity_id', 'payload', 'actor'] as const;

/** The schema with a statement's inserted events as the CTE `e`. */
type WithInsertedEvents = Tables & { e: Pick<Tables['mint_events'], (typeof insertedEventColumns)[number]> };

/**
 * The insert of the webhook deliveries of the events a statement inserted as its CTE `e` (returning
 * {@link insertedEventColumns}): one pending delivery per event and enabled endpoint of the event's
 * brand whose filter wants the event's type. Every statement that writes events makes its
 * deliveries with it, as a CTE or as the statement itself. `qc` is the statement's query creator,
 * seen here with `e` alone (Kysely cannot type a builder over any schema that has `e`; the
 * statement's other CTEs stay in it). `brandId`, given when every event is that brand's, names the
 * brand in the join: Citus then routes it to the brand's shard (about 15 ms against 45-95 ms for a
 * join over every shard's endpoints); plain PostgreSQL reads it as the join's own condition.
 */
export function eventDeliveries<DB extends Tables>(qc: QueryCreator<DB>, brandId?: string) {
  return (qc as unknown as QueryCreator<WithInsertedEvents>).insertInto('webhook_deliveries')
    .columns(['brand_id', 'id', 'endpoint_id', 'event_id', 'event_type', 'body', 'status', 'attempts', 'next_attempt_at', 'created_at', 'updated_at'])
    .expression((eb) => eb.selectFrom('e')
      .innerJoin('webhook_endpoints as w', (join) => join.onRef('w.brand_id', '=', 'e.brand_id'))
      .$if(brandId !== undefined, (q) => q.where('w.brand_id', '=', eb.cast<string>(eb.val(brandId!), 'uuid')))
      .where('w.enabled', '=', true)
      .where(endpointWants())
      .select(deliveryColumns()));
}

/** A delivery row's columns, selected from an event `e` joined to an endpoint `w`: pending, due when the event happened. */
function deliveryColumns() {
  return [
    'e.brand_id', sql<string>`gen_random_uuid()`.as('id'), 'w.id as endpoint_id', 'e.id as event_id', 'e.event_type', deliveryBody().as('body'),
    sql<string>`'pending'`.as('status'), sql<number>`0`.as('attempts'), 'e.occurred_at as next_attempt_at', 'e.occurred_at as created_at',
    'e.occurred_at as updated_at',
  ] as const;
}

/** One event as a prepared statement's parameters (see {@link gatedEventInsert}). */
export interface EventParams {
  brandId: string; eventId: string; at: Date; eventType: string; entityType: string; entityId: string; payload: string; actor: string | null;
}

/** The CTEs a statement gates its event on: a row there means the statement's change was made. */
type EventGate = 'lease' | 'claimed';

/**
 * The insert of one event from a prepared statement's parameters, made only when the statement's
 * CTE `gate` has a row (its change was made) and `when` (a boolean parameter, or true) holds; it
 * returns {@link insertedEventColumns}, so the statement's {@link eventDeliveries} follow it as `e`.
 * `qc` is seen with the gate alone, as in eventDeliveries.
 */
export function gatedEventInsert<DB extends Tables>(qc: QueryCreator<DB>, gate: EventGate, p: EventParams, when: unknown = true) {
  return (qc as unknown as QueryCreator<Tables & Record<EventGate, Record<string, never>>>).insertInto('mint_events')
    .columns(insertedEventColumns)
    .expression((eb) => eb.selectFrom(gate).select([
      eb.cast<string>(eb.val(p.brandId), 'uuid').as('brand_id'), eb.cast<string>(eb.val(p.eventId), 'uuid').as('id'),
      eb.cast<Date>(eb.val(p.at), 'timestamptz').as('occurred_at'), eb.cast<string>(eb.val(p.eventType), 'text').as('event_type'),
      eb.cast<string>(eb.val(p.entityType), 'text').as('entity_type'), eb.cast<string>(eb.val(p.entityId), 'text').as('entity_id'),
      eb.cast<string>(eb.val(p.payload), 'jsonb').as('payload'), eb.cast<string | null>(eb.val(p.actor), 'text').as('actor'),
    ]).where(() => sql<boolean>`${when}::boolean`))
    .returning(insertedEventColumns);
}
