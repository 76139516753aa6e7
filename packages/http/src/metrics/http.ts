// Plain HTTP request counts, latency and one log line per request (health, /metrics, /v1 routes,
// the resolver): what the RPC interceptors do for Connect calls.

import { matchedRoute } from '../router.ts';
import type { HttpRequest, HttpResponse } from '../types.ts';
import type { Metrics } from './metrics.ts';

/** Probe and scrape paths: logged at debug level, since they arrive every few seconds. */
const quietPaths: ReadonlySet<string> = new Set(['/healthz', '/readyz', '/metrics']);

/** The `route` label of requests that matched no route of the table (and no RPC). */
export const unmatchedRouteLabel = 'unmatched';

/**
 * The `route` label of a request: the path pattern of the route-table entry that matched it
 * (`/v1/imports/products/:id`, `/r/*`), or {@link unmatchedRouteLabel}. It never comes from the
 * request path, so the label set is the route table and cannot be grown by clients.
 */
export function routeLabel(req: HttpRequest): string {
  return matchedRoute(req) ?? unmatchedRouteLabel;
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
  // One listener for every response (no closure per request): `this` is the response.
  function onClose(this: ObservedResponse): void {
    const observed = this[observedKey];
    if (observed === undefined || observed.skipped) return;
    const { req } = observed;
    const seconds = (performance.now() - observed.started) / 1000;
    const url = req.url ?? '/';
    const q = url.indexOf('?');
    const path = q < 0 ? url : url.slice(0, q);
    const route = routeLabel(req);
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
