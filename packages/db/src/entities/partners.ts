import { defineEntity, p, type InferEntity } from '@mikro-orm/core';
import { columns } from './columns.ts';

/** A brand's packaging line or contract manufacturer, to whom serials are allocated. */
export const PartnerRow = defineEntity({
  name: 'PartnerRow',
  tableName: 'partners',
  properties: {
    brandId: columns.brandId(),
    id: columns.id(),
    /** The name the brand gave it. */
    name: p.text(),
    /** User or API key that created it. */
    createdBy: p.text(),
    createdAt: columns.createdAt(),
  },
});
export type PartnerRow = InferEntity<typeof PartnerRow>;

/**
 * An API key of a partner (its id is the key's id), restricted to one product or one mint batch,
 * with the most serials it may be allocated and how many it was allocated so far.
 */
export const PartnerGrantRow = defineEntity({
  name: 'PartnerGrantRow',
  tableName: 'partner_grants',
  properties: {
    brandId: columns.brandId(),
    /** The API key's id. */
    id: columns.id(),
    partnerId: columns.ref(),
    /** The product whose batches it may draw from; null when restricted to a batch. */
    productId: p.uuid().nullable(),
    /** The one batch it may draw from; null when restricted to a product. */
    mintBatchId: p.uuid().nullable(),
    /** Most serials allocated under this key, ever (returns do not give quota back). */
    quota: p.integer(),
    /** Serials allocated under this key so far. */
    allocated: p.integer(),
    /** User or API key that granted it. */
    createdBy: p.text(),
    createdAt: columns.createdAt(),
  },
  indexes: [{ name: 'partner_grants_partner_index', properties: ['brandId', 'partnerId'] }],
});
export type PartnerGrantRow = InferEntity<typeof PartnerGrantRow>;

/** A partner's request for serials, kept for its idempotency key (a repeat answers the same serials). */
export const AllocationRequestRow = defineEntity({
  name: 'AllocationRequestRow',
  tableName: 'allocation_requests',
  properties: {
    brandId: columns.brandId(),
    id: columns.id(),
    /** The key (grant) that asked. */
    grantId: columns.ref(),
    partnerId: columns.ref(),
    /** The caller's key; unique per grant. */
    idempotencyKey: p.text(),
    /** SHA-256 of the request, so a key reused for another request is refused. */
    requestHash: p.text(),
    /** Serials requested (and allocated: a request is all or nothing). */
    quantity: p.integer(),
    createdAt: columns.createdAt(),
  },
  uniques: [{ name: 'allocation_requests_key_unique', properties: ['brandId', 'grantId', 'idempotencyKey'] }],
});
export type AllocationRequestRow = InferEntity<typeof AllocationRequestRow>;

/**
 * The partner a serial was allocated to, keyed by the unit's place in its batch. Written once,
 * never deleted: the primary key is the compare-and-set that keeps a serial from being allocated
 * twice, across partners and after it was returned.
 */
export const UnitAllocationRow = defineEntity({
  name: 'UnitAllocationRow',
  tableName: 'unit_allocations',
  properties: {
    brandId: columns.brandId(),
    mintBatchId: p.uuid().primary(),
    /** The unit's seq in its batch. */
    seq: p.integer().primary(),
    partnerId: columns.ref(),
    /** The key (grant) it was allocated under. */
    grantId: columns.ref(),
    /** The allocation request. */
    requestId: columns.ref(),
    allocatedAt: columns.time(),
  },
  indexes: [
    { name: 'unit_allocations_request_index', properties: ['brandId', 'requestId'] },
    { name: 'unit_allocations_partner_index', properties: ['brandId', 'partnerId', 'mintBatchId', 'seq'] },
  ],
});
export type UnitAllocationRow = InferEntity<typeof UnitAllocationRow>;

/**
 * A batch's allocation floor: every unit at or below `seq` is never allocatable again (allocated,
 * or no longer issued: neither comes back), so an allocation reads the batch from `seq + 1`. Only
 * ever raised, by the allocation that closed the units below it, in its transaction.
 */
export const AllocationFloorRow = defineEntity({
  name: 'AllocationFloorRow',
  tableName: 'allocation_floors',
  properties: {
    brandId: columns.brandId(),
    mintBatchId: p.uuid().primary(),
    /** The highest seq of the batch's run of units, from seq 1, that no allocation may take. */
    seq: p.integer(),
  },
});
export type AllocationFloorRow = InferEntity<typeof AllocationFloorRow>;
