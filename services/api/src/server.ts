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
  createDualListener,
  createHealthService,
  createRateLimits,
  createRouter,
  defaultRpcMaxBodyBytes,
  errorInterceptor,
  httpObserver,
  loggingInterceptor,
  metricsInterceptor,
  plainErrorBody,
  probeRoutes,
  readMaxBytes,
  rejectUndecodableBody,
  requestScope,
  routeRateGuard,
  rpcRateLimit,
  sendJson,
  toHttpError,
  validationInterceptor,
  type DualListenerOptions,
  type HttpRequest,
  type HttpResponse,
  type RateLimitSettings,
  type ReadinessProbe,
  type RequestListener,
  type Route,
  type RpcRateLimit,
} from '@mint/http';
import { defaults, type Logger, type Metrics } from '@mint/runtime';
import { authenticateHeaders, authenticationInterceptor, authorizationInterceptor, hasVerifiedCredentials, type Authenticator } from './auth/interceptors.ts';
import { permissionFor, type AccessOptions } from './auth/permissions.ts';
import { isPublicPath } from './auth/public-paths.ts';
import { callLog, clientAddressKey, loggerKey, requestIdKey } from './context.ts';
import { specSpellings } from './handlers/wire.ts';
import { import_body as importBody } from '@mint/contract';

export { requestIdHeader, type RequestListener } from '@mint/http';

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
  /** How long `close()` waits for in-flight calls before cutting connections; default 10 s. */
  readonly shutdownTimeoutMs?: number;
  /** Counts RPCs and plain HTTP requests (by method and code) into these; serving them is a route's job (`/metrics`). */
  readonly metrics?: Metrics;
  /** Largest body of an ordinary RPC, inflated; default 64 KiB (`RPC_MAX_BODY_BYTES`). */
  readonly rpcMaxBodyBytes?: number;
  /** Largest body of an import RPC (StartProductImport, RecordScanEvents), inflated; default 40 MiB (`IMPORT_MAX_BODY_BYTES`). */
  readonly importMaxBodyBytes?: number;
  /** Connection, header, idle and body timeouts and stream caps of the listener. */
  readonly listener?: Partial<DualListenerOptions>;
  /** Brands' own resolver domains: requests sent to one are served by these routes alone (see {@link BrandDomainRouting}). */
  readonly brandDomains?: BrandDomainRouting;
  /** Per-credential and per-address rate limits (the `RATE_LIMIT_*` settings); nothing is limited when absent. */
  readonly rateLimits?: RateLimitSettings;
  /** Proxies whose forwarding headers name the client (`TRUSTED_PROXIES`: addresses or CIDR ranges); none when absent (the client is the TCP peer). */
  readonly trustedProxies?: readonly string[];
  /** Serve gRPC server reflection without credentials (`REFLECTION_ALLOW_ANONYMOUS`); by default a valid token or API key is needed. */
  readonly reflectionAllowAnonymous?: boolean;
  /** Origins whose browser scripts may call Connect, gRPC-Web and /v1 (`CORS_ALLOWED_ORIGINS`; `*` for any, without credentials); none when absent. */
  readonly corsAllowedOrigins?: readonly string[];
}

/**
 * The dispatch in front of the route table: the control plane's paths (RPCs, `/v1`, `/healthz`,
 * `/readyz`, `/metrics`, `/console`) are the API's whatever the host, so a claimed host never hides
 * them; any other request whose host (`Host`, or HTTP/2 `:authority`) is a brand's resolver domain
 * meets `routes` and nothing else (whatever they leave unclaimed answers 404); every other host
 * keeps the API's own routes.
 */
export interface BrandDomainRouting {
  /** The request's normalised host (lower-case, without port); '' when absent. */
  readonly hostOf: (req: HttpRequest) => string;
  /** True when `host` is a brand's resolver domain (a promise only until the domain table first loaded). */
  readonly isBrandDomain: (host: string) => boolean | Promise<boolean>;
  readonly routes: readonly Route[];
}

/** First path segments of the control plane's plain HTTP routes. */
const controlPlaneRoots: ReadonlySet<string> = new Set(['v1', 'healthz', 'readyz', 'metrics', 'console']);

