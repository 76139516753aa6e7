// The public resolver's answers: what a GS1 Digital Link request under /r/ (or on a brand's own
// domain) gets, decided from its method, headers, path and query: the representation (content
// negotiation), the link chosen, the linkset, the hosted passport, the refusal and the caching
// headers, as a status, media type, body and headers. The lookups are the resolver's and the
// passports' reads; the service binds these answers to HTTP and writes them.

import { validateHeaderValue } from 'node:http';
import {
  acceptedLanguages,
  acceptedMediaTypes,
  edgeCacheControl,
  encodeEdgeScan,
  forwardQuery,
  gs1LinksetContext,
  gs1VocabularyNamespace,
  identityPassportCredential,
  linksetOf,
  negotiate,
  parseResolverRequest,
  readLinkType,
  resolutionStatus,
  resolverPrefix,
  resolverRootPathOf,
  surrogateKeysOf,
  type LinkPreferences,
  type LinkTypeRequest,
  type ParsedResolverRequest,
  type Representation,
  type ResolutionOutcome,
  type ScanClient,
} from '@mint/domain';
import {
  escapeHtml,
  identityPageBytes,
  pageLanguageOf,
  plainPage,
  refusalJson,
  refusalPages,
  resolverBodies,
  type Authenticity,
  type PageContent,
  type PageLanguage,
  type PagePassport,
  type Refusal,
} from '@mint/pages';
import type { PassportReader, PassportReads, PassportSigner, PublishedPassport } from '../passports/index.ts';
import type { Resolution, Resolver } from './resolver.ts';

/** What the resolver reads of an HTTP request: its method and headers. */
export interface ResolverCall {
  readonly method?: string | undefined;
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
}

/** An answer of the resolver: its status, media type and body (none: a bodiless answer such as a redirect) and headers. */
export interface ResolverAnswer {
  readonly status: number;
  readonly type?: string;
  readonly body?: string | Uint8Array;
  readonly headers: Readonly<Record<string, string | number>>;
}

/** The hosted passports and the credentials' signer of the resolver's answers; none: no identity has a hosted passport. */
export interface HostedPassports {
  /** The published passports; none: no identity has a hosted passport. */
  readonly passports?: PassportReads | undefined;
  /** Signs passport credentials; none: `Accept: application/vc+jwt` is not served. */
  readonly signer?: PassportSigner | undefined;
}

const refusalStatus: Record<Refusal, number> = {
  not_found: resolutionStatus.not_found,
  gone: resolutionStatus.gone,
  not_activated: resolutionStatus.not_activated,
  unknown_link_type: 404,
  link_type_not_available: 404,
  invalid_link_target: 502,
};
/** The page language of a request, from its Accept-Language. */
const languageOf = (req: ResolverCall): PageLanguage => {
  const header = req.headers['accept-language'];
  return pageLanguageOf(languagesOf(typeof header === 'string' ? header : undefined));
};

/** CORS of every resolver answer: readable from any origin, with its Link and Location headers. */
export const corsHeaders = {
  'access-control-allow-origin': '*',
  'access-control-allow-methods': 'GET, HEAD, OPTIONS',
  'access-control-expose-headers': 'Link, Location, Content-Type',
} as const;
/**
 * The caching headers of every answer about an identity (redirects, linksets, JSON, pages and
 * refusals alike), and of the resolver's 400s. `Cache-Control: no-store` by default: a unit's
 * answer changes whenever its state, suspect mark or links do, and every resolution is recorded as
 * a scan event (the brand's scan counts and the never-minted-serial signal come from them). Found
 * GTIN and lot answers replace it with the shared-cache headers of {@link edgeHeadersOf} (purged
 * on every change, their scans counted from the proxy's log). `Vary` names both headers the answer
 * depends on: `Accept` (redirect, linkset, JSON or page) and `Accept-Language` (which link is
 * chosen). The 301 of a short GTIN ({@link movedCacheControl}) and the description file are
 * cacheable by anyone.
 */
const publicHeaders = { 'cache-control': 'no-store', vary: 'Accept, Accept-Language', ...corsHeaders } as const;
/** The 301 from a short GTIN to its GTIN-14 form depends on the path alone: cacheable for a day by anyone. */
const movedCacheControl = 'public, max-age=86400';

/** The body of a refusal: a page or JSON. */
export type BodyFormat = 'html' | 'json';

/** An answer with the headers of every answer about an identity ({@link publicHeaders}), then `headers`. */
const reply = (status: number, type: string, body: string | Uint8Array, headers: Readonly<Record<string, string>> = {}): ResolverAnswer => ({
  status,
  type,
  body,
  headers: { ...publicHeaders, ...headers },
});

/** A refusal in the resolver's form (the same bytes for every unknown or foreign identity), as a page or JSON. */
export function refusal(req: ResolverCall, kind: Refusal, format: BodyFormat, headers: Readonly<Record<string, string>> = {}): ResolverAnswer {
  if (format === 'html') return reply(refusalStatus[kind], 'text/html; charset=utf-8', refusalPages[languageOf(req)][kind], headers);
  return reply(refusalStatus[kind], 'application/json; charset=utf-8', refusalJson[kind], headers);
}

