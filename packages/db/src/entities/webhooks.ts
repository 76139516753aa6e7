import { defineEntity, p, type InferEntity } from '@mikro-orm/core';
import { columns } from './columns.ts';

/** A brand's webhook endpoint: where the audit events matching its filter are delivered, signed. */
export const WebhookEndpoint = defineEntity({
  name: 'WebhookEndpoint',
  tableName: 'webhook_endpoints',
  properties: {
    brandId: columns.brandId(),
    id: columns.id(),
    /** https URL the deliveries are POSTed to (http only for loopback in dev mode). */
    url: p.text(),
    /** Free text for the brand. */
    description: p.text().default(''),
    /** Event types delivered; empty delivers every event. */
    eventTypes: p.array(),
    /** Deliveries are attempted only while enabled. */
    enabled: p.boolean().default(true),
    /** Why the service disabled it (gone, failing); null when enabled or disabled by the brand. */
    disabledReason: p.text().nullable(),
    /** Current signing secret (`whsec_...`); kept recoverable because it signs, never logged or returned after creation or rotation. */
    secret: p.text(),
    /** The secret before the last rotation; signs too until `previousSecretExpiresAt`. */
    previousSecret: p.text().nullable(),
    /** When the previous secret stops signing. */
    previousSecretExpiresAt: columns.time().nullable(),
    /** Since when deliveries have failed without a success in between; null when the last one succeeded. */
    failingSince: columns.time().nullable(),
    /** Attempts failed in a row since the last success; the circuit breaker pauses the endpoint from a threshold on. */
    consecutiveFailures: p.integer().default(0),
    /** While in the future, the endpoint's due deliveries wait (its circuit is open); null when it is not paused. */
    pausedUntil: columns.time().nullable(),
    /**
     * When it was inserted or last enabled, on the database's clock (the statement's time): the
     * fan-out gives it the events written from then on ...
     */
    enabledSince: p.datetime().columnType('timestamptz').defaultRaw('statement_timestamp()'),
    /** ... until it was last disabled (the database's clock); null while enabled. */
    disabledAt: p.datetime().columnType('timestamptz').nullable(),
    createdAt: columns.createdAt(),
    updatedAt: columns.updatedAt(),
  },
  indexes: [{ properties: ['brandId', 'createdAt', 'id'] }],
});
export type WebhookEndpoint = InferEntity<typeof WebhookEndpoint>;

/**
 * One audit event to deliver to one endpoint, written by the fan-out after the event (unique per
 * event and endpoint). Its id is the
 * `webhook-id` (stable across attempts); the worker claims due rows under a lease.
 */
export const WebhookDelivery = defineEntity({
  name: 'WebhookDelivery',
  tableName: 'webhook_deliveries',
  properties: {
    brandId: columns.brandId(),
    id: columns.id(),
    endpointId: columns.ref(),
    /** The audit event delivered. */
    eventId: columns.ref(),
    /** The event's type, for listing. */
    eventType: p.text(),
    /** The body sent: `{ type, timestamp, data }`. */
    body: p.json<Record<string, unknown>>(),
    /** pending, delivering, succeeded or failed (packages/domain/src/webhooks.ts). */
    status: p.text(),
    /** Attempts made. */
    attempts: p.integer().default(0),
    /** When a pending delivery is due. */
    nextAttemptAt: columns.time(),
    /** When a delivering worker's lease lapses; another worker may then claim it. */
    leaseExpiresAt: columns.time().nullable(),
    /** HTTP status of the last answer; null when none came. */
    lastStatusCode: p.integer().nullable(),
    /** How long the last attempt took, in ms. */
    lastDurationMs: p.integer().nullable(),
    /** Why the last attempt failed without an answer, or the start of the answer's body (at most 4 KiB read). */
    lastError: p.text().nullable(),
    /** When it succeeded. */
    deliveredAt: columns.time().nullable(),
    createdAt: columns.createdAt(),
    updatedAt: columns.updatedAt(),
  },
  indexes: [
    { properties: ['brandId', 'endpointId', 'createdAt', 'id'] },
    { name: 'webhook_deliveries_due_index', properties: ['status', 'nextAttemptAt'] },
    { name: 'webhook_deliveries_brand_due_index', properties: ['status', 'brandId', 'nextAttemptAt'] },
  ],
  uniques: [{ properties: ['brandId', 'eventId', 'endpointId'] }],
});
export type WebhookDelivery = InferEntity<typeof WebhookDelivery>;

/**
 * An event whose webhook deliveries are not written yet: inserted with the event when its brand had
 * an enabled endpoint wanting it; the webhook worker's fan-out writes the deliveries and deletes it
 * in one transaction.
 */
export const WebhookFanout = defineEntity({
  name: 'WebhookFanout',
  tableName: 'webhook_fanouts',
  properties: {
    brandId: columns.brandId(),
    eventId: p.uuid().primary(),
    /** The event's time: the fan-out takes each brand's oldest first. */
    occurredAt: columns.time(),
    /** The writer's statement time on the database's clock: the event goes to the endpoints enabled then. */
    writtenAt: p.datetime().columnType('timestamptz').defaultRaw('statement_timestamp()'),
  },
  indexes: [{ properties: ['brandId', 'occurredAt'] }],
});
export type WebhookFanout = InferEntity<typeof WebhookFanout>;
