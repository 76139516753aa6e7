import { randomUUID } from 'node:crypto';
import { sql, type QueryCreator, type RawBuilder } from 'kysely';
import type { NewEvent } from '@mint/domain';
import type { Em } from '../orm.ts';
import type { Tables } from '../tables.ts';
import { onCitus } from '../distribution.ts';
import { inTransaction } from './catalog.ts';
import { changed } from './kysely.ts';

/**
 * True when the endpoint aliased `w` gets the event aliased `e`: its filter wants the type (an empty
 * filter wants all), and an event about an endpoint (webhook_endpoint_created, _updated,
 * _secret_rotated) goes to that endpoint alone, never to the brand's others: managing N endpoints
 * then writes N deliveries, not N². (Which endpoints were enabled when the event was written is the
 * caller's condition: the marker's probe, the fan-out's `enabled_since` and `disabled_at`.)
 */
export function endpointWants(): RawBuilder<boolean> {
  return sql<boolean>`(cardinality(w.event_types) = 0 or e.event_type = any(w.event_types))
    and (e.entity_type <> 'webhook_endpoint' or e.entity_id = w.id::text)`;
}

/**
 * Appends audit events in the entity manager's transaction, all stamped `at`, and in the same
 * statement their fan-out markers: a `webhook_fanouts` row for each event its brand has an enabled
 * endpoint wanting (one index probe, whatever the brand's endpoints). The deliveries themselves are
 * written after the commit by the webhook worker's fan-out (`fanOutWebhookEvents`), outside the
 * writer's transaction: a writer's cost no longer grows with the brand's endpoints, and an event
 * committed with its marker always gets its deliveries (a rolled-back change leaves neither).
 */
export async function appendEvents(em: Em, at: Date, events: readonly NewEvent[]): Promise<void> {
  if (events.length === 0) return;
  if (await onCitus(em)) return appendEventsRouted(em, at, events);
  await changed(em, (db) => eventFanouts(db.with('e', (qc) => eventsInsert(qc, at, events))));
}

/**
 * {@link appendEvents} on Citus, in one transaction: the events, then per brand the markers of its
 * events just written, each statement routed to the brand's shard.
 */
async function appendEventsRouted(em: Em, at: Date, events: readonly NewEvent[]): Promise<void> {
  const rows = events.map((e) => ({
    brand_id: e.brandId,
    id: randomUUID(),
    occurred_at: at,
    event_type: e.eventType,
    entity_type: e.entityType,
    entity_id: e.entityId,
    payload: JSON.stringify(e.payload),
    actor: e.actor,
  }));
  await inTransaction(em, async (em) => {
    await changed(em, (db) => db.insertInto('mint_events').values(rows));
    for (const brandId of new Set(rows.map((r) => r.brand_id))) {
      const ids = rows.filter((r) => r.brand_id === brandId).map((r) => r.id);
      await changed(em, (db) =>
        db
          .insertInto('webhook_fanouts')
          .columns(['brand_id', 'event_id', 'occurred_at'])
          .expression((eb) =>
            eb
              .selectFrom('mint_events as e')
              .where('e.brand_id', '=', brandId)
              .where('e.id', '=', eb.fn.any(eb.cast<string[]>(eb.val(ids), sql`uuid[]`)))
              .where(({ exists, selectFrom }) =>
                exists(
                  selectFrom('webhook_endpoints as w')
                    .select(sql<number>`1`.as('one'))
                    .where('w.brand_id', '=', brandId)
                    .where('w.enabled', '=', true)
                    .where(endpointWants()),
                ),
              )
              .select(['e.brand_id', 'e.id as event_id', 'e.occurred_at']),
          ),
      );
    }
  });
}

/**
 * The insert of `events`, all stamped `at`, returning {@link insertedEventColumns}: a statement's
 * CTE `e`, which its {@link eventFanouts} follow. `qc` is seen with the schema alone (the
 * statement's other CTEs stay in it).
 */
export function eventsInsert<DB extends Tables>(qc: QueryCreator<DB>, at: Date, events: readonly NewEvent[]) {
  return (qc as unknown as QueryCreator<Tables>)
    .insertInto('mint_events')
    .values(
      events.map((e) => ({
        brand_id: e.brandId,
        id: randomUUID(),
        occurred_at: at,
        event_type: e.eventType,
        entity_type: e.entityType,
        entity_id: e.entityId,
        payload: JSON.stringify(e.payload),
        actor: e.actor,
      })),
    )
    .returning(insertedEventColumns);
}

/** The columns of the events a statement inserts, as its CTE `e` returns them for {@link eventFanouts}. */
export const insertedEventColumns = ['brand_id', 'id', 'occurred_at', 'event_type', 'entity_type', 'entity_id', 'payload', 'actor'] as const;

/** The schema with a statement's inserted events as the CTE `e`. */
type WithInsertedEvents = Tables & { e: Pick<Tables['mint_events'], (typeof insertedEventColumns)[number]> };

