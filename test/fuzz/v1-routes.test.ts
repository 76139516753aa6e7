// Fuzzes every /v1 route (as /v1/openapi.json lists them) over a real server: random and malformed
// bodies, headers, query strings, path parameters and oversized bodies. No answer may be a 5xx;
// every answer must be JSON of the shape documented for its status; a refused request must write
// nothing; and the database invariants must hold after each property.

import { maxHeaderSize, request } from 'node:http';
import { apiKeyScopes } from '@mint/domain';
import { createApiKey } from '@mint/usecases';
import fc from 'fast-check';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { setupUseCases, type SeededBrand, type UseCaseBundle } from '../support/usecases.ts';
import {
  anyInt32,
  anyJsonText,
  anyText,
  brokenInvariants,
  fuzzParameters,
  jsonObjectFor,
  jsonText,
  remember,
  rowCounts,
  schemaMismatches,
  startFuzzApi,
  type FuzzApi,
  type IdPool,
} from './support.ts';

type Schema = Record<string, unknown>;

/** The routes when the server has no OpenAPI document. */
const fallbackRoutes: readonly Route[] = [
  { method: 'POST', path: '/v1/mint/submit-and-kick' },
  { method: 'POST', path: '/v1/mint/jobs' },
  { method: 'POST', path: '/v1/imports/products' },
  { method: 'GET', path: '/v1/imports/products/{id}' },
  { method: 'GET', path: '/v1/products' },
  { method: 'POST', path: '/v1/rpc/{operation}' },
];

/** One documented route. */
interface Route {
  readonly method: string;
  readonly path: string;
  /** Its OpenAPI operation, when documented. */
  readonly operation?: Schema;
}

/** A request the fuzzer sends. */
interface FuzzRequest {
  readonly method: string;
  readonly path: string;
  readonly headers: Record<string, string>;
  readonly body: Uint8Array | null;
}

/** What came back. */
interface FuzzResponse {
  readonly status: number;
  readonly headers: Record<string, string | string[] | undefined>;
  readonly text: string;
}

let app: UseCaseBundle;
let api: FuzzApi;
let brand: SeededBrand;
let other: SeededBrand;
let apiKey: string;
let pool: IdPool;
let openApi: Schema | null = null;
let routes: readonly Route[] = fallbackRoutes;
let checkedLogLines = 0;
/** Statuses a route answered that its OpenAPI operation does not list, by route and status. */
const undocumentedStatuses = new Map<string, string>();

/** Sends `req` with node:http (any header value fetch would refuse, no retries) and reads the whole answer. */
function send(req: FuzzRequest): Promise<FuzzResponse> {
  return new Promise((resolve, reject) => {
    const url = new URL(api.baseUrl);
    const outgoing = request(
      {
        // A connection per request: a kept-alive socket the server closed after a 413 would fail the next one.
        host: url.hostname,
        port: url.port,
        method: req.method,
        path: req.path,
        agent: false,
        headers: { ...req.headers, ...(req.body === null ? {} : { 'content-length': String(req.body.byteLength) }) },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, text: Buffer.concat(chunks).toString('utf8') }));
        res.on('error', reject);
      },
    );
    // The server may answer (413) and close before the whole body is written: that is an answer.
    outgoing.on('error', (error: NodeJS.ErrnoException) => {
      if (error.code === 'EPIPE' || error.code === 'ECONNRESET') resolve({ status: -1, headers: {}, text: `connection closed: ${error.code}` });
      else reject(error);
    });
    outgoing.end(req.body ?? undefined);
  });
}

/**
 * The bytes of the request's head as `send` writes it: the request line, the fuzzed headers and the
 * ones node:http adds (host, content-length, connection). Node's parser counts the target and every
 * header name and value against `maxHeaderSize`, so this is never less than what it counts.
 */
