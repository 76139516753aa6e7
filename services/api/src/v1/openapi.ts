// The OpenAPI 3.1 document of the /v1 routes, served at GET /v1/openapi.json, generated from the
// route table's descriptions and the routes' component schemas (JSON Schema 2020-12). The same
// schemas validate the request bodies, so the document cannot drift from what the routes accept.

import { importColumns, maxImportBytes } from '@mint/domain';
import { errorCodes, transportErrors } from '@mint/http';
import { catalogSchemas } from './catalog.ts';
import { mintSchemas } from './mint.ts';
import { namedOperations, operationSchemaName } from '@mint/wire';
import { BlockingReasonSchema, LotSchema } from '@mint/contract';
import { obj, ref, requestSchema, responseSchema, string, uuid, wholeMessage, type Schema } from '@mint/wire';

/** A JSON response of `schema` described as `description`. */
const json = (description: string, schema: Schema): Schema => ({ description, content: { 'application/json': { schema } } });
const jsonBody = (schema: Schema): Schema => ({ required: true, content: { 'application/json': { schema } } });

/** Each status's codes and when they are answered: the one error table's rows (@mint/http), grouped by status. */
const errorDescriptions: Readonly<Record<number, string>> = [...Object.values(errorCodes), ...transportErrors].reduce<Record<number, string>>((out, e) => {
  const line = `${e.code}: ${e.when}`;
  out[e.status] = out[e.status] === undefined ? line : `${out[e.status]} Or ${line}`;
  return out;
}, {});
/** The /v1 error responses a route may give. */
const errors = (...statuses: number[]): Record<string, Schema> =>
  Object.fromEntries(statuses.map((s) => [String(s), json(errorDescriptions[s] ?? 'error', ref('Error'))]));

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
const workspaceSecurity = [{ bearer: [], apiKey: [] }];

/** The OpenAPI operation objects of the /v1 routes, by OpenAPI path and method. */
const paths: Readonly<Record<string, Record<string, Schema>>> = {
  '/v1/mint/submit-and-kick': {
    post: {
      summary: 'Submit + kick: submits a mint request and runs one bounded processing cycle (at most 20,000 units).',
      security: [{ bearer: [] }],
      requestBody: jsonBody(ref('SubmitAndKickRequest')),
      responses: {
        200: json('Submitted (kicked tells whether the cycle ran), or submit_blocked with blocking_reasons', ref('SubmitAndKickResponse')),
        400: json('invalid_request (body shape) or submit_failed (request rules)', ref('SubmitAndKickResponse')),
        401: json('missing_auth or invalid_token', ref('SubmitAndKickResponse')),
        403: json('forbidden: not owner or admin of the brand', ref('SubmitAndKickResponse')),
        413: json('payload_too_large: the body exceeds the limit', ref('SubmitAndKickResponse')),
        415: json('unsupported_media_type: the body is not application/json', ref('SubmitAndKickResponse')),
        422: json('idempotency_key_reused: the idempotency_key already made a job from a different request', ref('SubmitAndKickResponse')),
      },
    },
  },
  '/v1/mint/jobs': {
    post: {
      summary: 'Creates a mint job in the workspace; idempotent by Idempotency-Key (kept 24 hours).',
      security: workspaceSecurity,
      parameters: [
        ...workspaceHeaders,
        {
          name: 'Idempotency-Key',
          in: 'header',
          required: true,
          description: '1-255 visible ASCII characters; scoped to the workspace.',
          schema: { type: 'string', maxLength: 255 },
        },
      ],
      requestBody: jsonBody(ref('MintJobRequest')),
      responses: {
        202: json('Created (or replayed: header Idempotent-Replayed: true)', ref('MintJobCreated')),
        ...errors(400, 401, 403, 409, 413, 415, 422, 500),
      },
    },
  },
  '/v1/mint/jobs/{id}': {
    get: {
      summary: 'One mint job of the workspace with its batch and minted quantity; read it until status is COMPLETED or FAILED.',
      security: workspaceSecurity,
      parameters: [...workspaceHeaders, { name: 'id', in: 'path', required: true, description: 'The mint_job_id.', schema: uuid }],
      responses: { 200: json('The job', ref('MintJobResponse')), ...errors(400, 401, 403, 404, 500) },
    },
  },
  '/v1/imports/products': {
    post: {
      summary: `Starts a product CSV import (columns: ${importColumns.join(', ')}; at most ${maxImportBytes} bytes).`,
      security: workspaceSecurity,
      parameters: workspaceHeaders,
      requestBody: { required: true, content: { 'text/csv': { schema: { type: 'string' } } } },
      responses: { 202: json('Queued; Location names the import', ref('ProductImportResponse')), ...errors(400, 401, 403, 413, 415, 500) },
    },
  },
  '/v1/imports/products/{id}': {
    get: {
      summary: "An import's status, counts and rejected rows (first 1,000).",
      security: workspaceSecurity,
      parameters: [...workspaceHeaders, { name: 'id', in: 'path', required: true, schema: uuid }],
      responses: { 200: json('The import', ref('ProductImportResponse')), ...errors(400, 401, 403, 404, 500) },
    },
  },
  '/v1/products': {
    get: {
      summary: "The workspace's products, newest first, with an opaque cursor.",
      security: workspaceSecurity,
      parameters: [
        ...workspaceHeaders,
        { name: 'limit', in: 'query', required: false, schema: { type: 'integer', minimum: 1, maximum: 100, default: 50 } },
        { name: 'cursor', in: 'query', required: false, description: 'meta.next_cursor of the previous page.', schema: { type: 'string' } },
      ],
      responses: { 200: json('A page of products', ref('ProductList')), ...errors(400, 401, 403, 500) },
    },
  },
  ...Object.fromEntries(
    Object.entries(namedOperations).map(([name, operation]) => [
      `/v1/rpc/${name}`,
      {
        post: {
          summary: operation.summary,
          security: [{ bearer: [] }],
          requestBody: jsonBody(ref(operationSchemaName(name, 'request'))),
          responses: { 200: json(`${name} result`, ref(operationSchemaName(name, 'response'))), ...errors(400, 401, 403, 404, 409, 413, 415, 422, 500) },
        },
      },
    ]),
  ),
  '/v1/openapi.json': {
    get: {
      summary: 'This document.',
      security: [],
      responses: { 200: { description: 'OpenAPI 3.1 document', content: { 'application/json': { schema: { type: 'object' } } } } },
    },
  },
};

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