/**
 * The insert of the fan-out markers of the events a statement inserted as its CTE `e` (returning
 * {@link insertedEventColumns}): one `webhook_fanouts` row per event whose brand has an enabled
 * endpoint wanting it, so the webhook worker's fan-out writes its deliveries after the commit (and
 * an event no endpoint wants costs no row). Every statement that writes events makes their markers
 * with it, as a CTE or as the statement itself. `qc` is the statement's query creator, seen here
 * with `e` alone (Kysely cannot type a builder over any schema that has `e`; the statement's other
 * CTEs stay in it). `brandId`, given when every event is that brand's, names the brand in the
 * probe: Citus then routes it to the brand's shard; plain PostgreSQL reads it as the probe's own
 * condition.
 */
export function eventFanouts<DB extends Tables>(qc: QueryCreator<DB>, brandId?: string) {
  return (qc as unknown as QueryCreator<WithInsertedEvents>)
    .insertInto('webhook_fanouts')
    .columns(['brand_id', 'event_id', 'occurred_at'])
    .expression((eb) =>
      eb
        .selectFrom('e')
        .where(({ exists, selectFrom }) =>
          exists(
            selectFrom('webhook_endpoints as w')
              .select(sql<number>`1`.as('one'))
              .whereRef('w.brand_id', '=', 'e.brand_id')
              .$if(brandId !== undefined, (q) => q.where('w.brand_id', '=', eb.cast<string>(eb.val(brandId!), 'uuid')))
              .where('w.enabled', '=', true)
              .where(endpointWants()),
          ),
        )
        .select(['e.brand_id', 'e.id as event_id', 'e.occurred_at']),
    );
}

/**
 * The body of the webhook delivery of the event aliased `e`: `{ type, timestamp, data }`, `data`
 * being the event as ListMintEvents shows it.
 */
export function deliveryBody(): RawBuilder<string> {
  return sql<string>`jsonb_build_object('type', e.event_type, 'timestamp', e.occurred_at, 'data', jsonb_build_object(
    'id', e.id, 'brand_id', e.brand_id, 'event_type', e.event_type, 'entity_type', e.entity_type, 'entity_id', e.entity_id,
    'occurred_at', e.occurred_at, 'actor', e.actor, 'payload', e.payload))`;
}

/** A delivery row's columns, selected from an event `e` joined to an endpoint `w`: pending, due when the event happened. */
export function deliveryColumns() {
  return [
    'e.brand_id',
    sql<string>`gen_random_uuid()`.as('id'),
    'w.id as endpoint_id',
    'e.id as event_id',
    'e.event_type',
    deliveryBody().as('body'),
    sql<string>`'pending'`.as('status'),
    sql<number>`0`.as('attempts'),
    'e.occurred_at as next_attempt_at',
    'e.occurred_at as created_at',
    'e.occurred_at as updated_at',
  ] as const;
}

/** One event as a prepared statement's parameters (see {@link gatedEventInsert}). */
export interface EventParams {
  brandId: string;
  eventId: string;
  at: Date;
  eventType: string;
  entityType: string;
  entityId: string;
  payload: string;
  actor: string | null;
}

/** The CTEs a statement gates its event on: a row there means the statement's change was made. */
type EventGate = 'lease' | 'claimed';

/**
 * The insert of one event from a prepared statement's parameters, made only when the statement's
 * CTE `gate` has a row (its change was made) and `when` (a boolean parameter, or true) holds; it
 * returns {@link insertedEventColumns}, so the statement's {@link eventFanouts} follow it as `e`.
 * `qc` is seen with the gate alone, as in eventFanouts.
 */
export function gatedEventInsert<DB extends Tables>(qc: QueryCreator<DB>, gate: EventGate, p: EventParams, when: unknown = true) {
  return (qc as unknown as QueryCreator<Tables & Record<EventGate, Record<string, never>>>)
    .insertInto('mint_events')
    .columns(insertedEventColumns)
    .expression((eb) =>
      eb
        .selectFrom(gate)
        .select([
          eb.cast<string>(eb.val(p.brandId), 'uuid').as('brand_id'),
          eb.cast<string>(eb.val(p.eventId), 'uuid').as('id'),
          eb.cast<Date>(eb.val(p.at), 'timestamptz').as('occurred_at'),
          eb.cast<string>(eb.val(p.eventType), 'text').as('event_type'),
          eb.cast<string>(eb.val(p.entityType), 'text').as('entity_type'),
          eb.cast<string>(eb.val(p.entityId), 'text').as('entity_id'),
          eb.cast<string>(eb.val(p.payload), 'jsonb').as('payload'),
          eb.cast<string | null>(eb.val(p.actor), 'text').as('actor'),
        ])
        .where(() => sql<boolean>`${when}::boolean`),
    )
    .returning(insertedEventColumns);
}
