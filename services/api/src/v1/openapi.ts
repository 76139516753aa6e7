// The OpenAPI 3.1 document of the /v1 routes, served at GET /v1/openapi.json: its paths generated
// from the one table of /v1 operations (each route's description beside its handler, each named
// operation's from its descriptors), its component schemas from the routes' and the messages'
// (JSON Schema 2020-12). The same schemas validate the request bodies, so the document cannot drift
// from what the routes accept.

import { errorCodes, jsonType, send, transportErrors } from '@mint/http';
import { catalogSchemas, getImportOperation, listProductsOperation, startImportOperation } from './catalog.ts';
import type { V1Operation } from './context.ts';
import { createMintJobOperation, getMintJobOperation, mintSchemas, submitAndKickOperation } from './mint.ts';
import { namedOperationPaths } from './rpc.ts';
import { namedOperations, operationSchemaName } from '@mint/wire';
import { BlockingReasonSchema, LotSchema } from '@mint/contract';
import { obj, ref, requestSchema, responseSchema, string, uuid, wholeMessage, type Schema } from '@mint/wire';

/** A JSON response of `schema` described as `description`. */
const json = (description: string, schema: Schema): Schema => ({ description, content: { 'application/json': { schema } } });

/** Each status's codes and when they are answered: the one error table's rows (@mint/http), grouped by status. */
const errorDescriptions: Readonly<Record<number, string>> = [...Object.values(errorCodes), ...transportErrors].reduce<Record<number, string>>((out, e) => {
  const line = `${e.code}: ${e.when}`;
  out[e.status] = out[e.status] === undefined ? line : `${out[e.status]} Or ${line}`;
  return out;
}, {});

const workspaceHeaders: Schema[] = [
  { name: 'x-workspace-id', in: 'header', required: true, description: 'The workspace (brand) id.', schema: uuid },
  {
    name: 'x-request-id',
    in: 'header',
    required: false,
    description: 'Echoed as x-request-id and meta.request_id; generated when absent.',
    schema: { type: 'string' },
  },
];
const securityOf: Readonly<Record<V1Operation['security'], Schema[]>> = { bearer: [{ bearer: [] }], workspace: [{ bearer: [], apiKey: [] }], public: [] };

/** The OpenAPI operation object of `op`. */
function operationObject(op: V1Operation): Schema {
  const parameters = [...(op.security === 'workspace' ? workspaceHeaders : []), ...(op.parameters ?? [])];
  const schemaOf = (schema: string | Schema) => (typeof schema === 'string' ? ref(schema) : schema);
  return {
    summary: op.summary,
    security: securityOf[op.security],
    ...(parameters.length === 0 ? {} : { parameters }),
    ...(op.body === undefined
      ? {}
      : { requestBody: typeof op.body === 'string' ? { required: true, content: { 'application/json': { schema: ref(op.body) } } } : op.body }),
    responses: {
      ...Object.fromEntries(Object.entries(op.responses).map(([status, [description, schema]]) => [status, json(description, schemaOf(schema))])),
      ...Object.fromEntries((op.errors ?? []).map((s) => [String(s), json(errorDescriptions[s] ?? 'error', ref('Error'))])),
    },
  };
}

/** GET /v1/openapi.json: this document. */
const openApiOperation: V1Operation = {
  route: 'GET /v1/openapi.json',
  summary: 'This document.',
  security: 'public',
  responses: { 200: ['OpenAPI 3.1 document', { type: 'object' }] },
  handler: (_deps, call) => send(call.req, call.res, 200, jsonType, openApiText),
};

/** The one table of /v1 operations: the route table serves those with a handler, the document describes them all. */
export const v1Operations: readonly V1Operation[] = [
  submitAndKickOperation,
  createMintJobOperation,
  getMintJobOperation,
  startImportOperation,
  getImportOperation,
  listProductsOperation,
  ...namedOperationPaths,
  openApiOperation,
];

/** The OpenAPI operation objects of the /v1 routes, by OpenAPI path (`{id}` for `:id`) and method. */
const paths: Record<string, Record<string, Schema>> = {};
for (const op of v1Operations) {
  const [method, path] = op.route.split(' ') as [string, string];
  (paths[path.replace(/:(\w+)/g, '{$1}')] ??= {})[method.toLowerCase()] = operationObject(op);
}

/** The OpenAPI 3.1 document of the /v1 routes. */
export const openApiDocument = {
  openapi: '3.1.0',
  info: {
    title: 'Minting service HTTP API',
    version: '1',
    description:
      "The /v1 HTTP routes. Errors (except submit + kick, which keeps the spec's own codes) have one body: {ok:false, error:{code, message[, details]}, meta:{request_id}}. Request bodies are checked against the schemas below (unknown fields are refused by name); ranges and cross-field rules are named in the descriptions and checked by the service.",
  },
  components: {
    securitySchemes: {
      bearer: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT', description: 'User session token.' },
      apiKey: { type: 'apiKey', in: 'header', name: 'x-api-key', description: 'Workspace API key (early access).' },
    },
    schemas: {
      Meta: obj({ request_id: string }),
      Error: obj({
        ok: { const: false },
        error: obj({ code: string, message: string, details: { type: 'object' } }, ['code', 'message']),
        meta: ref('Meta'),
      }),
      Lot: requestSchema(LotSchema),
      BlockingReason: responseSchema(BlockingReasonSchema, wholeMessage),
      ...mintSchemas,
      ...catalogSchemas,
      ...Object.fromEntries(
        Object.entries(namedOperations).flatMap(([name, s]) => [
          [operationSchemaName(name, 'request'), s.request],
          [operationSchemaName(name, 'response'), s.response],
        ]),
      ),
    },
  },
  paths,
} as const;

const openApiText = JSON.stringify(openApiDocument);
