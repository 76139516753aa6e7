// Starts the API on a use-case context: what the production entry and the one-process dev mode
// both call.

import { createMetrics, defaults, setOnly, type Config, type Logger, type Metrics } from '@mint/runtime';
import * as useCases from '@mint/usecases';
import { contextAuthenticator, type Authenticator } from './auth/interceptors.ts';
import type { ProgressFeed } from '@mint/bus';
import { metricsRoute, scanClientOf, type ReadinessProbe, type Route } from '@mint/http';
import { createCachePurger } from './resolver/purge.ts';
import { fileURLToPath } from 'node:url';
import { metricSources } from './metrics/sources.ts';
import { createConnectRoutes, createServices, type ConnectRoutesDeps } from './routes.ts';
import { downloadRoute } from './downloads/routes.ts';
import { brandDomainRoutes, passportIssuerRoutes, requestHost, resolverDescriptionRoute, resolverRoute } from './resolver/routes.ts';
import { v1Routes } from './v1/routes.ts';
import { containerAnswer, containerResolverRoutes } from './resolver/containers.ts';
import { epcisRoutes } from './epcis/routes.ts';
import { consoleRoutes } from './console/routes.ts';
import { createApiServer, type ApiServer } from './server.ts';

/** Options of {@link startApi}. */
export interface StartApiOptions {
  /** The use-case context (database, clock, token settings). */
  readonly ctx: useCases.UseCaseContext;
  /**
   * Listening address and shutdown timeout come from here (`PORT`, `HOST`, `SHUTDOWN_TIMEOUT_MS`),
   * and where and how /metrics is served (`METRICS_PORT`, `METRICS_TOKEN`).
   */
  readonly config: Pick<Config, 'port' | 'host' | 'shutdownTimeoutMs'> & Partial<Config>;
  readonly logger: Logger;
  /** Probes the dependencies for /readyz and the gRPC health Check. */
  readonly readiness: ReadinessProbe;
  /** More plain HTTP routes, added to the route table. */
  readonly httpRoutes?: readonly Route[];
  /** Serve SetMintBatchStatus (the spec keeps it unexposed; off by default). */
  readonly setMintBatchStatusEnabled?: boolean;
  /** Webhook endpoint settings (`WEBHOOK_ALLOW_LOOPBACK`); https-only URLs when absent. */
  readonly webhooks?: useCases.WebhookSettings;
  /** Signing keys and the private pack store: serves /downloads and CreatePayloadPackDownloadUrl (Unimplemented without). */
  readonly downloads?: useCases.DownloadSettings;
  /** Tuning of the resolver's scan event writer (tests inject a writer). */
  readonly scanRecorder?: useCases.ScanRecorderOptions;
  /**
   * Where the resolver's scans go while the database cannot take them (the JetStream scan spill),
   * and whence this process writes them once it is back; without it such scans are lost.
   */
  readonly scanSpill?: useCases.ScanSpillPort;
  /** The console's build folder served at /console/ (when `config.consoleEnabled`); default services/console/dist. */
  readonly consoleDir?: string;
  /** Signs passport credentials; default one of the process (tests inject one that counts its signatures). */
  readonly passportSigner?: useCases.PassportSigner;
  /**
   * Where executors publish job progress (the job bus): WatchMintJob streams then follow it with one
   * subscription for the process. Absent, every stream polls the database (`WATCH_PROGRESS=polled`).
   */
  readonly progress?: ProgressFeed;
  /** Served at /metrics and counted into; default: a fresh registry whose gauges read `ctx`'s database (no consumer gauge). */
  readonly metrics?: Metrics;
}

/** A running API. */
export interface RunningApi {
  /** The port bound (the configured one, or the one picked for port 0). */
  readonly port: number;
  /** The port /metrics is served on when `METRICS_PORT` is set; undefined otherwise. */
  readonly metricsPort: number | undefined;
  /** Graceful stop: see `ApiServer.close`. Does not close the database. */
  close(): Promise<void>;
}

/** Where `npm ci` (the root prepare script) leaves the console's Vite build. */
const defaultConsoleDir = fileURLToPath(new URL('../../console/dist/', import.meta.url));

