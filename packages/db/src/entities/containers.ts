import { defineEntity, p, type InferEntity } from '@mikro-orm/core';
import { columns } from './columns.ts';

/** A brand's aggregation settings and its SSCC serial reference counter (a row from its first setting or mint). */
export const ContainerSettingsRow = defineEntity({
  name: 'ContainerSettingsRow',
  tableName: 'container_settings',
  properties: {
    brandId: columns.brandId(),
    /** Deepest nesting of containers (a case in a pallet is 2). */
    maxDepth: p.integer(),
    /** The next SSCC serial reference to issue; only ever incremented. */
    nextSerialRef: p.bigint('number'),
    updatedAt: columns.updatedAt(),
  },
});
export type ContainerSettingsRow = InferEntity<typeof ContainerSettingsRow>;

/** One MintContainers request: its key, and the serial references it issued (a contiguous run). */
export const ContainerMintRow = defineEntity({
  name: 'ContainerMintRow',
  tableName: 'container_mints',
  properties: {
    brandId: columns.brandId(),
    id: columns.id(),
    /** The caller's key; unique per brand. */
    idempotencyKey: p.text(),
    /** SHA-256 of the request, so a key reused for another request is refused. */
    requestHash: p.text(),
    /** case, pallet, ... */
    level: p.text(),
    /** The SSCCs' extension digit. */
    extensionDigit: p.integer(),
    /** Containers minted. */
    count: p.integer(),
    /** The company prefix they were minted under. */
    companyPrefix: p.text(),
    /** Serial reference of the first; the others follow it. */
    firstSerialRef: p.bigint('number'),
    /** User or API key that asked. */
    actor: p.text().nullable(),
    createdAt: columns.createdAt(),
  },
  uniques: [{ name: 'container_mints_key_unique', properties: ['brandId', 'idempotencyKey'] }],
});
export type ContainerMintRow = InferEntity<typeof ContainerMintRow>;

/** A container (case, pallet, ...) identified by its SSCC, and the container it is in. */
export const ContainerRow = defineEntity({
  name: 'ContainerRow',
  tableName: 'containers',
  properties: {
    brandId: columns.brandId(),
    id: columns.id(),
    /** Its SSCC (GS1 AI 00), 18 digits; unique per brand (and across brands through the unique company prefix). */
    sscc: p.text(),
    /** case, pallet, ... as minted. */
    level: p.text(),
    /** The brand's resolver base when minted: its EPC is `{base}/00/{sscc}`. */
    resolverBaseUrl: p.text(),
    /** commissioned or decommissioned. */
    state: p.text(),
    /** The decommissioning reason; null otherwise. */
    reason: p.text().nullable(),
    /** The container it is packed in; null: none. */
    parentId: p.uuid().nullable(),
    /** The mint that issued it. */
    mintId: p.uuid(),
    createdAt: columns.createdAt(),
    /** Last change of its state or parent. */
    changedAt: columns.time(),
  },
  uniques: [{ name: 'containers_sscc_unique', properties: ['brandId', 'sscc'] }],
  indexes: [
    { name: 'containers_parent_index', properties: ['brandId', 'parentId'] },
    { name: 'containers_mint_index', properties: ['brandId', 'mintId'] },
  ],
});
export type ContainerRow = InferEntity<typeof ContainerRow>;

/** The container a unit is packed in; a unit has at most one (the key). */
export const UnitContainerRow = defineEntity({
  name: 'UnitContainerRow',
  tableName: 'unit_containers',
  properties: {
    brandId: columns.brandId(),
    mintBatchId: p.uuid().primary(),
    /** The unit's seq in its batch. */
    seq: p.integer().primary(),
    containerId: p.uuid(),
    packedAt: columns.time(),
  },
  indexes: [{ name: 'unit_containers_container_index', properties: ['brandId', 'containerId', 'mintBatchId', 'seq'] }],
});
export type UnitContainerRow = InferEntity<typeof UnitContainerRow>;

/** One pack or unpack request: its key and what it moved. */
export const ContainerOpRow = defineEntity({
  name: 'ContainerOpRow',
  tableName: 'container_ops',
  properties: {
    brandId: columns.brandId(),
    id: columns.id(),
    /** The caller's key (or `epcis:{event id}` for a captured event); unique per brand. */
    idempotencyKey: p.text(),
    requestHash: p.text(),
    /** pack or unpack. */
    op: p.text(),
    /** The parent container. */
    containerId: p.uuid(),
    /** Units packed or unpacked. */
    units: p.integer(),
    /** Containers packed or unpacked. */
    containers: p.integer(),
    actor: p.text().nullable(),
    createdAt: columns.createdAt(),
  },
  uniques: [{ name: 'container_ops_key_unique', properties: ['brandId', 'idempotencyKey'] }],
});
export type ContainerOpRow = InferEntity<typeof ContainerOpRow>;
