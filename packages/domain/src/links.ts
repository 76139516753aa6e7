/**
 * The resolver's link model: links at four levels (a brand's default, a product's GTIN, a lot of
 * it, one serial unit), their validation, the walk-up from the most specific level, the choice of
 * one link by type, language and context, and the RFC 9264 linkset of the levels. Pure.
 */
import { normalizeGtin } from './catalog.ts';
import type { FieldViolation } from './errors.ts';
import { maxStoredUrlLength, storableUrlOf } from './urls.ts';
import { lotCodeProblem } from './request.ts';
import { gs1LinkTypeNames, gs1LinkTypeOfAnyCase, gs1VocabularyNamespace, gs1VocabularyVersion, type Gs1LinkTypeName } from './gs1-link-types.ts';

/** Where a link hangs. */
export type LinkLevel =
  /** The brand's default: every identity of the brand walks up to it. */
  | 'brand'
  /** A product, by its GTIN-14. */
  | 'gtin'
  /** A lot of a product: GTIN + AI 10. */
  | 'lot'
  /** One serial unit: GTIN + AI 21, or the serial alone (a `/u/` token) for a product without GTIN. */
  | 'serial';
/** All levels, least specific first. */
export const linkLevels: readonly LinkLevel[] = ['brand', 'gtin', 'lot', 'serial'];

/**
 * One level of one brand. `gtin` is '' at the brand level and for a serial of a product without
 * GTIN; `qualifier` is the lot code (lot) or the serial (serial), '' otherwise.
 */
export interface LinkScope {
  readonly level: LinkLevel;
  readonly gtin: string;
  readonly qualifier: string;
}

/** A link as stored and served. */
export interface Link {
  /** The GS1 Web Vocabulary link type (its name, e.g. `pip`). */
  readonly linkType: Gs1LinkTypeName;
  /** The https target. */
  readonly href: string;
  /** Human-readable title (every link has one). */
  readonly title: string;
  /** Languages of the target (`en`, `en-GB`); empty when not language-specific. */
  readonly hreflang: readonly string[];
  /** Media type of the target; null when not known. */
  readonly mediaType: string | null;
  /** Contexts the link applies in (a market, a jurisdiction, a channel); empty for any. */
  readonly context: readonly string[];
  /** Whether a redirect passes the request's query string on. */
  readonly fwqs: boolean;
  /** Whether it is its level's one default link. */
  readonly isDefault: boolean;
}

/** A link with the level it belongs to, as the management API writes it (fields as in {@link Link}). */
export interface LinkInput extends Omit<Link, 'linkType' | 'fwqs'> {
  /** Whether a redirect passes the request's query string on; null (not said) forwards it, the standard's default. */
  readonly fwqs: boolean | null;
  /** GTIN (8, 12, 13 or 14 digits); null or '' for the brand level and for a serial without GTIN. */
  readonly gtin: string | null;
  /** Lot code (AI 10); null when the link is not a lot's. */
  readonly lot: string | null;
  /** Serial (AI 21); null when the link is not a unit's. */
  readonly serial: string | null;
  /** Link type as written: `gs1:pip`, `https://ref.gs1.org/voc/pip` or `https://gs1.org/voc/pip`. */
  readonly linkType: string;
}

