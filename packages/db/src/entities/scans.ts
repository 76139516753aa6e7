import { defineEntity, p, type InferEntity } from '@mikro-orm/core';
import { columns } from './columns.ts';

/**
 * One resolution of a public resolver URL (the spec's planned record_scan_event), written in
 * batches off the request path; a full queue drops events rather than slowing the resolver.
 */
export const ScanEvent = defineEntity({
  name: 'ScanEvent',
  tableName: 'scan_events',
  properties: {
    brandId: columns.brandId(),
    /** Sequence number; scans are append-only and never referenced. */
    id: p.bigint('number').primary().autoincrement(),
    /** When the resolver answered. */
    scannedAt: columns.time(),
    /** serial, lot, gtin or token: the route that was asked. */
    kind: p.text(),
    /** GTIN-14 of the path, when it had one. */
    gtin: p.text().nullable(),
    /** Serial, lot code or token of the path, when it had one. */
    identifier: p.text().nullable(),
    /** resolved, not_found, gone or not_activated. */
    outcome: p.text(),
    /** redirect, json or linkset. */
    representation: p.text(),
    /** GS1 link type of the link served (pip, sustainabilityInfo, ...); null when no link was (a linkset, JSON or a refusal). */
    linkType: p.text().nullable(),
    /** False when the path named a serial the brand never minted (it walked up to its product); null when the path named no unit. */
    unitKnown: p.boolean().nullable(),
    /** How many scans the row stands for: 1, or one client's repeats of a scan within a window, or a flood of never-issued serials counted under its GTIN (identifier null). */
    scans: p.integer().default(1),
    /** The unit's status when it was scanned (inactive, active, ...); null when the path named no known unit. */
    unitStatus: p.text().nullable(),
    /** Lot code of the path (AI 10), for a lot's scan or a serial's with a lot qualifier; null otherwise. */
    lot: p.text().nullable(),
    /** ISO 3166-1 alpha-2 country from a trusted proxy's header (`SCAN_COUNTRY_HEADER`); never derived from an address. */
    country: p.text().nullable(),
    /** browser, app, bot or other, classified from the User-Agent (the agent itself is not kept). */
    clientClass: p.text().nullable(),
    /** HMAC of the client's address and agent under a salt of one UTC day, forgotten after it: counts distinct visitors within a day only. */
    visitor: p.text().nullable(),
    /** resolver (answered here) or ingest (sent by an edge resolver or a log shipper). */
    source: p.text().default('resolver'),
  },
  indexes: [
    { properties: ['brandId', 'scannedAt'] },
    // A unit's first and last scans, and the per-GTIN reads, walk one identity's range in time order.
    { name: 'scan_events_identity_index', properties: ['brandId', 'gtin', 'identifier', 'scannedAt'] },
    // Rows arrive in time order, so a BRIN index (a few pages, nearly free to maintain) finds the
    // old ranges the retention sweep deletes.
    { properties: ['scannedAt'], type: 'brin' },
  ],
});
export type ScanEvent = InferEntity<typeof ScanEvent>;

/**
 * One ingested batch of scans, by its batch key: a replay of the key answers what the first call
 * did (its accepted count and refused rows) and writes nothing.
 */
export const ScanIngestBatch = defineEntity({
  name: 'ScanIngestBatch',
  tableName: 'scan_ingest_batches',
  properties: {
    brandId: columns.brandId(),
    /** The sender's key of the batch. */
    batchKey: p.text().primary(),
    /** Rows written. */
    accepted: p.integer(),
    /** Refused rows as JSON text: [{index, field, message}]. */
    rejected: p.text(),
    createdAt: columns.createdAt(),
  },
});
export type ScanIngestBatch = InferEntity<typeof ScanIngestBatch>;

/**
 * A brand's settings of the scan rules (ScanService.UpdateScanAlertSettings); a brand without a
 * row has the defaults. Read by the rules through a short per-brand cache.
 */
export const ScanAlertSettingsRow = defineEntity({
  name: 'ScanAlertSettingsRow',
  tableName: 'scan_alert_settings',
  properties: {
    brandId: columns.brandId(),
    /** Alerts on serials the brand never issued. */
    neverIssued: p.boolean(),
    /** Alerts on scans of withdrawn units. */
    withdrawn: p.boolean(),
    /** Alerts on suspected clones. */
    clone: p.boolean(),
    /** Burst alerts of never-issued scans beyond the minute's budget. */
    burst: p.boolean(),
    /** Two countries within this many hours make a clone. */
    cloneWindowHours: p.integer(),
    /** More distinct visitors than this in a day make a clone. */
    cloneVisitorsPerDay: p.integer(),
    /** Single alerts of each rule a minute. */
    alertsPerMinute: p.integer(),
    /** Unit statuses or decommission reasons that raise no withdrawn-unit alert (JSON array of names). */
    withdrawnIgnored: p.json<string[]>(),
    updatedAt: columns.updatedAt(),
  },
});
export type ScanAlertSettingsRow = InferEntity<typeof ScanAlertSettingsRow>;