/** Services whose gRPC health Check answers besides the server as a whole (the empty name). */
const checkedServices: ReadonlySet<string> = new Set(['', 'mint.v1.MintService', 'mint.v1.CatalogService', 'grpc.health.v1.Health']);

/** True for an RPC that carries a file and gets the import body limit (its `(mint.v1.import_body)` option); every other RPC gets the ordinary one. */
const carriesFile = (method: DescMethod): boolean => hasOption(method, importBody) && getOption(method, importBody);

/** A created (not yet listening) API server. */
export interface ApiServer {
  /** Binds the port (0 picks a free one) and resolves with the port bound. */
  listen(port: number, host?: string): Promise<number>;
  /**
   * Graceful stop: refuses new connections, reports not ready, ends streaming calls with
   * Unavailable, lets in-flight unary calls finish, and resolves when all connections closed
   * (or were cut after the shutdown timeout). Idempotent.
   */
  close(): Promise<void>;
  /** The request listener for both HTTP versions, for mounting in another server. */
  readonly requestListener: RequestListener;
}

/**
 * The interceptors of every RPC, outermost first: logging (one line per call), metrics, error
 * mapping (domain errors to codes), the undecodable-body refusal, authentication (bearer JWT or
 * API key), validation (buf.validate rules) and authorization (role and scopes on the request's
 * brand). Tests run handlers behind them through `createRouterTransport`, without a network.
 */
