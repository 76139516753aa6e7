import type { StoredPackProfile } from '@mint/db';
import { defaultLabelLayout, packFormats, type LabelLayout, type PackProfile, type Symbology } from '@mint/domain';

/** The stored profile of a pack as the domain's PackProfile (the default layout when none was stored). */
export function packProfileOf(stored: StoredPackProfile): PackProfile {
  return {
    formats: packFormats.filter((f) => stored.formats.includes(f)),
    seqFrom: stored.seqFrom,
    seqTo: stored.seqTo,
    symbology: stored.symbology as Symbology,
    layout: { ...defaultLabelLayout, ...(stored.layout ?? {}) } as LabelLayout,
  };
}
