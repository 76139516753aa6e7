// Protobuf <-> use-case value mapping shared by the handlers: enums to the domain's string
// literals and back, timestamps to Dates, optional fields to null.

import { timestampDate, timestampFromDate, type Timestamp } from '@bufbuild/protobuf/wkt';
import type { DescEnum, MessageInitShape } from '@bufbuild/protobuf';
import { documentFormats, packProfileOf, type DocumentFormat, type ImportView, type listPayloadPacks, type ProductView } from '@mint/usecases';

/** A pack as the use cases return it. */
type PackView = Awaited<ReturnType<typeof listPayloadPacks>>['items'][number];
import {
  ActivationModeSchema, CommercialStatusSchema, IdentityModeSchema, LinkLevelSchema, MintBatchStatusSchema, MintJobStatusSchema, MintReadinessStatusSchema,
  MintUnitStatusSchema, PayloadPackStatusSchema, ProductImportStatusSchema, ProductionBatchStatusSchema,
  PackFormatSchema, PaperSchema, PayloadPackPurposeSchema, SymbologySchema,
  type PackFormat as WirePackFormat, type Paper as WirePaper, type PayloadPackPurpose as WirePackPurpose, type Symbology as WireSymbology,
  type LabelLayout as WireLabelLayout, type PayloadPackSchema,
  type LinkLevel as WireLinkLevel,
  type SubmitMintRequestRequest,
  type ProductImportSchema,
  type ProductSchema,
  type ProductImportStatus as WireImportStatus,
  WebhookDeliveryStatusSchema,
  type WebhookDeliveryStatus as WireDeliveryStatus,
  type ActivationMode as WireActivationMode,
  type CommercialStatus as WireCommercialStatus,
  type IdentityMode as WireIdentityMode,
  type MintBatchStatus as WireBatchStatus,
  type MintJobStatus as WireJobStatus,
  type MintReadinessStatus as WireReadinessStatus,
  type MintUnitStatus as WireUnitStatus,
  type PayloadPackStatus as WirePackStatus,
  type ProductionBatchStatus as WireProductionBatchStatus,
  PassportAccessClassSchema, PassportLevelSchema, type PassportAccessClass as WirePassportAccessClass, type PassportLevel as WirePassportLevel,
  ScanClientClassSchema, ScanGroupBySchema, type ScanClientClass as WireScanClientClass, type ScanGroupBy as WireScanGroupBy,
} from '@mint/contract';
import { clientClasses, restrictedPassportClasses, scanGroups, type ClientClass, type PassportAccessClass, type PassportLevel, type ScanGroup } from '@mint/domain';
import {
  DecommissionReasonSchema, DocumentFormatSchema, SerialActionSchema, SerialStateSchema, type DocumentFormat as WireDocumentFormat,
  type DecommissionReason as WireDecommissionReason, type SerialAction as WireSerialAction, type SerialState as WireSerialState,
} from '@mint/contract';
import {
  decommissionReasons, serialActions, serialStates, type DecommissionReason, type SerialAction, type SerialState,
} from '@mint/domain';
import {
  activationModes, batchStatuses, commercialStatuses, identityModes, importStatuses, InvalidInputError, jobStatuses, linkLevels, mintReadinessStatuses, packStatuses,
  productionBatchStatuses, unitStatuses, webhookDeliveryStatuses, packFormats, papers, packPurposes, symbologies,
  type PackFormat, type Paper, type PackPurpose, type Symbology, type LabelLayout, type ImportStatus, type LinkLevel, type WebhookDeliveryStatus,
  type ActivationMode, type BatchStatus, type CommercialStatus, type IdentityMode, type JobStatus, type MintReadinessStatus, type PackStatus,
  type ProductionBatchStatus, type UnitStatus, type MintRequest,
} from '@mint/domain';

/** A two-way mapping between a wire enum's values and a domain string union. */
export interface EnumMapping<W extends number, D extends string> {
  /** The domain value of `wire`; InvalidInputError on `field` for UNSPECIFIED or unknown numbers. */
  toDomain(wire: W, field: string): D;
  /** The wire value of `domain`. */
  toWire(domain: D): W;
}

const spellings = new Map<string, readonly (readonly [string, number])[]>();

/**
 * The domain's spelling of every mapped enum's values (`serial`, `active_at_mint`, `QUEUED`), by the
 * enum's full name, with the wire number each stands for: the values the spec and /v1 write, which
 * Connect JSON accepts too (see `respellEnums`).
 */
export const specSpellings: ReadonlyMap<string, readonly (readonly [string, number])[]> = spellings;

/**
 * Pairs each domain value with the wire value of the same name (`MINT_JOB_STATUS_QUEUED` <->
 * 'QUEUED', `MINT_BATCH_STATUS_DRAFT` <-> 'draft'), read from the enum's descriptor; a domain value
 * without a wire value is a contract mismatch and throws at start.
 */
