// Plain HTTP request counts, latency and one log line per request (health, /metrics, /v1 routes,
// the resolver): what the RPC interceptors do for Connect calls.

import type { Metrics } from '@mint/runtime';
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
  const resolver = path.startsWith('/r/');
  let label = '';
  let start = 1;
  for (let index = 1; start <= path.length; index++) {
    let end = path.indexOf('/', start);
    if (end < 0) end = path.length;
    const segment = path.slice(start, end);
    label += (index !== 2 || !resolver) && wordSegment.test(segment) ? `/${segment}` : '/:param';
    start = end + 1;
  }
  return label;
}

/**
 * Writes one line about `req` at `level` through the request's logger (carrying its request id);
 * the server creates that logger only when the level is enabled.
 */
export type RequestLog = (req: HttpRequest, level: 'debug' | 'info', line: object, msg: string) => void;

/** Observes plain HTTP requests of one server. */
export interface HttpObserver {
  /**
   * Starts observing `req`: when the response closes, counts it into `minting_http_requests_total`
   * and `minting_http_request_duration_seconds` and logs `{ method, path, status, durationMs }`
   * through `log` (debug for probes and scrapes, info otherwise). The query string is never logged
   * (it may carry a signature). A response cut before its headers counts with code `0`.
   */
  observe(req: HttpRequest, res: HttpResponse, log: RequestLog): void;
  /** Stops observing the response: it turned out to be an RPC, which the RPC interceptors count and log. */
  skip(res: HttpResponse): void;
}

/** What is kept of an observed request until its response closes. */
interface Observed {
  readonly req: HttpRequest;
  readonly started: number;
  readonly log: RequestLog;
  skipped: boolean;
}
const observedKey = Symbol('mint.httpObserved');
type ObservedResponse = HttpResponse & { [observedKey]?: Observed };

/** Creates the observer counting into `metrics`. */
export function httpObserver(metrics: Pick<Metrics, 'httpRequests' | 'httpDuration'>): HttpObserver {
  const routes = new Set<string>();
  // One listener for every response (no closure per request): `this` is the response.
  function onClose(this: ObservedResponse): void {
    const observed = this[observedKey];
    if (observed === undefined || observed.skipped) return;
    const { req } = observed;
    const seconds = (performance.now() - observed.started) / 1000;
    const url = req.url ?? '/';
    const q = url.indexOf('?');
    const path = q < 0 ? url : url.slice(0, q);
    let route = routeLabel(path);
    if (!routes.has(route)) {
      if (routes.size >= maxRoutes) route = 'other';
      else routes.add(route);
    }
    const method = req.method ?? 'GET';
    const status = this.headersSent ? this.statusCode : 0;
    const code = String(status);
    metrics.httpRequests.inc({ method, route, code });
    metrics.httpDuration.observe({ method, route, code }, seconds);
    observed.log(req, quietPaths.has(path) ? 'debug' : 'info', { method, path, status, durationMs: Math.round(seconds * 10_000) / 10 }, 'http');
  }
  return {
    skip(res) {
      const observed = (res as ObservedResponse)[observedKey];
      if (observed !== undefined) observed.skipped = true;
    },
    observe(req, res, log) {
      (res as ObservedResponse)[observedKey] = { req, started: performance.now(), log, skipped: false };
      res.on('close', onClose);
    },
  };
}
