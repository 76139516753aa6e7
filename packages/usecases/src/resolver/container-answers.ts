// The resolver's answers for containers (GS1 AI 00, an SSCC): its state to anyone, its contents
// to the brand and its partner; decided here, written by the service.

import { containerUri, gs1LinksetContext, isInCirculation, isSscc } from '@mint/domain';
import { escapeHtml } from '@mint/pages';
import type { Credentials } from '../access/index.ts';
import type { UseCaseContext } from '../context.ts';
import { getContainer, mayReadContainerContents, resolveContainer, type PublicContainer } from '../lifecycle/index.ts';
import { formatOf, refusal, type ResolverAnswer, type ResolverCall } from './answers.ts';

/** An answer with the container answers' headers. */
const reply = (status: number, type: string, body: string, headers: Readonly<Record<string, string>>): ResolverAnswer => ({ status, type, body, headers });

const cors = {
  'access-control-allow-origin': '*',
  'access-control-allow-methods': 'GET, HEAD, OPTIONS',
  'access-control-expose-headers': 'Link, Content-Type',
} as const;
/** Every answer depends on Accept and on the credentials presented, and changes with each pack: never stored. */
const headers = { 'cache-control': 'no-store', vary: 'Accept, Authorization, X-Api-Key', ...cors } as const;

type Representation = 'json' | 'linkset' | 'html';

function representationOf(req: ResolverCall, query: URLSearchParams): Representation {
  if (query.get('linkType') === 'linkset' || query.get('linkType') === 'all') return 'linkset';
  const accept = typeof req.headers.accept === 'string' ? req.headers.accept : '';
  if (/application\/linkset\+json/i.test(accept)) return 'linkset';
  if (/application\/(ld\+)?json/i.test(accept)) return 'json';
  return formatOf(accept === '' ? undefined : accept) === 'html' && /text\/html/i.test(accept) ? 'html' : 'json';
}

const statusText = (c: PublicContainer) => (isInCirculation(c.state) ? 'in circulation' : `not in circulation${c.reason === null ? '' : ` (${c.reason})`}`);

function page(c: PublicContainer, uri: string): string {
  const title = `${c.level.charAt(0).toUpperCase()}${c.level.slice(1)} ${c.sscc}`;
  return (
    '<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width">' +
    `<title>${escapeHtml(title)}</title></head><body><h1>${escapeHtml(title)}</h1>` +
    `<p>A ${escapeHtml(c.level)} of ${escapeHtml(c.brand.name)}, identified by SSCC ${escapeHtml(c.sscc)}: ${escapeHtml(statusText(c))}.</p>` +
    `<p><a href="${escapeHtml(uri)}">${escapeHtml(uri)}</a></p></body></html>`
  );
}

/** Where a container request is answered: the brand's slug, the SSCC asked, the query, and the resolver root its URI starts with. */
export interface ContainerRequest {
  readonly slug: string;
  readonly sscc: string;
  readonly queryString: string;
  /** The brand's resolver base (`{public}/r/{slug}`) or its own domain's root (`https://{domain}`). */
  readonly root: string;
}

/**
 * The answer to GET/HEAD/OPTIONS of a container's Digital Link (GS1 AI 00), under `/r/{slug}` or
 * on the brand's own domain: anyone learns that the container exists and its state, as JSON, a
 * linkset or a small page; a caller whose `credentials` may read the brand's containers also gets
 * its contents, paged. An unknown SSCC, or another brand's, answers the resolver's 404.
 */
export async function answerContainer(ctx: UseCaseContext, req: ResolverCall, credentials: Credentials, request: ContainerRequest): Promise<ResolverAnswer> {
  const { slug, sscc, queryString, root } = request;
  if (req.method === 'OPTIONS') {
    return {
      status: 204,
      headers: { ...cors, allow: 'GET, HEAD, OPTIONS', 'access-control-allow-headers': 'Accept, Authorization, X-Api-Key', 'access-control-max-age': 86_400 },
    };
  }
  const format = formatOf(typeof req.headers.accept === 'string' ? req.headers.accept : undefined);
  if (!isSscc(sscc)) {
    const message = 'the SSCC must be 18 digits with a valid GS1 check digit';
    if (format === 'html')
      return reply(400, 'text/html; charset=utf-8', `<!doctype html><title>Not a valid GS1 Digital Link</title><p>${message}</p>`, headers);
    return reply(400, 'application/json; charset=utf-8', JSON.stringify({ ok: false, error: 'bad_request', message }), headers);
  }
  const query = new URLSearchParams(queryString);
  const found = await resolveContainer(ctx, slug, sscc);
  if (found === null) return refusal(req, 'not_found', format, headers);
  const uri = containerUri(root, sscc);
  const link = `<${uri}?linkType=linkset>; rel="linkset"; type="application/linkset+json"`;
  const representation = representationOf(req, query);
  const inCirculation = isInCirculation(found.state);
  if (representation === 'html') {
    return reply(inCirculation ? 200 : 410, 'text/html; charset=utf-8', page(found, uri), { ...headers, link });
  }
  if (representation === 'linkset') {
    const linkset = {
      linkset: [{ anchor: uri, describedby: [{ href: uri, type: 'application/json', title: `${found.level} ${found.sscc}: ${statusText(found)}` }] }],
    };
    return reply(200, 'application/linkset+json', JSON.stringify(linkset), {
      ...headers,
      link: `${link}, <${gs1LinksetContext}>; rel="http://www.w3.org/ns/json-ld#context"; type="application/ld+json"`,
    });
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
  if (await mayReadContainerContents(ctx, credentials, found.brandId, sscc)) {
    const limit = query.get('limit');
    const { container, contents } = await getContainer(ctx, found.brandId, sscc, {
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
  return reply(200, 'application/json; charset=utf-8', JSON.stringify(body), { ...headers, link });
}
