// Protobuf <-> use-case value mapping of the handlers: the use cases' views (products, imports,
// packs) as messages and the document formats the use cases define. The contract's enums, the
// mint request, times and optional fields map in @mint/wire, re-exported here for the handlers.

import type { MessageInitShape } from '@bufbuild/protobuf';
import {
  DocumentFormatSchema,
  type DocumentFormat as WireDocumentFormat,
  type PayloadPackSchema,
  type ProductImportSchema,
  type ProductSchema,
} from '@mint/contract';
import type { PackFormat, PackPurpose, PackStatus, Symbology } from '@mint/domain';
import {
  documentFormats,
  packProfileOf,
  type DocumentFormat,
  type ImportView,
  type listPayloadPacks,
  type ProductView,
  type SerialMoveReport,
} from '@mint/usecases';
import {
  commercialStatus,
  decommissionReason,
  enumMapping,
  importStatus,
  mintReadinessStatus,
  orUnset,
  packFormat,
  packPurpose,
  packStatus,
  paper,
  serialAction,
  serialState,
  symbology,
  toTimestamp,
} from '@mint/wire';

export {
  activationMode,
  batchStatus,
  commercialStatus,
  dateOrNull,
  decommissionReason,
  deliveryStatus,
  identityMode,
  importStatus,
  layoutFromWire,
  linkLevel,
  jobStatus,
  mintReadinessStatus,
  mintRequestOf,
  orNull,
  orUnset,
  packFormat,
  packPurpose,
  packStatus,
  paper,
  passportAccessClass,
  passportLevel,
  productionBatchStatus,
  scanClientClass,
  scanGroupBy,
  serialAction,
  serialState,
  specSpellings,
  symbology,
  toTimestamp,
  unitStatus,
  type EnumMapping,
} from '@mint/wire';

/** A pack as the use cases return it. */
type PackView = Awaited<ReturnType<typeof listPayloadPacks>>['items'][number];

export const documentFormat = enumMapping<WireDocumentFormat, DocumentFormat>(DocumentFormatSchema, documentFormats);

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

/** A serial move on the wire. */
export function toWireMove(m: SerialMoveReport) {
  return {
    moveId: m.moveId,
    action: serialAction.toWire(m.action),
    reason: m.reason === null ? 0 : decommissionReason.toWire(m.reason),
    status: m.status,
    total: m.total,
    moved: m.moved,
    refused: m.refused,
    replayed: m.replayed,
    nextPageToken: m.nextPageToken ?? '',
    error: m.error ?? '',
    refusals: m.refusals.map((r) => ({
      serial: orUnset(r.serial),
      mintBatchId: orUnset(r.mintBatchId),
      seq: orUnset(r.seq),
      refusal: r.refusal,
      state: r.state === null ? 0 : serialState.toWire(r.state),
      reason: r.reason === null ? 0 : decommissionReason.toWire(r.reason),
    })),
  };
}
