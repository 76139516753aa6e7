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
  },
  indexes: [
    { properties: ['brandId', 'scannedAt'] },
    // Rows arrive in time order, so a BRIN index (a few pages, nearly free to maintain) finds the
    // old ranges the retention sweep deletes.
    { properties: ['scannedAt'], type: 'brin' },
  ],
});
export type ScanEvent = InferEntity<typeof ScanEvent>;