/** 400 (or the router's status) with a short reason, as a small HTML page or JSON. */
export function requestRefusal(status: number, code: string, reason: string, format: BodyFormat): ResolverAnswer {
  if (format === 'html') return reply(status, 'text/html; charset=utf-8', plainPage('Not a valid GS1 Digital Link', escapeHtml(reason)));
  return reply(status, 'application/json; charset=utf-8', JSON.stringify({ ok: false, error: code, message: reason }));
}

/** The `Link` to an identity's linkset, sent with every answer about it (redirects included). */
const linksetLink = (anchor: string) => `<${anchor}?linkType=linkset>; rel="linkset"; type="application/linkset+json"`;
const contextLink = `<${gs1LinksetContext}>; rel="http://www.w3.org/ns/json-ld#context"; type="application/ld+json"`;

/**
 * `compute` of an Accept (or Accept-Language) header, memoised (at most 256 distinct headers
 * kept): scanners send a handful of distinct headers over and over. The value is shared: never
 * modified.
 */
function perAccept<T>(compute: (accept: string) => T, absent: T): (accept: string | undefined) => T {
  const memo = new Map<string, T>();
  return (accept) => {
    if (accept === undefined) return absent;
    let value = memo.get(accept);
    if (value === undefined) {
      value = compute(accept);
      if (memo.size >= 256) memo.clear();
      memo.set(accept, value);
    }
    return value;
  };
}
/** {@link negotiate} without a `linkType`. */
const negotiated = perAccept<Representation>((accept) => negotiate(accept), 'redirect');
/** The media types an Accept header asks for, preferred first. */
const mediaTypesOf = perAccept<readonly string[]>(acceptedMediaTypes, []);
/** A page for a browser (what asks for a redirect), JSON otherwise. */
export const formatOf = (accept: string | undefined): BodyFormat => (negotiated(accept) === 'redirect' ? 'html' : 'json');
/** The languages an Accept-Language header asks for, preferred first. */
const languagesOf = perAccept<readonly string[]>(acceptedLanguages, []);

/** What one identity request needs to be answered. */
interface Request {
  readonly call: ResolverCall;
  readonly parsed: Extract<ParsedResolverRequest, { kind: 'identity' }>;
  readonly linkType: LinkTypeRequest;
  readonly representation: Representation;
  readonly format: BodyFormat;
  /** The query string passed on to a redirect target (with the compressed URI's data attributes first). */
  readonly forwarded: string;
  /** `Link` header of every answer about the identity. */
  readonly link: string;
  /** What the request asks of the passport. */
  readonly passportAsk: PassportAsk;
  /** An earlier passport version asked for (`passportVersion=N`); null for the latest. */
  readonly passportVersion: number | null;
  /** The URI of the identity (its linkset anchor), under the request's root. */
  readonly anchor: string;
  /** Signs credentials (`Accept: application/vc+jwt`); none: not served. */
  readonly signer?: PassportSigner | undefined;
}

/** No headers: an answer no shared cache may keep. */
const uncached: Readonly<Record<string, string>> = {};

/**
 * The headers that let a shared cache (the caching proxy or CDN in front, see CACHE_PURGE_URL)
 * keep an answer: only a found GTIN's or lot's (redirects, linksets, JSON and pages alike), whose
 * answer changes only with links (purged by key on every change) or the product; never a unit's
 * (its state and suspect mark change at any time and are not announced), a refusal's, or an answer
 * from the last-known store during a database outage. `Cache-Control` lets no private cache keep
 * it ({@link edgeCacheControl}); `Surrogate-Key` names its purge keys; `X-Scan` the scan it stands
 * for, which the proxy logs on every hit (and strips) so the log shipper records the scans the
 * resolver never saw: a miss is recorded by the resolver itself, a hit by the log, each scan once.
 */
function edgeHeadersOf(r: Request, resolution: Resolution): Readonly<Record<string, string>> {
  const key = r.parsed.path.key;
  if ((key.kind !== 'gtin' && key.kind !== 'lot') || resolution.outcome.kind !== 'resolved' || resolution.brand === null || resolution.stale === true)
    return uncached;
  const brandId = resolution.brand.id;
  return {
    'cache-control': edgeCacheControl,
    'surrogate-key': surrogateKeysOf(brandId, key.gtin),
    'x-scan': encodeEdgeScan({
      brandId,
      kind: key.kind,
      gtin: key.gtin,
      lot: key.kind === 'lot' ? key.lot : null,
      outcome: resolution.outcome.kind,
      representation: r.representation,
      linkType: r.representation === 'redirect' ? (resolution.link?.linkType ?? null) : null,
    }),
  };
}

/**
 * The header of an answer given from what the resolver last knew while its database could not be
 * read (the JSON answer says `"stale": true` too): it may be stale, and no cache keeps it.
 */
export const staleHeader = 'x-resolver-stale';

