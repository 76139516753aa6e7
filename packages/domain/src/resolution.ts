/**
 * The public resolver's rules (GS1-Conformant Resolver Standard 1.2): parsing and validating GS1
 * Digital Link paths under a brand's resolver base (compressed ones too), the `linkType` and
 * content negotiation, the answer for an identity in a given state, the links of each level and
 * the RFC 9264 linkset. Pure: the lookups are the caller's.
 */
import digitalLink from 'digital-link.js';
import { normalizeGtin } from './catalog.ts';
import { publicReasonOf } from './serial-state.ts';
import { gs1LinkTypeOf, gs1LinkTypeUri, gs1VocabularyNamespace, type Gs1LinkTypeName } from './gs1-link-types.ts';

/** The identity a resolver path names. Qualifiers a level does not use are kept for the anchor. */
export type ResolverKey =
  /** `/01/{gtin}[/22/{cpv}][/10/{lot}]/21/{serial}`: one serialised unit of a product (the lot and CPV are informative). */
  | { readonly kind: 'serial'; readonly gtin: string; readonly serial: string; readonly lot?: string; readonly cpv?: string }
  /** `/01/{gtin}[/22/{cpv}]/10/{lot}`: a lot of a product (the CPV is informative). */
  | { readonly kind: 'lot'; readonly gtin: string; readonly lot: string; readonly cpv?: string }
  /** `/01/{gtin}[/22/{cpv}]`: the product itself (a consumer product variant resolves as its GTIN). */
  | { readonly kind: 'gtin'; readonly gtin: string; readonly cpv?: string }
  /** `/u/{token}`: a unit of a product without GTIN (token = serial); not a GS1 key. */
  | { readonly kind: 'token'; readonly token: string };

/** A parsed resolver request path. */
export interface ResolverPath {
  /** Brand slug: the last segment of the brand's resolver base. */
  readonly slug: string;
  readonly key: ResolverKey;
}

/** Mount point of the resolver: every brand's base is `{PUBLIC_BASE_URL}/r/{slug}`. */
export const resolverPrefix = '/r/';

/** What a request path is. */
export type ParsedResolverRequest =
  /** A valid Digital Link (or `/u/` token) of this service. */
  | {
      readonly kind: 'identity';
      readonly path: ResolverPath;
      /** The canonical path (GTIN-14, qualifiers in order), from `/r/`: the identity's anchor below the public base. */
      readonly canonicalPath: string;
      /**
       * Set when the request was a compressed Digital Link: the query string the compressed URI
       * carried (data attributes), '' when none; the uncompressed URI is the canonical path plus it.
       */
      readonly decompressedQuery: string | null;
    }
  /** Valid, but the GTIN was written short (GTIN-8, -12 or -13): moved for good to the canonical path. */
  | { readonly kind: 'moved'; readonly canonicalPath: string }
  /** Not a valid Digital Link: answered 400 with the reason. */
  | { readonly kind: 'malformed'; readonly reason: string };

