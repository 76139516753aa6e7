import type { StoredPackProfile } from '@mint/db';
import { defaultLabelLayout, packFormats, type LabelLayout, type PackProfile, type Symbology } from '@mint/domain';

/** The stored profile of a pack as the domain's PackProfile (the default layout when none was stored). */
export function packProfileOf(stored: StoredPackProfile): PackProfile {
  return {
    formats: packFormats.filter((f) => stored.formats.includes(f)), seqFrom: stored.seqFrom, seqTo: stored.seqTo,
    symbology: stored.symbology as Symbology, layout: { ...defaultLabelLayout, ...(stored.layout ?? {}) } as LabelLayout,
  };
}

/** A PackProfile as stored with its pack. */
export function storedPackProfile(profile: PackProfile): StoredPackProfile {
  return { formats: [...profile.formats], seqFrom: profile.seqFrom, seqTo: profile.seqTo, symbology: profile.symbology, layout: { ...profile.layout } };
}