/**
 * What a request asks of the product's passport: `auto` a plain browser scan (the hosted passport
 * page when the product has a published passport and no external passport URL), `page` the page
 * by name (`linkType=gs1:dpp` or `passportVersion` from a browser), `ld` the UNTP credential
 * (`Accept: application/ld+json`, or `gs1:dpp` from a machine), `json` and `linkset` the passport
 * in those answers, `none` nothing (a link asked for by another type).
 */
type PassportAsk = 'auto' | 'page' | 'ld' | 'jwt' | 'json' | 'linkset' | 'none';

/** The passport media types a request prefers over the resolver's own answers, if any. */
const passportMediaOf = perAccept<'ld' | 'jwt' | null>((accept) => {
  for (const type of acceptedMediaTypes(accept)) {
    if (type === 'application/vc+jwt') return 'jwt';
    if (type === 'application/ld+json' || type === 'application/vc+ld+json' || type === 'application/vc') return 'ld';
    if (['application/json', 'application/linkset+json', 'text/html', 'application/xhtml+xml', '*/*'].includes(type)) return null;
  }
  return null;
}, null);

/** The passport credential a request presents (`X-Passport-Key`, or `Authorization: Bearer pp_...`), if any. */
function passportKeyOf(req: ResolverCall): string | null {
  const key = req.headers['x-passport-key'];
  if (typeof key === 'string' && key !== '') return key;
  const auth = req.headers.authorization;
  if (typeof auth === 'string' && auth.startsWith('Bearer pp_')) return auth.slice(7);
  return null;
}

/**
 * The `Link` header of every answer about a well-formed Digital Link (OPTIONS included): its
 * linkset's, and for a compressed request the uncompressed URI as `owl:sameAs`. `at` turns a
 * canonical path into the URI the answer names.
 */
function identityLink(parsed: Exclude<ParsedResolverRequest, { kind: 'malformed' }>, at: (canonicalPath: string) => string): string {
  const anchor = at(parsed.canonicalPath);
  const compressed = parsed.kind === 'identity' ? parsed.decompressedQuery : null;
  return compressed === null ? linksetLink(anchor) : `${linksetLink(anchor)}, <${anchor}${compressed === '' ? '' : `?${compressed}`}>; rel="owl:sameAs"`;
}

/**
 * Answers a well-formed resolver request: the 301 of a short GTIN, the 404 of an unknown
 * `linkType`, else the resolution. `at` turns a canonical path (from `/r/{slug}`) into the URI
 * the answer names; `root` is what replaces `{PUBLIC_BASE_URL}/r/{slug}` in the linkset anchors
 * (undefined: nothing does).
 */
export function answerIdentity(
  resolver: Resolver,
  req: ResolverCall,
  parsed: Exclude<ParsedResolverRequest, { kind: 'malformed' }>,
  queryString: string,
  at: (canonicalPath: string) => string,
  root: string | undefined,
  client: ScanClient,
  hosted: HostedPassports = {},
): ResolverAnswer | Promise<ResolverAnswer> {
  const { passports, signer } = hosted;
  const accept = typeof req.headers.accept === 'string' ? req.headers.accept : undefined;
  const format = formatOf(accept);
  if (parsed.kind === 'moved') {
    const location = `${at(parsed.canonicalPath)}${queryString === '' ? '' : `?${queryString}`}`;
    return { status: 301, headers: { ...publicHeaders, 'cache-control': movedCacheControl, location, link: linksetLink(at(parsed.canonicalPath)) } };
  }
  const compressed = parsed.decompressedQuery;
  const link = identityLink(parsed, at);
  const query = queryString === '' ? null : new URLSearchParams(queryString);
  const linkType = readLinkType(query === null ? null : query.get('linkType'));
  if (linkType.kind === 'unknown') return refusal(req, 'unknown_link_type', format, { link });
  const representation = linkType.kind === 'none' ? negotiated(accept) : negotiate(accept, linkType);
  const forwarded = compressed === null || compressed === '' ? queryString : queryString === '' ? compressed : `${compressed}&${queryString}`;
  const versionParam = query === null ? null : query.get('passportVersion');
  if (versionParam !== null && !/^[1-9]\d{0,8}$/.test(versionParam))
    return requestRefusal(400, 'bad_request', 'passportVersion must be a version number (1, 2, ...)', format);
  const passportVersion = versionParam === null ? null : Number(versionParam);
  const machine = passportMediaOf(accept);
  const dpp = linkType.kind === 'link' && linkType.name === 'dpp';
  const passportAsk: PassportAsk =
    passports === undefined
      ? 'none'
      : machine !== null && (linkType.kind === 'none' || dpp)
        ? machine
        : dpp
          ? format === 'json'
            ? 'ld'
            : 'page'
          : linkType.kind === 'link' && linkType.name !== 'defaultLink'
            ? 'none'
            : representation === 'linkset'
              ? 'linkset'
              : representation === 'json'
                ? 'json'
                : passportVersion !== null
                  ? 'page'
                  : 'auto';
  const request: Request = {
    call: req,
    parsed,
    linkType,
    representation,
    format,
    forwarded,
    link,
    passportAsk,
    passportVersion,
    anchor: at(parsed.canonicalPath),
    signer,
  };
  const language = req.headers['accept-language'];
  const context = query === null ? null : query.get('context');
  const preferences: LinkPreferences = {
    linkType: linkType.kind === 'link' && linkType.name !== 'defaultLink' ? linkType.name : null,
    languages: languagesOf(typeof language === 'string' ? language : undefined),
    context: context === '' ? null : context,
    mediaTypes: mediaTypesOf(accept),
  };
  // The sender's address lets the scan recorder count a flood instead of storing each scan and hash the day's visitor; it is never written.
  const resolution = resolver.resolve(parsed.path, representation, preferences, root, client);
  if (passports === undefined || passportAsk === 'none') {
    if (resolution instanceof Promise) return resolution.then((found) => answer(request, found));
    return answer(request, resolution);
  }
  const withPassport = (found: Resolution): ResolverAnswer | Promise<ResolverAnswer> => {
    const passport = passportOf(passports, request, found);
    if (passport instanceof Promise) return passport.then((p) => answer(request, found, p));
    return answer(request, found, passport);
  };
  return resolution instanceof Promise ? resolution.then(withPassport) : withPassport(resolution);
}

