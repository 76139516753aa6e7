// What the handlers map beside @mint/wire's generic encoding: a pack (its stored profile's
// formats and layout) as a view, and the document formats the use cases define.

import { DocumentFormatSchema, type DocumentFormat as WireDocumentFormat } from '@mint/contract';
import { documentFormats, packProfileOf, type DocumentFormat, type listPayloadPacks } from '@mint/usecases';
import { enumMapping } from '@mint/wire';

/** Every mapped enum's spellings, DocumentFormat's (registered by this module) among them. */
export { specSpellings } from '@mint/wire';

/** A pack as the use cases return it. */
type PackView = Awaited<ReturnType<typeof listPayloadPacks>>['items'][number];

export const documentFormat = enumMapping<WireDocumentFormat, DocumentFormat>(DocumentFormatSchema, documentFormats);

declare module '@mint/wire' {
  /** DocumentFormat's fields read as the use cases' formats (see `valuesOf`). */
  interface DomainEnums {
    documentFormat: typeof documentFormat;
  }
}

/** A pack as listed and created (PackRecord of the use cases) as a PayloadPack view: its stored profile's fields, the layout with the defaults filled in. */
export function packView(pack: PackView) {
  return { ...pack, ...pack.profile, layout: packProfileOf(pack.profile).layout };
}
