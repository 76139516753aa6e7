// The contract's enums in the domain's terms: each wire enum paired with the domain's string
// union of the same names, both ways, and the domain's spellings by enum for the spec's JSON.

import type { DescEnum } from '@bufbuild/protobuf';
import {
  ActivationModeSchema,
  CommercialStatusSchema,
  DecommissionReasonSchema,
  IdentityModeSchema,
  LinkLevelSchema,
  MintBatchStatusSchema,
  MintJobStatusSchema,
  MintReadinessStatusSchema,
  MintUnitStatusSchema,
  PackFormatSchema,
  PaperSchema,
  PassportAccessClassSchema,
  PassportLevelSchema,
  PayloadPackPurposeSchema,
  PayloadPackStatusSchema,
  ProductImportStatusSchema,
  ProductionBatchStatusSchema,
  ScanClientClassSchema,
  ScanGroupBySchema,
  SerialActionSchema,
  SerialStateSchema,
  SymbologySchema,
  WebhookDeliveryStatusSchema,
  type ActivationMode as WireActivationMode,
  type CommercialStatus as WireCommercialStatus,
  type DecommissionReason as WireDecommissionReason,
  type IdentityMode as WireIdentityMode,
  type LinkLevel as WireLinkLevel,
  type MintBatchStatus as WireBatchStatus,
  type MintJobStatus as WireJobStatus,
  type MintReadinessStatus as WireReadinessStatus,
  type MintUnitStatus as WireUnitStatus,
  type PackFormat as WirePackFormat,
  type Paper as WirePaper,
  type PassportAccessClass as WirePassportAccessClass,
  type PassportLevel as WirePassportLevel,
  type PayloadPackPurpose as WirePackPurpose,
  type PayloadPackStatus as WirePackStatus,
  type ProductImportStatus as WireImportStatus,
  type ProductionBatchStatus as WireProductionBatchStatus,
  type ScanClientClass as WireScanClientClass,
  type ScanGroupBy as WireScanGroupBy,
  type SerialAction as WireSerialAction,
  type SerialState as WireSerialState,
  type Symbology as WireSymbology,
  type WebhookDeliveryStatus as WireDeliveryStatus,
} from '@mint/contract';
import {
  activationModes,
  batchStatuses,
  clientClasses,
  commercialStatuses,
  decommissionReasons,
  identityModes,
  importStatuses,
  InvalidInputError,
  jobStatuses,
  linkLevels,
  mintReadinessStatuses,
  packFormats,
  packPurposes,
  packStatuses,
  papers,
  productionBatchStatuses,
  restrictedPassportClasses,
  scanGroups,
  serialActions,
  serialStates,
  symbologies,
  unitStatuses,
  webhookDeliveryStatuses,
  type ActivationMode,
  type BatchStatus,
  type ClientClass,
  type CommercialStatus,
  type DecommissionReason,
  type IdentityMode,
  type ImportStatus,
  type JobStatus,
  type LinkLevel,
  type MintReadinessStatus,
  type PackFormat,
  type PackPurpose,
  type PackStatus,
  type Paper,
  type PassportAccessClass,
  type PassportLevel,
  type ProductionBatchStatus,
  type ScanGroup,
  type SerialAction,
  type SerialState,
  type Symbology,
  type UnitStatus,
  type WebhookDeliveryStatus,
} from '@mint/domain';

/** A two-way mapping between a wire enum's values and a domain string union. */
export interface EnumMapping<W extends number, D extends string, N extends boolean = false> {
  /** The domain value of `wire`; InvalidInputError on `field` for UNSPECIFIED or unknown numbers. */
  toDomain(wire: W, field: string): D;
  /** The wire value of `domain`. */
  toWire(domain: D): W;
  /** Whether a request's UNSPECIFIED (0) means none (null, as for a filter or a defaulted choice) rather than being refused. */
  readonly unspecifiedIsNone: N;
}

const spellings = new Map<string, readonly (readonly [string, number])[]>();
const mappings = new Map<string, EnumMapping<number, string, boolean>>();

/**
 * The domain's spelling of every mapped enum's values (`serial`, `active_at_mint`, `QUEUED`), by the
 * enum's full name, with the wire number each stands for: the values the spec and /v1 write, which
 * Connect JSON accepts too (see `respellEnums`).
 */
export const specSpellings: ReadonlyMap<string, readonly (readonly [string, number])[]> = spellings;

/** Every mapping by its enum's full name, for reading requests by their descriptors (see `valuesOf`). */
export const enumMappings: ReadonlyMap<string, EnumMapping<number, string, boolean>> = mappings;

