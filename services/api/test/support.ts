// The API for a test file, two ways: the RPC handlers behind the full interceptor chain in
// process (createRouterTransport, no network), or the real server (startApi on a fresh
// database's use-case context) for what only the wire shows. Both capture their log lines.

import { Writable } from 'node:stream';
import { fromBinary, toBinary, type DescMethodUnary, type DescMessage, type MessageInitShape, type MessageShape, create } from '@bufbuild/protobuf';
import { type Code, ConnectError, createClient, createRouterTransport, type Client, type Transport } from '@connectrpc/connect';
import * as grpc from '@grpc/grpc-js';
import { afterAll, expect } from 'vitest';
import { CatalogService, MintService, PassportService, ResolverService, ScanService, WebhookService } from '@mint/contract';
import { createLogger, defaults, type Logger } from '@mint/runtime';
import type { Readiness } from '@mint/runtime';
import * as useCases from '@mint/usecases';
import { createConnectRoutes, type ConnectRoutesDeps } from '../src/routes.ts';
import type { WatchLimits } from '../src/handlers/mint-service.ts';
import { rpcInterceptors } from '../src/server.ts';
import { contextAuthenticator } from '../src/auth/interceptors.ts';
import { startApi, type RunningApi, type StartApiOptions } from '../src/start.ts';
import type { SeededBrand, UseCaseBundle } from '../../../test/support/usecases.ts';

/** Log lines written through a test's logger. */
export interface CapturedLogs {
  /** Parsed log lines, in order. */
  readonly logs: Record<string, unknown>[];
  /** The raw log text (to assert what never appears in it). */
  rawLogs(): string;
}

/** A JSON logger at info level whose lines are kept in memory. */
function capturingLogger(service: string): CapturedLogs & { readonly logger: Logger } {
  const raw: string[] = [];
  const logs: Record<string, unknown>[] = [];
  const destination = new Writable({
    write(chunk: Buffer, _encoding, done) {
      const text = chunk.toString();
      raw.push(text);
      for (const line of text.split('\n')) if (line.trim() !== '') logs.push(JSON.parse(line) as Record<string, unknown>);
      done();
    },
  });
  return { logger: createLogger({ logLevel: 'info' }, { service }, destination), logs, rawLogs: () => raw.join('') };
}

/** Asserts that log lines were written and that none of them contains any of `secrets`. */
export function expectLogsFreeOf(captured: CapturedLogs, secrets: readonly string[]): void {
  const logs = captured.rawLogs();
  expect(logs.length).toBeGreaterThan(0);
  for (const secret of secrets) expect(logs).not.toContain(secret);
}

/** The RPC services in process: a transport, clients of both services, and the log lines the calls wrote. */
export interface InProcessApi extends CapturedLogs {
  readonly transport: Transport;
  readonly mint: Client<typeof MintService>;
  readonly catalog: Client<typeof CatalogService>;
  readonly resolver: Client<typeof ResolverService>;
  readonly webhooks: Client<typeof WebhookService>;
  readonly scans: Client<typeof ScanService>;
  readonly passports: Client<typeof PassportService>;
}

/**
 * MintService, CatalogService and WebhookService over `app.ctx` (or `options.ctx`) behind the server's whole
 * interceptor chain (logging, errors, authentication, validation, authorization), reached through
 * `createRouterTransport`: every call runs the handlers with no HTTP server and no socket.
 */
export function inProcessApi(
  app: Pick<UseCaseBundle, 'ctx'>,
  options: Partial<Pick<ConnectRoutesDeps, 'ctx' | 'setMintBatchStatusEnabled' | 'downloads' | 'webhooks'>> & { watch?: Partial<WatchLimits> } = {},
): InProcessApi {
  const ctx = options.ctx ?? app.ctx;
  const { logger, logs, rawLogs } = capturingLogger('api-test');
  // The watch limits the API's settings give by default, as startApi hands them over.
  const watch = { maxDurationMs: defaults.watchMaxDurationMs, maxStreamsPerCaller: defaults.watchMaxStreamsPerCaller, ...options.watch };
  const transport = createRouterTransport(createConnectRoutes({ ...options, ctx, useCases, watch }), {
    router: { interceptors: rpcInterceptors({ logger, authenticator: contextAuthenticator(ctx) }) },
  });
  return {
    transport,
    mint: createClient(MintService, transport),
    catalog: createClient(CatalogService, transport),
    resolver: createClient(ResolverService, transport),
    webhooks: createClient(WebhookService, transport),
    scans: createClient(ScanService, transport),
    passports: createClient(PassportService, transport),
    logs,
    rawLogs,
  };
}

/** The code a call ended with, or 'ok'. */
export async function codeOf(call: Promise<unknown>): Promise<Code | 'ok'> {
  try {
    await call;
    return 'ok';
  } catch (error) {
    return ConnectError.from(error).code;
  }
}

/** The error a call failed with; throws when it succeeded. */
export async function errorOf(call: Promise<unknown>): Promise<ConnectError> {
  try {
    await call;
  } catch (error) {
    return ConnectError.from(error);
  }
  throw new Error('expected the call to fail');
}

