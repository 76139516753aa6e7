// The OpenAPI 3.1 description of the /v1 routes, served at GET /v1/openapi.json. Schemas are
// JSON Schema 2020-12; a test validates real responses against them.

import { activationModes, batchStatuses, commercialStatuses, identityModes, importColumns, importStatuses, jobStatuses, maxImportBytes, mintReadinessStatuses } from '@mint/domain';

type Schema = Record<string, unknown>;

const ref = (name: string): Schema => ({ $ref: `#/components/schemas/${name}` });
const uuid: Schema = { type: 'string', format: 'uuid' };
const time: Schema = { type: 'string', format: 'date-time' };
const nullable = (s: Schema): Schema => ({ anyOf: [s, { type: 'null' }] });
const obj = (properties: Record<string, Schema>, required: readonly string[] = Object.keys(properties)): Schema => ({
  type: 'object', properties, required: [...required], additionalProperties: false,
});
const arrayOf = (items: Schema): Schema => ({ type: 'array', items });
const lot = obj({ lot_code: { type: 'string' }, qty: { type: 'integer' } });
const blockingReason = obj({ code: { type: 'string' }, message: { type: 'string' } });

/** A JSON response of `schema` described as `description`. */
const json = (description: string, schema: Schema): Schema => ({ description, content: { 'application/json': { schema } } });
/** The /v1 error responses a route may give. */
const errors = (...statuses: number[]): Record<string, Schema> =>
  Object.fromEntries(statuses.map((s) => [String(s), json(errorDescriptions[s] ?? 'error', ref('Error'))]));
const errorDescriptions: Record<number, string> = {
  400: 'invalid_request: malformed JSON, a wrong type, an unknown or missing field (named in the message and details.violations)',
  401: 'unauthenticated: missing or invalid credentials',
  403: 'forbidden: the role or the API key scopes do not grant the action on the workspace',
  404: 'not_found: no such resource in the workspace',
  409: 'idempotency_request_in_progress / conflict / failed_precondition',
  413: 'payload_too_large: the body exceeds the limit',
  415: 'unsupported_media_type: wrong Content-Type',
  422: 'idempotency_key_reused (same key, different body) or submit_blocked (details.blocking_reasons)',
  500: 'internal: an unexpected error (details only in the server log)',
};

const workspaceHeaders: Schema[] = [
  { name: 'x-workspace-id', in: 'header', required: true, description: 'The workspace (brand) id.', schema: uuid },
  { name: 'x-request-id', in: 'header', required: false, description: 'Echoed as x-request-id and meta.request_id; generated when absent.', schema: { type: 'string' } },
];
const workspaceSecurity = [{ bearer: [], apiKey: [] }];

const batch = (withName: boolean): Schema => obj({
  id: uuid, status: { enum: batchStatuses }, identity_mode: { enum: identityModes }, activation_mode: { enum: activationModes },
  requested_quantity: { type: 'integer' }, minted_quantity: { type: 'integer' }, resolver_base_url: { type: 'string' }, created_at: time,
  product_id: uuid, ...(withName ? { product_name: nullable({ type: 'string' }) } : {}), product_sku: nullable({ type: 'string' }),
});

const rpcRequest = (props: Record<string, Schema>, required: string[]): Schema => obj(props, required);
const pageParams = { _limit: { type: 'integer', minimum: 1, maximum: 100 }, _cursor_id: uuid };

