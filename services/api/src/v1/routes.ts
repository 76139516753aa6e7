// The /v1 route set: matches method and path, runs the route, and turns any error into the one
// /v1 error body. Paths outside /v1/ are passed on to the next route set.

import { InvalidInputError } from '@mint/domain';
import type { HttpRequest, HttpResponse, HttpRoutes } from '../server.ts';
import { getImportRoute, listProductsRoute, startImportRoute } from './catalog.ts';
import type { V1Call, V1Deps } from './context.ts';
import { errorBody, HttpProblem, toV1Error } from './errors.ts';
import { requestIdOf, sendJson } from './http.ts';
import { createMintJobRoute, submitAndKickRoute } from './mint.ts';
import { openApiDocument } from './openapi.ts';
import { namedOperationRoute } from './rpc.ts';

export type { V1Deps } from './context.ts';

/** One route: method, path pattern (`{name}` matches one segment) and handler. */
interface Route {
  readonly method: string;
  readonly pattern: RegExp;
  readonly handler: (deps: V1Deps, call: V1Call) => Promise<void>;
}

function route(method: string, path: string, handler: Route['handler']): Route {
  const pattern = new RegExp(`^${path.replace(/\{(\w+)\}/g, '(?<$1>[^/]+)')}$`);
  return { method, pattern, handler };
}

const openApiText = JSON.stringify(openApiDocument);

/** Every /v1 route. */
const routes: readonly Route[] = [
  route('POST', '/v1/mint/submit-and-kick', submitAndKickRoute),
  route('POST', '/v1/mint/jobs', createMintJobRoute),
  route('POST', '/v1/imports/products', startImportRoute),
  route('GET', '/v1/imports/products/{id}', getImportRoute),
  route('GET', '/v1/products', listProductsRoute),
  route('POST', '/v1/rpc/{operation}', namedOperationRoute),
  route('GET', '/v1/openapi.json', async (_deps, call) => {
    call.res.statusCode = 200;
    call.res.setHeader('content-type', 'application/json; charset=utf-8');
    call.res.setHeader('content-length', Buffer.byteLength(openApiText));
    call.res.end(openApiText);
  }),
];

/** A percent-decoded path segment; a malformed encoding is invalid input naming the parameter. */
function decodeSegment(name: string, value: string): string {
  try {
    return decodeURIComponent(value);
  } catch (cause) {
    throw new InvalidInputError([{ field: name, message: 'is not a valid percent-encoded path segment' }], { cause });
  }
}

/**
 * The /v1 routes on `deps`. Errors become `{ok:false, error:{code, message}, meta:{request_id}}`
 * with the status of {@link toV1Error} (submit + kick answers in its own spec-given shape); a 500
 * is logged with its cause, which never reaches the client. Unknown /v1 paths are 404, a known
 * path with another method 405.
 */
export function createV1Routes(deps: V1Deps): HttpRoutes {
  return async (req: HttpRequest, res: HttpResponse) => {
    const url = new URL(req.url ?? '/', 'http://localhost');
    if (!url.pathname.startsWith('/v1/')) return false;
    const requestId = requestIdOf(res);
    const log = deps.logger?.child({ requestId });
    const call = (params: Record<string, string>): V1Call => ({ req, res, requestId, params, query: url.searchParams, log });
    try {
      const onPath = routes.map((r) => ({ r, match: r.pattern.exec(url.pathname) })).filter((m) => m.match !== null);
      if (onPath.length === 0) throw new HttpProblem(404, 'not_found', `no route ${url.pathname}`);
      const hit = onPath.find((m) => m.r.method === req.method);
      if (hit === undefined) {
        res.setHeader('allow', onPath.map((m) => m.r.method).join(', '));
        throw new HttpProblem(405, 'method_not_allowed', `${req.method} is not allowed on ${url.pathname}`);
      }
      const params = Object.fromEntries(Object.entries(hit.match!.groups ?? {}).map(([k, v]) => [k, decodeSegment(k, v)]));
      await hit.r.handler(deps, call(params));
    } catch (err) {
      const error = toV1Error(err);
      if (error.status >= 500) log?.error({ err, method: req.method, path: url.pathname }, 'v1 route failed');
      else log?.info({ code: error.code, status: error.status, path: url.pathname }, 'v1 request refused');
      if (res.headersSent) {
        res.destroy();
        return true;
      }
      // Past a size limit the rest of the body is not read: close the HTTP/1.1 connection.
      if (error.status === 413 && req.httpVersionMajor === 1) res.setHeader('connection', 'close');
      sendJson(res, error.status, errorBody(error, requestId));
    }
    return true;
  };
}