export function rpcInterceptors(options: {
  readonly logger: Logger;
  readonly authenticator: Authenticator;
  readonly metrics?: Metrics;
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
 * Creates the API server. Every RPC goes through, outermost first: logging (one line per call),
 * error mapping (domain errors to codes), the undecodable-body refusal, authentication (bearer JWT), validation
 * (buf.validate rules) and authorization (role on the request's brand).
 */
export function createApiServer(options: ApiServerOptions): ApiServer {
  const { logger, readiness } = options;
  const shutdownTimeoutMs = options.shutdownTimeoutMs ?? 10_000;
  const shutdown = new AbortController();
  const scope = requestScope(logger);
  const loggerOf = scope.loggerOf;
  const probe = () => checkReadiness(readiness, shutdown.signal.aborted, logger);
  const plainHttp = options.metrics === undefined ? undefined : httpObserver(options.metrics);

  const access: AccessOptions = { anonymousReflection: options.reflectionAllowAnonymous ?? false };
  const addressOf = clientAddressOf(options.trustedProxies ?? []);
  const limits = options.rateLimits === undefined ? undefined : createRateLimits(options.rateLimits);
  const rpcLimit =
    limits === undefined
      ? undefined
      : rpcRateLimit(limits, {
          isPublic: (method) => permissionFor(method, access) === 'public',
          addressOf: (values) => values.get(clientAddressKey),
          verified: hasVerifiedCredentials,
        });
  const interceptors = rpcInterceptors({
    logger,
    authenticator: options.authenticator,
    access,
    ...(options.metrics === undefined ? {} : { metrics: options.metrics }),
    ...(rpcLimit === undefined ? {} : { limits: rpcLimit }),
  });
  const authenticate = authenticateHeaders(options.authenticator, access);
  const connect = connectAdapter({
    routes: (router) => {
      router.service(Health, createHealthService(probe, checkedServices));
      options.routes(router);
      registerReflection(router);
    },
    interceptors,
    // Credentials are checked from the headers before any body byte is read; bodies are bounded per operation.
    body: {
      beforeBody: async (method, header, contextValues) => {
        await rpcLimit?.check(method, header, contextValues);
        await authenticate(method, header, contextValues);
      },
      maxBodyBytes: (method) => (carriesFile(method) ? (options.importMaxBodyBytes ?? readMaxBytes) : (options.rpcMaxBodyBytes ?? defaultRpcMaxBodyBytes)),
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
      if (id !== undefined) values.set(requestIdKey, id).set(loggerKey, () => loggerOf(req));
      return values.set(clientAddressKey, addressOf(req));
    },
  });

  /** The one route table: health and readiness, then the mounted routes; unmatched paths go to Connect. */
  const router = createRouter([...probeRoutes(probe), ...(options.httpRoutes ?? [])], {
    onError: ({ req, path }, error, err) => {
      if (error.status === 401) limits?.authFailed(addressOf(req));
      if (error.status >= 500) loggerOf(req).error({ err, method: req.method, path }, 'http route failed');
    },
    ...(limits === undefined
      ? {}
      : {
          // A control-plane route answers below 400 only to credentials that authenticated.
          guard: routeRateGuard(limits, addressOf, ({ path }, route) =>
            route.path.startsWith('/r/') ? 'resolver' : route.path.startsWith('/downloads/') ? 'download' : isPublicPath(path) ? 'public' : 'credential',
          ),
        }),
  });

  const brandDomains = options.brandDomains;
  const domainRouter =
    brandDomains === undefined
      ? undefined
      : createRouter(brandDomains.routes, {
          onError: ({ req, path }, error, err) => {
            if (error.status >= 500) loggerOf(req).error({ err, method: req.method, path }, 'brand domain route failed');
          },
          // Every route of a brand domain is the resolver's.
          ...(limits === undefined ? {} : { guard: ({ req }) => limits.resolver(addressOf(req)) }),
        });
  /** A request to a brand domain: its routes, else 404 (never the API's own routes or Connect). */
  function serveBrandDomain(req: HttpRequest, res: HttpResponse): void | Promise<unknown> {
    const handled = domainRouter!.handle(req, res);
    if (handled === false) {
      sendJson(req, res, 404, { ok: false, error: 'not_found', message: 'No product identity is registered at this address.' });
      return;
    }
    return handled === true ? undefined : handled;
  }

  function handle(req: HttpRequest, res: HttpResponse): void | Promise<unknown> {
    scope.begin(req, res);
    plainHttp?.observe(req, res, scope.log);
    if (brandDomains !== undefined && !isControlPlanePath((req.url ?? '').split('?', 1)[0]!)) {
      const host = brandDomains.hostOf(req);
      const claimed = host === '' ? false : brandDomains.isBrandDomain(host);
      if (claimed === true) return serveBrandDomain(req, res);
      if (claimed !== false) return claimed.then((yes) => (yes ? serveBrandDomain(req, res) : serveOwn(req, res)));
    }
    return serveOwn(req, res);
  }

  const cors = createCors(options.corsAllowedOrigins ?? []);
  /** A path the control plane answers on whatever the host: an RPC, `/v1`, the probes, `/metrics`, `/console`. */
  const isControlPlanePath = (path: string): boolean => connect.serves(path) || controlPlaneRoots.has(path.split('/', 2)[1] ?? '');

  /** A request to the API's own host: CORS of the API's own paths, the route table, then Connect. */
  function serveOwn(req: HttpRequest, res: HttpResponse): void | Promise<unknown> {
    const path = (req.url ?? '').split('?', 1)[0]!;
    if ((path.startsWith('/v1/') || connect.serves(path)) && cors(req, res)) return;
    const handled = router.handle(req, res);
    if (handled === false) {
      // RPCs are counted by the RPC interceptors; any other path is a plain 404, counted as unmatched.
      if (connect.serves(path)) plainHttp?.skip(res);
      connect(req, res);
      return;
    }
    return handled === true ? undefined : handled;
  }

  /** A request that failed outside the router (which answers its routes' errors itself): the Connect adapter threw, or the brand domain table could not be read. */
  const failed = (req: HttpRequest, res: HttpResponse, err: unknown): void => {
    loggerOf(req).error({ err, method: req.method, path: (req.url ?? '').split('?', 1)[0] }, 'request failed');
    if (!res.headersSent) sendJson(req, res, 500, plainErrorBody(toHttpError(err)));
    else res.destroy();
  };
  const requestListener: RequestListener = (req, res) => {
    try {
      handle(req, res)?.catch((err: unknown) => failed(req, res, err));
    } catch (err) {
      failed(req, res, err);
    }
  };

  const listener = createDualListener(requestListener, {
    headersTimeoutMs: defaults.httpHeadersTimeoutMs,
    requestTimeoutMs: defaults.httpRequestTimeoutMs,
    ...options.listener,
  });
  let closed: Promise<void> | undefined;
  return {
    requestListener,
    listen: (port, host) => listener.listen(port, host),
    close() {
      return (closed ??= (async () => {
        shutdown.abort(new ConnectError('server is shutting down', Code.Unavailable));
        await listener.close(shutdownTimeoutMs);
      })());
    },
  };
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