/** Sessions, API keys and roles checked by the one enforcement point (the use cases' access rule) on `ctx`. */
export function useCaseAuthenticator(ctx: useCases.UseCaseContext): Authenticator {
  return contextAuthenticator(ctx);
}

/** Creates the API server on `ctx` and listens on `config.port` / `config.host`. */
export async function startApi(options: StartApiOptions): Promise<RunningApi> {
  const { ctx, config, logger } = options;
  const metrics = options.metrics ?? createMetrics(metricSources(ctx));
  // Every link or brand domain change purges the caching proxy's answers of its GTIN or brand (CACHE_PURGE_URL).
  const purger =
    config.cachePurgeUrl === undefined
      ? undefined
      : createCachePurger(
          config.cachePurgeUrl.split(',').map((u) => u.trim()),
          logger,
        );
  const { resolver, scanAlerts, passportReads, passportSigner, closeScans, stopReplay } = useCases.createResolverStack(ctx, {
    flood: {
      windowMs: config.scanFloodWindowMs ?? defaults.scanFloodWindowMs,
      unknownPerWindow: config.scanFloodNeverIssuedPerWindow ?? defaults.scanFloodNeverIssuedPerWindow,
      maxTracked: config.scanFloodMaxTracked ?? defaults.scanFloodMaxTracked,
    },
    lastKnownUnits: config.resolverLastKnownUnits ?? defaults.resolverLastKnownUnits,
    recorder: options.scanRecorder,
    spill: options.scanSpill,
    signer: options.passportSigner,
    purge: purger === undefined ? undefined : (key) => purger.purge(key),
    onScans: (result, count) => metrics.scanEvents.inc({ result }, count),
    warn: (fields, message) => logger.warn(fields, message),
  });
  // The client behind the trusted proxies, as the rate limits see it (the flood gate's key), its
  // agent and a trusted proxy's country header: classified and hashed by the recorder, never written.
  const clientOf = scanClientOf(config.trustedProxies ?? defaults.trustedProxies, config.scanCountryHeader);
  // One subscription to pushed job progress for the process, fanned out in memory.
  const progress = options.progress === undefined ? undefined : useCases.createProgressHub(options.progress);
  // The services' implementations, served over Connect and run by the /v1 named operations.
  const connectDeps: ConnectRoutesDeps = {
    ctx,
    useCases,
    scanAlerts,
    passportReads,
    setMintBatchStatusEnabled: options.setMintBatchStatusEnabled ?? false,
    webhooks: options.webhooks ?? { allowLoopback: false },
    ...setOnly({ downloads: options.downloads }),
    reservedHosts: {
      controlPlaneHosts: config.controlPlaneHosts ?? defaults.controlPlaneHosts(ctx.publicBaseUrl),
      delegatedZones: config.brandDomainDelegatedZones ?? defaults.brandDomainDelegatedZones,
    },
    watch: setOnly({
      maxDurationMs: config.watchMaxDurationMs,
      maxStreamsPerCaller: config.watchMaxStreamsPerCaller,
      progress,
      safetyIntervalMs: config.watchSafetyIntervalMs,
    }),
  };
  const services = createServices(connectDeps);
  // The plain HTTP route table; the server adds /healthz and /readyz, other paths go to Connect.
  const scrape = metricsRoute(metrics, { token: config.metricsToken });
  const httpRoutes: Route[] = [
    ...(config.metricsPort === undefined ? [scrape] : []),
    resolverRoute(resolver, { publicBaseUrl: ctx.publicBaseUrl, clientOf, passports: passportReads, signer: passportSigner }),
    ...containerResolverRoutes(ctx, { publicBaseUrl: ctx.publicBaseUrl }),
    ...passportIssuerRoutes(passportSigner, () => ctx.publicBaseUrl.replace(/\/+$/, '')),
    resolverDescriptionRoute({ publicBaseUrl: ctx.publicBaseUrl, contact: config.resolverContact }),
    ...(options.downloads === undefined ? [] : [downloadRoute(ctx, options.downloads, logger)]),
    ...v1Routes({ ctx, logger, services }),
    ...epcisRoutes(ctx),
    ...(config.consoleEnabled === false
      ? []
      : consoleRoutes({
          dir: options.consoleDir ?? defaultConsoleDir,
          oidc:
            config.consoleOidcIssuer !== undefined && config.consoleOidcClientId !== undefined
              ? { issuer: config.consoleOidcIssuer, clientId: config.consoleOidcClientId }
              : undefined,
        })),
    ...(options.httpRoutes ?? []),
  ];
  const server = createApiServer({
    routes: createConnectRoutes(connectDeps, services),
    httpRoutes,
    authenticator: useCaseAuthenticator(ctx),
    readiness: options.readiness,
    logger,
    shutdownTimeoutMs: config.shutdownTimeoutMs,
    metrics,
    ...setOnly({
      rpcMaxBodyBytes: config.rpcMaxBodyBytes,
      importMaxBodyBytes: config.importMaxBodyBytes,
      corsAllowedOrigins: config.corsAllowedOrigins,
      reflectionAllowAnonymous: config.reflectionAllowAnonymous,
    }),
    listener: setOnly({
      headersTimeoutMs: config.httpHeadersTimeoutMs,
      requestTimeoutMs: config.httpRequestTimeoutMs,
      idleTimeoutMs: config.httpIdleTimeoutMs,
      bodyTimeoutMs: config.httpBodyTimeoutMs,
      maxConcurrentStreams: config.http2MaxConcurrentStreams,
    }),
    rateLimits: {
      perCredential: config.rateLimitPerCredential ?? defaults.rateLimitPerCredential,
      resolverPerAddress: config.rateLimitResolverPerAddress ?? defaults.rateLimitResolverPerAddress,
      downloadsPerAddress: config.rateLimitDownloadsPerAddress ?? defaults.rateLimitDownloadsPerAddress,
      authFailuresPerAddress: config.rateLimitAuthFailuresPerAddress ?? defaults.rateLimitAuthFailuresPerAddress,
    },
    trustedProxies: config.trustedProxies ?? defaults.trustedProxies,
    brandDomains: {
      hostOf: requestHost,
      isBrandDomain: (host) => {
        const brand = resolver.brandOfDomain(host);
        return brand instanceof Promise ? brand.then((b) => b !== null) : brand !== null;
      },
      routes: brandDomainRoutes(resolver, {
        contact: config.resolverContact,
        clientOf,
        passports: passportReads,
        signer: passportSigner,
        containers: containerAnswer(ctx),
      }),
    },
  });
  const port = await server.listen(config.port, config.host);
  logger.info({ port, host: config.host }, 'api listening');
  let metricsServer: ApiServer | undefined;
  let metricsPort: number | undefined;
  if (config.metricsPort !== undefined) {
    // /metrics alone (and the probes) on a port of its own, which the network can keep private.
    metricsServer = createApiServer({
      routes: () => undefined,
      httpRoutes: [scrape],
      authenticator: useCaseAuthenticator(ctx),
      readiness: options.readiness,
      logger,
      shutdownTimeoutMs: config.shutdownTimeoutMs,
    });
    metricsPort = await metricsServer.listen(config.metricsPort, config.host);
    logger.info({ port: metricsPort, host: config.host }, 'metrics listening');
  }
  return {
    port,
    metricsPort,
    close: async () => {
      // Each step is bounded: one that hangs (a connection that never ends) is logged by name and
      // shutdown goes on, so the process still exits.
      const limitMs = (config.shutdownTimeoutMs ?? defaults.shutdownTimeoutMs) + 5_000;
      await boundedStep('listeners', Promise.all([server.close(), metricsServer?.close()]), limitMs, logger);
      progress?.close();
      await boundedStep('scan recorder', closeScans(), limitMs, logger);
      await boundedStep('scan replay', stopReplay(), limitMs, logger);
      await boundedStep('resolver', resolver.close(), limitMs, logger);
      await boundedStep('cache purges', purger?.close() ?? Promise.resolve(), limitMs, logger);
    },
  };
}

/** Waits for one step of the shutdown at most `limitMs`; past that, logs it and resolves. */
async function boundedStep(step: string, work: Promise<unknown>, limitMs: number, logger: Logger): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<'late'>((resolve) => {
    timer = setTimeout(() => resolve('late'), limitMs);
    timer.unref();
  });
  const outcome = await Promise.race([work.then(() => 'done' as const), late]).finally(() => clearTimeout(timer));
  if (outcome === 'late') logger.warn({ step, limitMs }, 'shutdown step did not finish in time; going on');
}
