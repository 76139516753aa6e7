// The public resolver: GET/HEAD /r/{slug}/01/{gtin}[/21/{serial} | /10/{lot}] and /r/{slug}/u/{token}.
// No authentication; the tenant is validated by the use case. Transport only: parsing, content
// negotiation and the rules live in the domain, the lookups in the use cases.

import { buildLinkset, negotiate, parseResolverPath, resolutionStatus, resolverPrefix, type Representation, type ResolutionOutcome } from '@mint/domain';
import type { Resolution, Resolver } from '@mint/usecases';
import { send as sendBody, sendEmpty, type HttpRequest, type HttpResponse, type Route } from '@mint/http';

/** Bodies of the refusals; the same bytes for unknown and foreign identities. */
export const resolverBodies = {
  not_found: { ok: false, error: 'not_found', message: 'No product identity is registered at this address.' },
  gone: { ok: false, error: 'gone', message: 'This identity was withdrawn by the brand and no longer resolves.' },
  not_activated: {
    ok: false, error: 'not_activated', message: 'This item has not been activated yet. It resolves once the brand activates it.',
  },
} as const;

type Refusal = Exclude<ResolutionOutcome['kind'], 'resolved'>;

const html = (title: string, message: string) =>
  `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width"><title>${title}</title></head>` +
  `<body><h1>${title}</h1><p>${message}</p></body></html>`;
function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

const htmlBodies: Record<Refusal, string> = {
  not_found: html('Not found', resolverBodies.not_found.message),
  gone: html('Withdrawn', resolverBodies.gone.message),
  not_activated: html('Not yet activated', resolverBodies.not_activated.message),
};
const jsonBodies: Record<Refusal, string> = {
  not_found: JSON.stringify(resolverBodies.not_found),
  gone: JSON.stringify(resolverBodies.gone),
  not_activated: JSON.stringify(resolverBodies.not_activated),
};

/** Every resolver answer varies by Accept and may be read from any origin. */
const publicHeaders = { vary: 'Accept', 'access-control-allow-origin': '*' } as const;

function send(req: HttpRequest, res: HttpResponse, status: number, type: string, body: string, headers: Record<string, string> = {}): void {
  sendBody(req, res, status, type, body, { ...publicHeaders, ...headers });
}

function refuse(req: HttpRequest, res: HttpResponse, kind: Refusal, representation: Representation): void {
  if (representation === 'redirect') send(req, res, resolutionStatus[kind], 'text/html; charset=utf-8', htmlBodies[kind]);
  else send(req, res, resolutionStatus[kind], 'application/json; charset=utf-8', jsonBodies[kind]);
}

function answer(req: HttpRequest, res: HttpResponse, resolution: Resolution, representation: Representation): void {
  const outcome = resolution.outcome;
  if (outcome.kind !== 'resolved' || resolution.anchor === null) {
    refuse(req, res, outcome.kind === 'resolved' ? 'not_found' : outcome.kind, representation);
    return;
  }
  const link = `<${resolution.anchor}?linkType=linkset>; rel="linkset"; type="application/linkset+json"`;
  if (representation === 'linkset') {
    send(req, res, 200, 'application/linkset+json', JSON.stringify(buildLinkset(resolution.anchor, outcome.target, resolution.title)), { link });
  } else if (representation === 'json') {
    send(req, res, 200, 'application/json; charset=utf-8', JSON.stringify({ ...resolution.data, target: outcome.target }), { link });
  } else if (outcome.target === null) {
    // Resolved, but neither the product nor the brand has a passport page yet: show what it is.
    const title = escapeHtml(resolution.title ?? 'Product');
    send(req, res, 200, 'text/html; charset=utf-8', html(title, `${escapeHtml(resolution.anchor)}<br>No passport page is configured for this product yet.`), { link });
  } else {
    sendEmpty(res, 307, { location: outcome.target, vary: 'Accept', link });
  }
}

/** {@link negotiate} memoised: scanners send a handful of distinct Accept headers over and over. */
const representations = new Map<string, Representation>();
function negotiated(accept: string | undefined, linkType: string | null): Representation {
  if (linkType !== null) return negotiate(accept, linkType);
  if (accept === undefined) return 'redirect';
  let representation = representations.get(accept);
  if (representation === undefined) {
    representation = negotiate(accept, null);
    if (representations.size >= 256) representations.clear();
    representations.set(accept, representation);
  }
  return representation;
}

/**
 * The resolver's route: answers GET and HEAD of every path under `/r/`. A path that is not a
 * Digital Link this service issues answers the same 404 as an unknown identity, without a lookup.
 */
export function resolverRoute(resolver: Resolver): Route {
  return {
    methods: ['GET', 'HEAD'],
    path: `${resolverPrefix}*`,
    handler: ({ req, res, path, queryString }) => {
      const linkType = queryString === '' ? null : new URLSearchParams(queryString).get('linkType');
      const accept = req.headers.accept;
      const representation = negotiated(typeof accept === 'string' ? accept : undefined, linkType);
      const parsed = parseResolverPath(path);
      if (parsed === null) return refuse(req, res, 'not_found', representation);
      return resolver.resolve(parsed, representation).then((resolution) => answer(req, res, resolution, representation));
    },
  };
}