/**
 * The published passport a resolved or recalled identity's answer shows, as the request's
 * credential may see it; null when none applies: refused or out of circulation, a serial the brand
 * never issued, a product whose passport lives at its external URL (a plain scan still goes
 * there), or none published. Synchronous when the product is known to have none (no query on the
 * scan's path).
 *
 * A recalled item keeps its passport: a recall tells the holder not to use the item, and the
 * passport is what says what the item is and how to return, repair or dispose of it. So every
 * answer that carries the passport carries it for a recalled item too, with the recall leading:
 * a plain browser scan gets the recall page (recall notice first, the brand's links, then the
 * passport's sections), `?linkType=gs1:dpp` from a browser the passport page with the recall as
 * its leading notice (200, never a 404), JSON and the linkset the recall first and the passport
 * after it, and a machine asking for the credential gets it (the recall is the item's state, read
 * from the resolver's answers, not a revocation of the passport). An item out of circulation for
 * another reason (410) answers without its passport.
 */
function passportOf(passports: PassportReads, r: Request, resolution: Resolution): PublishedPassport | null | Promise<PublishedPassport | null> {
  const product = resolution.product ?? null;
  if (
    (resolution.outcome.kind !== 'resolved' && resolution.outcome.kind !== 'recalled') ||
    product === null ||
    resolution.unitKnown === false ||
    resolution.brand === null
  )
    return null;
  if (r.passportAsk === 'auto' && product.passportUrl !== null && r.passportVersion === null) return null;
  const key = r.parsed.path.key;
  const presented = passportKeyOf(r.call);
  const representation =
    r.passportAsk === 'jwt'
      ? 'vc+jwt'
      : r.passportAsk === 'ld'
        ? 'ld+json'
        : r.passportAsk === 'json'
          ? 'json'
          : r.passportAsk === 'linkset'
            ? 'linkset'
            : 'html';
  const read = (reader: PassportReader | null) =>
    passports.read({
      brandId: resolution.brand!.id,
      productId: product.id,
      lot: key.kind === 'lot' ? key.lot : key.kind === 'serial' ? (key.lot ?? null) : null,
      serial: key.kind === 'serial' ? key.serial : null,
      version: r.passportVersion,
      reader,
      representation,
    });
  const passport = presented === null ? read(null) : passports.readerOf(presented).then(read);
  // An answer from what the resolver last knew (its database away) goes without the passport it cannot read.
  return resolution.stale === true && passport instanceof Promise ? passport.catch(() => null) : passport;
}

/** The stand-in brand base a request under the root is first parsed below (a valid slug no lookup depends on). */
const rootProbe = `${resolverPrefix}0`;

/**
 * Answers a Digital Link written directly under the service's resolver root (`{root}/01/...` or
 * `{root}/{compressed}`, `root` = `{PUBLIC_BASE_URL}/r`): checked, moved (a short GTIN) and
 * answered to OPTIONS exactly as below a brand's base, without a lookup; otherwise resolved as the
 * brand that holds the GTIN ({@link Resolver.brandOfGtin}) resolves it under `/r/{slug}`, with
 * every URI of the answer (anchors, moves) under the root. A GTIN no brand, or several brands,
 * hold answers the same 404 as an unknown identity.
 */
function answerUnderRoot(
  resolver: Resolver,
  req: ResolverCall,
  below: string,
  queryString: string,
  root: string,
  client: ScanClient,
  hosted: HostedPassports = {},
): ResolverAnswer | Promise<ResolverAnswer> {
  const probe = parseResolverRequest(`${rootProbe}${below}`);
  const probeAt = (canonicalPath: string) => `${root}${canonicalPath.slice(rootProbe.length)}`;
  if (req.method === 'OPTIONS') return preflightAnswer(req, probe.kind === 'malformed' ? undefined : identityLink(probe, probeAt));
  const format = formatOf(typeof req.headers.accept === 'string' ? req.headers.accept : undefined);
  if (probe.kind === 'malformed') return requestRefusal(400, 'bad_request', probe.reason, format);
  if (probe.kind === 'moved') return answerIdentity(resolver, req, probe, queryString, probeAt, root, client, hosted);
  const key = probe.path.key;
  const brand = key.kind === 'token' ? null : resolver.brandOfGtin(key.gtin);
  const serve = (found: Resolution['brand']) => {
    const parsed = found === null ? probe : parseResolverRequest(`${resolverPrefix}${found.slug}${below}`);
    if (found === null || parsed.kind !== 'identity') return refusal(req, 'not_found', format, { link: identityLink(probe, probeAt) });
    const prefixLength = resolverPrefix.length + found.slug.length;
    return answerIdentity(resolver, req, parsed, queryString, (canonicalPath) => `${root}${canonicalPath.slice(prefixLength)}`, root, client, hosted);
  };
  return brand instanceof Promise ? brand.then(serve) : serve(brand);
}

