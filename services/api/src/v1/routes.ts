// The /v1 routes of the one route table: each entry names its method and path, and runs its
// handler with a /v1 call (request id, query, the schema check, the request's logger). Errors
// answer in the one /v1 error body (submit + kick in the spec's own shape).

import { createSchemaValidator, HttpProblem, jsonType, send, sendJson, type ErrorWriter, type Route, type RouteCall } from '@mint/http';
import type { HTTPMethod } from 'find-my-way';
import { getImportRoute, listProductsRoute, startImportRoute } from './catalog.ts';
import type { V1Call, V1Deps } from './context.ts';
import { errorBody } from './errors.ts';
import { createMintJobRoute, getMintJobRoute, kickErrorWriter, submitAndKickRoute } from './mint.ts';
import { openApiDocument } from './openapi.ts';
import { namedOperationRoute } from './rpc.ts';

export type { V1Deps } from './context.ts';

const openApiText = JSON.stringify(openApiDocument);

/** The request id the server assigned (echoed in `x-request-id`). */
function requestIdOf(call: RouteCall): string {
  const id = call.res.getHeader('x-request-id');
  return typeof id === 'string' ? id : '';
}

/**
 * The /v1 routes on `deps`. Errors become `{ok:false, error:{code, message}, meta:{request_id}}`
 * with the status of the one error mapping and are logged at info (the cause of a 500 is logged
 * by the server and never reaches the client). Unknown /v1 paths are 404, a known path with
 * another method 405 with `Allow`. Every route path is described in /v1/openapi.json.
 */
export function v1Routes(deps: V1Deps): Route[] {
  const check = createSchemaValidator(openApiDocument).check;
  const v1Call = (call: RouteCall): V1Call => {
    const requestId = requestIdOf(call);
    return { ...call, requestId, query: new URLSearchParams(call.queryString), check, log: deps.logger?.child({ requestId }) };
  };
  const writer =
    (body: ErrorWriter): ErrorWriter =>
    (call, error, cause) => {
      if (error.status < 500)
        deps.logger?.child({ requestId: requestIdOf(call) }).info({ code: error.code, status: error.status, path: call.path }, 'v1 request refused');
      body(call, error, cause);
    };
  const v1ErrorBody = writer((call, error) => sendJson(call.req, call.res, error.status, errorBody(error, requestIdOf(call))));
  const kickErrors = writer(kickErrorWriter);
  const route = (methods: HTTPMethod[], path: string, handler: (deps: V1Deps, call: V1Call) => void | Promise<void>, onError = v1ErrorBody): Route => {
    const documented = path.replace(/:(\w+)/g, '{$1}');
    if (!path.includes('*') && !path.includes(':operation') && !Object.hasOwn(openApiDocument.paths, documented)) {
      throw new Error(`the /v1 route ${path} is not described in the OpenAPI document`);
    }
    return { methods, path, onError, handler: (call) => handler(deps, v1Call(call)) };
  };
  return [
    // A wrong method on submit + kick is a routing error, answered in the /v1 body like every /v1 path.
    { ...route(['POST'], '/v1/mint/submit-and-kick', submitAndKickRoute, kickErrors), onMethodError: v1ErrorBody },
    route(['POST'], '/v1/mint/jobs', createMintJobRoute),
    route(['GET'], '/v1/mint/jobs/:id', getMintJobRoute),
    route(['POST'], '/v1/imports/products', startImportRoute),
    route(['GET'], '/v1/imports/products/:id', getImportRoute),
    route(['GET'], '/v1/products', listProductsRoute),
    route(['POST'], '/v1/rpc/:operation', namedOperationRoute),
    route(['GET'], '/v1/openapi.json', (_deps, call) => send(call.req, call.res, 200, jsonType, openApiText)),
    route(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'], '/v1/*', (_deps, call) => {
      throw new HttpProblem(404, 'not_found', `no route ${call.path}`);
    }),
  ];
}