/** POSTs `body` as JSON to `path` of a running API (a Connect JSON call when the path names an RPC). */
export function postJson(api: Pick<TestApi, 'baseUrl'>, path: string, body: unknown, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(`${api.baseUrl}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
}

/**
 * SubmitMintRequest as a Connect JSON call on a running API, by `brand`'s owner for its product;
 * `fields` are the rest of the request under the spec's field names.
 */
export function submitOverJson(api: Pick<TestApi, 'baseUrl'>, brand: SeededBrand, fields: Record<string, unknown>): Promise<Response> {
  return postJson(
    api,
    '/mint.v1.MintService/SubmitMintRequest',
    { brand_id: brand.brandId, product_id: brand.productId, ...fields },
    {
      authorization: `Bearer ${brand.token}`,
    },
  );
}

/** Call options carrying `token` as bearer token. */
export const bearer = (token: string) => ({ headers: { authorization: `Bearer ${token}` } });

/** A running API and the JSON log lines it wrote. */
export interface TestApi extends RunningApi, CapturedLogs {
  readonly baseUrl: string;
}

/** Starts the API on port 0 of 127.0.0.1 over `app.ctx` (or `options.ctx`); readiness defaults to a database ping. */
export async function startTestApi(
  app: UseCaseBundle,
  options: { readiness?: () => Promise<Readiness>; shutdownTimeoutMs?: number; config?: Partial<StartApiOptions['config']> } & Partial<
    Pick<StartApiOptions, 'ctx' | 'httpRoutes' | 'downloads' | 'consoleDir'>
  > = {},
): Promise<TestApi> {
  const { logger, logs, rawLogs } = capturingLogger('api-test');
  const readiness =
    options.readiness ??
    (async () => {
      await app.db.em.fork().execute('select 1');
      return { ok: true, checks: { database: 'ok' } };
    });
  const api = await startApi({
    ctx: options.ctx ?? app.ctx,
    // Rate limits are off unless a test sets them: the suites hammer one API from one address.
    config: {
      port: 0,
      host: '127.0.0.1',
      shutdownTimeoutMs: options.shutdownTimeoutMs ?? 5_000,
      rateLimitPerCredential: 0,
      rateLimitResolverPerAddress: 0,
      rateLimitDownloadsPerAddress: 0,
      rateLimitAuthFailuresPerAddress: 0,
      ...options.config,
    },
    logger,
    readiness,
    ...(options.httpRoutes === undefined ? {} : { httpRoutes: options.httpRoutes }),
    ...(options.downloads === undefined ? {} : { downloads: options.downloads }),
    ...(options.consoleDir === undefined ? {} : { consoleDir: options.consoleDir }),
  });
  return { ...api, baseUrl: `http://127.0.0.1:${api.port}`, logs, rawLogs };
}

/**
 * Running APIs of a test file on `app.ctx` (readiness always ok): the function returned starts
 * one more; an afterAll (registered here) closes them all, before the file's database closes.
 */
export function testApiPool(app: UseCaseBundle): () => Promise<TestApi> {
  const running: TestApi[] = [];
  afterAll(async () => {
    for (const instance of running.splice(0)) await instance.close();
  });
  return async () => {
    const instance = await startTestApi(app, { readiness: async () => ({ ok: true, checks: {} }), shutdownTimeoutMs: 2_000 });
    running.push(instance);
    return instance;
  };
}

/** A grpc-js client for one unary method, serialising with protobuf-es (no proto-loader). */
export function grpcUnaryCall<I extends DescMessage, O extends DescMessage>(
  port: number,
  method: DescMethodUnary<I, O>,
  request: MessageInitShape<I>,
  metadata: Record<string, string> = {},
): Promise<{ response: MessageShape<O> } | { error: grpc.ServiceError }> {
  const Client = grpc.makeGenericClientConstructor(
    {
      call: {
        path: `/${method.parent.typeName}/${method.name}`,
        requestStream: false,
        responseStream: false,
        requestSerialize: (value: MessageShape<I>) => Buffer.from(toBinary(method.input, value)),
        requestDeserialize: (bytes: Buffer) => fromBinary(method.input, bytes),
        responseSerialize: (value: MessageShape<O>) => Buffer.from(toBinary(method.output, value)),
        responseDeserialize: (bytes: Buffer) => fromBinary(method.output, bytes),
      },
    },
    method.parent.name,
  );
  const client = new Client(`127.0.0.1:${port}`, grpc.credentials.createInsecure());
  const md = new grpc.Metadata();
  for (const [key, value] of Object.entries(metadata)) md.set(key, value);
  return new Promise((resolve) => {
    (client as unknown as Record<string, Function>)['call']!.call(
      client,
      create(method.input, request),
      md,
      (error: grpc.ServiceError | null, response: MessageShape<O>) => {
        client.close();
        resolve(error === null ? { response } : { error });
      },
    );
  });
}