function headBytes(req: FuzzRequest): number {
  const added: Record<string, string> = { host: new URL(api.baseUrl).host, connection: 'close' };
  if (req.body !== null) added['content-length'] = String(req.body.byteLength);
  const lines = Object.entries({ ...req.headers, ...added }).map(([name, value]) => `${name}: ${value}\r\n`);
  return Buffer.byteLength(`${req.method} ${req.path} HTTP/1.1\r\n${lines.join('')}\r\n`);
}

/** A short, printable description of a request for failure messages. */
function describeRequest(req: FuzzRequest): string {
  const body = req.body === null ? '' : Buffer.from(req.body.subarray(0, 400)).toString('utf8');
  return `${req.method} ${req.path.slice(0, 300)} headers=${jsonText(req.headers).slice(0, 400)} body(${req.body?.byteLength ?? 0} bytes)=${jsonText(body)}`;
}

/**
 * The checks every answer gets: no 5xx; a JSON body (except a connection the server closed after
 * a 413 on an oversized upload); for a documented route, the status is one the document lists
 * and the body matches its schema; every error names the problem (a non-empty message, and the
 * violations of an invalid_request); and `meta.request_id` echoes `x-request-id`.
 */
function expectDocumentedAnswer(route: Route, req: FuzzRequest, res: FuzzResponse): void {
  const where = `${describeRequest(req)} -> HTTP ${res.status} ${res.text.slice(0, 500)}`;
  if (res.status === -1) {
    // Closed while we were still writing: only acceptable for a body past the size limit.
    expect((req.body?.byteLength ?? 0) > 1024 * 1024, where).toBe(true);
    return;
  }
  if (res.status === 431) {
    // The HTTP parser refuses a head past its limit before any route runs: only for requests past
    // it, and with the plain JSON error body (no route, so not the /v1 one).
    expect(headBytes(req) >= maxHeaderSize, where).toBe(true);
    expect(JSON.parse(res.text), where).toMatchObject({ ok: false, error: 'request_header_fields_too_large' });
    return;
  }
  expect(res.status, where).toBeLessThan(500);
  expect(res.status, where).toBeGreaterThanOrEqual(200);
  let body: unknown;
  try {
    body = JSON.parse(res.text);
  } catch {
    expect.fail(`not JSON: ${where}`);
  }
  const responses = route.operation?.['responses'] as Record<string, Schema> | undefined;
  if (openApi !== null && responses !== undefined) {
    const documented = responses[String(res.status)];
    if (documented === undefined) {
      // Collected (one example per route and status) and reported by its own test, so fuzzing goes on.
      const key = `${route.method} ${route.path} answered ${res.status}`;
      if (!undocumentedStatuses.has(key)) undocumentedStatuses.set(key, `${key}, which its OpenAPI responses do not list: ${where.slice(0, 700)}`);
    }
    const schema = (documented?.['content'] as Record<string, { schema?: Schema }> | undefined)?.['application/json']?.schema;
    if (schema !== undefined) expect(schemaMismatches(openApi, schema, body), where).toEqual([]);
  }
  if (res.status >= 400) {
    const b = body as {
      error?: { code?: string; message?: string; details?: { violations?: { field?: string; message?: string }[] } };
      error_code?: string;
      error_message?: string;
    };
    const message = b.error?.message ?? b.error_message;
    expect(typeof message === 'string' && message.trim() !== '', `error without a message: ${where}`).toBe(true);
    if (b.error?.code === 'invalid_request') {
      const violations = b.error.details?.violations ?? [];
      expect(violations.length, `invalid_request without violations: ${where}`).toBeGreaterThan(0);
      // A field may be '' when the client sent a property named '' (it is named as sent).
      for (const v of violations) expect(typeof v.field === 'string' && typeof v.message === 'string' && v.message !== '', where).toBe(true);
    }
  }
  const requestId = req.headers['x-request-id'];
  const meta = (body as { meta?: { request_id?: string } }).meta;
  if (requestId !== undefined && meta !== undefined && /^[\w.:-]{1,128}$/.test(requestId)) expect(meta.request_id, where).toBe(requestId);
}