/** Longest value of AI 10 (batch/lot), 21 (serial) and 22 (consumer product variant): 20 characters. */
const maxAiLength = 20;
/** GS1 AI encodable character set 82 (what AI 10, 21 and 22 allow). */
const ai82 = /^[!"%&'()*+,\-./0-9:;<=>?A-Z_a-z]+$/;
const slugPattern = /^[a-z0-9][a-z0-9-]{0,62}$/;
/** A compressed Digital Link path segment: base64url, bounded so decompression stays cheap. */
const compressedPattern = /^[A-Za-z0-9_-]{4,400}$/;

/** Key qualifiers of a GTIN in the order the URI syntax fixes (22, then 10, then 21). */
const gtinQualifiers = ['22', '10', '21'] as const;
type GtinQualifier = (typeof gtinQualifiers)[number];
const qualifierNames: Record<GtinQualifier, string> = { '22': 'consumer product variant (AI 22)', '10': 'lot (AI 10)', '21': 'serial (AI 21)' };
/** GS1 primary keys other than the GTIN: valid Digital Links this resolver does not serve. */
const otherPrimaryKeys = new Set([
  '00',
  '253',
  '255',
  '401',
  '402',
  '410',
  '411',
  '412',
  '413',
  '414',
  '415',
  '417',
  '8003',
  '8004',
  '8006',
  '8010',
  '8013',
  '8017',
  '8018',
]);

function decode(segment: string): string | null {
  try {
    return decodeURIComponent(segment);
  } catch {
    return null;
  }
}

/** The reason an AI 82 value is invalid, or null. */
function aiValueProblem(value: string, what: string): string | null {
  if (value === '') return `${what} is empty`;
  if (value.length > maxAiLength) return `${what} is longer than ${maxAiLength} characters`;
  if (!ai82.test(value)) return `${what} has a character outside the GS1 AI character set 82`;
  return null;
}

function canonicalOf(slug: string, key: ResolverKey): string {
  if (key.kind === 'token') return `${resolverPrefix}${slug}/u/${encodeURIComponent(key.token)}`;
  let path = `${resolverPrefix}${slug}/01/${key.gtin}`;
  if (key.cpv !== undefined) path += `/22/${encodeURIComponent(key.cpv)}`;
  if (key.kind === 'lot' || (key.kind === 'serial' && key.lot !== undefined)) path += `/10/${encodeURIComponent(key.lot!)}`;
  if (key.kind === 'serial') path += `/21/${encodeURIComponent(key.serial)}`;
  return path;
}

/** Splits `/01/...` (already past the slug) into the identity, or the reason it is malformed. */
function parseKey(parts: readonly string[]): { key: ResolverKey; shortGtin: boolean } | { reason: string } {
  const ai = parts[0]!;
  if (ai === 'u') {
    if (parts.length !== 2) return { reason: 'a /u/ path takes exactly one token' };
    const token = decode(parts[1]!);
    if (token === null) return { reason: 'the token is not validly percent-encoded' };
    const problem = aiValueProblem(token, 'the token');
    return problem === null ? { key: { kind: 'token', token }, shortGtin: false } : { reason: problem };
  }
  if (ai !== '01') {
    if (otherPrimaryKeys.has(ai)) return { reason: `primary key AI ${ai} is not served here; this resolver serves GTINs (AI 01)` };
    return { reason: `${/^\d+$/.test(ai) ? `AI ${ai}` : `"${ai}"`} is not a primary key; a Digital Link starts with /01/{gtin}` };
  }
  if (parts.length % 2 !== 0) return { reason: `AI ${parts[parts.length - 1]} has no value` };
  const gtinText = parts[1]!;
  if (!/^\d+$/.test(gtinText) || ![8, 12, 13, 14].includes(gtinText.length)) return { reason: 'the GTIN must be 8, 12, 13 or 14 digits' };
  const gtin = normalizeGtin(gtinText);
  if (gtin === null) return { reason: 'the GTIN check digit is wrong' };
  const values: Partial<Record<GtinQualifier, string>> = {};
  let last = -1;
  for (let i = 2; i < parts.length; i += 2) {
    const q = parts[i]!;
    const at = gtinQualifiers.indexOf(q as GtinQualifier);
    if (at < 0) {
      return {
        reason: /^\d{2,4}$/.test(q)
          ? `AI ${q} is not a key qualifier of a GTIN; data attributes go in the query string`
          : `"${q}" is not a GS1 Application Identifier`,
      };
    }
    if (at <= last) return { reason: `${qualifierNames[q as GtinQualifier]} is out of order or repeated; qualifiers go /22, /10, /21` };
    last = at;
    const value = decode(parts[i + 1]!);
    if (value === null) return { reason: `the ${qualifierNames[q as GtinQualifier]} is not validly percent-encoded` };
    const problem = aiValueProblem(value, `the ${qualifierNames[q as GtinQualifier]}`);
    if (problem !== null) return { reason: problem };
    values[q as GtinQualifier] = value;
  }
  const cpv = values['22'] === undefined ? {} : { cpv: values['22'] };
  const key: ResolverKey =
    values['21'] !== undefined
      ? { kind: 'serial', gtin, serial: values['21'], ...(values['10'] === undefined ? {} : { lot: values['10'] }), ...cpv }
      : values['10'] !== undefined
        ? { kind: 'lot', gtin, lot: values['10'], ...cpv }
        : { kind: 'gtin', gtin, ...cpv };
  return { key, shortGtin: gtinText.length !== 14 };
}

/** Decompresses a compressed Digital Link segment into `/01/...` and its query (without `?`); null when it is not one. */
function decompress(segment: string): { path: string; query: string } | null {
  const origin = 'https://compressed.invalid';
  let uri: string;
  try {
    uri = digitalLink.Utils.decompressWebUri(`${origin}/${segment}`);
  } catch {
    return null;
  }
  if (!uri.startsWith(`${origin}/`)) return null;
  const rest = uri.slice(origin.length);
  const q = rest.indexOf('?');
  return q < 0 ? { path: rest, query: '' } : { path: rest.slice(0, q), query: rest.slice(q + 1) };
}

/**
 * Parses and validates a request path (without query), e.g. `/r/acme/01/09506000134352/21/ABC`:
 * the brand slug, then a GS1 Digital Link with a GTIN (AI 01, 14 digits with a valid check digit;
 * GTIN-8/12/13 are valid but answered with a move to the GTIN-14 form), its key qualifiers in the
 * order 22, 10, 21 (each of GS1 character set 82, at most 20 characters, validly
 * percent-encoded), or this service's `/u/{token}`, or a compressed Digital Link (one base64url
 * segment, decompressed with GS1's digital-link.js). A trailing slash is tolerated. Anything else
 * is malformed, with a short reason: unknown or out-of-order AIs, data attributes in the path
 * (they belong in the query), other primary keys, bad check digits, lengths, characters or
 * percent-encoding.
 */
export function parseResolverRequest(path: string): ParsedResolverRequest {
  if (!path.startsWith(resolverPrefix)) return { kind: 'malformed', reason: 'not a resolver path' };
  const trimmed = path.slice(resolverPrefix.length).replace(/\/$/, '');
  const parts = trimmed.split('/');
  const slug = parts[0]!;
  if (!slugPattern.test(slug)) return { kind: 'malformed', reason: 'the brand slug is not valid' };
  if (parts.length === 1) return { kind: 'malformed', reason: 'no primary key; a Digital Link starts with /01/{gtin}' };
  const rest = parts.slice(1);
  if (rest.some((p) => p === '')) return { kind: 'malformed', reason: 'the path has an empty segment' };
  let decompressedQuery: string | null = null;
  let keyParts = rest;
  if (rest.length === 1 && rest[0] !== 'u' && compressedPattern.test(rest[0]!)) {
    const uncompressed = decompress(rest[0]!);
    if (uncompressed === null) return { kind: 'malformed', reason: 'not a GS1 Digital Link, nor a compressed one' };
    keyParts = uncompressed.path.slice(1).split('/');
    decompressedQuery = uncompressed.query;
  }
  const parsed = parseKey(keyParts);
  if ('reason' in parsed) return { kind: 'malformed', reason: parsed.reason };
  const canonicalPath = canonicalOf(slug, parsed.key);
  if (parsed.shortGtin && decompressedQuery === null) return { kind: 'moved', canonicalPath };
  return { kind: 'identity', path: { slug, key: parsed.key }, canonicalPath, decompressedQuery };
}

/**
 * The path below the service's resolver root (`{PUBLIC_BASE_URL}/r`, the description file's
 * `resolverRoot`) when `path` is a GS1 Digital Link written directly under it, without a brand
 * slug: `/r/01/{gtin}[...]` (a GTIN of 8 to 14 digits, so never a brand's `/r/{slug}/01/...`, whose
 * second segment is `01`, `u` or a compressed link), or `/r/{compressed}` whose decompression is a
 * `/01/` link (a slug alone names no identity). Returns e.g. `/01/09506000134352/21/ABC`, which is
 * then parsed below the base of the brand that holds the GTIN; null for any other path.
 */
export function resolverRootPathOf(path: string): string | null {
  if (!path.startsWith(resolverPrefix)) return null;
  // Read without splitting the path: this runs before every resolver request is parsed.
  const rest = path.slice(resolverPrefix.length - 1);
  if (rest.startsWith('/01/')) {
    const end = rest.indexOf('/', 4);
    return /^\d{8,14}$/.test(end < 0 ? rest.slice(4) : rest.slice(4, end)) ? rest : null;
  }
  const slash = rest.indexOf('/', 1);
  if (slash >= 0 && slash !== rest.length - 1) return null;
  const segment = slash < 0 ? rest.slice(1) : rest.slice(1, slash);
  return compressedPattern.test(segment) && decompress(segment)?.path.startsWith('/01/') === true ? rest : null;
}

/**
 * The canonical paths of the levels of an identity, most specific first, as far as this service
 * knows them: a serial's (with any lot and CPV of the request), then its GTIN's; a lot's, then
 * its GTIN's; a GTIN's; a token's. A CPV alone is not a level of its own.
 */
export function levelPaths(slug: string, key: ResolverKey): readonly string[] {
  if (key.kind === 'token') return [canonicalOf(slug, key)];
  const gtin = canonicalOf(slug, { kind: 'gtin', gtin: key.gtin });
  return key.kind === 'gtin' ? [gtin] : [canonicalOf(slug, key), gtin];
}

/** The canonical paths (from `/r/`) of the link levels a request walks up, null where the request has no such level. */
export interface LevelAnchors {
  /** The unit: the request's own canonical path (with any lot and CPV it named); a `/u/` token's too. */
  readonly serial: string | null;
  /** The lot: named by the request, or the lot a serial's path carried. */
  readonly lot: string | null;
  /** The product's GTIN. */
  readonly gtin: string | null;
  /** The brand's resolver base. */
  readonly brand: string;
}

/** The canonical paths of every level of an identity, for its linkset anchors. */
export function levelAnchors(slug: string, key: ResolverKey): LevelAnchors {
  const brand = `${resolverPrefix}${slug}`;
  if (key.kind === 'token') return { serial: canonicalOf(slug, key), lot: null, gtin: null, brand };
  const gtin = canonicalOf(slug, { kind: 'gtin', gtin: key.gtin });
  const lotCode = key.kind === 'lot' || key.kind === 'serial' ? key.lot : undefined;
  const lot = lotCode === undefined ? null : canonicalOf(slug, { kind: 'lot', gtin: key.gtin, lot: lotCode });
  return { serial: key.kind === 'serial' ? canonicalOf(slug, key) : null, lot, gtin, brand };
}

/** What the `linkType` query parameter asks for. */
export type LinkTypeRequest =
  /** No `linkType`: the default link, or what `Accept` asks for. */
  | { readonly kind: 'none' }
  /** `linkset` (or the deprecated `all`): the linkset, never a redirect. */
  | { readonly kind: 'linkset' }
  /** A GS1 Web Vocabulary link type: a redirect to the link of that type. */
  | { readonly kind: 'link'; readonly name: Gs1LinkTypeName }
  /** Anything else: not a link type this resolver knows (404). */
  | { readonly kind: 'unknown'; readonly value: string };

/** Reads the `linkType` query parameter (null when absent). */
export function readLinkType(value: string | null): LinkTypeRequest {
  if (value === null || value === '') return { kind: 'none' };
  if (value === 'linkset' || value === 'all') return { kind: 'linkset' };
  const name = gs1LinkTypeOf(value);
  return name === null ? { kind: 'unknown', value } : { kind: 'link', name };
}

/** How the answer is represented. */
export type Representation =
  /** A 307 redirect to a link (browsers, anything without a preference, and any `linkType` link request). */
  | 'redirect'
  /** `application/json`: the unit and product data. */
  | 'json'
  /** `application/linkset+json`: an RFC 9264 linkset. */
  | 'linkset';

interface MediaRange {
  readonly type: string;
  readonly q: number;
}

function parseAccept(accept: string): MediaRange[] {
  return accept
    .split(',')
    .map((part) => {
      const [type = '', ...params] = part.split(';').map((s) => s.trim().toLowerCase());
      const q = params.find((p) => p.startsWith('q='));
      const value = q === undefined ? 1 : Number(q.slice(2));
      return { type, q: Number.isFinite(value) ? value : 0 };
    })
    .filter((r) => r.type !== '' && r.q > 0);
}

/**
 * Picks the representation: `linkType=linkset` (or `all`) asks for the linkset and a GS1 link
 * type for a redirect to that link, whatever `Accept` says; otherwise the Accept header's
 * highest-q type among `application/linkset+json`, `application/json` and HTML-ish types
 * (`text/html`, `*\/*`) wins, with ties going to the linkset, then JSON. No Accept header, or none
 * of those types, gets the redirect.
 */
export function negotiate(accept: string | undefined, linkType: LinkTypeRequest = { kind: 'none' }): Representation {
  if (linkType.kind === 'linkset') return 'linkset';
  if (linkType.kind === 'link') return 'redirect';
  if (accept === undefined || accept === '') return 'redirect';
  const ranges = parseAccept(accept);
  const q = (...types: string[]) => Math.max(0, ...ranges.filter((r) => types.includes(r.type)).map((r) => r.q));
  const linkset = q('application/linkset+json');
  const json = q('application/json');
  const html = q('text/html', 'application/xhtml+xml', '*/*', 'text/*');
  if (linkset > 0 && linkset >= json && linkset >= html) return 'linkset';
  if (json > 0 && json >= html) return 'json';
  return 'redirect';
}

/** What the resolver found for an identity, as far as the rules need it. */
export type FoundIdentity =
  /** Nothing under this brand and GTIN (including another brand's identity). */
  | { readonly kind: 'none' }
  /** A unit, a lot or a product, with the states that decide the answer. */
  | {
      readonly kind: 'found';
      /** Status of the unit (inactive or active); null for lots and products. */
      readonly unitStatus: string | null;
      /** Status of the batch the identity belongs to; null for a product. */
      readonly batchStatus: string | null;
      /** The unit's lifecycle state (issued, encoded, commissioned, scrapped, decommissioned, returned); absent or null for lots and products. */
      readonly serialState?: string | null;
      /** The decommissioning reason of a decommissioned unit; null otherwise. */
      readonly serialReason?: string | null;
      /** Where the chosen link points (the walk-up's choice); null when no level has a link. */
      readonly target: string | null;
    };

/** The resolver's answer. */
export type ResolutionOutcome =
  /** Resolved; `target` is the passport page (null when neither product nor brand configured one). */
  | { readonly kind: 'resolved'; readonly target: string | null }
  /** 404: unknown, or another brand's. Same body in every case. */
  | { readonly kind: 'not_found' }
  /** 410: the identity's batch was voided. */
  | { readonly kind: 'gone' }
  /** 409: a manually activated (first_scan) unit that has not been activated yet. */
  | { readonly kind: 'not_activated' }
  /** 200, but never a plain redirect: a recalled unit; every answer leads with the recall (`gs1:recallStatus`). */
  | { readonly kind: 'recalled'; readonly target: string | null }
  /**
   * 410: a unit out of circulation (decommissioned for another reason than a recall, scrapped,
   * returned); `reason` is its public reason (null when it stays private, as a theft does).
   */
  | { readonly kind: 'not_in_circulation'; readonly state: string; readonly reason: string | null };

/**
 * Decides the answer: a voided batch is gone (410) before anything else; a recalled unit leads
 * with its recall; a decommissioned, scrapped or returned unit is not in circulation (410, with
 * its public reason); an inactive (issued or encoded) unit is not yet activated (409); otherwise
 * the identity resolves to the target the link walk-up chose.
 */
export function decideResolution(found: FoundIdentity): ResolutionOutcome {
  if (found.kind === 'none') return { kind: 'not_found' };
  if (found.batchStatus === 'voided') return { kind: 'gone' };
  const state = found.serialState ?? null;
  if (state === 'decommissioned' && found.serialReason === 'recalled') return { kind: 'recalled', target: found.target };
  if (state === 'decommissioned' || state === 'scrapped' || state === 'returned') {
    const reason = state === 'decommissioned' ? publicReasonOf(found.serialReason ?? null) : null;
    return { kind: 'not_in_circulation', state, reason };
  }
  if (found.unitStatus !== null && found.unitStatus !== 'active') return { kind: 'not_activated' };
  return { kind: 'resolved', target: found.target };
}

/** HTTP status of each outcome (a resolved one answers 200 instead when it is not a redirect). */
export const resolutionStatus: Readonly<Record<ResolutionOutcome['kind'], number>> = {
  resolved: 307,
  not_found: 404,
  gone: 410,
  not_activated: 409,
  recalled: 200,
  not_in_circulation: 410,
};

/** The GS1 link type of a product information page (the passport page). */
export const gs1PipLinkType = gs1LinkTypeUri('pip');
/** The GS1 default link type. */
export const gs1DefaultLinkType = gs1LinkTypeUri('defaultLink');
/** Where the JSON-LD context of GS1 linksets lives (sent as a `Link` with every linkset). */
export const gs1LinksetContext = 'https://ref.gs1.org/standards/resolver/linkset-context';

/**
 * Appends the request's query string to a redirect target, as the standard asks (every
 * `key=value` pair passed on as sent), minus `linkType`, which was for the resolver.
 */
export function forwardQuery(target: string, queryString: string): string {
  const pairs = queryString.split('&').filter((pair) => {
    if (pair === '') return false;
    const eq = pair.indexOf('=');
    return decode(eq < 0 ? pair : pair.slice(0, eq)) !== 'linkType';
  });
  if (pairs.length === 0) return target;
  const hash = target.indexOf('#');
  const [base, fragment] = hash < 0 ? [target, ''] : [target.slice(0, hash), target.slice(hash)];
  return `${base}${base.includes('?') ? '&' : '?'}${pairs.join('&')}${fragment}`;
}

/** Options of {@link resolverDescription}. */
export interface ResolverDescriptionOptions {
  /** The root the standard's URIs resolve under: `{PUBLIC_BASE_URL}/r` at the service's origin, `https://{domain}` at a brand domain. */
  readonly resolverRoot: string;
  readonly name: string;
  /** Who answers for the resolver (`RESOLVER_CONTACT`: an e-mail address, a `mailto:` or an `https://` URI); left out of the file when undefined. */
  readonly contact?: string | undefined;
}

/**
 * The description file's `contact`: the description file schema 1.2.0 wants an object in vCard
 * terms (`fn`, the formatted name, and others); from an e-mail address or a `mailto:` URI it is
 * `{fn, hasEmail: "mailto:..."}`, from an `https://` URI `{fn, hasURL}`, `fn` being the address.
 */
export function resolverContact(contact: string): { readonly fn: string; readonly hasEmail?: string; readonly hasURL?: string } {
  if (contact.startsWith('https://')) return { fn: contact, hasURL: contact };
  const address = contact.startsWith('mailto:') ? contact.slice('mailto:'.length) : contact;
  return { fn: address, hasEmail: `mailto:${address}` };
}

/**
 * The resolver description file served at `/.well-known/gs1resolver` (GS1-Conformant Resolver
 * 1.2, section 3), valid against GS1's description file schema 1.2.0: its root, the primary keys
 * served (GTIN only), the link type namespace it recognises, that `linkset` cannot be made the
 * default link type, where the JSON-LD context of its linksets lives, and whom to contact (a
 * vCard-like object, see {@link resolverContact}) when one is configured.
 */
export function resolverDescription(options: ResolverDescriptionOptions): Record<string, unknown> {
  return {
    name: options.name,
    resolverRoot: options.resolverRoot,
    supportedPrimaryKeys: ['01'],
    supportedLinkType: [{ namespace: gs1VocabularyNamespace, prefix: 'gs1:' }],
    linkTypeDefaultCanBeLinkset: false,
    jsonLdContextLocation: gs1LinksetContext,
    ...(options.contact === undefined ? {} : { contact: resolverContact(options.contact) }),
  };
}