/**
 * The answer to a request under `/r/` (`path` whole, `base` the service's public origin). A
 * malformed Digital Link answers 400 with the reason, a short GTIN 301 to its GTIN-14 form, both
 * without a lookup; an unknown `linkType` 404 without a lookup. A well-formed identity that is
 * unknown, another brand's or of an unknown brand answers the same 404 (an unknown lot resolves as
 * its product; see the resolver). Every answer about an identity, OPTIONS included, carries the
 * `Link` to its linkset; a compressed request also the uncompressed URI as `owl:sameAs`. A Digital
 * Link directly under `/r` (the description file's `resolverRoot`) resolves through the brand that
 * holds its GTIN ({@link answerUnderRoot}).
 */
export function answerResolverPath(
  resolver: Resolver,
  req: ResolverCall,
  path: string,
  queryString: string,
  base: string,
  client: ScanClient,
  hosted: HostedPassports = {},
): ResolverAnswer | Promise<ResolverAnswer> {
  const at = (canonicalPath: string) => `${base}${canonicalPath}`;
  const below = resolverRootPathOf(path);
  if (below !== null) return answerUnderRoot(resolver, req, below, queryString, `${base}/r`, client, hosted);
  const parsed = parseResolverRequest(path);
  if (req.method === 'OPTIONS') return preflightAnswer(req, parsed.kind === 'malformed' ? undefined : identityLink(parsed, at));
  if (parsed.kind === 'malformed') return requestRefusal(400, 'bad_request', parsed.reason, formatOf(headerOf(req, 'accept')));
  return answerIdentity(resolver, req, parsed, queryString, at, undefined, client, hosted);
}

/** A brand domain's path that can only be a Digital Link (a primary key or a `/u/` token): refused as malformed, not as unknown. */
export const identityShaped = (path: string) => path.startsWith('/01/') || path.startsWith('/u/') || path === '/01' || path === '/u';

/**
 * The answer to a GET, HEAD or OPTIONS of `path` on the resolver domain of the brand `slug`, whose
 * URIs start with `root` (`https://{domain}`): its identities exactly as under `/r/{slug}`; a path
 * that cannot be a Digital Link answers the 404 of an unknown identity.
 */
export function answerBrandDomainPath(
  resolver: Resolver,
  req: ResolverCall,
  slug: string,
  path: string,
  queryString: string,
  root: string,
  client: ScanClient,
  hosted: HostedPassports = {},
): ResolverAnswer | Promise<ResolverAnswer> {
  const parsed = parseResolverRequest(`${resolverPrefix}${slug}${path}`);
  if (parsed.kind === 'malformed') {
    if (!identityShaped(path)) return refusal(req, 'not_found', formatOf(headerOf(req, 'accept')));
    if (req.method === 'OPTIONS') return preflightAnswer(req);
    return requestRefusal(400, 'bad_request', parsed.reason, formatOf(headerOf(req, 'accept')));
  }
  const prefixLength = resolverPrefix.length + slug.length;
  const at = (canonicalPath: string) => `${root}${canonicalPath.slice(prefixLength)}`;
  if (req.method === 'OPTIONS') return preflightAnswer(req, identityLink(parsed, at));
  return answerIdentity(resolver, req, parsed, queryString, at, root, client, hosted);
}

/** {@link answerOf}, with the {@link staleHeader} on an answer from what the resolver last knew. */
function answer(r: Request, resolution: Resolution, passport: PublishedPassport | null = null): ResolverAnswer | Promise<ResolverAnswer> {
  const answered = answerOf(r, resolution, passport);
  if (resolution.stale !== true) return answered;
  const stale = (a: ResolverAnswer): ResolverAnswer => ({ ...a, headers: { ...a.headers, [staleHeader]: 'true' } });
  return answered instanceof Promise ? answered.then(stale) : stale(answered);
}

/** Headers of an answer that carries the passport: it depends on the credential presented too, and is never stored. */
const passportHeaders = { vary: 'Accept, Accept-Language, X-Passport-Key, Authorization', 'cache-control': 'private, no-store' } as const;

