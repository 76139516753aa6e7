// The API's HTTP server: Connect, gRPC and gRPC-Web (through connect-node) plus /healthz,
// /readyz and any mounted HTTP routes, on one port speaking HTTP/1.1 and h2c.

import { Code, ConnectError, createContextValues, type ConnectRouter, type Interceptor } from '@connectrpc/connect';
import { getOption, hasOption, type DescMethod } from '@bufbuild/protobuf';
import { createValidator } from '@bufbuild/protovalidate';
import {
  clientAddressOf,
  connectAdapter,
  Health,
  registerReflection,
  createCors,
  checkReadiness,
  createHealthService,
  createHttpServer,
  createRateLimits,
  createRouter,
  errorInterceptor,
  httpObserver,
  loggingInterceptor,
  metricsInterceptor,
  probeRoutes,
  rejectUndecodableBody,
  requestScope,
  routeRateGuard,
  rpcRateLimit,
  validationInterceptor,
  type ClaimedHosts,
  type HttpServer,
  type ReadinessProbe,
  type Route,
  type RpcRateLimit,
} from '@mint/http';
import type { Config, Logger, Metrics } from '@mint/runtime';
import { authenticateHeaders, authenticationInterceptor, authorizationInterceptor, hasVerifiedCredentials, type Authenticator } from './auth/interceptors.ts';
import { permissionFor, type AccessOptions } from './auth/permissions.ts';
import { isPublicPath } from './auth/public-paths.ts';
import { callLog, clientAddressKey, loggerKey, requestIdKey } from './context.ts';
import { specSpellings } from './handlers/wire.ts';
import { import_body as importBody } from '@mint/contract';

/** Options of {@link createApiServer}. */
export interface ApiServerOptions {
  /** Registers the application's Connect services; the health service is added by the server. */
  readonly routes: (router: ConnectRouter) => void;
  /** The plain HTTP routes (the server adds `/healthz` and `/readyz`); other paths go to Connect. */
  readonly httpRoutes?: readonly Route[];
  /** Verifies bearer tokens and looks up roles for the auth interceptors. */
  readonly authenticator: Authenticator;
  /** Probes the dependencies for `/readyz` and the gRPC health Check. */
  readonly readiness: ReadinessProbe;
  /** Process logger; each request gets a child carrying its request id (created when the request first writes a line). */
  readonly logger: Logger;
  /**
   * The settings, defaults applied: the shutdown timeout, the body limits of ordinary and import RPCs, the listener's timeouts
   * and stream cap, the rate limits, the trusted proxies, anonymous reflection and the CORS origins.
   */
  readonly config: Config;
  /** Counts RPCs and plain HTTP requests (by method and code) into these; serving them is a route's job (`/metrics`). */
  readonly metrics?: Metrics;
  /**
   * Brands' own resolver domains: a request sent to one is served by these routes alone (see {@link ClaimedHosts}), but the
   * control plane's paths (RPCs, `/v1`, `/healthz`, `/readyz`, `/metrics`, `/console`) are the API's whatever the host.
   */
  readonly brandDomains?: Pick<ClaimedHosts, 'hostOf' | 'claims'> & { readonly routes: readonly Route[] };
}

/** First path segments of the control plane's plain HTTP routes. */
const controlPlaneRoots: ReadonlySet<string> = new Set(['v1', 'healthz', 'readyz', 'metrics', 'console']);

/** Services whose gRPC health Check answers besides the server as a whole (the empty name). */
const checkedServices: ReadonlySet<string> = new Set(['', 'mint.v1.MintService', 'mint.v1.CatalogService', 'grpc.health.v1.Health']);

/** True for an RPC that carries a file and gets the import body limit (its `(mint.v1.import_body)` option); every other RPC gets the ordinary one. */
const carriesFile = (method: DescMethod): boolean => hasOption(method, importBody) && getOption(method, importBody);

/**
 * The interceptors of every RPC, outermost first: logging (one line per call), metrics, error
 * mapping (domain errors to codes), the undecodable-body refusal, authentication (bearer JWT or
 * API key), validation (buf.validate rules) and authorization (role and scopes on the request's
 * brand). Tests run handlers behind them through `createRouterTransport`, without a network.
 */
export function rpcInterceptors(options: {
  readonly logger: Logger;
  readonly authenticator: Authenticator;
  readonly metrics?: Metrics | undefined;
  readonly access?: AccessOptions;
  readonly limits?: RpcRateLimit;
}): Interceptor[] {
  const access = options.access ?? {};
  return [
    loggingInterceptor(options.logger, callLog),
    ...(options.metrics === undefined ? [] : [metricsInterceptor(options.metrics)]),
    errorInterceptor,
    ...(options.limits === undefined ? [] : [options.limits.interceptor]),
    rejectUndecodableBody,
    authenticationInterceptor(options.authenticator, access),
    validationInterceptor(createValidator()),
    authorizationInterceptor(options.authenticator, access),
  ];
}

/**
 * Creates the API server: the gRPC health service, the application's services and reflection
 * behind {@link rpcInterceptors} with the rate limits, the probes and `httpRoutes` in one route
 * table, each answered on the control plane's hosts, and the resolver's routes on brands' domains.
 */
