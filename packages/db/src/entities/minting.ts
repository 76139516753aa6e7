import { defineEntity, p, type InferEntity } from '@mikro-orm/core';
import type { BlockingReason } from '@mint/domain';
import { columns } from './columns.ts';

/** A stored preflight check (preflight_mint_batch). */
export const MintPreflight = defineEntity({
  name: 'MintPreflight',
  tableName: 'mint_preflights',
  properties: {
    brandId: columns.brandId(),
    id: columns.id(),
    productId: columns.ref(),
    /** Production batch checked. */
    productionBatchId: columns.ref().nullable(),
    requestedQuantity: p.integer(),
    /** batch or serial. */
    scopeType: p.text(),
    /** pass or blocked. */
    result: p.text(),
    blockingReasons: p.json<BlockingReason[]>(),
    idempotencyKey: p.uuid().nullable(),
    /** The PREFLIGHTED job a pass leaves behind. */
    mintJobId: columns.ref().nullable(),
    createdAt: columns.createdAt(),
  },
  uniques: [{ properties: ['brandId', 'idempotencyKey'] }],
});
export type MintPreflight = InferEntity<typeof MintPreflight>;

/** A mint job: the unit of work the executor leases and advances. */
export const MintJob = defineEntity({
  name: 'MintJob',
  tableName: 'mint_jobs',
  properties: {
    brandId: columns.brandId(),
    id: columns.id(),
    /** See MintJobStatus in the domain. */
    status: p.text(),
    /** batch or serial. */
    scopeType: p.text(),
    requestedQuantity: p.integer(),
    productId: columns.ref(),
    productionBatchId: columns.ref().nullable(),
    /** Client key of submit_mint_request; unique per brand. */
    idempotencyKey: p.uuid().nullable(),
    /** Fingerprint of the request that created the job under its idempotency key (null without a key, or for jobs older than it). */
    requestHash: p.text().nullable(),
    /** Executor holding the lease; null when none does. */
    leaseOwner: p.text().nullable(),
    /** When the lease lapses. */
    leaseExpiresAt: columns.time().nullable(),
    /** Fencing token: incremented on every claim, checked by every write of the holder. */
    leaseToken: p.integer().default(0),
    /** Failed attempts so far (transient errors). */
    attempts: p.integer().default(0),
    /** Why the job failed, or the last transient error. */
    lastError: p.text().nullable(),
    createdAt: columns.createdAt(),
    updatedAt: columns.updatedAt(),
    /** When it reached COMPLETED or FAILED. */
    finishedAt: columns.time().nullable(),
  },
  uniques: [{ properties: ['brandId', 'idempotencyKey'] }],
  indexes: [{ properties: ['brandId', 'status', 'updatedAt'] }],
});
export type MintJob = InferEntity<typeof MintJob>;

/** A mint batch: the identities of one job (1:1). */
export const MintBatch = defineEntity({
  name: 'MintBatch',
  tableName: 'mint_batches',
  properties: {
    brandId: columns.brandId(),
    id: columns.id(),
    mintJobId: columns.ref(),
    productId: columns.ref(),
    productionBatchId: columns.ref().nullable(),
    /** draft, minted, exported, printed, applied or voided. */
    status: p.text(),
    /** batch or serial. */
    identityMode: p.text(),
    /** active_at_mint or first_scan. */
    activationMode: p.text(),
    requestedQuantity: p.integer(),
    /** Units (or lots' quantity) minted so far; advanced in each chunk's transaction. */
    mintedQuantity: p.integer().default(0),
    /** Resolver address unit URLs start with (the brand's, at creation). */
    resolverBaseUrl: p.text(),
    /** The product's GTIN-14 at creation; null when it has none. */
    gtin: p.text().nullable(),
    /**
     * The batch's place in its brand's serial space (serial-cipher.ts), taken from the brand's
     * counter before its first unit is minted; its units' serials encode (ordinal, seq) under the
     * brand's key. Null for lot batches and for serial batches minted before (random serials).
     */
    serialOrdinal: p.bigint('number').nullable(),
    createdAt: columns.createdAt(),
    updatedAt: columns.updatedAt(),
  },
  uniques: [
    { properties: ['brandId', 'mintJobId'] },
    // Partial: where serial_ordinal is not null (Migration20261130000000_serial_codec).
    { name: 'mint_batches_serial_ordinal_unique', properties: ['brandId', 'serialOrdinal'] },
  ],
  indexes: [{ properties: ['brandId', 'createdAt', 'id'] }],
});
export type MintBatch = InferEntity<typeof MintBatch>;

/**
 * A brand's serial key (sealed with the secret box, bound to the brand) and its counter of batch
 * ordinals; made with the brand's first serial batch, the key never changes.
 */