/**
 * Pairs each domain value with the wire value of the same name (`MINT_JOB_STATUS_QUEUED` <->
 * 'QUEUED', `MINT_BATCH_STATUS_DRAFT` <-> 'draft'), read from the enum's descriptor; a domain value
 * without a wire value is a contract mismatch and throws at start. Registers the domain's
 * spellings in {@link specSpellings} and the mapping in {@link enumMappings}.
 */
export function enumMapping<W extends number, D extends string, N extends boolean = false>(
  schema: DescEnum,
  domainValues: readonly D[],
  unspecifiedIsNone = false as N,
): EnumMapping<W, D, N> {
  const pairs = domainValues.map((d): readonly [W, D] => {
    const value = schema.values.find((v) => v.localName.toLowerCase() === d.toLowerCase());
    if (value === undefined) throw new Error(`${schema.typeName} has no value for ${JSON.stringify(d)}`);
    return [value.number as W, d];
  });
  spellings.set(
    schema.typeName,
    pairs.map(([w, d]) => [d, w]),
  );
  const byWire = new Map<number, D>(pairs);
  const byDomain = new Map<string, W>(pairs.map(([w, d]) => [d, w]));
  const mapping: EnumMapping<W, D, N> = {
    unspecifiedIsNone,
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
  mappings.set(schema.typeName, mapping);
  return mapping;
}

// `true`: a request's UNSPECIFIED means none (any level or client class, no reason, the default symbology or paper).
export const identityMode = enumMapping<WireIdentityMode, IdentityMode>(IdentityModeSchema, identityModes);
export const activationMode = enumMapping<WireActivationMode, ActivationMode>(ActivationModeSchema, activationModes);
export const jobStatus = enumMapping<WireJobStatus, JobStatus>(MintJobStatusSchema, jobStatuses);
export const batchStatus = enumMapping<WireBatchStatus, BatchStatus>(MintBatchStatusSchema, batchStatuses);
export const commercialStatus = enumMapping<WireCommercialStatus, CommercialStatus>(CommercialStatusSchema, commercialStatuses);
export const mintReadinessStatus = enumMapping<WireReadinessStatus, MintReadinessStatus>(MintReadinessStatusSchema, mintReadinessStatuses);
export const productionBatchStatus = enumMapping<WireProductionBatchStatus, ProductionBatchStatus>(ProductionBatchStatusSchema, productionBatchStatuses);
export const unitStatus = enumMapping<WireUnitStatus, UnitStatus>(MintUnitStatusSchema, unitStatuses);
export const serialState = enumMapping<WireSerialState, SerialState>(SerialStateSchema, serialStates);
export const serialAction = enumMapping<WireSerialAction, SerialAction>(SerialActionSchema, serialActions);
export const decommissionReason = enumMapping<WireDecommissionReason, DecommissionReason, true>(DecommissionReasonSchema, decommissionReasons, true);
export const packStatus = enumMapping<WirePackStatus, PackStatus>(PayloadPackStatusSchema, packStatuses);
export const importStatus = enumMapping<WireImportStatus, ImportStatus>(ProductImportStatusSchema, importStatuses);
export const linkLevel = enumMapping<WireLinkLevel, LinkLevel, true>(LinkLevelSchema, linkLevels, true);
export const packFormat = enumMapping<WirePackFormat, PackFormat>(PackFormatSchema, packFormats);
export const symbology = enumMapping<WireSymbology, Symbology, true>(SymbologySchema, symbologies, true);
export const paper = enumMapping<WirePaper, Paper, true>(PaperSchema, papers, true);
export const packPurpose = enumMapping<WirePackPurpose, PackPurpose>(PayloadPackPurposeSchema, packPurposes);
export const deliveryStatus = enumMapping<WireDeliveryStatus, WebhookDeliveryStatus>(WebhookDeliveryStatusSchema, webhookDeliveryStatuses);
export const scanClientClass = enumMapping<WireScanClientClass, ClientClass, true>(ScanClientClassSchema, clientClasses, true);
export const scanGroupBy = enumMapping<WireScanGroupBy, ScanGroup>(ScanGroupBySchema, scanGroups);
export const passportLevel = enumMapping<WirePassportLevel, PassportLevel>(PassportLevelSchema, ['model', 'lot', 'unit']);
export const passportAccessClass = enumMapping<WirePassportAccessClass, Exclude<PassportAccessClass, 'public'>>(
  PassportAccessClassSchema,
  restrictedPassportClasses,
);
