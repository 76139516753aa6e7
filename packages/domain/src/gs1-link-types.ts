import { gs1VocabularyLinkTypes } from './gs1-link-types.vocabulary.ts';

export { gs1VocabularyVersion } from './gs1-link-types.vocabulary.ts';

/**
 * The link types of the GS1 Web Vocabulary, as data: what a `linkType` query parameter may name.
 * Generated from the vocabulary GS1 publishes (github.com/gs1/WebVoc) by
 * `scripts/gs1-link-types.ts`, with its version and sha256 in `gs1-link-types.vocabulary.ts`; a
 * test checks the list equals the vendored vocabulary's `gs1:linkType` terms. To update, vendor
 * the new vocabulary into `test/fixtures/standards/gs1-webvoc/` and run the script on it.
 */
export const gs1LinkTypeNames = gs1VocabularyLinkTypes;

/** The name of a GS1 Web Vocabulary link type (`pip`, `defaultLink`, ...). */
export type Gs1LinkTypeName = (typeof gs1LinkTypeNames)[number];

/** The current namespace of the GS1 Web Vocabulary: link types are written as full URIs in it. */
export const gs1VocabularyNamespace = 'https://ref.gs1.org/voc/';

/**
 * Prefixes a request may write a GS1 link type with: the `gs1:` CURIE, the current namespace, and
 * the older `https://gs1.org/voc/` (and its `www.` form), accepted on input only.
 */
const gs1LinkTypePrefixes = ['gs1:', gs1VocabularyNamespace, 'https://gs1.org/voc/', 'https://www.gs1.org/voc/', 'http://gs1.org/voc/'] as const;

const known = new Set<string>(gs1LinkTypeNames);

/** The full URI of a GS1 link type in the current namespace, e.g. `https://ref.gs1.org/voc/pip`. */
export function gs1LinkTypeUri(name: Gs1LinkTypeName): string {
  return `${gs1VocabularyNamespace}${name}`;
}

/**
 * The GS1 link type a `linkType` value names (`gs1:pip`, `https://ref.gs1.org/voc/pip` and
 * `https://gs1.org/voc/pip` all name `pip`); null when it is not a GS1 Web Vocabulary link type.
 */
export function gs1LinkTypeOf(value: string): Gs1LinkTypeName | null {
  for (const prefix of gs1LinkTypePrefixes) {
    if (value.startsWith(prefix)) {
      const name = value.slice(prefix.length);
      return known.has(name) ? (name as Gs1LinkTypeName) : null;
    }
  }
  return null;
}

const byLowerCase = new Map<string, Gs1LinkTypeName>(gs1LinkTypeNames.map((name) => [name.toLowerCase(), name]));

/**
 * The GS1 link type a written link names, read in any case (`gs1:pip`, `GS1:PIP`,
 * `https://ref.gs1.org/voc/CertificationInfo`): what a link's writers (UpsertLink, ReplaceLinks, the
 * link CSV import) accept, as the product import accepts its statuses. No two link types of the
 * vocabulary differ only in case (a test checks it). Null when it names none.
 */
export function gs1LinkTypeOfAnyCase(value: string): Gs1LinkTypeName | null {
  const lower = value.trim().toLowerCase();
  for (const prefix of gs1LinkTypePrefixes) {
    if (lower.startsWith(prefix)) return byLowerCase.get(lower.slice(prefix.length)) ?? null;
  }
  return null;
}