/** Request and response schemas of the named operations. */
const namedOperationSchemas: Record<string, { request: Schema; response: Schema; summary: string }> = {
  submit_mint_request: {
    summary: 'Runs preflight and creates a QUEUED mint job and its draft batch (no units).',
    request: rpcRequest({
      _brand_id: uuid, _product_id: uuid, _product_batch_id: nullable(uuid), _requested_quantity: { type: 'integer', minimum: 1, maximum: 1_000_000 },
      _identity_mode: { enum: identityModes }, _activation_mode: { enum: activationModes }, _lots: nullable(arrayOf(lot)), _serials: {},
      _idempotency_key: nullable(uuid),
    }, ['_brand_id', '_product_id', '_requested_quantity', '_identity_mode', '_activation_mode']),
    response: {
      oneOf: [
        obj({ ok: { const: true }, mint_job_id: uuid, mint_batch_id: uuid, status: { enum: jobStatuses }, is_duplicate: { type: 'boolean' } }),
        obj({ ok: { const: false }, blocking_reasons: arrayOf(blockingReason), product_id: uuid, product_batch_id: nullable(uuid) }),
      ],
    },
  },
  preflight_mint_batch: {
    summary: 'Standalone eligibility check; stores and returns a preflight record.',
    request: rpcRequest({ _brand_id: uuid, _product_id: uuid, _batch_id: uuid, _requested_quantity: { type: 'integer' }, _idempotency_key: nullable(uuid) },
      ['_brand_id', '_product_id', '_batch_id', '_requested_quantity']),
    response: obj({
      ok: { const: true }, id: uuid, status: { type: 'string' }, preflight_result: { enum: ['pass', 'blocked'] }, blocking_reasons: arrayOf(blockingReason),
      scope_type: { enum: identityModes }, requested_quantity: { type: 'integer' }, created_at: time, mint_job_id: nullable(uuid),
    }),
  },
  create_mint_batch_from_job: {
    summary: 'Deprecated: gives a QUEUED or PREFLIGHTED job its batch; use submit_mint_request.',
    request: rpcRequest({ _brand_id: uuid, _mint_job_id: uuid, _activation_mode: { enum: activationModes }, _lots: nullable(arrayOf(lot)) },
      ['_brand_id', '_mint_job_id', '_activation_mode']),
    response: obj({ ok: { const: true }, mint_job_id: uuid, mint_batch_id: uuid, status: { enum: jobStatuses }, deprecation: { type: 'string' } }),
  },
  process_mint_job_batch: {
    summary: 'One processing cycle of a job (default 2,000 units).',
    request: rpcRequest({ _brand_id: uuid, _job_id: uuid, _max_units: { type: 'integer' } }, ['_brand_id', '_job_id']),
    response: obj({ ok: { const: true }, done: { type: 'boolean' }, inserted_count: { type: 'integer' }, minted_quantity: { type: 'integer' }, requested_quantity: { type: 'integer' } }),
  },
  list_mint_batches: {
    summary: 'The brand\'s batches, newest first.',
    request: rpcRequest({ _brand_id: uuid, ...pageParams, _cursor_created_at: time }, ['_brand_id']),
    response: obj({
      ok: { const: true }, batches: arrayOf(batch(false)), has_more: { type: 'boolean' }, next_cursor_created_at: nullable(time),
      next_cursor_id: nullable(uuid), next_cursor: nullable({ type: 'string' }),
    }),
  },
  list_mint_units: {
    summary: 'The brand\'s units (optionally of one batch), newest first.',
    request: rpcRequest({ _brand_id: uuid, _mint_batch_id: nullable(uuid), ...pageParams, _cursor_created_at: time }, ['_brand_id']),
    response: obj({
      ok: { const: true },
      units: arrayOf(obj({
        id: uuid, mint_batch_id: uuid, seq: { type: 'integer' }, serial: { type: 'string' }, resolver_url: { type: 'string' },
        status: { enum: ['active', 'inactive'] }, gtin: nullable({ type: 'string' }), product_sku: nullable({ type: 'string' }), created_at: time,
        activated_at: nullable(time),
      })),
      has_more: { type: 'boolean' }, next_cursor_created_at: nullable(time), next_cursor_id: nullable(uuid),
    }),
  },
  list_mint_events: {
    summary: 'The brand\'s audit events, newest first, filterable.',
    request: rpcRequest({
      _brand_id: uuid, ...pageParams, _cursor_occurred_at: time, _event_type: { type: 'string' }, _entity_type: { type: 'string' }, _entity_id: { type: 'string' },
    }, ['_brand_id']),
    response: obj({
      ok: { const: true },
      events: arrayOf(obj({
        id: uuid, occurred_at: time, event_type: { type: 'string' }, entity_type: { type: 'string' }, entity_id: { type: 'string' },
        payload: { type: 'object' }, actor: nullable({ type: 'string' }),
      })),
      has_more: { type: 'boolean' }, next_cursor_occurred_at: nullable(time), next_cursor_id: nullable(uuid),
    }),
  },
  get_mint_kpis: {
    summary: 'Dashboard KPIs of the brand.',
    request: rpcRequest({ _brand_id: uuid }, ['_brand_id']),
    response: obj({
      ok: { const: true }, total_tokens_minted: { type: 'integer' }, active_tokens: { type: 'integer' }, batches_created: { type: 'integer' },
      exported_printed: { type: 'integer' },
    }),
  },
  get_mint_batch_by_id: {
    summary: 'One batch of the brand with its product\'s name and SKU.',
    request: rpcRequest({ _brand_id: uuid, _mint_batch_id: uuid }, ['_brand_id', '_mint_batch_id']),
    response: obj({ ok: { const: true }, batch: batch(true) }),
  },
  list_payload_packs: {
    summary: 'The brand\'s payload packs (never signed URLs), newest first.',
    request: rpcRequest({ _brand_id: uuid, ...pageParams, _cursor_created_at: time }, ['_brand_id']),
    response: obj({
      ok: { const: true },
      packs: arrayOf(obj({
        id: uuid, brand_id: uuid, mint_batch_id: uuid, status: { type: 'string' }, storage_path: nullable({ type: 'string' }), created_at: time, updated_at: time,
      })),
      has_more: { type: 'boolean' }, next_cursor_created_at: nullable(time), next_cursor_id: nullable(uuid),
    }),
  },
};

