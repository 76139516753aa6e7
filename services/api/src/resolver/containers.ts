// The resolver's answers for containers: GET/HEAD/OPTIONS of /r/{slug}/00/{sscc} (GS1 Digital
// Link, AI 00), and of /00/{sscc} on the brand's own resolver domain (see brandDomainRoutes). Anyone learns that the container exists and its state, as JSON, a linkset or a
// small page; the brand (a session or API key with mint:read on it) also gets its contents, paged.
// An unknown SSCC, or another brand's, answers the resolver's 404, the bytes a never-issued serial
// gets. Transport only: the lookups and the rule of who sees contents live in the use cases.

import { brandResolverBaseUrl, containerUri, gs1LinksetContext, isInCirculation, isSscc, resolverPrefix } from '@mint/domain';
import { send, sendEmpty, type HttpRequest, type Route } from '@mint/http';
import * as useCases from '@mint/usecases';
import { credentialsFrom } from '../auth/credentials.ts';
import { isPublicPath } from '../auth/public-paths.ts';
import { escapeHtml } from '@mint/pages';
import { formatOf, refuse, type ContainerAnswer } from './routes.ts';

const cors = {
  'access-control-allow-origin': '*',
  'access-control-allow-methods': 'GET, HEAD, OPTIONS',
  'access-control-expose-headers': 'Link, Content-Type',
} as const;
/** Every answer depends on Accept and on the credentials presented, and changes with each pack: never stored. */
const headers = { 'cache-control': 'no-store', vary: 'Accept, Authorization, X-Api-Key', ...cors } as const;

const containerPath = `${resolverPrefix}:slug/00/:sscc`;
if (!isPublicPath(`${resolverPrefix}acme/00/000000000000000000`)) throw new Error('container paths must be on the public path allow-list');

type Representation = 'json' | 'linkset' | 'html';

function representationOf(req: HttpRequest, query: URLSearchParams): Representation {
  if (query.get('linkType') === 'linkset' || query.get('linkType') === 'all') return 'linkset';
  const accept = typeof req.headers.accept === 'string' ? req.headers.accept : '';
  if (/application\/linkset\+json/i.test(accept)) return 'linkset';
  if (/application\/(ld\+)?json/i.test(accept)) return 'json';
  return formatOf(accept === '' ? undefined : accept) === 'html' && /text\/html/i.test(accept) ? 'html' : 'json';
}

const statusText = (c: useCases.PublicContainer) =>
  isInCirculation(c.state) ? 'in circulation' : `not in circulation${c.reason === null ? '' : ` (${c.reason})`}`;

function page(c: useCases.PublicContainer, uri: string): string {
  const title = `${c.level.charAt(0).toUpperCase()}${c.level.slice(1)} ${c.sscc}`;
  return (
    '<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width">' +
    `<title>${escapeHtml(title)}</title></head><body><h1>${escapeHtml(title)}</h1>` +
    `<p>A ${escapeHtml(c.level)} of ${escapeHtml(c.brand.name)}, identified by SSCC ${escapeHtml(c.sscc)}: ${escapeHtml(statusText(c))}.</p>` +
    `<p><a href="${escapeHtml(uri)}">${escapeHtml(uri)}</a></p></body></html>`
  );
}

/** The container answers on `ctx`. */
export function containerAnswer(ctx: useCases.UseCaseContext): ContainerAnswer {
  return async (req, res, { slug, sscc, queryString, root }) => {
    if (req.method === 'OPTIONS') {
      sendEmpty(res, 204, {
        ...cors,
        allow: 'GET, HEAD, OPTIONS',
        'access-control-allow-headers': 'Accept, Authorization, X-Api-Key',
        'access-control-max-age': 86_400,
      });
      return;
    }
    const format = formatOf(typeof req.headers.accept === 'string' ? req.headers.accept : undefined);
    if (!isSscc(sscc)) {
      const message = 'the SSCC must be 18 digits with a valid GS1 check digit';
      if (format === 'html')
        send(req, res, 400, 'text/html; charset=utf-8', `<!doctype html><title>Not a valid GS1 Digital Link</title><p>${message}</p>`, headers);
      else send(req, res, 400, 'application/json; charset=utf-8', JSON.stringify({ ok: false, error: 'bad_request', message }), headers);
      return;
    }
    const query = new URLSearchParams(queryString);
    const found = await useCases.resolveContainer(ctx, slug, sscc);
    if (found === null) return refuse(req, res, 'not_found', format, headers);
    const uri = containerUri(root, sscc);
    const link = `<${uri}?linkType=linkset>; rel="linkset"; type="application/linkset+json"`;
    const representation = representationOf(req, query);
    const inCirculation = isInCirculation(found.state);
    if (representation === 'html') {
      send(req, res, inCirculation ? 200 : 410, 'text/html; charset=utf-8', page(found, uri), { ...headers, link });
      return;
    }
    if (representation === 'linkset') {
      const linkset = {
        linkset: [{ anchor: uri, describedby: [{ href: uri, type: 'application/json', title: `${found.level} ${found.sscc}: ${statusText(found)}` }] }],
      };
      send(req, res, 200, 'application/linkset+json', JSON.stringify(linkset), {
        ...headers,
        link: `${link}, <${gs1LinksetContext}>; rel="http://www.w3.org/ns/json-ld#context"; type="application/ld+json"`,
      });
      return;
    }
    const body: Record<string, unknown> = {
      ok: true,
      sscc,
      uri,
      level: found.level,
      brand: found.brand.name,
      state: found.state,
      reason: found.reason,
      in_circulation: inCirculation,
    };
    if (await useCases.mayReadContainerContents(ctx, credentialsFrom(req.headers), found.brandId, sscc)) {
      const limit = query.get('limit');
      const { container, contents } = await useCases.getContainer(ctx, found.brandId, sscc, {
        limit: limit === null ? null : Number(limit),
        cursor: query.get('cursor'),
      });
      body['parent_sscc'] = container.parentSscc;
      body['contents'] = {
        container_count: container.containerCount,
        unit_count: container.unitCount,
        containers: contents.containers,
        units: contents.units,
        next_cursor: contents.nextCursor,
      };
    }
    send(req, res, 200, 'application/json; charset=utf-8', JSON.stringify(body), { ...headers, link });
  };
}

/** The container routes under `/r/{slug}`; `publicBaseUrl` is the origin the containers' URIs start with. */
export function containerResolverRoutes(ctx: useCases.UseCaseContext, options: { readonly publicBaseUrl: string }): Route[] {
  const answer = containerAnswer(ctx);
  return [
    {
      methods: ['GET', 'HEAD', 'OPTIONS'],
      path: containerPath,
      handler: ({ req, res, params, queryString }) => {
        const slug = params['slug'] ?? '';
        return answer(req, res, { slug, sscc: params['sscc'] ?? '', queryString, root: brandResolverBaseUrl(options.publicBaseUrl, slug) });
      },
    },
  ];
}
