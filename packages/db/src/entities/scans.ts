import { defineEntity, p, type InferEntity } from '@mikro-orm/core';
import { columns } from './columns.ts';

/**
 * One resolution of a public resolver URL, or one scan an edge sent (record_scan_event), written
 * in batches off the request path; a full queue drops events rather than slowing the resolver.
 * Partitioned by UTC day of `scanned_at` (`scan_events_pYYYYMMDD`, and `scan_events_default` for a
 * day without a partition); retention drops a day's partition whole.
 */
export const ScanEvent = defineEntity({
  name: 'ScanEvent',
  tableName: 'scan_events',
  properties: {
    brandId: columns.brandId(),
    /** Sequence number; scans are append-only and never referenced. */
    id: p.bigint('number').primary().autoincrement(),
    /** When the resolver answered; the partition key, so part of the primary key. */
    scannedAt: columns.time().primary(),
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
    /** The scanned unit's batch; null when the path named no known unit, or for a scan recorded before it was kept (its unit is then found by serial). */
    mintBatchId: p.uuid().nullable(),
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

/**
 * A brand's scans of one UTC day in one cell: GTIN, mint batch, lot, country, client class and
 * unit state ('' where the scan had none). Made by the sweeper from a closed day's raw scans (and
 * made again when late scans of the day arrive); kept for the product's life.
 */
export const ScanDailyRollup = defineEntity({
  name: 'ScanDailyRollup',
  tableName: 'scan_daily_rollups',
  properties: {
    brandId: columns.brandId(),
    /** The UTC day. */
    day: p.string().columnType('date').primary(),
    /** GTIN-14 of the scans; '' for none. */
    gtin: p.text().primary(),
    /** Mint batch of the scanned unit (serial and token scans of known units); '' for none. */
    mintBatchId: p.text().primary(),
    /** Lot code of the path; '' for none. */
    lot: p.text().primary(),
    /** Country from the trusted proxy's header; '' for none. */
    country: p.text().primary(),
    /** browser, app, bot or other; '' for none. */
    clientClass: p.text().primary(),
    /** '' (the path named no unit), known, or never_issued (a serial the brand never minted). */
    unitState: p.text().primary(),
    /** Scans (the raw rows' counts summed). */
    scans: p.bigint('number'),
    /** Scans of serials the brand never issued. */
    neverIssued: p.bigint('number'),
    /** Distinct visitor hashes of the cell and day. */
    visitors: p.integer(),
    /** First scan of the cell that day. */
    firstAt: columns.time(),
    /** Last scan of the cell that day. */
    lastAt: columns.time(),
  },
});
export type ScanDailyRollup = InferEntity<typeof ScanDailyRollup>;

/**
 * A brand's day with scans: every write of a scan of a closed day bumps `version`; the sweeper
 * rolls the day up and sets `rolled_version` to the version it read, so a day is rolled up when
 * the two are equal.
 */
export const ScanRollupDay = defineEntity({
  name: 'ScanRollupDay',
  tableName: 'scan_rollup_days',
  properties: {
    brandId: columns.brandId(),
    /** The UTC day. */
    day: p.string().columnType('date').primary(),
    /** Bumped by each write of the day's scans. */
    version: p.bigint('number').default(1),
    /** The version the day's rollup was made from; 0 before the first. */
    rolledVersion: p.bigint('number').default(0),
  },
});
export type ScanRollupDay = InferEntity<typeof ScanRollupDay>;