const mintJobBody = {
  product_id: uuid, requested_quantity: { type: 'integer', minimum: 1, maximum: 1_000_000 }, identity_mode: { enum: identityModes },
  activation_mode: { enum: activationModes }, product_batch_id: nullable(uuid), lots: nullable(arrayOf(lot)),
};
const mintJobRequired = ['product_id', 'requested_quantity', 'identity_mode', 'activation_mode'];

/** The OpenAPI 3.1 document of the /v1 routes. */
export const openApiDocument = {
  openapi: '3.1.0',
  info: {
    title: 'Minting service HTTP API',
    version: '1',
    description: 'The /v1 HTTP routes. Errors (except submit + kick, which keeps the spec\'s own codes) have one body: {ok:false, error:{code, message[, details]}, meta:{request_id}}.',
  },
  components: {
    securitySchemes: {
      bearer: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT', description: 'User session token.' },
      apiKey: { type: 'apiKey', in: 'header', name: 'x-api-key', description: 'Workspace API key (early access).' },
    },
    schemas: {
      Meta: obj({ request_id: { type: 'string' } }),
      Error: obj({
        ok: { const: false },
        error: obj({ code: { type: 'string' }, message: { type: 'string' }, details: { type: 'object' } }, ['code', 'message']),
        meta: ref('Meta'),
      }),
      Lot: lot,
      BlockingReason: blockingReason,
      SubmitAndKickRequest: obj({ brand_id: uuid, ...mintJobBody, idempotency_key: nullable(uuid) }, ['brand_id', ...mintJobRequired]),
      SubmitAndKickResponse: {
        oneOf: [
          obj({
            ok: { const: true }, brand_id: uuid, mint_job_id: uuid, mint_batch_id: uuid, kicked: { type: 'boolean' }, is_duplicate: { type: 'boolean' },
            status: { enum: jobStatuses }, note: nullable({ type: 'string' }),
          }),
          obj({
            ok: { const: false }, brand_id: { type: 'null' }, mint_job_id: { type: 'null' }, mint_batch_id: { type: 'null' }, kicked: { const: false },
            error_code: { enum: ['missing_auth', 'invalid_token', 'forbidden', 'invalid_request', 'submit_failed', 'submit_blocked', 'internal_error', 'payload_too_large', 'unsupported_media_type', 'conflict'] },
            error_message: { type: 'string' }, blocking_reasons: arrayOf(blockingReason),
          }, ['ok', 'brand_id', 'mint_job_id', 'mint_batch_id', 'kicked', 'error_code', 'error_message']),
        ],
      },
      MintJobRequest: obj(mintJobBody, mintJobRequired),
      MintJobCreated: obj({
        ok: { const: true },
        data: obj({ mint_job_id: uuid, mint_batch_id: uuid, status: { enum: jobStatuses }, is_duplicate: { type: 'boolean' } }),
        meta: ref('Meta'),
      }),
      ProductImport: obj({
        id: uuid, status: { enum: importStatuses }, total_rows: { type: 'integer' }, imported_rows: { type: 'integer' }, failed_rows: { type: 'integer' },
        errors: arrayOf(obj({ row: { type: 'integer' }, field: nullable({ type: 'string' }), message: { type: 'string' } })),
        created_at: time, finished_at: nullable(time),
      }),
      ProductImportResponse: obj({ ok: { const: true }, data: ref('ProductImport'), meta: ref('Meta') }),
      Product: obj({
        id: uuid, sku: { type: 'string' }, name: { type: 'string' }, gtin: nullable({ type: 'string' }), commercial_status: { enum: commercialStatuses },
        mint_readiness_status: { enum: mintReadinessStatuses }, passport_url: nullable({ type: 'string' }), created_at: time, updated_at: time,
      }),
      ProductList: obj({
        ok: { const: true }, data: arrayOf(ref('Product')),
        meta: obj({ next_cursor: nullable({ type: 'string' }), has_more: { type: 'boolean' }, request_id: { type: 'string' } }),
      }),
      ...Object.fromEntries(Object.entries(namedOperationSchemas).flatMap(([name, s]) => [[`${name}_request`, s.request], [`${name}_response`, s.response]])),
    },
  },
  paths: {
    '/v1/mint/submit-and-kick': {
      post: {
        summary: 'Submit + kick: submits a mint request and runs one bounded processing cycle (at most 20,000 units).',
        security: [{ bearer: [] }],
        requestBody: { required: true, content: { 'application/json': { schema: ref('SubmitAndKickRequest') } } },
        responses: {
          200: json('Submitted (kicked tells whether the cycle ran), or submit_blocked with blocking_reasons', ref('SubmitAndKickResponse')),
          400: json('invalid_request (body shape) or submit_failed (request rules)', ref('SubmitAndKickResponse')),
          401: json('missing_auth or invalid_token', ref('SubmitAndKickResponse')),
          403: json('forbidden: not owner or admin of the brand', ref('SubmitAndKickResponse')),
          413: json('payload_too_large: the body exceeds the limit', ref('SubmitAndKickResponse')),
          415: json('unsupported_media_type: the body is not application/json', ref('SubmitAndKickResponse')),
        },
      },
    },
    '/v1/mint/jobs': {
      post: {
        summary: 'Creates a mint job in the workspace; idempotent by Idempotency-Key (kept 24 hours).',
        security: workspaceSecurity,
        parameters: [
          ...workspaceHeaders,
          { name: 'Idempotency-Key', in: 'header', required: true, description: '1-255 visible ASCII characters; scoped to the workspace.', schema: { type: 'string', maxLength: 255 } },
        ],
        requestBody: { required: true, content: { 'application/json': { schema: ref('MintJobRequest') } } },
        responses: { 202: json('Created (or replayed: header Idempotent-Replayed: true)', ref('MintJobCreated')), ...errors(400, 401, 403, 409, 413, 415, 422, 500) },
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
        summary: 'An import\'s status, counts and rejected rows (first 1,000).',
        security: workspaceSecurity,
        parameters: [...workspaceHeaders, { name: 'id', in: 'path', required: true, schema: uuid }],
        responses: { 200: json('The import', ref('ProductImportResponse')), ...errors(400, 401, 403, 404, 500) },
      },
    },
    '/v1/products': {
      get: {
        summary: 'The workspace\'s products, newest first, with an opaque cursor.',
        security: workspaceSecurity,
        parameters: [
          ...workspaceHeaders,
          { name: 'limit', in: 'query', required: false, schema: { type: 'integer', minimum: 1, maximum: 100, default: 50 } },
          { name: 'cursor', in: 'query', required: false, description: 'meta.next_cursor of the previous page.', schema: { type: 'string' } },
        ],
        responses: { 200: json('A page of products', ref('ProductList')), ...errors(400, 401, 403, 500) },
      },
    },
    ...Object.fromEntries(Object.entries(namedOperationSchemas).map(([name, s]) => [`/v1/rpc/${name}`, {
      post: {
        summary: s.summary,
        security: [{ bearer: [] }],
        requestBody: { required: true, content: { 'application/json': { schema: ref(`${name}_request`) } } },
        responses: { 200: json(`${name} result`, ref(`${name}_response`)), ...errors(400, 401, 403, 404, 409, 413, 415, 500) },
      },
    }])),
    '/v1/openapi.json': {
      get: { summary: 'This document.', security: [], responses: { 200: { description: 'OpenAPI 3.1 document', content: { 'application/json': { schema: { type: 'object' } } } } } },
    },
  },
} as const;
