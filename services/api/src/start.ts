// Starts the API on a use-case context: what the production entry and the one-process dev mode
// both call.

import { createMetrics, setOnly, shutdownInSteps, withDefaults, type Config, type Logger, type Metrics } from '@mint/runtime';
import * as useCases from '@mint/usecases';
import { contextAuthenticator } from './auth/interceptors.ts';
import type { ProgressFeed } from '@mint/bus';
import { createCachePurger, metricsRoute, scanClientOf, type HttpServer, type ReadinessProbe, type Route } from '@mint/http';
import { fileURLToPath } from 'node:url';
import { metricSources } from './metrics/sources.ts';
import { createConnectRoutes, createServices, type ConnectRoutesDeps } from './routes.ts';
import { downloadRoute } from './downloads/routes.ts';
import { brandDomainRoutes, passportIssuerRoutes, requestHost, resolverDescriptionRoute, resolverRoute } from './resolver/routes.ts';
import { v1Routes } from './v1/routes.ts';
import { containerAnswer, containerResolverRoutes } from './resolver/containers.ts';
import { epcisRoutes } from './epcis/routes.ts';
import { consoleRoutes } from './console/routes.ts';
import { createApiServer } from './server.ts';

/** Options of {@link startApi}. */
export interface StartApiOptions {
  /** The use-case context (database, clock, token settings). */
  readonly ctx: useCases.UseCaseContext;
  /**
   * Every setting of the API: the listening address (`PORT`, `HOST`) and shutdown timeout, where and how /metrics is served
   * (`METRICS_PORT`, `METRICS_TOKEN`), and so on; what is left out is at its default ({@link withDefaults}), the control
   * plane's hosts derived from `ctx.publicBaseUrl`.
   */
  readonly config: Pick<Config, 'port' | 'host' | 'shutdownTimeoutMs'> & Partial<Config>;
  readonly logger: Logger;
  /** Probes the dependencies for /readyz and the gRPC health Check. */
  readonly readiness: ReadinessProbe;
  /** More plain HTTP routes, added to the route table. */
  readonly httpRoutes?: readonly Route[];
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
  /** Graceful stop: see `HttpServer.close`. Does not close the database. */
  close(): Promise<void>;
}

/** Where `npm ci` (the root prepare script) leaves the console's Vite build. */
const defaultConsoleDir = fileURLToPath(new URL('../../console/dist/', import.meta.url));

/** Creates the API server on `ctx` and listens on `config.port` / `config.host`. */
export async function startApi(options: StartApiOptions): Promise<RunningApi> {
  const { ctx, logger } = options;
  const config = withDefaults({ publicBaseUrl: ctx.publicBaseUrl, ...options.config });
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
      windowMs: config.scanFloodWindowMs,
      unknownPerWindow: config.scanFloodNeverIssuedPerWindow,
      maxTracked: config.scanFloodMaxTracked,
    },
    lastKnownUnits: config.resolverLastKnownUnits,
    recorder: options.scanRecorder,
    spill: options.scanSpill,
    signer: options.passportSigner,
    purge: purger === undefined ? undefined : (key) => purger.purge(key),
    onScans: (result, count) => metrics.scanEvents.inc({ result }, count),
    warn: (fields, message) => logger.warn(fields, message),
  });
  // The client behind the trusted proxies, as the rate limits see it (the flood gate's key), its
  // agent and a trusted proxy's country header: classified and hashed by the recorder, never written.
  const clientOf = scanClientOf(config.trustedProxies, config.scanCountryHeader);
  // One subscription to pushed job progress for the process, fanned out in memory.
  const progress = options.progress === undefined ? undefined : useCases.createProgressHub(options.progress);
  // The services' implementations, served over Connect and run by the /v1 named operations.
  const connectDeps: ConnectRoutesDeps = {
    ctx,
    useCases,
    scanAlerts,
    passportReads,
    setMintBatchStatusEnabled: config.setMintBatchStatusEnabled,
    webhooks: {
      allowLoopback: config.webhookAllowLoopback,
      allowedAddresses: config.webhookAllowedAddresses,
      maxEndpointsPerBrand: config.webhookMaxEndpointsPerBrand,
    },
    ...setOnly({ downloads: options.downloads }),
    reservedHosts: {
      controlPlaneHosts: config.controlPlaneHosts,
      delegatedZones: config.brandDomainDelegatedZones,
    },
    watch: {
      maxDurationMs: config.watchMaxDurationMs,
      maxStreamsPerCaller: config.watchMaxStreamsPerCaller,
      ...setOnly({ progress }),
      safetyIntervalMs: config.watchSafetyIntervalMs,
    },
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
    ...(config.consoleEnabled
      ? consoleRoutes({
          dir: options.consoleDir ?? defaultConsoleDir,
          oidc:
            config.consoleOidcIssuer !== undefined && config.consoleOidcClientId !== undefined
              ? { issuer: config.consoleOidcIssuer, clientId: config.consoleOidcClientId }
              : undefined,
        })
      : []),
    ...(options.httpRoutes ?? []),
  ];
  const server = createApiServer({
    routes: createConnectRoutes(connectDeps, services),
    httpRoutes,
    authenticator: contextAuthenticator(ctx),
    readiness: options.readiness,
    logger,
    config,
    metrics,
    brandDomains: {
      hostOf: requestHost,
      claims: (host) => {
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
  let metricsServer: HttpServer | undefined;
  let metricsPort: number | undefined;
  if (config.metricsPort !== undefined) {
    // /metrics alone (and the probes) on a port of its own, which the network can keep private.
    metricsServer = createApiServer({
      routes: () => undefined,
      httpRoutes: [scrape],
      authenticator: contextAuthenticator(ctx),
      readiness: options.readiness,
      logger,
      config,
    });
    metricsPort = await metricsServer.listen(config.metricsPort, config.host);
    logger.info({ port: metricsPort, host: config.host }, 'metrics listening');
  }
  return {
    port,
    metricsPort,
    // Each step is bounded: one that hangs (a connection that never ends) is logged by name and
    // shutdown goes on, so the process still exits.
    close: () =>
      shutdownInSteps(
        {
          listeners: () => Promise.all([server.close(), metricsServer?.close()]),
          'job progress': () => progress?.close(),
          'scan recorder': closeScans,
          'scan replay': stopReplay,
          resolver: () => resolver.close(),
          'cache purges': () => purger?.close(),
        },
        config.shutdownTimeoutMs + 5_000,
        logger,
      ),
  };
}
