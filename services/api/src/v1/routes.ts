// The /v1 routes of the one route table, from the one table of /v1 operations: each runs its
// handler with a /v1 call (request id, query, the schema check, the request's logger). Errors
// answer in the one /v1 error body (submit + kick in the spec's own shape).

import { createSchemaValidator, HttpProblem, type ErrorWriter, type Route, type RouteCall } from '@mint/http';
import type { HTTPMethod } from 'find-my-way';
import type { V1Call, V1Deps, V1Operation } from './context.ts';
import { requestIdOf, sendErrorBody } from './errors.ts';
import { openApiDocument, v1Operations } from './openapi.ts';
import { namedOperationRoute } from './rpc.ts';

export type { V1Deps } from './context.ts';

/**
 * The /v1 routes on `deps`. Errors become `{ok:false, error:{code, message}, meta:{request_id}}`
 * with the status of the one error mapping and are logged at info (the cause of a 500 is logged
 * by the server and never reaches the client). Unknown /v1 paths are 404, a known path with
 * another method 405 with `Allow` (in the /v1 error body on every path). Every route but the
 * catch-all is described in /v1/openapi.json.
 */
export function v1Routes(deps: V1Deps): Route[] {
  const check = createSchemaValidator(openApiDocument).check;
  const v1Call = (call: RouteCall): V1Call => {
    const requestId = requestIdOf(call);
    return { ...call, requestId, query: new URLSearchParams(call.queryString), check, log: deps.logger?.child({ requestId }) };
  };
  const logged =
    (body: ErrorWriter): ErrorWriter =>
    (call, error, cause) => {
      if (error.status < 500)
        deps.logger?.child({ requestId: requestIdOf(call) }).info({ code: error.code, status: error.status, path: call.path }, 'v1 request refused');
      body(call, error, cause);
    };
  const onMethodError = logged(sendErrorBody);
  const route = (methods: Route['methods'], path: string, handler: NonNullable<V1Operation['handler']>, body = sendErrorBody): Route => ({
    methods,
    path,
    onError: logged(body),
    onMethodError,
    handler: (call) => handler(deps, v1Call(call)),
  });
  return [
    ...v1Operations.flatMap(({ route: name, handler, errorBody }) => {
      const [method, path] = name.split(' ') as [HTTPMethod, string];
      return handler === undefined ? [] : [route([method], path, handler, errorBody)];
    }),
    route(['POST'], '/v1/rpc/:operation', namedOperationRoute),
    route(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'], '/v1/*', (_deps, call) => {
      throw new HttpProblem(404, 'not_found', `no route ${call.path}`);
    }),
  ];
}
