// Plain HTTP request counts, latency and one log line per request (health, /metrics, /v1 routes,
// the resolver): what the RPC interceptors do for Connect calls.

import type { Logger, Metrics } from '@mint/runtime';
import type { HttpRequest, HttpResponse } from '../http/listener.ts';

/** Distinct `route` labels kept; later routes are counted as `other`, so odd paths cannot grow the series without bound. */
const maxRoutes = 200;
/** Probe and scrape paths: logged at debug level, since they arrive every few seconds. */
const quietPaths: ReadonlySet<string> = new Set(['/healthz', '/readyz', '/metrics']);
/** A path segment kept as-is in a route label: a lower-case word without digits, or an API version such as `v1`; anything else is an id. */
const wordSegment = /^(?:[a-z][a-z_-]{0,39}|v[0-9]{1,2})$/;

/**
 * The `route` label of a path: segments that look like ids, GTINs, serials or tokens become
 * `:param`, e.g. `/v1/jobs/3f2a.../units` -> `/v1/jobs/:param/units`; the resolver's brand slug
 * does too (`/r/acme/01/0950.../21/X1` -> `/r/:param/:param/:param/:param/:param`), so brands do
 * not multiply the series.
 */
export function routeLabel(path: string): string {
  if (path === '/') return '/';
  const segments = path.split('/');
  return segments
    .map((segment, index) => (index === 0 || (wordSegment.test(segment) && !(index === 2 && segments[1] === 'r')) ? segment : ':param'))
    .join('/');
}

/** Observes plain HTTP requests of one server. */
export interface HttpObserver {
  /**
   * Starts observing `req`: when the response closes, counts it into `minting_http_requests_total`
   * and `minting_http_request_duration_seconds` and logs `{ method, path, status, durationMs }`
   * through `logger` (the request's logger, carrying its request id). The query string is never
   * logged (it may carry a signature). A response cut before its headers counts with code `0`.
   */
  observe(req: HttpRequest, res: HttpResponse, logger: Logger): void;
  /** Stops observing `req`: it turned out to be an RPC, which the RPC interceptors count and log. */
  skip(req: HttpRequest): void;
}

/** Creates the observer counting into `metrics`. */
export function httpObserver(metrics: Pick<Metrics, 'httpRequests' | 'httpDuration'>): HttpObserver {
  const routes = new Set<string>();
  const skipped = new WeakSet<HttpRequest>();
  return {
    skip: (req) => void skipped.add(req),
    observe(req, res, logger) {
      const started = performance.now();
      const path = (req.url ?? '/').split('?', 1)[0] ?? '/';
      res.once('close', () => {
        if (skipped.has(req)) return;
        const seconds = (performance.now() - started) / 1000;
        let route = routeLabel(path);
        if (!routes.has(route)) {
          if (routes.size >= maxRoutes) route = 'other';
          else routes.add(route);
        }
        const method = req.method ?? 'GET';
        const status = res.headersSent ? res.statusCode : 0;
        const code = String(status);
        metrics.httpRequests.inc({ method, route, code });
        metrics.httpDuration.observe({ method, route, code }, seconds);
        const line = { method, path, status, durationMs: Math.round(seconds * 10_000) / 10 };
        if (quietPaths.has(path)) logger.debug(line, 'http');
        else logger.info(line, 'http');
      });
    },
  };
}
