// Protobuf <-> use-case value mapping shared by the handlers: enums to the domain's string
// literals and back, timestamps to Dates, optional fields to null.

import { timestampDate, timestampFromDate, type Timestamp } from '@bufbuild/protobuf/wkt';
import {
  ActivationMode as WireActivationMode,
  CommercialStatus as WireCommercialStatus,
  IdentityMode as WireIdentityMode,
  MintBatchStatus as WireBatchStatus,
  MintJobStatus as WireJobStatus,
  MintReadinessStatus as WireReadinessStatus,
  MintUnitStatus as WireUnitStatus,
  PayloadPackStatus as WirePackStatus,
  ProductionBatchStatus as WireProductionBatchStatus,
} from '@mint/contract';
import {
  InvalidInputError,
  type ActivationMode,
  type BatchStatus,
  type CommercialStatus,
  type IdentityMode,
  type JobStatus,
  type MintReadinessStatus,
  type ProductionBatchStatus,
  type UnitStatus,
} from '@mint/domain';

/** A two-way mapping between a wire enum's values and a domain string union. */
export interface EnumMapping<W extends number, D extends string> {
  /** The domain value of `wire`; InvalidInputError on `field` for UNSPECIFIED or unknown numbers. */
  toDomain(wire: W, field: string): D;
  /** The wire value of `domain`. */
  toWire(domain: D): W;
}

function enumMapping<W extends number, D extends string>(pairs: readonly (readonly [W, D])[]): EnumMapping<W, D> {
  const byWire = new Map<number, D>(pairs);
  const byDomain = new Map<string, W>(pairs.map(([w, d]) => [d, w]));
  return {
    toDomain(wire, field) {
      const domain = byWire.get(wire);
      if (domain === undefined) {
        throw new InvalidInputError([{ field, message: `must be one of ${pairs.map(([, d]) => d).join(', ')}` }]);
      }
      return domain;
    },
    toWire(domain) {
      const wire = byDomain.get(domain);
      if (wire === undefined) throw new Error(`no wire value for ${JSON.stringify(domain)}`);
      return wire;
    },
  };
}

/** IDENTITY_MODE_BATCH <-> 'batch', IDENTITY_MODE_SERIAL <-> 'serial'. */
export const identityMode = enumMapping<WireIdentityMode, IdentityMode>([
  [WireIdentityMode.BATCH, 'batch'],
  [WireIdentityMode.SERIAL, 'serial'],
]);

/** ACTIVATION_MODE_ACTIVE_AT_MINT <-> 'active_at_mint', ACTIVATION_MODE_FIRST_SCAN <-> 'first_scan'. */
export const activationMode = enumMapping<WireActivationMode, ActivationMode>([
  [WireActivationMode.ACTIVE_AT_MINT, 'active_at_mint'],
  [WireActivationMode.FIRST_SCAN, 'first_scan'],
]);

/** MINT_JOB_STATUS_QUEUED <-> 'QUEUED', and so on for every job status. */
export const jobStatus = enumMapping<WireJobStatus, JobStatus>([
  [WireJobStatus.PREFLIGHTED, 'PREFLIGHTED'],
  [WireJobStatus.QUEUED, 'QUEUED'],
  [WireJobStatus.RESERVED, 'RESERVED'],
  [WireJobStatus.PROCESSING, 'PROCESSING'],
  [WireJobStatus.COMPLETED, 'COMPLETED'],
  [WireJobStatus.FAILED, 'FAILED'],
]);

/** MINT_BATCH_STATUS_DRAFT <-> 'draft', and so on for every batch status. */
export const batchStatus = enumMapping<WireBatchStatus, BatchStatus>([
  [WireBatchStatus.DRAFT, 'draft'],
  [WireBatchStatus.MINTED, 'minted'],
  [WireBatchStatus.EXPORTED, 'exported'],
  [WireBatchStatus.PRINTED, 'printed'],
  [WireBatchStatus.APPLIED, 'applied'],
  [WireBatchStatus.VOIDED, 'voided'],
]);

/** COMMERCIAL_STATUS_ACTIVE <-> 'ACTIVE', and so on. */
export const commercialStatus = enumMapping<WireCommercialStatus, CommercialStatus>([
  [WireCommercialStatus.DRAFT, 'DRAFT'],
  [WireCommercialStatus.ACTIVE, 'ACTIVE'],
  [WireCommercialStatus.SUSPENDED, 'SUSPENDED'],
  [WireCommercialStatus.DISCONTINUED, 'DISCONTINUED'],
]);

/** MINT_READINESS_STATUS_READY <-> 'READY', MINT_READINESS_STATUS_NOT_READY <-> 'NOT_READY'. */
export const mintReadinessStatus = enumMapping<WireReadinessStatus, MintReadinessStatus>([
  [WireReadinessStatus.NOT_READY, 'NOT_READY'],
  [WireReadinessStatus.READY, 'READY'],
]);

/** PRODUCTION_BATCH_STATUS_READY <-> 'READY', and so on. */
export const productionBatchStatus = enumMapping<WireProductionBatchStatus, ProductionBatchStatus>([
  [WireProductionBatchStatus.PLANNED, 'PLANNED'],
  [WireProductionBatchStatus.READY, 'READY'],
  [WireProductionBatchStatus.CLOSED, 'CLOSED'],
]);

/** MINT_UNIT_STATUS_ACTIVE <-> 'active', MINT_UNIT_STATUS_INACTIVE <-> 'inactive'. */
export const unitStatus = enumMapping<WireUnitStatus, UnitStatus>([
  [WireUnitStatus.INACTIVE, 'inactive'],
  [WireUnitStatus.ACTIVE, 'active'],
]);

/** Status of a payload pack as stored. */
export type PackStatus = 'pending' | 'generating' | 'ready' | 'failed';

/** PAYLOAD_PACK_STATUS_PENDING <-> 'pending', and so on. */
export const packStatus = enumMapping<WirePackStatus, PackStatus>([
  [WirePackStatus.PENDING, 'pending'],
  [WirePackStatus.GENERATING, 'generating'],
  [WirePackStatus.READY, 'ready'],
  [WirePackStatus.FAILED, 'failed'],
]);

/** A wire timestamp of a Date. */
export function toTimestamp(date: Date): Timestamp {
  return timestampFromDate(date);
}

/** The Date of an optional wire timestamp, or null when unset. */
export function dateOrNull(timestamp: Timestamp | undefined): Date | null {
  return timestamp === undefined ? null : timestampDate(timestamp);
}

/** An optional wire field as the use cases want it: null when unset. */
export function orNull<T>(value: T | undefined): T | null {
  return value === undefined ? null : value;
}

/** A nullable use-case value as an optional wire field: undefined (unset) when null. */
export function orUnset<T>(value: T | null | undefined): T | undefined {
  return value === null ? undefined : value;
}