/** The answer to an identity's request from its resolution and the passport it shows (if any). */
function answerOf(r: Request, resolution: Resolution, passport: PublishedPassport | null = null): ResolverAnswer | Promise<ResolverAnswer> {
  const req = r.call;
  const outcome: ResolutionOutcome = resolution.outcome;
  // An answer that carries a passport (or may: one asked for by name, or with a credential) is
  // private and never kept by a shared cache; the others keep the edge headers of their level.
  const edge =
    passport !== null || r.passportAsk === 'ld' || r.passportAsk === 'jwt' || r.passportAsk === 'page' || passportKeyOf(r.call) !== null
      ? passport === null
        ? uncached
        : passportHeaders
      : edgeHeadersOf(r, resolution);
  if (outcome.kind === 'not_in_circulation' && resolution.level !== null) {
    // 410 in every representation, each saying the item is out of circulation (and why, where public).
    const why = outcome.state === 'decommissioned' ? outcome.reason : outcome.state;
    if (r.representation === 'linkset') {
      return reply(410, 'application/linkset+json', JSON.stringify(linksetOf(resolution.levels)), { link: `${r.link}, ${contextLink}`, ...edge });
    } else if (r.format === 'json') {
      return reply(
        410,
        'application/json; charset=utf-8',
        JSON.stringify({
          ...resolution.data, // the unit as its JSON answer shows it, under the refusal's fields
          ok: false,
          error: 'not_in_circulation',
          message: `This item is not in circulation${why === null ? '' : ` (${why})`}.`,
          state: outcome.state,
          reason: outcome.reason,
        }),
        { link: r.link, ...edge },
      );
    } else {
      return reply(410, 'text/html; charset=utf-8', identityPageBytes({ ...pageContent(r, resolution, 'not_in_circulation'), why }, languageOf(req)), {
        link: r.link,
        ...edge,
      });
    }
  }
  if (outcome.kind === 'not_activated' && resolution.level !== null && resolution.unitKnown === true && r.representation !== 'redirect') {
    // A unit never commissioned (issued or encoded) says so in its JSON and linkset.
    if (r.representation === 'linkset') {
      return reply(409, 'application/linkset+json', JSON.stringify(linksetOf(resolution.levels)), { link: `${r.link}, ${contextLink}`, ...edge });
    } else {
      return reply(409, 'application/json; charset=utf-8', JSON.stringify({ ...resolverBodies.not_activated, ...resolution.data, ok: false }), {
        link: r.link,
        ...edge,
      });
    }
  }
  if (outcome.kind === 'not_activated' && resolution.level !== null && resolution.unitKnown === true) {
    return reply(
      409,
      'text/html; charset=utf-8',
      identityPageBytes({ ...pageContent(r, resolution, 'not_activated'), why: 'never_commissioned' }, languageOf(req)),
      { link: r.link, ...edge },
    );
  }
  if (
    outcome.kind === 'recalled' &&
    r.representation === 'redirect' &&
    (r.linkType.kind === 'none' || (r.linkType.kind === 'link' && r.linkType.name === 'defaultLink'))
  ) {
    // A recall leads: a plain scan gets the identity page with the recall first, the links as
    // actions and, below them, the hosted passport (a recall withdraws the item, not its passport).
    return reply(200, 'text/html; charset=utf-8', identityPageBytes(pageContent(r, resolution, 'recalled', passport), languageOf(req)), {
      link: r.link,
      ...edge,
    });
  }
  if ((outcome.kind !== 'resolved' && outcome.kind !== 'recalled') || resolution.level === null) {
    return refusal(
      req,
      outcome.kind === 'resolved' || outcome.kind === 'recalled' || outcome.kind === 'not_in_circulation' ? 'not_found' : outcome.kind,
      r.format,
      { link: r.link, ...edge },
    );
  }
  const title = resolution.title ?? 'Product';
  if (r.passportVersion !== null && passport === null && resolution.unitKnown !== false) {
    // An earlier version asked for by number that this identity's passport never had.
    return refusal(req, 'link_type_not_available', r.format, { link: r.link });
  }
  if (r.passportAsk === 'ld' || r.passportAsk === 'jwt') {
    if (passport === null || resolution.unitKnown === false || (r.passportAsk === 'jwt' && r.signer === undefined)) {
      return refusal(req, 'link_type_not_available', 'json', { link: r.link });
    }
    if (r.passportAsk === 'ld') {
      return reply(200, 'application/ld+json', JSON.stringify(credentialOf(r, resolution, passport)), { link: r.link, ...passportHeaders });
    }
    // Kept per identity, versions shown, reader's sections, languages and names: a repeat is neither built nor signed.
    const p = passport;
    const key =
      `${r.anchor}\n${p.version.id} ${p.latestVersion} ${p.inherited.map((v) => v.id).join(',')}\n${p.restricted.join(',')} ${p.withheld.join(',')}\n` +
      `${languagesOf(headerOf(r.call, 'accept-language')).join(',')}\n${resolution.title ?? ''}\n${resolution.brand?.name ?? ''} ${resolution.brand?.slug ?? ''}`;
    return r
      .signer!.signKept(key, () => credentialOf(r, resolution, p))
      .then((jws) => reply(200, 'application/vc+jwt', jws, { link: r.link, ...passportHeaders }));
  }
  if (r.representation === 'linkset') {
    const linkset = linksetOf(resolution.levels);
    if (passport !== null && resolution.unitKnown !== false) addPassportLinks(linkset.linkset, r.anchor, passport);
    return reply(200, 'application/linkset+json', JSON.stringify(linkset), { link: `${r.link}, ${contextLink}`, ...edge });
  }
  if (r.representation === 'json') {
    const stale = resolution.stale === true ? { stale: true } : {};
    const body =
      passport === null || resolution.unitKnown === false
        ? { ...resolution.data, target: outcome.target, ...stale }
        : { ...resolution.data, target: outcome.target, ...stale, passport: passportJson(passport) };
    return reply(200, 'application/json; charset=utf-8', JSON.stringify(body), { link: r.link, ...edge });
  }
  if (resolution.unitKnown === false && r.representation === 'redirect') {
    // A serial the brand never issued: its own page, 404, never a walk-up to the product's page
    // that would look like the item is genuine (JSON and the linkset still say `known: false`).
    return reply(404, 'text/html; charset=utf-8', identityPageBytes(pageContent(r, resolution, 'not_issued'), languageOf(req)), { link: r.link, ...edge });
  }
  if (
    resolution.suspect !== null &&
    resolution.suspect !== undefined &&
    r.representation === 'redirect' &&
    (r.linkType.kind === 'none' || (r.linkType.kind === 'link' && r.linkType.name === 'defaultLink'))
  ) {
    // A unit a scan rule reported for checking: a shopper's plain scan gets the identity page with
    // the caution and the links as actions rather than a redirect past it; a link type asked for
    // by name (an app) is still followed.
    return reply(200, 'text/html; charset=utf-8', identityPageBytes(pageContent(r, resolution, 'genuine', passport), languageOf(req)), {
      link: r.link,
      ...edge,
    });
  }
  if (passport !== null && (r.passportAsk === 'auto' || r.passportAsk === 'page')) {
    // The hosted passport: its page, with the identity's authenticity (a recall first) and its links as actions.
    const authenticity = outcome.kind === 'recalled' ? 'recalled' : resolution.level === 'serial' || resolution.level === 'token' ? 'genuine' : 'product';
    return reply(200, 'text/html; charset=utf-8', identityPageBytes(pageContent(r, resolution, authenticity, passport), languageOf(req)), {
      link: r.link,
      ...edge,
    });
  }
  const chosen = resolution.link;
  if (resolution.choices !== null) {
    // Several links of the requested type fit equally and none is the default: 300 Multiple Choices
    // with those links, as a linkset (an HTML list when text/html is asked for by name), never a guess.
    const offered = resolution.levels
      .map((level) => ({ ...level, links: level.links.filter((l) => resolution.choices!.includes(l)) }))
      .filter((level) => level.links.length > 0);
    const accept = typeof req.headers.accept === 'string' ? req.headers.accept : undefined;
    if (mediaTypesOf(accept).some((t) => t === 'text/html' || t === 'application/xhtml+xml')) {
      const items = resolution.choices
        .map(
          (l) =>
            `<li><a href="${escapeHtml(l.href)}"${l.hreflang.length > 0 ? ` hreflang="${escapeHtml(l.hreflang[0]!)}"` : ''}>${escapeHtml(l.title)}</a>` +
            `${l.hreflang.length > 0 ? ` (${escapeHtml(l.hreflang.join(', '))})` : ''}${l.mediaType === null ? '' : ` ${escapeHtml(l.mediaType)}`}</li>`,
        )
        .join('');
      return reply(300, 'text/html; charset=utf-8', plainPage(escapeHtml(title), `Choose one:<ul>${items}</ul>`), { link: r.link, ...edge });
    } else {
      return reply(300, 'application/linkset+json', JSON.stringify(linksetOf(offered)), { link: `${r.link}, ${contextLink}`, ...edge });
    }
  } else if (chosen !== null) {
    const location = chosen.fwqs ? forwardQuery(chosen.href, r.forwarded) : chosen.href;
    // Stored targets are kept in ASCII (the domain's storable URL rule); one written before that
    // rule could still hold a character no header may carry: refuse it rather than fail the answer.
    if (!isHeaderValue(location)) return refusal(req, 'invalid_link_target', r.format, { link: r.link, ...edge });
    else return { status: 307, headers: { ...publicHeaders, location, link: r.link, ...edge } };
  } else if (r.linkType.kind === 'link' && r.linkType.name !== 'defaultLink') {
    return refusal(req, 'link_type_not_available', r.format, { link: r.link, ...edge });
  } else {
    // Resolved, but no level has a link yet: the identity page says what it is.
    const authenticity = resolution.level === 'serial' || resolution.level === 'token' ? 'genuine' : 'product';
    return reply(200, 'text/html; charset=utf-8', identityPageBytes(pageContent(r, resolution, authenticity), languageOf(req)), { link: r.link, ...edge });
  }
}

