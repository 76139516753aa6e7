// The executor's optional HTTP port (`EXECUTOR_HTTP_PORT`): liveness, readiness and Prometheus
// metrics for the kubelet and the scraper. It serves nothing else.

import http from 'node:http';
import { createRouter, HttpProblem, methodNotAllowedMessage, metricsRoute, probeRoutes, sendJson } from '@mint/http';
import type { Logger, Metrics, Readiness } from '@mint/runtime';

/** Options of {@link startMetricsServer}. */
export interface MetricsServerOptions {
  /** Port to listen on; 0 picks a free one. */
  readonly port: number;
  /** Address to listen on; default all interfaces. */
  readonly host?: string;
  /** Served at `/metrics`. */
  readonly metrics: Pick<Metrics, 'render'>;
  /** Probes the database and the bus for `/readyz`. */
  readonly readiness: () => Promise<Readiness>;
  readonly logger: Logger;
}

/** A listening executor HTTP server. */
export interface MetricsServer {
  /** The port bound. */
  readonly port: number;
  /** From now on `/readyz` answers 503 `shutting down` (the process is draining); `/healthz` stays 200. */
  markStopping(): void;
  /** Stops listening and closes every connection. Idempotent. */
  close(): Promise<void>;
}

/**
 * Serves `GET /healthz` (200 while the process runs), `GET /readyz` (200 when the database and the
 * bus answer, 503 naming the one that does not, or while shutting down) and `GET /metrics`.
 * Any other path is 404. Resolves once listening; rejects when the port cannot be bound.
 */
export async function startMetricsServer(options: MetricsServerOptions): Promise<MetricsServer> {
  const { logger } = options;
  let stopping = false;
  const router = createRouter(
    [
      ...probeRoutes(async () => (stopping ? { ok: false, checks: { executor: 'shutting down' } } : await options.readiness())),
      metricsRoute(options.metrics),
      {
        methods: ['GET', 'HEAD'],
        path: '*',
        handler: ({ path }) => {
          throw new HttpProblem(404, 'not_found', `nothing is served at ${path}; this server serves /healthz, /readyz and /metrics`);
        },
      },
    ],
    {
      onError: ({ path }, error, err) => {
        if (error.status >= 500) logger.error({ err, path }, 'executor http request failed');
      },
    },
  );
  const server = http.createServer((req, res) => {
    const handled = router.handle(req, res);
    if (handled === false)
      sendJson(
        req,
        res,
        405,
        { ok: false, error: 'method_not_allowed', message: methodNotAllowedMessage(req.method, (req.url ?? '/').split('?', 1)[0]!, ['GET', 'HEAD']) },
        { allow: 'GET, HEAD' },
      );
  });
  server.keepAliveTimeout = 5_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address();
  const port = typeof address === 'object' && address !== null ? address.port : options.port;
  logger.info({ port }, 'executor http server listening (/healthz, /readyz, /metrics)');
  let closed: Promise<void> | undefined;
  return {
    port,
    markStopping: () => void (stopping = true),
    close: () =>
      (closed ??= new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      })),
  };
}
