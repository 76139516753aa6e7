// Shared setup of the /v1 tests: the real API on a fresh database, a seeded workspace with an API
// key of every scope, and a small HTTP client that returns status, headers and parsed JSON.

import { request as httpRequest } from 'node:http';
import { apiKeyScopes, type ApiKeyScope } from '@mint/domain';
import { query } from '../../../test/support/sql.ts';
import { createApiKey } from '@mint/usecases';
import { afterAll, beforeAll } from 'vitest';
import { setupUseCases, type SeededBrand, type UseCaseBundle } from '../../../test/support/usecases.ts';
import { startTestApi, type TestApi } from './support.ts';

/** A seeded workspace and an API key of it. */
export interface V1Workspace extends SeededBrand {
  readonly apiKey: string;
}

/** One HTTP exchange. */
export interface V1Response {
  readonly status: number;
  readonly headers: Record<string, string | string[] | undefined>;
  readonly text: string;
  /** The body parsed as JSON (undefined when it is not JSON). */
  readonly body: any;
}

/** Options of {@link V1Client.send}. */
export interface SendOptions {
  readonly headers?: Record<string, string>;
  /** A JSON body (sent with application/json unless headers say otherwise). */
  readonly json?: unknown;
  /** A raw body. */
  readonly raw?: string | Buffer;
}

/** A workspace's credentials as /v1 headers (bearer, API key, x-workspace-id). */
export function workspaceHeaders(ws: V1Workspace): Record<string, string> {
  return { authorization: `Bearer ${ws.token}`, 'x-api-key': ws.apiKey, 'x-workspace-id': ws.brandId };
}

/** Sends one HTTP/1.1 request to the API. */
export function send(api: TestApi, method: string, path: string, options: SendOptions = {}): Promise<V1Response> {
  const body = options.json !== undefined ? Buffer.from(JSON.stringify(options.json)) : options.raw === undefined ? undefined : Buffer.from(options.raw);
  const headers: Record<string, string> = {
    ...(options.json !== undefined ? { 'content-type': 'application/json' } : {}),
    ...(body !== undefined ? { 'content-length': String(body.length) } : {}),
    ...options.headers,
  };
  // An empty value removes a header (e.g. content-length for a chunked upload).
  for (const [name, value] of Object.entries(headers)) if (value === '') delete headers[name];
  return new Promise((resolve, reject) => {
    const req = httpRequest(`${api.baseUrl}${path}`, { method, headers, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        let parsed: unknown;
        try {
          parsed = JSON.parse(text);
        } catch {
          parsed = undefined;
        }
        resolve({ status: res.statusCode ?? 0, headers: res.headers, text, body: parsed });
      });
      res.on('error', reject);
    });
    // The server may answer (413, 400) and close before the whole body was sent.
    req.on('error', (error: NodeJS.ErrnoException) => (error.code === 'EPIPE' || error.code === 'ECONNRESET' ? undefined : reject(error)));
    if (body !== undefined) req.end(body);
    else req.end();
  });
}

/** The API, a fresh database and a workspace with an API key. */
export interface V1Setup {
  readonly app: UseCaseBundle;
  readonly api: TestApi;
  /** Creates another workspace with an owner, a mintable product and an API key (`scopes`: all by default). */
  workspace(scopes?: readonly ApiKeyScope[]): Promise<V1Workspace>;
  /** Row count of a table (optionally of one brand). */
  count(table: string, brandId?: string): Promise<number>;
  close(): Promise<void>;
}

/** Starts the API on a fresh database. Call in beforeAll; close() in afterAll. */
export async function setupV1(): Promise<V1Setup> {
  const app = await setupUseCases();
  const api = await startTestApi(app);
  return {
    app,
    api,
    async workspace(scopes = apiKeyScopes) {
      const brand = await app.seedBrand();
      const key = await createApiKey(app.ctx, { brandId: brand.brandId, name: 'test', scopes: [...scopes] });
      return { ...brand, apiKey: key.key };
    },
    async count(table, brandId) {
      const [row] = await query<{ n: string }>(
        app.db.em.fork(),
        `select count(*) as n from ${table}${brandId ? ' where brand_id = ?' : ''}`,
        brandId ? [brandId] : [],
      );
      return Number(row!.n);
    },
    async close() {
      await api.close();
      await app.close();
    },
  };
}

/**
 * The test file's API and first workspace: registers a beforeAll that starts them ({@link setupV1},
 * then `workspace()`) and an afterAll that closes them. The objects returned are filled in before
 * the file's own beforeAll hooks and tests run.
 */
export function useV1(): { readonly t: V1Setup; readonly ws: V1Workspace } {
  const t = {} as V1Setup;
  const ws = {} as V1Workspace;
  beforeAll(async () => {
    Object.assign(t, await setupV1());
    Object.assign(ws, await t.workspace());
  });
  afterAll(() => t.close?.());
  return { t, ws };
}
