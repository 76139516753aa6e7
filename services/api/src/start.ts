// Starts the API on a use-case context: what the production entry and the one-process dev mode
// both call.

import { createMetrics, type Config, type Logger, type Metrics } from '@mint/runtime';
import * as useCases from '@mint/usecases';
import { contextAuthenticator, type Authenticator } from './auth/interceptors.ts';
import type { ReadinessProbe } from './health.ts';
import type { Route } from '@mint/http';
import { metricsRoute } from './metrics/route.ts';
import { metricSources } from './metrics/sources.ts';
import { createConnectRoutes } from './routes.ts';
import { downloadRoute } from './downloads/routes.ts';
import { brandDomainRoutes, requestHost, resolverDescriptionRoute, resolverRoute } from './resolver/routes.ts';
import { v1Routes } from './v1/routes.ts';
import { createApiServer } from './server.ts';

/** Options of {@link startApi}. */
export interface StartApiOptions {
  /** The use-case context (database, clock, token settings). */
  readonly ctx: useCases.UseCaseContext;
  /** Listening address and shutdown timeout come from here (`PORT`, `HOST`, `SHUTDOWN_TIMEOUT_MS`). */
  readonly config: Pick<Config, 'port' | 'host' | 'shutdownTimeoutMs'>;
  readonly logger: Logger;
  /** Probes the dependencies for /readyz and the gRPC health Check. */
  readonly readiness: ReadinessProbe;
  /** More plain HTTP routes, added to the route table. */
  readonly httpRoutes?: readonly Route[];
  /** Serve SetMintBatchStatus (the spec keeps it unexposed; off by default). */
  readonly setMintBatchStatusEnabled?: boolean;
  /** Signing keys and the private pack store: serves /downloads and CreatePayloadPackDownloadUrl (Unimplemented without). */
  readonly downloads?: useCases.DownloadSettings;
  /** Tuning of the resolver's scan event writer (tests inject a writer). */
  readonly scanRecorder?: useCases.ScanRecorderOptions;
  /** Served at /metrics and counted into; default: a fresh registry whose gauges read `ctx`'s database (no consumer gauge). */
  readonly metrics?: Metrics;
}

/** A running API. */
export interface RunningApi {
  /** The port bound (the configured one, or the one picked for port 0). */
  readonly port: number;
  /** Graceful stop: see `ApiServer.close`. Does not close the database. */
  close(): Promise<void>;
}

/** Sessions, API keys and roles checked by the one enforcement point (the use cases' access rule) on `ctx`. */
export function useCaseAuthenticator(ctx: useCases.UseCaseContext): Authenticator {
  return contextAuthenticator(ctx);
}

/** Creates the API server on `ctx` and listens on `config.port` / `config.host`. */
export async function startApi(options: StartApiOptions): Promise<RunningApi> {
  const { ctx, config, logger } = options;
  const metrics = options.metrics ?? createMetrics(metricSources(ctx));
  // Scans of the public resolver, written in batches off the request path.
  const scans = useCases.createScanRecorder(ctx, {
    onError: (err, lost) => logger.warn({ err, lost }, 'scan events not recorded'),
    onOutcome: (result, count) => metrics.scanEvents.inc({ result }, count),
    ...options.scanRecorder,
  });
  const resolver = useCases.createResolver(ctx, { recorder: scans });
  // The plain HTTP route table; the server adds /healthz and /readyz, other paths go to Connect.
  const httpRoutes: Route[] = [
    metricsRoute(metrics),
    resolverRoute(resolver, { publicBaseUrl: ctx.publicBaseUrl }),
    resolverDescriptionRoute({ publicBaseUrl: ctx.publicBaseUrl }),
    ...(options.downloads === undefined ? [] : [downloadRoute(ctx, options.downloads, logger)]),
    ...v1Routes({ ctx, logger }),
    ...(options.httpRoutes ?? []),
  ];
  const server = createApiServer({
    routes: createConnectRoutes({ ctx, useCases, setMintBatchStatusEnabled: options.setMintBatchStatusEnabled ?? false, ...(options.downloads === undefined ? {} : { downloads: options.downloads }) }),
    httpRoutes,
    authenticator: useCaseAuthenticator(ctx),
    readiness: options.readiness,
    logger,
    shutdownTimeoutMs: config.shutdownTimeoutMs,
    metrics,
    brandDomains: {
      hostOf: requestHost,
      isBrandDomain: (host) => {
        const brand = resolver.brandOfDomain(host);
        return brand instanceof Promise ? brand.then((b) => b !== null) : brand !== null;
      },
      routes: brandDomainRoutes(resolver),
    },
  });
  const port = await server.listen(config.port, config.host);
  logger.info({ port, host: config.host }, 'api listening');
  return { port, close: async () => { await server.close(); await scans.close(); await resolver.close(); } };
}