function enumMapping<W extends number, D extends string>(schema: DescEnum, domainValues: readonly D[]): EnumMapping<W, D> {
  const pairs = domainValues.map((d): readonly [W, D] => {
    const value = schema.values.find((v) => v.localName.toLowerCase() === d.toLowerCase());
    if (value === undefined) throw new Error(`${schema.typeName} has no value for ${JSON.stringify(d)}`);
    return [value.number as W, d];
  });
  spellings.set(schema.typeName, pairs.map(([w, d]) => [d, w]));
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
export const decommissionReason = enumMapping<WireDecommissionReason, DecommissionReason>(DecommissionReasonSchema, decommissionReasons);
export const documentFormat = enumMapping<WireDocumentFormat, DocumentFormat>(DocumentFormatSchema, documentFormats);
export const packStatus = enumMapping<WirePackStatus, PackStatus>(PayloadPackStatusSchema, packStatuses);
export const importStatus = enumMapping<WireImportStatus, ImportStatus>(ProductImportStatusSchema, importStatuses);
export const linkLevel = enumMapping<WireLinkLevel, LinkLevel>(LinkLevelSchema, linkLevels);
export const packFormat = enumMapping<WirePackFormat, PackFormat>(PackFormatSchema, packFormats);
export const symbology = enumMapping<WireSymbology, Symbology>(SymbologySchema, symbologies);
export const paper = enumMapping<WirePaper, Paper>(PaperSchema, papers);
export const packPurpose = enumMapping<WirePackPurpose, PackPurpose>(PayloadPackPurposeSchema, packPurposes);
export const deliveryStatus = enumMapping<WireDeliveryStatus, WebhookDeliveryStatus>(WebhookDeliveryStatusSchema, webhookDeliveryStatuses);
export const scanClientClass = enumMapping<WireScanClientClass, ClientClass>(ScanClientClassSchema, clientClasses);
export const scanGroupBy = enumMapping<WireScanGroupBy, ScanGroup>(ScanGroupBySchema, scanGroups);
export const passportLevel = enumMapping<WirePassportLevel, PassportLevel>(PassportLevelSchema, ['model', 'lot', 'unit']);
export const passportAccessClass = enumMapping<WirePassportAccessClass, Exclude<PassportAccessClass, 'public'>>(PassportAccessClassSchema, restrictedPassportClasses);

/** A mint request of SubmitMintRequest (and of the /v1 routes that submit one) as the use cases take it. */
export function mintRequestOf(req: SubmitMintRequestRequest): MintRequest {
  return {
    brandId: req.brandId,
    productId: req.productId,
    productBatchId: orNull(req.productBatchId),
    requestedQuantity: req.requestedQuantity,
    identityMode: identityMode.toDomain(req.identityMode, 'identity_mode'),
    activationMode: activationMode.toDomain(req.activationMode, 'activation_mode'),
    lots: req.lots.map((lot) => ({ lotCode: lot.lotCode, qty: lot.qty })),
    idempotencyKey: orNull(req.idempotencyKey),
    ...(req.serials === undefined ? {} : { serials: req.serials }),
  };
}

/** A product on the wire. */
export function toWireProduct(product: ProductView): MessageInitShape<typeof ProductSchema> {
  return {
    id: product.id,
    brandId: product.brandId,
    sku: product.sku,
    name: product.name,
    gtin: orUnset(product.gtin),
    commercialStatus: commercialStatus.toWire(product.commercialStatus),
    mintReadinessStatus: mintReadinessStatus.toWire(product.mintReadinessStatus),
    passportUrl: orUnset(product.passportUrl),
    createdAt: toTimestamp(product.createdAt),
    updatedAt: toTimestamp(product.updatedAt),
  };
}

/** An import (of products or of links) on the wire. */
export function toWireImport(view: ImportView): MessageInitShape<typeof ProductImportSchema> {
  return {
    id: view.id,
    status: importStatus.toWire(view.status),
    totalRows: view.totalRows,
    importedRows: view.importedRows,
    failedRows: view.failedRows,
    errors: view.errors.map((e) => ({ row: e.row, field: orUnset(e.field), message: e.message })),
    createdAt: toTimestamp(view.createdAt),
    finishedAt: view.finishedAt === null ? undefined : toTimestamp(view.finishedAt),
  };
}

/** A pack as listed and created (PackRecord of the use cases) on the wire. */
export function toWirePack(pack: PackView): MessageInitShape<typeof PayloadPackSchema> {
  const { layout } = packProfileOf(pack.profile);
  return {
    id: pack.id,
    brandId: pack.brandId,
    mintBatchId: pack.mintBatchId,
    status: packStatus.toWire(pack.status as PackStatus),
    storagePath: orUnset(pack.storagePath),
    createdAt: toTimestamp(pack.createdAt),
    updatedAt: toTimestamp(pack.updatedAt),
    unitCount: orUnset(pack.unitCount),
    formats: pack.profile.formats.map((f) => packFormat.toWire(f as PackFormat)),
    seqFrom: orUnset(pack.profile.seqFrom),
    seqTo: orUnset(pack.profile.seqTo),
    symbology: symbology.toWire(pack.profile.symbology as Symbology),
    layout: { ...layout, paper: paper.toWire(layout.paper) },
    purpose: packPurpose.toWire(pack.purpose as PackPurpose),
  };
}

/** The layout fields a request set (unset ones take the domain's defaults); null when none was given. */
export function layoutFromWire(layout: WireLabelLayout | undefined): Partial<Record<keyof LabelLayout, unknown>> | null {
  if (layout === undefined) return null;
  const { $typeName: _type, $unknown: _unknown, paper: wirePaper, ...numbers } = layout;
  return { ...numbers, ...(wirePaper === 0 ? {} : { paper: paper.toDomain(wirePaper, 'layout.paper') }) };
}

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
