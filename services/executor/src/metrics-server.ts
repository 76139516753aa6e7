// The executor's optional HTTP port (`EXECUTOR_HTTP_PORT`): liveness, readiness and Prometheus
// metrics for the kubelet and the scraper. It serves nothing else.

import http from 'node:http';
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
  const server = http.createServer((req, res) => {
    const path = (req.url ?? '/').split('?', 1)[0];
    const send = (status: number, contentType: string, body: string) => {
      res.statusCode = status;
      res.setHeader('content-type', contentType);
      res.setHeader('cache-control', 'no-store');
      res.setHeader('content-length', Buffer.byteLength(body));
      res.end(req.method === 'HEAD' ? undefined : body);
    };
    const json = (status: number, body: unknown) => send(status, 'application/json; charset=utf-8', JSON.stringify(body));
    if (req.method !== 'GET' && req.method !== 'HEAD') return json(405, { ok: false, error: 'method not allowed' });
    const answer = async () => {
      if (path === '/healthz') return json(200, { ok: true });
      if (path === '/readyz') {
        const report: Readiness = stopping ? { ok: false, checks: { executor: 'shutting down' } } : await options.readiness();
        return json(report.ok ? 200 : 503, report);
      }
      if (path === '/metrics') {
        const { contentType, body } = await options.metrics.render();
        return send(200, contentType, body);
      }
      return json(404, { ok: false, error: 'not found' });
    };
    answer().catch((err: unknown) => {
      logger.error({ err, path }, 'executor http request failed');
      if (!res.headersSent) json(500, { ok: false, error: 'internal error' });
      else res.destroy();
    });
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
