import { defineEntity, p, type InferEntity } from '@mikro-orm/core';
import type { PackProfile } from '@mint/domain';
import { columns } from './columns.ts';

/** A pack's profile as stored (camelCase keys of the domain's PackProfile; layout null for the default). */
export interface StoredPackProfile {
  readonly formats: readonly string[];
  readonly seqFrom: number | null;
  readonly seqTo: number | null;
  readonly symbology: string;
  readonly layout: Readonly<Record<string, string | number>> | null;
}

/** A PackProfile as stored with its pack. */
export function storedPackProfile(profile: PackProfile): StoredPackProfile {
  return { formats: [...profile.formats], seqFrom: profile.seqFrom, seqTo: profile.seqTo, symbology: profile.symbology, layout: { ...profile.layout } };
}

/** An audit event, appended in the same transaction as the change it reports. */
export const MintEvent = defineEntity({
  name: 'MintEvent',
  tableName: 'mint_events',
  properties: {
    brandId: columns.brandId(),
    id: columns.id(),
    /** Time of the change. */
    occurredAt: columns.time(),
    eventType: p.text(),
    entityType: p.text(),
    /** Id of the entity as text. */
    entityId: p.text(),
    /** Details: counts, statuses, reasons. */
    payload: p.json<Record<string, unknown>>(),
    /** User or API key that caused it; null for the executor. */
    actor: p.text().nullable(),
  },
  indexes: [
    { properties: ['brandId', 'occurredAt', 'id'] },
    { properties: ['brandId', 'eventType', 'occurredAt', 'id'] },
    { properties: ['brandId', 'entityId', 'occurredAt', 'id'] },
  ],
});
export type MintEvent = InferEntity<typeof MintEvent>;

/** An export artifact of a batch in the private store. */
export const PayloadPack = defineEntity({
  name: 'PayloadPack',
  tableName: 'payload_packs',
  properties: {
    brandId: columns.brandId(),
    id: columns.id(),
    mintBatchId: columns.ref(),
    /** pending, generating, ready or failed. */
    status: p.text(),
    /** Path relative to the private store; null while pending. */
    storagePath: p.text().nullable(),
    /** Units written once ready. */
    unitCount: p.integer().nullable(),
    /** Why generation failed. */
    error: p.text().nullable(),
    createdAt: columns.createdAt(),
    updatedAt: columns.updatedAt(),
    /** Claims so far; also the fencing token of the current generator's writes. */
    attempts: p.integer().default(0),
    /** When the generating worker's lease lapses; another worker may then claim the pack. */
    leaseExpiresAt: columns.time().nullable(),
    /** Formats, unit range, symbology and label layout (a PackProfile; layout null for the default). */
    profile: p.json<StoredPackProfile>(),
    /** completion, request or void. */
    purpose: p.text().default('completion'),
  },
  indexes: [
    { properties: ['brandId', 'createdAt', 'id'] },
    { name: 'payload_packs_batch_list_index', properties: ['brandId', 'mintBatchId', 'createdAt', 'id'] },
    { name: 'payload_packs_claim_index', properties: ['status', 'createdAt'] },
  ],
});
export type PayloadPack = InferEntity<typeof PayloadPack>;

/**
 * Jobs to publish to the bus, written in the transaction that creates the job; the relay publishes
 * and deletes them, so a job is never lost when the bus is down at submit time.
 */
export const OutboxMessage = defineEntity({
  name: 'OutboxMessage',
  tableName: 'outbox',
  properties: {
    id: p.bigint('number').primary().autoincrement(),
    brandId: p.uuid(),
    /** mint or import. */
    kind: p.text(),
    /** Job (or import) id; the bus deduplicates on it. */
    jobId: p.uuid(),
    createdAt: columns.createdAt(),
  },
});
export type OutboxMessage = InferEntity<typeof OutboxMessage>;

/** A response kept for an Idempotency-Key of the HTTP API, scoped to the workspace. */
export const IdempotencyRecord = defineEntity({
  name: 'IdempotencyRecord',
  tableName: 'idempotency_records',
  // The executor's sweeper deletes expired records by this.
  indexes: [{ properties: ['expiresAt'] }],
  properties: {
    brandId: columns.brandId(),
    /** The client's Idempotency-Key. */
    key: p.text().primary(),
    /** Route the key was used on. */
    route: p.text(),
    /** SHA-256 of the request body; a different body with the same key is refused. */
    requestHash: p.text(),
    /** in_progress until the first request finished, then completed. */
    state: p.text(),
    responseStatus: p.integer().nullable(),
    /** The first response's body as sent (JSON text, not jsonb, which would reorder its keys): a replay answers the same bytes. */
    responseBody: p.text().nullable(),
    createdAt: columns.createdAt(),
    /** When the key may be forgotten. */
    expiresAt: columns.time(),
  },
});
export type IdempotencyRecord = InferEntity<typeof IdempotencyRecord>;