/** The passport as the JSON answer shows it: its version, digest and the sections the reader may see. */
function passportJson(p: PublishedPassport): Record<string, unknown> {
  return {
    level: p.level,
    version: p.version.version,
    latest_version: p.latestVersion,
    sha256: p.version.sha256,
    published_at: p.version.publishedAt.toISOString(),
    content: p.content,
    restricted_sections: p.restricted,
    withheld_sections: p.withheld,
  };
}

/** The UNTP DPP credential of the identity's passport (see {@link identityPassportCredential}), in the request's languages. */
function credentialOf(r: Request, resolution: Resolution, p: PublishedPassport): Record<string, unknown> {
  return identityPassportCredential({
    key: r.parsed.path.key,
    anchor: r.anchor,
    title: resolution.title ?? 'Product',
    brand: resolution.brand,
    content: p.content,
    version: p.version.version,
    publishedAt: p.version.publishedAt,
    statusIndex: p.version.statusIndex,
    languages: languagesOf(headerOf(r.call, 'accept-language')),
  });
}

const headerOf = (req: ResolverCall, name: string): string | undefined => {
  const value = req.headers[name];
  return typeof value === 'string' ? value : undefined;
};

/**
 * Adds the passport to the most specific level of a linkset: a `gs1:dpp` link to the passport
 * (its page for a browser, its credential for `Accept: application/ld+json`), and, for a version
 * after the first, `predecessor-version` to the one it superseded (RFC 5829, as UNTP's identity
 * resolver asks).
 */
