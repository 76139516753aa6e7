// What the handlers map beside @mint/wire's generic encoding: a pack (its stored profile's
// formats and layout) as a message, and the document formats the use cases define.

import type { MessageInitShape } from '@bufbuild/protobuf';
import { DocumentFormatSchema, type DocumentFormat as WireDocumentFormat, type PayloadPackSchema } from '@mint/contract';
import type { PackFormat, PackPurpose, PackStatus, Symbology } from '@mint/domain';
import { documentFormats, packProfileOf, type DocumentFormat, type listPayloadPacks } from '@mint/usecases';
import { enumMapping, orUnset, packFormat, packPurpose, packStatus, paper, symbology, toTimestamp } from '@mint/wire';

/** Every mapped enum's spellings, DocumentFormat's (registered by this module) among them. */
export { specSpellings } from '@mint/wire';

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
