// The public resolver's HTTP binding: GET/HEAD/OPTIONS of every path under /r/ (GS1 Digital Links
// of a brand, compressed ones, /r/{slug}/u/{token}, and Digital Links directly under the root /r),
// of a brand's own resolver domain, the resolver description file at /.well-known/gs1resolver and
// the passport issuer's files. No authentication; the tenant is validated by the use case.
// Transport only: which answer a request gets is decided by the use cases' resolver answers
// (parsing, link types and negotiation in the domain), written here.

import {
  brandDomainBaseUrl,
  didWebOf,
  normalizeHost,
  passportStatusListUrl,
  passportStatusPath,
  resolverDescription,
  resolverPrefix,
  type ScanClient,
} from '@mint/domain';
import { methodNotAllowedMessage, send, sendAnswer, type ErrorWriter, type HttpRequest, type HttpResponse, type Route, type RouteHandler } from '@mint/http';
import { refusalJson } from '@mint/pages';
import {
  answerBrandDomainPath,
  answerResolverPath,
  corsHeaders,
  formatOf,
  identityShaped,
  preflightAnswer,
  refusal,
  requestRefusal,
  type BodyFormat,
  type ContainerRequest,
  type HostedPassports,
  type PassportSigner,
  type Resolution,
  type Resolver,
} from '@mint/usecases';
import { isPublicPath } from '../auth/public-paths.ts';

/** The format of a refusal to `req`: a page for a browser, JSON otherwise. */
const formatFor = (req: HttpRequest): BodyFormat => formatOf(typeof req.headers.accept === 'string' ? req.headers.accept : undefined);

/** Options of {@link resolverRoute} and {@link resolverDescriptionRoute}, with the hosted passports of the answers. */
export interface ResolverRouteOptions extends HostedPassports {
  /** The service's public origin (`PUBLIC_BASE_URL`): anchors, moves and the description file's root start with it. */
  readonly publicBaseUrl: string;
  /** The description file's `contact` (`RESOLVER_CONTACT`); none when undefined. */
  readonly contact?: string | undefined;
  /**
   * The scan's client (its address behind trusted proxies, its agent, a trusted proxy's country
   * header), for the scan recorder, which writes none of it.
   */
  readonly clientOf: (req: HttpRequest) => ScanClient;
}

/**
 * The resolver's route: answers GET, HEAD and OPTIONS of every path under `/r/`, Digital Links
 * directly under `/r` included, as the use cases' `answerResolverPath` decides.
 */
export function resolverRoute(resolver: Resolver, options: ResolverRouteOptions): Route {
  const base = options.publicBaseUrl.replace(/\/+$/, '');
  return {
    methods: ['GET', 'HEAD', 'OPTIONS'],
    path: `${resolverPrefix}*`,
    onError: resolverError,
    handler: ({ req, res, path, queryString }) =>
      sendAnswer(req, res, answerResolverPath(resolver, req, path, queryString, base, options.clientOf(req), options)),
  };
}

/** Errors the router raises before the handler (a malformed percent-encoding, a method not allowed), in the resolver's form. */
const resolverError: ErrorWriter = ({ req, res }, error) => {
  const reason = error.status === 400 ? 'the path is not validly percent-encoded' : error.message;
  sendAnswer(req, res, requestRefusal(error.status, error.status === 400 ? 'bad_request' : error.code, reason, formatFor(req)));
};

/** A public route of GET and HEAD on `path`, readable from any origin: OPTIONS gets the preflight answer (without an identity's `Link`). */
const publicRoute = (path: string, handler: RouteHandler): Route => ({
  methods: ['GET', 'HEAD', 'OPTIONS'],
  path,
  handler: (call) => (call.req.method === 'OPTIONS' ? sendAnswer(call.req, call.res, preflightAnswer(call.req)) : handler(call)),
});

/** Where the issuer's DID document is served (did:web). */
export const didDocumentPath = '/.well-known/did.json';
if (!isPublicPath(didDocumentPath) || !isPublicPath(`${passportStatusPath}x`))
  throw new Error('the passport issuer paths must be on the public path allow-list');

/**
 * The passport issuer's routes on a host whose `did:web` is `did`: its DID document (every signing
 * key, current and rotated) and each brand's Bitstring Status List credential (signed, vc+jwt),
 * readable from any origin, cached a minute by anyone (public keys and revocation bits only).
 */
export function passportIssuerRoutes(signer: PassportSigner, originOf: (req: HttpRequest) => string): Route[] {
  const headers = { ...corsHeaders, 'cache-control': 'public, max-age=60' };
  return [
    publicRoute(didDocumentPath, async ({ req, res }) => {
      const did = didWebOf(new URL(originOf(req)).host);
      send(req, res, 200, 'application/did+json', JSON.stringify(await signer.didDocument(did)), headers);
    }),
    publicRoute(`${passportStatusPath}:slug`, async ({ req, res, params }) => {
      const origin = originOf(req);
      const slug = params['slug'] ?? '';
      const list = await signer.statusList(slug, passportStatusListUrl(origin, slug), didWebOf(new URL(origin).host));
      if (list === null) send(req, res, 404, 'application/json; charset=utf-8', refusalJson.not_found, corsHeaders);
      else send(req, res, 200, 'application/vc+jwt', list, headers);
    }),
  ];
}

/** Where the resolver description file is served. */
export const resolverDescriptionPath = '/.well-known/gs1resolver';
if (!isPublicPath(resolverDescriptionPath)) throw new Error(`${resolverDescriptionPath} must be on the public path allow-list`);