export const BrandSerialKey = defineEntity({
  name: 'BrandSerialKey',
  tableName: 'brand_serial_keys',
  properties: {
    brandId: columns.brandId(),
    /** The AES-256 key of the brand's serial cipher, sealed (`enc:v1:...`, context `brand_serial_keys:{brand_id}`). */
    keySealed: p.text(),
    /** The next batch ordinal to hand out; only ever incremented. */
    nextOrdinal: p.bigint('number'),
    createdAt: columns.createdAt(),
  },
});
export type BrandSerialKey = InferEntity<typeof BrandSerialKey>;

/** A lot of a lot-mode batch. */
export const MintLot = defineEntity({
  name: 'MintLot',
  tableName: 'mint_lots',
  properties: {
    brandId: columns.brandId(),
    mintBatchId: p.uuid().primary(),
    lotCode: p.text().primary(),
    qty: p.integer(),
    /** GS1 Digital Link URI of the lot; null when the product has no GTIN. */
    resolverUrl: p.text().nullable(),
    /** GTIN-14 of the lot's product, for resolution. */
    gtin: p.text().nullable(),
    createdAt: columns.createdAt(),
  },
  indexes: [{ properties: ['brandId', 'gtin', 'lotCode'] }],
});
export type MintLot = InferEntity<typeof MintLot>;

/**
 * One minted identity. Written in bulk by the unit writer, never through the unit of work;
 * (mint_batch_id, seq) and the serial are unique, so a repeated chunk cannot mint twice. A row
 * holds only what differs between units: the GTIN and the resolver URL are the batch's and are
 * derived at read time (unitResolverUrl; unitResolverUrlSql for COPY), and every index grows at
 * its edge (ids and serials of new units ascend, see unitIdOf and generateTimedSerials), so a
 * unit costs the same at any table size (bench:growth).
 */
export const MintUnit = defineEntity({
  name: 'MintUnit',
  tableName: 'mint_units',
  properties: {
    brandId: columns.brandId(),
    /**
     * Stored only for units of batches minted before ids were derived: random (version 4), or the
     * batch's id with the seq (version 8). Null for a batch with derived unit ids (hasDerivedUnitIds),
     * whose units' ids are unitIdOf(mint_batch_id, seq), derived when read.
     */
    id: p.uuid().nullable(),
    mintBatchId: p.uuid().primary(),
    /** Position in the batch, 1..requested_quantity. */
    seq: p.integer().primary(),
    /**
     * Unguessable serial, also the token of /u/ URLs: for a batch with a serial ordinal the brand
     * key's encoding of (ordinal, seq) (serial-cipher.ts), found by decoding it; before, random or
     * time-prefixed, found through the stored serials' partial index.
     */
    serial: p.text(),
    /** inactive or active. */
    status: p.text(),
    createdAt: columns.createdAt(),
    /** When it became active; null while inactive. */
    activatedAt: columns.time().nullable(),
    /** The scan rule that marked it suspect (clone, withdrawn); null when not suspect or cleared. */
    suspectRule: p.text().nullable(),
    /** When a scan rule marked it suspect; null when not suspect. */
    suspectSince: columns.time().nullable(),
  },
  uniques: [
    // The stored ids only (partial: where id is not null; see Migration20261129000000).
    { name: 'mint_units_stored_id_unique', properties: ['brandId', 'id'] },
    // Partial: where id is not null, the units that store their id, i.e. every unit whose serial
    // does not decode (Migration20261130000000_serial_codec). Encoded serials are unique by construction.
    { name: 'mint_units_stored_serial_unique', properties: ['brandId', 'serial'] },
  ],
  indexes: [
    // Without the id: a chunk's units share (brand_id, created_at), so B-tree deduplication keeps
    // one key per chunk and ~6 bytes per unit (with the id: ~74); a page's tie-break on id is an
    // incremental sort of one chunk.
    { name: 'mint_units_list_index', properties: ['brandId', 'createdAt'] },
    { name: 'mint_units_batch_list_index', properties: ['brandId', 'mintBatchId', 'createdAt'] },
  ],
});
export type MintUnit = InferEntity<typeof MintUnit>;

/**
 * Dashboard counters of a brand, changed in the same transactions as what they count, split into
 * shards (one per writing connection, see repositories/kpis.ts) so concurrent writers of one brand
 * never wait for each other's row; a brand's counters are the sums over its shards.
 */
export const MintKpis = defineEntity({
  name: 'MintKpis',
  tableName: 'mint_kpis',
  properties: {
    brandId: columns.brandId(),
    /** Which of the brand's counter rows: the writing connection's backend pid modulo kpiShards. */
    shard: p.integer().primary(),
    totalTokensMinted: p.bigint('number').default(0),
    activeTokens: p.bigint('number').default(0),
    batchesCreated: p.bigint('number').default(0),
    exportedPrinted: p.bigint('number').default(0),
  },
});
export type MintKpis = InferEntity<typeof MintKpis>;
