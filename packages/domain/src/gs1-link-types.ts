/**
 * The link types of the GS1 Web Vocabulary, as data: what a `linkType` query parameter may name.
 *
 * Provenance: the keys of `currentLinkTypes.json` in github.com/gs1/WebVoc (commit
 * 4bea79c383ff34fb7553c9ae4c3a8f8d5d98ea2a; GS1 publishes the same list at
 * https://ref.gs1.org/voc/data/linktypes), plus `dpp` (Digital Product Passport), which the
 * current vocabulary defines and GS1's model linkset for a conformant resolver uses
 * (`https://ref.gs1.org/voc/dpp`). To update, replace the list with the keys of the published
 * file; a term GS1 deprecates stays here (old labels keep resolving).
 */
export const gs1LinkTypeNames = [
  'activityIdeas', 'allergenInfo', 'appDownload', 'brandHomepageClinical', 'brandHomepagePatient', 'careersInfo',
  'certificationInfo', 'consumerHandlingStorageInfo', 'defaultLink', 'defaultLinkMulti', 'dpp', 'epcis', 'epil',
  'eventsInfo', 'faqs', 'handledBy', 'hasRetailers', 'homepage', 'ingredientsInfo', 'instructions', 'jws',
  'leaveReview', 'locationInfo', 'logisticsInfo', 'loyaltyProgram', 'masterData', 'menuInfo', 'nutritionalInfo',
  'openingHoursInfo', 'paymentLink', 'pip', 'productSustainabilityInfo', 'promotion', 'purchaseSuppliesOrAccessories',
  'quickStartGuide', 'recallStatus', 'recipeInfo', 'registerProduct', 'registryEntry', 'relatedImage', 'relatedVideo',
  'review', 'safetyInfo', 'scheduleTime', 'serviceInfo', 'smartLabel', 'smpc', 'socialMedia', 'statisticInfo',
  'subscribe', 'support', 'sustainabilityInfo', 'traceability', 'tutorial', 'userAgreement', 'verificationService',
  'whatsInTheBox',
] as const;

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