/** A value that is valid-looking for a schema: real ids for uuids, the enum's values, small integers. */
function validish(schema: Schema | undefined, name: string): fc.Arbitrary<unknown> | undefined {
  if (schema === undefined || openApi === null) return undefined;
  const ref = schema['$ref'];
  if (typeof ref === 'string')
    return validish(
      ref
        .replace(/^#\//, '')
        .split('/')
        .reduce<unknown>((n, k) => (n as Schema)[k], openApi) as Schema,
      name,
    );
  const options = (schema['anyOf'] ?? schema['oneOf']) as Schema[] | undefined;
  if (options !== undefined) return fc.oneof(...options.map((o) => validish(o, name) ?? fc.constant(null)));
  if (schema['enum'] !== undefined) return fc.constantFrom(...(schema['enum'] as unknown[]));
  if (schema['type'] === 'null') return fc.constant(null);
  if (schema['format'] === 'uuid') {
    const field = name.replace(/^_/, '');
    return fc.oneof(
      {
        arbitrary: fc.constant(field === 'brand_id' ? pool.brandId : (pool.byField.get(field) ?? pool.byField.get('product_id') ?? [pool.brandId])[0]!),
        weight: 4,
      },
      { arbitrary: fc.uuid(), weight: 1 },
    );
  }
  if (schema['format'] === 'date-time')
    return fc.date({ min: new Date('1900-01-01'), max: new Date('2300-01-01'), noInvalidDate: true }).map((d) => d.toISOString());
  if (schema['type'] === 'integer') return fc.oneof(fc.integer({ min: 1, max: 30 }), anyInt32);
  if (schema['type'] === 'string') return anyText;
  if (schema['type'] === 'array') return fc.array(validish(schema['items'] as Schema, name) ?? fc.jsonValue(), { maxLength: 3 });
  if (schema['type'] === 'object' && schema['properties'] !== undefined) return requestObject(schema);
  return undefined;
}

/** JSON objects shaped like `schema`'s properties: mostly valid-looking, with wrong types and unknown names mixed in. */
function requestObject(schema: Schema): fc.Arbitrary<Record<string, unknown>> {
  const properties = (schema['properties'] ?? {}) as Record<string, Schema>;
  const good = Object.fromEntries(
    Object.entries(properties).flatMap(([name, s]) => {
      const arb = validish(s, name);
      return arb === undefined ? [] : [[name, arb] as const];
    }),
  );
  return jsonObjectFor(Object.keys(properties), good);
}

/** The JSON request body schema of a route, if documented. */
function bodySchema(route: Route): Schema | undefined {
  const content = (route.operation?.['requestBody'] as { content?: Record<string, { schema?: Schema }> } | undefined)?.content;
  const schema = content?.['application/json']?.schema;
  if (schema === undefined || openApi === null) return undefined;
  const ref = schema['$ref'];
  return typeof ref === 'string'
    ? (ref
        .replace(/^#\//, '')
        .split('/')
        .reduce<unknown>((n, k) => (n as Schema)[k], openApi) as Schema)
    : schema;
}

/** Header values within what HTTP allows (visible latin-1, no CR/LF), including huge and odd ones. */
const headerText: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom('', ' ', 'null', '0', '-1', 'a,b', 'Bearer', 'Bearer ', '\u00ff\u00e9', 'x'.repeat(8_000)),
  fc.string({ unit: fc.integer({ min: 0x20, max: 0x7e }).map((c) => String.fromCharCode(c)), maxLength: 60 }),
  fc.uuid(),
);

/** Headers: mostly the right credentials and workspace, sometimes missing, wrong, foreign or odd. */
function headersFor(route: Route): fc.Arbitrary<Record<string, string>> {
  const csv = route.path === '/v1/imports/products' && route.method === 'POST';
  return fc.record(
    {
      authorization: fc.oneof(
        { arbitrary: fc.constant(`Bearer ${brand.token}`), weight: 10 },
        { arbitrary: fc.constant(`Bearer ${other.token}`), weight: 1 },
        { arbitrary: headerText.map((t) => `Bearer ${t}`), weight: 1 },
        { arbitrary: headerText, weight: 1 },
      ),
      'x-api-key': fc.oneof({ arbitrary: fc.constant(apiKey), weight: 10 }, { arbitrary: headerText, weight: 1 }),
      'x-workspace-id': fc.oneof(
        { arbitrary: fc.constant(brand.brandId), weight: 10 },
        { arbitrary: fc.constant(other.brandId), weight: 1 },
        { arbitrary: headerText, weight: 1 },
      ),
      'content-type': fc.oneof(
        { arbitrary: fc.constant(csv ? 'text/csv' : 'application/json'), weight: 10 },
        {
          arbitrary: fc.constantFrom(
            'application/json; charset=utf-8',
            'text/csv',
            'application/proto',
            'text/plain',
            'application/problem+json',
            'multipart/form-data; boundary=x',
            'APPLICATION/JSON',
          ),
          weight: 2,
        },
        { arbitrary: headerText, weight: 1 },
      ),
      'idempotency-key': fc.oneof(fc.uuid(), headerText, fc.constant('k'.repeat(256))),
      'x-request-id': fc.oneof(fc.constantFrom('fuzz-req-1', 'a'.repeat(200)), headerText),
    },
    { requiredKeys: ['authorization', 'x-api-key', 'x-workspace-id', 'content-type'] },
  );
}

/** A CSV upload: the documented columns with random cells, broken quoting, random bytes. */
const csvBody: fc.Arbitrary<Uint8Array> = fc.oneof(
  fc
    .array(
      fc.array(
        fc.oneof(
          anyText.filter((t) => t.length < 60),
          fc.constantFrom('ACTIVE', 'READY', 'DRAFT', '"', '"a""b"', ' "x', '09506000134352'),
        ),
        { minLength: 1, maxLength: 7 },
      ),
      { maxLength: 6 },
    )
    .map((rows) =>
      new TextEncoder().encode(['sku,name,gtin,commercial_status,mint_readiness_status,passport_url', ...rows.map((r) => r.join(','))].join('\n')),
    ),
  fc.uint8Array({ maxLength: 300 }),
  fc.constant(new Uint8Array()),
);

/** A body for a route: its schema's shape, any JSON text, random bytes, nothing, or oversized (just past 1 MiB). */
function bodyFor(route: Route): fc.Arbitrary<Uint8Array | null> {
  const schema = bodySchema(route);
  const text = (t: string) => new TextEncoder().encode(t);
  const shaped = schema === undefined ? anyJsonText.map(text) : requestObject(schema).map((o) => text(jsonText(o)));
  if (route.method === 'GET') return fc.oneof({ arbitrary: fc.constant(null), weight: 6 }, { arbitrary: shaped, weight: 1 });
  return fc.oneof(
    { arbitrary: route.path === '/v1/imports/products' ? csvBody : shaped, weight: 8 },
    { arbitrary: anyJsonText.map(text), weight: 2 },
    { arbitrary: fc.uint8Array({ maxLength: 200 }), weight: 1 },
    { arbitrary: fc.constant(null), weight: 1 },
    { arbitrary: fc.integer({ min: 1024 * 1024 + 1, max: 1024 * 1024 + 4096 }).map((n) => text(`{"x":"${'y'.repeat(n)}"}`)), weight: 1 },
  );
}

/** The path with its `{name}` segments filled (real ids, random uuids, odd text) and a random query string. */
function pathFor(route: Route): fc.Arbitrary<string> {
  const segment = fc.oneof(
    { arbitrary: fc.constantFrom(...(pool.byField.get('import_id') ?? [pool.brandId])), weight: 3 },
    { arbitrary: fc.uuid(), weight: 2 },
    {
      arbitrary: fc.oneof(
        anyText.filter((t) => t.length < 200),
        fc.constantFrom('..', '%', '%zz', 'unknown_op', 'submit_mint_request'),
      ),
      weight: 2,
    },
  );
  const query = fc.oneof(
    { arbitrary: fc.constant(''), weight: 3 },
    {
      arbitrary: fc
        .dictionary(
          fc.oneof(fc.constantFrom('limit', 'cursor'), fc.string({ maxLength: 8 })),
          fc.oneof(fc.constantFrom('1', '0', '100', '101', '-1', '1e3', '', 'abc'), fc.string({ maxLength: 40 }), fc.base64String({ maxLength: 80 })),
          { maxKeys: 3 },
        )
        .map((d) => `?${new URLSearchParams(d).toString()}`),
      weight: 2,
    },
    { arbitrary: fc.constantFrom('?limit=5&limit=6', '?cursor=%ff', '?&&&', '?limit=5'), weight: 1 },
  );
  const names = [...route.path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]!);
  return fc.tuple(fc.array(segment, { minLength: names.length, maxLength: names.length }), query).map(([values, q]) => {
    let i = 0;
    // A lone surrogate has no UTF-8 form, so no client can send one in a path.
    return route.path.replace(/\{\w+\}/g, () => encodeURIComponent(values[i++]!.toWellFormed())) + q;
  });
}