/** Longest AI 10 / AI 21 value. */
const maxAiLength = 20;
/** GS1 AI encodable character set 82. */
const ai82 = /^[!"%&'()*+,\-./0-9:;<=>?A-Z_a-z]+$/;
/** A language tag as GS1's linkset schema accepts it: `en` or `en-GB`. */
const languageTag = /^[A-Za-z]{2}(-[A-Za-z]{2})?$/;
const mediaTypePattern = /^[\w.+-]+\/[\w.+-]+$/;
/** Link types that are not links of their own: the default is a flag of a link, and a range handover is not served here. */
const notAssignable = new Set<Gs1LinkTypeName>(['defaultLink', 'defaultLinkMulti', 'handledBy']);

/**
 * The violation message of a link type that names none a link may have: the link types it may name
 * (every one of the vocabulary but those only the resolver writes), in any case and with either prefix.
 * No `; ` in it: that separates the violations of one message (the console splits on it).
 */
export const linkTypeHint = `must be one of the GS1 Web Vocabulary ${gs1VocabularyVersion}'s link types: ${gs1LinkTypeNames
  .filter((name) => !notAssignable.has(name))
  .map((name) => `gs1:${name}`)
  .join(', ')} (in any case, or as ${gs1VocabularyNamespace}{name})`;
/** Longest href, title, context value; most hreflang and context values per link. */
export const linkLimits = { href: maxStoredUrlLength, title: 300, context: 100, values: 20 } as const;

/** The violations of an AI 10 or AI 21 value, on `field`. */
function aiViolations(value: string, field: string, ai: string): FieldViolation[] {
  if (value === '' || value.length > maxAiLength || !ai82.test(value)) {
    return [{ field, message: `is not valid AI ${ai} syntax: 1 to ${maxAiLength} characters of the GS1 AI character set 82` }];
  }
  return [];
}

/**
 * The level a link input names: no GTIN, lot or serial is the brand; a GTIN alone the product; a
 * GTIN and a lot the lot; a serial (with a GTIN, or alone for a product without GTIN) the unit.
 * Returns the violations instead when the combination or a value is invalid.
 */
export function linkScopeOf(input: Pick<LinkInput, 'gtin' | 'lot' | 'serial'>): { scope: LinkScope } | { violations: FieldViolation[] } {
  const v: FieldViolation[] = [];
  const gtinText = input.gtin ?? '';
  const gtin = gtinText === '' ? '' : normalizeGtin(gtinText);
  if (gtin === null) v.push({ field: 'gtin', message: 'must be a GTIN-8, -12, -13 or -14 with a valid check digit' });
  if (input.lot !== null) {
    // The rule of mint lots: a link names only a lot that can be minted.
    const problem = lotCodeProblem(input.lot);
    if (problem !== null) v.push({ field: 'lot', message: problem });
    if (gtinText === '') v.push({ field: 'lot', message: 'needs a gtin: a lot is a lot of a product' });
    if (input.serial !== null) v.push({ field: 'lot', message: 'give a lot or a serial, not both' });
  }
  if (input.serial !== null) v.push(...aiViolations(input.serial, 'serial', '21'));
  if (v.length > 0 || gtin === null) return { violations: v };
  if (input.serial !== null) return { scope: { level: 'serial', gtin, qualifier: input.serial } };
  if (input.lot !== null) return { scope: { level: 'lot', gtin, qualifier: input.lot } };
  return { scope: gtin === '' ? { level: 'brand', gtin: '', qualifier: '' } : { level: 'gtin', gtin, qualifier: '' } };
}

/**
 * Checks a link's own fields; returns the link (link type as its name, hreflang in canonical
 * case, href in its ASCII form) or the violations, each naming its field: an href that is not a storable https URL, an unknown link type,
 * an empty title, a malformed language tag or media type.
 */
export function validateLink(input: Omit<LinkInput, 'gtin' | 'lot' | 'serial'>): { link: Link } | { violations: FieldViolation[] } {
  const v: FieldViolation[] = [];
  const linkType = gs1LinkTypeOfAnyCase(input.linkType);
  if (linkType === null) v.push({ field: 'link_type', message: `"${input.linkType}" ${linkTypeHint}` });
  else if (notAssignable.has(linkType)) v.push({ field: 'link_type', message: `gs1:${linkType} cannot be given to a link; mark a link is_default instead` });
  // The one URL rule of stored links (see urls.ts): the link keeps the href's ASCII form.
  const href = storableUrlOf(input.href);
  if (href === null) v.push({ field: 'href', message: `must be an https URL of at most ${linkLimits.href} characters` });
  if (input.title.trim() === '' || input.title.length > linkLimits.title)
    v.push({ field: 'title', message: `is required: 1 to ${linkLimits.title} characters` });
  if (input.hreflang.length > linkLimits.values) v.push({ field: 'hreflang', message: `at most ${linkLimits.values} languages` });
  input.hreflang.forEach((tag, i) => {
    if (!languageTag.test(tag)) v.push({ field: `hreflang[${i}]`, message: 'must be a language tag such as en or en-GB' });
  });
  if (input.mediaType !== null && !mediaTypePattern.test(input.mediaType)) v.push({ field: 'media_type', message: 'must be a media type such as text/html' });
  if (input.context.length > linkLimits.values) v.push({ field: 'context', message: `at most ${linkLimits.values} values` });
  input.context.forEach((c, i) => {
    if (c.trim() === '' || c.length > linkLimits.context) v.push({ field: `context[${i}]`, message: `must be 1 to ${linkLimits.context} characters` });
  });
  for (const [field, value] of [
    ['href', input.href],
    ['title', input.title],
    ['media_type', input.mediaType ?? ''],
    ...input.context.map((c, i) => [`context[${i}]`, c]),
  ] as const) {
    if (value.includes('\u0000')) v.push({ field, message: 'must not contain the NUL character (U+0000)' });
  }
  if (v.length > 0 || linkType === null || href === null) return { violations: v };
  const hreflang = input.hreflang.map((tag) => (tag.length === 2 ? tag.toLowerCase() : `${tag.slice(0, 2).toLowerCase()}-${tag.slice(3).toUpperCase()}`));
  return {
    link: {
      linkType,
      href,
      title: input.title,
      hreflang: [...new Set(hreflang)],
      mediaType: input.mediaType,
      context: [...new Set(input.context)],
      fwqs: input.fwqs ?? true,
      isDefault: input.isDefault,
    },
  };
}

/**
 * Checks a level's whole set of links (ReplaceLinks, one level of a CSV import): at most one
 * default, no link twice (same type and href); the violations name the offending entry
 * (`links[3].is_default`). A set with links and no default gets its first link as the default.
 */
export function linkSetViolations(links: readonly Link[], field = 'links'): FieldViolation[] {
  const v: FieldViolation[] = [];
  let firstDefault = -1;
  const seen = new Map<string, number>();
  links.forEach((link, i) => {
    if (link.isDefault) {
      if (firstDefault >= 0)
        v.push({
          field: `${field}[${i}].is_default`,
          message: `a second default at this level (${field}[${firstDefault}] is the default); a level has exactly one`,
        });
      else firstDefault = i;
    }
    const key = `${link.linkType} ${link.href}`;
    const at = seen.get(key);
    if (at !== undefined) v.push({ field: `${field}[${i}].href`, message: `repeats ${field}[${at}] (same link type and href)` });
    else seen.set(key, i);
  });
  return v;
}

/** A level's links with the first one made the default when none is (a level with links has exactly one default). */
export function withOneDefault(links: readonly Link[]): Link[] {
  if (links.length === 0 || links.some((l) => l.isDefault)) return [...links];
  return links.map((l, i) => (i === 0 ? { ...l, isDefault: true } : l));
}

/** The `scope` as a string: the cache and notification key of its brand and GTIN is its prefix. */
export function linkScopeKey(brandId: string, scope: LinkScope): string {
  return `${brandId} ${scope.gtin} ${scope.level} ${scope.qualifier}`;
}

/** A resolution level: its anchor, a description for people and its links. */
export interface LinkedLevel {
  /** The level's canonical URI: the linkset anchor. */
  readonly anchor: string;
  /** `itemDescription` of the level. */
  readonly description: string;
  readonly links: readonly Link[];
}

/** One accepted language of an Accept-Language header. */
interface LanguageRange {
  readonly tag: string;
  readonly q: number;
}

/** The languages of an Accept-Language header, preferred first (q order, then as written); `*` is dropped. */
export function acceptedLanguages(header: string | undefined): string[] {
  if (header === undefined || header === '' || header.length > 1_000) return [];
  const ranges: LanguageRange[] = [];
  for (const part of header.split(',')) {
    const [tag = '', ...params] = part.split(';').map((s) => s.trim());
    const q = params.find((p) => p.startsWith('q='));
    const value = q === undefined ? 1 : Number(q.slice(2));
    if (tag !== '' && tag !== '*' && Number.isFinite(value) && value > 0) ranges.push({ tag: tag.toLowerCase(), q: value });
  }
  return ranges
    .map((r, i) => ({ ...r, i }))
    .sort((a, b) => b.q - a.q || a.i - b.i)
    .map((r) => r.tag);
}

/**
 * The media types an `Accept` header asks for, preferred first (by q, then order), without
 * wildcards-only ranges (`*\/*`) and without those refused (q=0); `image/*` is kept as a prefix.
 */
export function acceptedMediaTypes(header: string | undefined): string[] {
  if (header === undefined || header === '' || header.length > 2_000) return [];
  const ranges: { type: string; q: number; i: number }[] = [];
  for (const [i, part] of header.split(',').entries()) {
    const [type = '', ...params] = part.split(';').map((s) => s.trim().toLowerCase());
    const q = params.find((p) => p.startsWith('q='));
    const value = q === undefined ? 1 : Number(q.slice(2));
    if (/^[\w.+-]+\/[\w.+*-]+$/.test(type) && type !== '*/*' && Number.isFinite(value) && value > 0) ranges.push({ type, q: value, i });
  }
  return ranges.sort((a, b) => b.q - a.q || a.i - b.i).map((r) => r.type);
}

/** True when a link's media type is what the accepted range names (`text/html`, or `text/*`). */
function mediaTypeMatches(link: Link, range: string): boolean {
  if (link.mediaType === null) return false;
  const type = link.mediaType.split(';')[0]!.trim().toLowerCase();
  return range.endsWith('/*') ? type.startsWith(range.slice(0, -1)) : type === range;
}

/** What a request asks of the links beyond its identity. */
export interface LinkPreferences {
  /** The link type asked for (`linkType=`); null for the default link. */
  readonly linkType: Gs1LinkTypeName | null;
  /** Accept-Language, preferred first (see {@link acceptedLanguages}). */
  readonly languages: readonly string[];
  /** `context=` of the query; null when absent. */
  readonly context: string | null;
  /** The media types of `Accept`, preferred first (see {@link acceptedMediaTypes}); none when absent. */
  readonly mediaTypes?: readonly string[];
}

/** What the links offer a request: one link, several equally good ones and none the default (300 Multiple Choices), or nothing. */
export type LinkChoice =
  | { readonly kind: 'link'; readonly link: Link }
  | { readonly kind: 'choices'; readonly links: readonly Link[] }
  | { readonly kind: 'none' };

/**
 * Among links of one type, what a request gets: those whose `context` holds the request's
 * context are preferred (when any does); then those of the first accepted media type any of them
 * has (`type`); then, for each accepted language in order, a link in exactly that language
 * (`en-GB`), then one in its primary language (`en`); then the level's default, else the only
 * link left, else the only link without a language. Several links left with none of those to
 * decide are offered as choices.
 */
export function chooseAmong(candidates: readonly Link[], languages: readonly string[], context: string | null, mediaTypes: readonly string[] = []): LinkChoice {
  if (candidates.length === 0) return { kind: 'none' };
  let pool = candidates;
  if (context !== null) {
    const matching = candidates.filter((l) => l.context.includes(context));
    if (matching.length > 0) pool = matching;
  }
  for (const range of mediaTypes) {
    const matching = pool.filter((l) => mediaTypeMatches(l, range));
    if (matching.length > 0) {
      pool = matching;
      break;
    }
  }
  for (const tag of languages) {
    const exact = pool.find((l) => l.hreflang.some((h) => h.toLowerCase() === tag));
    if (exact !== undefined) return { kind: 'link', link: exact };
    const primary = tag.slice(0, 2);
    const near = pool.find((l) => l.hreflang.some((h) => h.toLowerCase() === primary));
    if (near !== undefined) return { kind: 'link', link: near };
  }
  const decided = pool.find((l) => l.isDefault) ?? (pool.length === 1 ? pool[0] : undefined);
  if (decided !== undefined) return { kind: 'link', link: decided };
  const neutral = pool.filter((l) => l.hreflang.length === 0);
  return neutral.length === 1 ? { kind: 'link', link: neutral[0]! } : { kind: 'choices', links: pool };
}

/** {@link chooseAmong} reduced to one link: the first of several choices. */
export function pickAmong(candidates: readonly Link[], languages: readonly string[], context: string | null, mediaTypes: readonly string[] = []): Link | null {
  const choice = chooseAmong(candidates, languages, context, mediaTypes);
  return choice.kind === 'link' ? choice.link : choice.kind === 'choices' ? choice.links[0]! : null;
}

/**
 * What a request is offered, walking up the levels (most specific first). With a link type: the
 * most specific level that has links of that type, and among them by context, media type and
 * language (several equally good links without a default among them are choices). Without one:
 * the most specific level that has a default, among its links of the default's type (the
 * `gs1:defaultLinkMulti` alternatives), the default deciding any tie. Nothing when no level has
 * such a link.
 */
export function chooseLink(levels: readonly LinkedLevel[], prefs: LinkPreferences): LinkChoice {
  for (const level of levels) {
    if (prefs.linkType !== null) {
      const ofType = level.links.filter((l) => l.linkType === prefs.linkType);
      if (ofType.length > 0) return chooseAmong(ofType, prefs.languages, prefs.context, prefs.mediaTypes);
      continue;
    }
    const fallback = level.links.find((l) => l.isDefault);
    if (fallback !== undefined) {
      return {
        kind: 'link',
        link:
          pickAmong(
            level.links.filter((l) => l.linkType === fallback.linkType),
            prefs.languages,
            prefs.context,
            prefs.mediaTypes,
          ) ?? fallback,
      };
    }
  }
  return { kind: 'none' };
}

/** The link a request is sent to ({@link chooseLink}, the first of several choices); null when there is none. */
export function chooseLevelLink(levels: readonly LinkedLevel[], prefs: LinkPreferences): Link | null {
  const choice = chooseLink(levels, prefs);
  return choice.kind === 'link' ? choice.link : choice.kind === 'choices' ? choice.links[0]! : null;
}

/** The default link of a request: the most specific level's default; null when no level has links. */
export function defaultLinkOf(levels: readonly LinkedLevel[]): Link | null {
  for (const level of levels) {
    const found = level.links.find((l) => l.isDefault);
    if (found !== undefined) return found;
  }
  return null;
}

/** An RFC 9264 target object of a link: href, title, and its type, languages and contexts where known. */
function targetObject(link: Link): Record<string, unknown> {
  const object: Record<string, unknown> = { href: link.href, title: link.title };
  if (link.mediaType !== null) object.type = link.mediaType;
  if (link.hreflang.length > 0) object.hreflang = link.hreflang;
  if (link.context.length > 0) object.context = link.context;
  return object;
}

/**
 * The RFC 9264 linkset (`application/linkset+json`) of the levels (given most specific first),
 * least specific first as GS1's model linkset: one object per level with its anchor, its
 * description and each relation keyed by the link type's full URI in the current GS1 namespace. The
 * request's one default (the most specific level's) is listed under `gs1:defaultLink` with only
 * its href and title; when that level has other links of the default's type (other languages,
 * contexts or media types), all of them are listed under `gs1:defaultLinkMulti` too, since the
 * resolver picks among them for a request without `linkType`; a relation without links is left out.
 */
export function linksetOf(levels: readonly LinkedLevel[]): { linkset: Record<string, unknown>[] } {
  const chosenDefault = defaultLinkOf(levels);
  return {
    linkset: [...levels].reverse().map((level) => {
      const object: Record<string, unknown> = { anchor: level.anchor, itemDescription: level.description };
      if (chosenDefault !== null && level.links.includes(chosenDefault)) {
        object[`${gs1VocabularyNamespace}defaultLink`] = [{ href: chosenDefault.href, title: chosenDefault.title }];
        // The default's alternatives by language, context or media type: each the default for the requests it matches.
        const multi = level.links.filter((l) => l.linkType === chosenDefault.linkType);
        if (multi.length > 1) object[`${gs1VocabularyNamespace}defaultLinkMulti`] = multi.map(targetObject);
      }
      const byType = new Map<string, Record<string, unknown>[]>();
      for (const link of level.links) {
        const key = `${gs1VocabularyNamespace}${link.linkType}`;
        const list = byType.get(key) ?? [];
        list.push(targetObject(link));
        byType.set(key, list);
      }
      for (const key of [...byType.keys()].sort()) object[key] = byType.get(key)!;
      return object;
    }),
  };
}
