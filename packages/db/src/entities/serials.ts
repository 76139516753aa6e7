import { defineEntity, p, type InferEntity } from '@mikro-orm/core';
import { columns } from './columns.ts';

/**
 * The lifecycle state of a unit whose state differs from the one it was minted in (issued for a
 * manually activated unit, commissioned for an `active_at_mint` one; `mint_units.status` keeps
 * saying active exactly while the unit is commissioned). A unit without a row is in its minted
 * state, so minting writes nothing here and the cost of a batch stays flat until units move.
 * Keyed by the unit's place in its batch, not its row id, so the unit table's layout may change.
 */
export const UnitStateRow = defineEntity({
  name: 'UnitStateRow',
  tableName: 'unit_states',
  properties: {
    brandId: columns.brandId(),
    mintBatchId: p.uuid().primary(),
    /** The unit's seq in its batch. */
    seq: p.integer().primary(),
    /** encoded, scrapped, decommissioned or returned (issued and commissioned are never stored). */
    state: p.text(),
    /** The decommissioning reason; null for every other state. */
    reason: p.text().nullable(),
    /** The move that set it. */
    moveId: p.uuid(),
    /** When it was set. */
    changedAt: columns.time(),
  },
});
export type UnitStateRow = InferEntity<typeof UnitStateRow>;

/**
 * One requested move of serials (by list, seq range or batch): its idempotency key, its progress
 * and its report. A repeat of the key answers this row and moves nothing.
 */
export const SerialMoveRow = defineEntity({
  name: 'SerialMoveRow',
  tableName: 'serial_moves',
  properties: {
    brandId: columns.brandId(),
    id: columns.id(),
    /** The caller's key; unique per brand. */
    idempotencyKey: p.text(),
    /** SHA-256 of the request, so a key reused for another request is refused. */
    requestHash: p.text(),
    /** encode, commission, scrap, decommission, reactivate or return. */
    action: p.text(),
    /** The decommissioning reason; null for other actions. */
    reason: p.text().nullable(),
    /** What the request named (serials, a batch and a seq range): JSON. */
    target: p.json<Record<string, unknown>>(),
    /** running, done, or failed (its chunks failed every attempt; see `error`). */
    status: p.text(),
    /** Units the request names (known or not). */
    total: p.integer(),
    /** Units moved so far. */
    moved: p.integer(),
    /** Units refused so far. */
    refused: p.integer(),
    /** The next seq of a batch or range move still to process (chunked progress); null for a list. */
    nextSeq: p.integer().nullable(),
    /** Where a move on a container goes on: {pos, mint_batch_id, seq} in its tree (JSON); null for other moves and before its second chunk. */
    cursor: p.json<Record<string, unknown>>().nullable(),
    /** User or API key that asked. */
    actor: p.text().nullable(),
    /** Consecutive failed attempts at its next chunk; a committed chunk resets it. */
    attempts: p.integer().default(0),
    /** No worker claims the move before this time (the backoff after a failed attempt); null: at once. */
    notBefore: columns.time().nullable(),
    /** Why the move failed (the last attempt's error), when its status is failed. */
    error: p.text().nullable(),
    createdAt: columns.createdAt(),
    updatedAt: columns.updatedAt(),
  },
  uniques: [{ name: 'serial_moves_key_unique', properties: ['brandId', 'idempotencyKey'] }],
});
export type SerialMoveRow = InferEntity<typeof SerialMoveRow>;

/**
 * One unit a move refused, and why: the move's report, a row per refused unit in the order the
 * chunks refused them (`ord` from 0), appended by each chunk in its own transaction.
 */
export const SerialMoveRefusalRow = defineEntity({
  name: 'SerialMoveRefusalRow',
  tableName: 'serial_move_refusals',
  properties: {
    brandId: columns.brandId(),
    moveId: p.uuid().primary(),
    /** Its place in the move's report, from 0. */
    ord: p.integer().primary(),
    /** Its serial, when the request named it or it is known. */
    serial: p.text().nullable(),
    mintBatchId: p.uuid().nullable(),
    seq: p.integer().nullable(),
    /** unknown, wrong_state, reason_final, batch_voided or not_allocated. */
    refusal: p.text(),
    /** The state it was in; null for an unknown or not allocated unit. */
    state: p.text().nullable(),
    /** Its decommissioning reason, when it had one. */
    reason: p.text().nullable(),
  },
});
export type SerialMoveRefusalRow = InferEntity<typeof SerialMoveRefusalRow>;

/**
 * A GS1 EPCIS 2.0 event the service wrote for a move (or captured from a partner), as JSON-LD,
 * with the fields the query interface filters on.
 */
export const EpcisEventRow = defineEntity({
  name: 'EpcisEventRow',
  tableName: 'epcis_events',
  properties: {
    brandId: columns.brandId(),
    /** The event's eventID without its `urn:uuid:` prefix. */
    id: columns.id(),
    /** The move that wrote it; null for a captured event. */
    moveId: p.uuid().nullable(),
    /** ObjectEvent or AggregationEvent. */
    eventType: p.text(),
    eventTime: columns.time(),
    /** When the service recorded it. */
    recordTime: columns.time(),
    bizStep: p.text(),
    disposition: p.text().nullable(),
    /** Every EPC the event names (epcList, parentID, childEPCs), for MATCH_epc; empty for an event naming a unit range. */
    epcs: p.array().columnType('text[]'),
    /** The event as JSON-LD; without `epcList` for an event naming a unit range (expanded when read). */
    body: p.json<Record<string, unknown>>(),
    /** The partner that reported it (or was allocated its serials); null: the brand's own. A partner key's query answers only its own. */
    partnerId: p.uuid().nullable(),
    /** For an event naming units as a range (a mint chunk's commissioning): their batch; null otherwise. */
    mintBatchId: p.uuid().nullable(),
    /** The range's first seq. */
    firstSeq: p.integer().nullable(),
    /** The range's number of units (seqs `first_seq` to `first_seq + unit_count - 1`). */
    unitCount: p.integer().nullable(),
  },
  indexes: [{ name: 'epcis_events_time_index', properties: ['brandId', 'eventTime', 'id'] }],
});
export type EpcisEventRow = InferEntity<typeof EpcisEventRow>;