beforeAll(async () => {
  app = await setupUseCases();
  api = await startFuzzApi(app.ctx);
  brand = await app.seedBrand();
  other = await app.seedBrand();
  apiKey = (await createApiKey(app.ctx, { brandId: brand.brandId, name: 'fuzz', scopes: [...apiKeyScopes] })).key;
  pool = { brandId: brand.brandId, otherBrandId: other.brandId, byField: new Map() };
  remember(pool, 'product_id', brand.productId);
  // The routes as the server documents them, else the fixed list.
  const res = await send({ method: 'GET', path: '/v1/openapi.json', headers: {}, body: null });
  if (res.status === 200) {
    openApi = JSON.parse(res.text) as Schema;
    const paths = openApi['paths'] as Record<string, Record<string, Schema>>;
    routes = Object.entries(paths).flatMap(([path, operations]) =>
      Object.entries(operations)
        .filter(([m]) => ['get', 'post', 'put', 'patch', 'delete'].includes(m))
        .map(([m, operation]) => ({ method: m.toUpperCase(), path, operation })),
    );
  }
  // A real import to read back.
  const imported = await send({
    method: 'POST',
    path: '/v1/imports/products',
    body: new TextEncoder().encode('sku,name,commercial_status,mint_readiness_status\nFZ-1,Fuzz,ACTIVE,READY\n'),
    headers: { authorization: `Bearer ${brand.token}`, 'x-api-key': apiKey, 'x-workspace-id': brand.brandId, 'content-type': 'text/csv' },
  });
  remember(pool, 'import_id', (JSON.parse(imported.text) as { data?: { id?: string } }).data?.id);
});