export function createApiServer(options: ApiServerOptions): HttpServer {
  const { logger, readiness, config } = options;
  const shutdown = new AbortController();
  const scope = requestScope(logger);
  const probe = () => checkReadiness(readiness, shutdown.signal.aborted, logger);

  const access: AccessOptions = { anonymousReflection: config.reflectionAllowAnonymous };
  const addressOf = clientAddressOf(config.trustedProxies);
  const limits = createRateLimits({
    perCredential: config.rateLimitPerCredential,
    resolverPerAddress: config.rateLimitResolverPerAddress,
    downloadsPerAddress: config.rateLimitDownloadsPerAddress,
    authFailuresPerAddress: config.rateLimitAuthFailuresPerAddress,
  });
  const rpcLimit = rpcRateLimit(limits, {
    isPublic: (method) => permissionFor(method, access) === 'public',
    addressOf: (values) => values.get(clientAddressKey),
    verified: hasVerifiedCredentials,
  });
  const authenticate = authenticateHeaders(options.authenticator, access);
  const connect = connectAdapter({
    routes: (router) => {
      router.service(Health, createHealthService(probe, checkedServices));
      options.routes(router);
      registerReflection(router);
    },
    interceptors: rpcInterceptors({ logger, authenticator: options.authenticator, access, metrics: options.metrics, limits: rpcLimit }),
    // Credentials are checked from the headers before any body byte is read; bodies are bounded per operation.
    body: {
      beforeBody: async (method, header, contextValues) => {
        await rpcLimit.check(method, header, contextValues);
        await authenticate(method, header, contextValues);
      },
      maxBodyBytes: (method) => (carriesFile(method) ? config.importMaxBodyBytes : config.rpcMaxBodyBytes),
    },
    // JSON speaks the spec's field names (brand_id, mint_job_id, is_duplicate) and always carries
    // every field, so ok=false, is_duplicate=false and has_more=false are never left out.
    jsonOptions: { useProtoFieldName: true, alwaysEmitImplicit: true, ignoreUnknownFields: false },
    shutdownSignal: shutdown.signal,
    notFoundMessage: (path) => notFoundMessage(path, options.httpRoutes ?? [], connect.services),
    // The spec's own enum values (`serial`, `active_at_mint`) are accepted in JSON, as on /v1.
    enumSpellings: specSpellings,
    contextValues: (req) => {
      const id = scope.idOf(req);
      const values = createContextValues();
      if (id !== undefined) values.set(requestIdKey, id).set(loggerKey, () => scope.loggerOf(req));
      return values.set(clientAddressKey, addressOf(req));
    },
  });

  /** The one route table: health and readiness, then the mounted routes; unmatched paths go to Connect. */
  const router = createRouter([...probeRoutes(probe), ...(options.httpRoutes ?? [])], {
    onError: ({ req, path }, error, err) => {
      if (error.status === 401) limits.authFailed(addressOf(req));
      if (error.status >= 500) scope.loggerOf(req).error({ err, method: req.method, path }, 'http route failed');
    },
    // A control-plane route answers below 400 only to credentials that authenticated.
    guard: routeRateGuard(limits, addressOf, ({ path }, route) =>
      route.path.startsWith('/r/') ? 'resolver' : route.path.startsWith('/downloads/') ? 'download' : isPublicPath(path) ? 'public' : 'credential',
    ),
  });
  const brandDomains = options.brandDomains;
  return createHttpServer({
    scope,
    observer: options.metrics === undefined ? undefined : httpObserver(options.metrics),
    router,
    rest: connect,
    cors: { check: createCors(config.corsAllowedOrigins ?? []), applies: (path) => path.startsWith('/v1/') || connect.serves(path) },
    claimedHosts: brandDomains && {
      ...brandDomains,
      ownPath: (path) => connect.serves(path) || controlPlaneRoots.has(path.split('/', 2)[1] ?? ''),
      // Every route of a brand domain is the resolver's.
      router: createRouter(brandDomains.routes, {
        onError: ({ req, path }, error, err) => {
          if (error.status >= 500) scope.loggerOf(req).error({ err, method: req.method, path }, 'brand domain route failed');
        },
        guard: ({ req }) => limits.resolver(addressOf(req)),
      }),
      notFoundMessage: 'No product identity is registered at this address.',
    },
    listener: {
      headersTimeoutMs: config.httpHeadersTimeoutMs,
      requestTimeoutMs: config.httpRequestTimeoutMs,
      idleTimeoutMs: config.httpIdleTimeoutMs,
      bodyTimeoutMs: config.httpBodyTimeoutMs,
      maxConcurrentStreams: config.http2MaxConcurrentStreams,
    },
    shutdownTimeoutMs: config.shutdownTimeoutMs,
    onClose: () => shutdown.abort(new ConnectError('server is shutting down', Code.Unavailable)),
  });
}

/**
 * The message of the 404 for a path nothing serves: what this server does serve, read from its
 * route table (the console, /v1, the resolver, /metrics when mounted) and its RPC services.
 */
function notFoundMessage(path: string, routes: readonly Route[], services: readonly string[]): string {
  const mounted = (prefix: string) => routes.some((route) => route.path.startsWith(prefix));
  const served = [
    ...(mounted('/console') ? ['the console at /console/'] : []),
    ...(mounted('/v1/') ? ['the HTTP API under /v1/ (described at /v1/openapi.json)'] : []),
    ...(mounted('/r/') ? ['the resolver under /r/{brand}/ (GS1 Digital Links)'] : []),
    ...(mounted('/.well-known/') ? ["the resolver's description file at /.well-known/gs1resolver"] : []),
    ...(services.length === 0 ? [] : [`RPCs (Connect, gRPC, gRPC-Web) at /{service}/{method} of ${services.join(', ')}`]),
    ...(mounted('/metrics') ? ['/metrics'] : []),
    '/healthz and /readyz',
  ];
  return `nothing is served at ${path}; this server serves ${served.join('; ')}`;
}