function addPassportLinks(linkset: Record<string, unknown>[], anchor: string, p: PublishedPassport): void {
  const level = linkset[linkset.length - 1];
  if (level === undefined) return;
  level[`${gs1VocabularyNamespace}dpp`] = [
    { href: `${anchor}?linkType=gs1:dpp`, title: 'Digital product passport', type: 'text/html' },
    { href: `${anchor}?linkType=gs1:dpp`, title: 'Digital product passport (UNTP credential)', type: 'application/ld+json' },
  ];
  if (p.version.version > 1)
    level['predecessor-version'] = [{ href: `${anchor}?passportVersion=${p.version.version - 1}`, title: `Passport version ${p.version.version - 1}` }];
  if (p.version.version < p.latestVersion) level['latest-version'] = [{ href: anchor, title: `Passport version ${p.latestVersion}` }];
}

/** What the identity page shows of a resolution: the brand, the product and the keys of the path, with every level's links. */
function pageContent(r: Request, resolution: Resolution, authenticity: Authenticity, passport: PublishedPassport | null = null): PageContent {
  const key = r.parsed.path.key;
  return {
    authenticity,
    brand: resolution.brand?.name ?? null,
    product: resolution.title,
    gtin: key.kind === 'token' ? null : key.gtin,
    lot: key.kind === 'lot' ? key.lot : key.kind === 'serial' ? (key.lot ?? null) : null,
    serial: key.kind === 'serial' ? key.serial : key.kind === 'token' ? key.token : null,
    links: resolution.levels.flatMap((level) => level.links.map((link) => ({ href: link.href, title: link.title, linkType: link.linkType }))),
    caution: resolution.suspect ?? null,
    passport: passport === null ? null : pagePassport(r, passport),
    style: resolution.brand === null ? null : { logoUrl: resolution.brand.logoUrl ?? null, colour: resolution.brand.colour ?? null },
  };
}

function pagePassport(r: Request, p: PublishedPassport): PagePassport {
  const languages = languagesOf(headerOf(r.call, 'accept-language'));
  return {
    content: p.content,
    version: p.version.version,
    latestVersion: p.latestVersion,
    publishedAt: p.version.publishedAt,
    languages,
    withheld: p.withheld.length > 0,
    // The versions shown (the unit's, lot's and model's), the reader's sections and languages decide the sections' HTML.
    cacheKey: `${p.version.id} ${p.latestVersion} ${p.inherited.map((v) => v.id).join(',')} ${p.restricted.join(',')} ${p.withheld.join(',')} ${languages.join(',')}`,
  };
}

/**
 * An OPTIONS answer (a CORS preflight or not): 204 allowing the resolver's methods and the request
 * headers asked for. On a Digital Link path it also carries the identity's `Link` to its linkset
 * (`link`, see {@link identityLink}), as every answer about an identity does: GS1's test suite
 * reads the CORS headers, the methods and the linkset link from this answer.
 */
export function preflightAnswer(req: ResolverCall, link?: string): ResolverAnswer {
  const asked = req.headers['access-control-request-headers'];
  const headers =
    typeof asked === 'string' && asked.length <= 1_000 && /^[\w!#$%&'*+.^`|~-]+(\s*,\s*[\w!#$%&'*+.^`|~-]+)*$/.test(asked.trim())
      ? asked.trim()
      : 'Accept, Accept-Language';
  return {
    status: 204,
    headers: {
      ...corsHeaders,
      allow: 'GET, HEAD, OPTIONS',
      'access-control-allow-headers': headers,
      'access-control-max-age': 86_400,
      vary: 'Access-Control-Request-Headers',
      ...(link === undefined ? {} : { link }),
    },
  };
}

/** True when `value` can be sent as an HTTP header value (Node throws on anything else). */
function isHeaderValue(value: string): boolean {
  try {
    validateHeaderValue('location', value);
    return true;
  } catch {
    return false;
  }
}