afterEach(async () => {
  expect(await brokenInvariants(app.database.url)).toEqual([]);
  const faults = api.logs.slice(checkedLogLines).filter((line) => Number(line['level']) >= 50);
  checkedLogLines = api.logs.length;
  expect(
    faults.map((line) => jsonText(line).slice(0, 1000)),
    'error lines in the server log',
  ).toEqual([]);
});

afterAll(async () => {
  await api?.close();
  await app?.close();
});

describe('every /v1 route with random requests', () => {
  it('discovers the routes from /v1/openapi.json', () => {
    expect(openApi, 'GET /v1/openapi.json').not.toBeNull();
    expect(routes.length).toBeGreaterThanOrEqual(fallbackRoutes.length);
  });

  // The route list is known only once the server runs: one property over all routes, each run on
  // one route, plus a sweep that gives every route its own trials.
  it('answers every route with a documented, non-5xx JSON body and writes nothing when it refuses', async () => {
    // Each route gets its own property; a failing one does not stop the others from being fuzzed.
    const failures: string[] = [];
    for (const route of routes) {
      if (route.path === '/v1/openapi.json') continue;
      const requests = fc.record({ path: pathFor(route), headers: headersFor(route), body: bodyFor(route) });
      const result = await fc.check(
        fc.asyncProperty(requests, async ({ path, headers, body }) => {
          const req: FuzzRequest = { method: route.method, path, headers, body };
          const before = await rowCounts(app.database.url);
          const res = await send(req);
          expectDocumentedAnswer(route, req, res);
          if (res.status >= 400 || res.status === -1) {
            expect(await rowCounts(app.database.url), `refused but rows changed: ${describeRequest(req)} -> ${res.status} ${res.text.slice(0, 300)}`).toEqual(
              before,
            );
          }
          if (res.status < 300) {
            const data = (JSON.parse(res.text) as { data?: { mint_job_id?: string; id?: string }; mint_job_id?: string }).data;
            remember(pool, 'mint_job_id', data?.mint_job_id);
          }
        }),
        fuzzParameters(route.path.startsWith('/v1/rpc/') ? 0.4 : 1),
      );
      if (result.failed) {
        const error = result.errorInstance instanceof Error ? result.errorInstance.message : String(result.errorInstance);
        failures.push(`${route.method} ${route.path} (seed ${result.seed}, path ${result.counterexamplePath}): ${error.slice(0, 2500)}`);
      }
    }
    expect(failures, failures.join('\n\n')).toEqual([]);
  });

  it('answers only with statuses its OpenAPI operation lists (collected above)', () => {
    expect([...undocumentedStatuses.values()], [...undocumentedStatuses.keys()].join('; ')).toEqual([]);
  });

  it('answers unknown paths and wrong methods under /v1 with the error body', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom('GET', 'POST', 'PUT', 'DELETE', 'PATCH'),
        fc.oneof(
          fc.constantFrom(...routes.map((r) => r.path)),
          fc.string({ maxLength: 30 }).map((s) => `/v1/${encodeURIComponent(s)}`),
        ),
        async (method, path) => {
          const known = routes.find((r) => r.path === path && r.method === method);
          if (known !== undefined || path.includes('{')) return;
          const req: FuzzRequest = { method, path, headers: { authorization: `Bearer ${brand.token}` }, body: null };
          const res = await send(req);
          expect(res.status, describeRequest(req)).toBeLessThan(500);
          const body = JSON.parse(res.text) as { ok?: boolean; error?: { code?: string; message?: string } };
          expect(body.ok).toBe(false);
          expect(body.error?.message, res.text).toBeTruthy();
        },
      ),
      fuzzParameters(),
    );
  });

  it('refuses an oversized upload (past 32 MiB) with 413 and writes nothing', async () => {
    const before = await rowCounts(app.database.url);
    const header = 'sku,name,commercial_status,mint_readiness_status\n';
    const row = 'S,N,ACTIVE,READY\n';
    const body = new TextEncoder().encode(header + row.repeat(Math.ceil((32 * 1024 * 1024) / row.length) + 10));
    const req: FuzzRequest = {
      method: 'POST',
      path: '/v1/imports/products',
      body,
      headers: { authorization: `Bearer ${brand.token}`, 'x-api-key': apiKey, 'x-workspace-id': brand.brandId, 'content-type': 'text/csv' },
    };
    const res = await send(req);
    if (res.status !== -1) {
      expect(res.status).toBe(413);
      expectDocumentedAnswer(
        routes.find((r) => r.path === '/v1/imports/products' && r.method === 'POST') ?? { method: 'POST', path: '/v1/imports/products' },
        req,
        res,
      );
    }
    expect(await rowCounts(app.database.url)).toEqual(before);
  });
});
