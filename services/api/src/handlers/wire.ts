// Protobuf <-> use-case value mapping of the handlers: the use cases' views (products, imports,
// packs) as messages and the document formats the use cases define. The contract's enums, the
// mint request, times and optional fields map in @mint/wire, re-exported here for the handlers.

import type { MessageInitShape } from '@bufbuild/protobuf';
import { DocumentFormatSchema, type DocumentFormat as WireDocumentFormat, type PayloadPackSchema } from '@mint/contract';
import type { PackFormat, PackPurpose, PackStatus, Symbology } from '@mint/domain';
import { documentFormats, packProfileOf, type DocumentFormat, type listPayloadPacks } from '@mint/usecases';
import { enumMapping, orUnset, packFormat, packPurpose, packStatus, paper, symbology, toTimestamp } from '@mint/wire';

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
