/**
 * The public resolver's rules: parsing GS1 Digital Link paths under a brand's resolver base,
 * content negotiation, and the answer for an identity in a given state. Pure: the lookups are
 * the caller's.
 */
import { normalizeGtin } from './catalog.ts';

/** The identity a resolver path names. */
export type ResolverKey =
  /** `/01/{gtin}/21/{serial}`: one serialised unit of a product. */
  | { readonly kind: 'serial'; readonly gtin: string; readonly serial: string }
  /** `/01/{gtin}/10/{lot}`: a lot of a product. */
  | { readonly kind: 'lot'; readonly gtin: string; readonly lot: string }
  /** `/01/{gtin}`: the product itself. */
  | { readonly kind: 'gtin'; readonly gtin: string }
  /** `/u/{token}`: a unit of a product without GTIN (token = serial). */
  | { readonly kind: 'token'; readonly token: string };

/** A parsed resolver request path. */
export interface ResolverPath {
  /** Brand slug: the last segment of the brand's resolver base. */
  readonly slug: string;
  readonly key: ResolverKey;
}

/** Mount point of the resolver: every brand's base is `{PUBLIC_BASE_URL}/r/{slug}`. */
export const resolverPrefix = '/r/';

/** Longest serial (GS1 AI 21) and lot (AI 10) accepted: 20 characters. */
const maxAiLength = 20;
/** GS1 AI 82 character set (what AI 21 and AI 10 allow). */
const ai82 = /^[!"%&'()*+,\-./0-9:;<=>?A-Z_a-z]+$/;
const slugPattern = /^[a-z0-9][a-z0-9-]{0,62}$/;

function decode(segment: string): string | null {
  try {
    return decodeURIComponent(segment);
  } catch {
    return null;
  }
}

function aiValue(segment: string | undefined): string | null {
  if (segment === undefined || segment === '') return null;
  const value = decode(segment);
  return value !== null && value.length <= maxAiLength && ai82.test(value) ? value : null;
}

/**
 * Parses a request path (without query) such as `/r/acme/01/09506000134352/21/ABC` into the brand
 * slug and the identity; null when it is not a resolver path this service answers. GTIN-8, -12
 * and -13 are accepted and normalised to GTIN-14; a wrong check digit is not a resolver path.
 * A trailing slash is ignored.
 */
export function parseResolverPath(path: string): ResolverPath | null {
  if (!path.startsWith(resolverPrefix)) return null;
  const parts = path.slice(resolverPrefix.length).replace(/\/$/, '').split('/');
  const slug = parts[0];
  if (slug === undefined || !slugPattern.test(slug)) return null;
  if (parts[1] === 'u' && parts.length === 3) {
    const token = aiValue(parts[2]);
    return token === null ? null : { slug, key: { kind: 'token', token } };
  }
  if (parts[1] !== '01' || parts[2] === undefined) return null;
  const gtin = normalizeGtin(parts[2]);
  if (gtin === null) return null;
  if (parts.length === 3) return { slug, key: { kind: 'gtin', gtin } };
  if (parts.length !== 5) return null;
  const value = aiValue(parts[4]);
  if (value === null) return null;
  if (parts[3] === '21') return { slug, key: { kind: 'serial', gtin, serial: value } };
  if (parts[3] === '10') return { slug, key: { kind: 'lot', gtin, lot: value } };
  return null;
}

/** How the answer is represented. */
export type Representation =
  /** A 307 redirect to the passport page (browsers, and anything without a preference). */
  | 'redirect'
  /** `application/json`: the unit and product data. */
  | 'json'
  /** `application/linkset+json`: an RFC 9264 linkset. */
  | 'linkset';

interface MediaRange { readonly type: string; readonly q: number }

function parseAccept(accept: string): MediaRange[] {
  return accept.split(',').map((part) => {
    const [type = '', ...params] = part.split(';').map((s) => s.trim().toLowerCase());
    const q = params.find((p) => p.startsWith('q='));
    const value = q === undefined ? 1 : Number(q.slice(2));
    return { type, q: Number.isFinite(value) ? value : 0 };
  }).filter((r) => r.type !== '' && r.q > 0);
}

/**
 * Picks the representation: `linkType=linkset` (or `all`) in the query asks for the linkset;
 * otherwise the Accept header's highest-q type among `application/linkset+json`,
 * `application/json` and HTML-ish types (`text/html`, `*\/*`) wins, with ties going to the
 * linkset, then JSON. No Accept header, or none of those types, gets the redirect.
 */
export function negotiate(accept: string | undefined, linkType: string | null): Representation {
  if (linkType === 'linkset' || linkType === 'all') return 'linkset';
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
    /** The identity's own target (none today: units and lots walk up to the product). */
    readonly ownTarget: string | null;
    readonly productPassportUrl: string | null;
    readonly brandDefaultPassportUrl: string | null;
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
  | { readonly kind: 'not_activated' };

/**
 * Decides the answer: a voided batch is gone (410) before anything else; an inactive unit is not
 * yet activated (409); otherwise the identity resolves to its own target, else the product's
 * passport page, else the brand's default.
 */
export function decideResolution(found: FoundIdentity): ResolutionOutcome {
  if (found.kind === 'none') return { kind: 'not_found' };
  if (found.batchStatus === 'voided') return { kind: 'gone' };
  if (found.unitStatus !== null && found.unitStatus !== 'active') return { kind: 'not_activated' };
  return { kind: 'resolved', target: found.ownTarget ?? found.productPassportUrl ?? found.brandDefaultPassportUrl };
}

/** HTTP status of each outcome (a resolved one answers 200 instead when it is not a redirect). */
export const resolutionStatus: Readonly<Record<ResolutionOutcome['kind'], number>> = {
  resolved: 307,
  not_found: 404,
  gone: 410,
  not_activated: 409,
};

/** The GS1 link type of a product information page. */
export const gs1PipLinkType = 'https://gs1.org/voc/pip';
/** The GS1 default link type. */
export const gs1DefaultLinkType = 'https://gs1.org/voc/defaultLink';

/**
 * An RFC 9264 linkset for `anchor`: the passport page as both the GS1 default link and the
 * product information page; empty link lists when there is no target.
 */
export function buildLinkset(anchor: string, target: string | null, title: string | null): { linkset: Record<string, unknown>[] } {
  const link = target === null ? [] : [{ href: target, type: 'text/html', ...(title === null ? {} : { title }) }];
  return { linkset: [{ anchor, [gs1DefaultLinkType]: link, [gs1PipLinkType]: link }] };
}