/**
 * The GS1 resolver description file (`/.well-known/gs1resolver`), public and readable from any
 * origin, valid against GS1's description file schema 1.2.0.
 *
 * Its `resolverRoot` is `{PUBLIC_BASE_URL}/r`. Our reading of the standard: `resolverRoot` is the
 * URI a GS1 Digital Link's path (`/01/{gtin}[/10/{lot}][/21/{serial}]`, the GS1 Digital Link URI
 * syntax allowing a path before the primary key) is appended to, so `{resolverRoot}/01/{gtin}` must
 * resolve, as GS1's test suite and clients such as scanners assume. This origin serves many brands,
 * each under its own base `/r/{slug}` (their printed URIs are Digital Links with that path), and
 * the file can name one root only; so the root is `/r`, where a Digital Link resolves through the
 * one brand whose catalogue holds its GTIN (see the use cases' `answerResolverPath`), exactly as
 * below that brand's base. A brand domain's file names `https://{domain}`, where its identities resolve.
 */
export function resolverDescriptionRoute(options: Pick<ResolverRouteOptions, 'publicBaseUrl' | 'contact'>): Route {
  const body = descriptionBody(`${options.publicBaseUrl.replace(/\/+$/, '')}/r`, options.contact);
  return descriptionRoute(() => body);
}

/** The description file's body for `resolverRoot`. */
const descriptionBody = (resolverRoot: string, contact: string | undefined) =>
  JSON.stringify(resolverDescription({ name: 'Minting service GS1 Digital Link resolver', resolverRoot, contact }));

/** The description file's route, its body by request (cacheable by anyone for an hour). */
const descriptionRoute = (bodyOf: (req: HttpRequest) => string): Route =>
  publicRoute(resolverDescriptionPath, ({ req, res }) =>
    send(req, res, 200, 'application/json', bodyOf(req), { ...corsHeaders, 'cache-control': 'public, max-age=3600' }),
  );

/** The host a request was sent to (HTTP/2 `:authority`, else `Host`), normalised: lower-case, no port. */
export function requestHost(req: HttpRequest): string {
  const authority = req.headers[':authority'] ?? req.headers.host;
  return normalizeHost(typeof authority === 'string' ? authority : undefined);
}

/** Answers GET/HEAD/OPTIONS of a container's Digital Link (containers.ts), under `/r/{slug}` or on the brand's own domain. */
export type ContainerAnswer = (req: HttpRequest, res: HttpResponse, request: ContainerRequest) => Promise<void>;
export type { ContainerRequest };

/**
 * The route table of requests sent to a brand's own resolver domain (see `brandOfDomain` of the
 * resolver): the brand's identities at the root (`/01/{gtin}/21/{serial}`, `/01/{gtin}/10/{lot}`,
 * `/01/{gtin}`, `/u/{token}`, a compressed link) and its containers (`/00/{sscc}`) exactly as
 * under `/r/{slug}`, with anchors and URIs under `https://{domain}`, and the description file with
 * that root. Lookups are scoped to the domain's brand: another brand's GTIN, serial or SSCC is not
 * found. Nothing else is served there: every other
 * path (the API, RPCs, `/metrics`, health, `/r/...`) answers 404, and a method other than GET,
 * HEAD or OPTIONS 404 too (405 on a Digital Link path).
 */
export function brandDomainRoutes(
  resolver: Resolver,
  options: Omit<ResolverRouteOptions, 'publicBaseUrl'> & {
    /** Answers the brand's containers, `/00/{sscc}`; without it they answer 404 there. */
    readonly containers?: ContainerAnswer;
  },
): Route[] {
  const serve = (req: HttpRequest, res: HttpResponse, path: string, queryString: string, host: string, brand: Resolution['brand']) => {
    // The domain was removed while the request was on its way; a path that cannot be an identity is not found for any method.
    const other = req.method !== 'GET' && req.method !== 'HEAD' && req.method !== 'OPTIONS';
    if (brand === null || (other && !identityShaped(path))) return sendAnswer(req, res, refusal(req, 'not_found', formatFor(req)));
    if (other) {
      res.setHeader('allow', 'GET, HEAD, OPTIONS');
      const message = methodNotAllowedMessage(req.method, path, ['GET', 'HEAD', 'OPTIONS']);
      return sendAnswer(req, res, requestRefusal(405, 'method_not_allowed', message, formatFor(req)));
    }
    const root = brandDomainBaseUrl(host);
    const container = /^\/00\/([^/]*)$/.exec(path);
    if (container !== null && options.containers !== undefined) {
      return options.containers(req, res, { slug: brand.slug, sscc: container[1]!, queryString, root });
    }
    return sendAnswer(req, res, answerBrandDomainPath(resolver, req, brand.slug, path, queryString, root, options.clientOf(req), options));
  };
  return [
    ...(options.signer === undefined ? [] : passportIssuerRoutes(options.signer, (req) => brandDomainBaseUrl(requestHost(req)))),
    descriptionRoute((req) => domainDescription(requestHost(req), options.contact)),
    {
      methods: ['GET', 'HEAD', 'OPTIONS', 'POST', 'PUT', 'PATCH', 'DELETE'],
      path: '/*',
      onError: resolverError,
      handler: ({ req, res, path, queryString }) => {
        const host = requestHost(req);
        const brand = resolver.brandOfDomain(host);
        if (brand instanceof Promise) return brand.then((found) => serve(req, res, path, queryString, host, found));
        return serve(req, res, path, queryString, host, brand);
      },
    },
  ];
}

/** Bodies of the description file per brand domain (a handful of hosts; bounded all the same). */
const domainDescriptions = new Map<string, string>();
function domainDescription(host: string, contact: string | undefined): string {
  let body = domainDescriptions.get(host);
  if (body === undefined) {
    body = descriptionBody(brandDomainBaseUrl(host), contact);
    if (domainDescriptions.size >= 1_000) domainDescriptions.clear();
    domainDescriptions.set(host, body);
  }
  return body;
}
