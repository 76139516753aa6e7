// A process's HTTP server around its route table: every request gets its id and is observed; a
// request to a host that another route table claims meets that table alone; every other request
// meets CORS, the route table, then whatever serves the rest (the Connect adapter); a request that
// fails outside the route table answers 500. One port for HTTP/1.1 and h2c, closed gracefully.

import type { Cors } from './cors.ts';
import { plainErrorBody, toHttpError } from './errors.ts';
import { createDualListener, type DualListenerOptions } from './listener.ts';
import type { HttpObserver } from './metrics/http.ts';
import type { RequestScope, ScopeLogger } from './request-scope.ts';
import { sendJson } from './respond.ts';
import type { Router } from './router.ts';
import type { HttpRequest, HttpResponse } from './types.ts';

/**
 * Hosts served by a route table of their own (brands' resolver domains): a request whose host
 * (`Host`, or HTTP/2 `:authority`) is claimed meets `router` and nothing else, and what it leaves
 * unmatched answers 404; a path that `ownPath` names stays the server's whatever the host, so a
 * claimed host never hides it. Every other host keeps the server's own routes.
 */
export interface ClaimedHosts {
  /** The request's normalised host (lower-case, without port); '' when absent. */
  readonly hostOf: (req: HttpRequest) => string;
  /** True when `host` is claimed (a promise only until the claims first loaded). */
  readonly claims: (host: string) => boolean | Promise<boolean>;
  /** True for a path the server answers as its own on every host. */
  readonly ownPath: (path: string) => boolean;
  readonly router: Router;
  /** The message of the 404 for what `router` leaves unmatched. */
  readonly notFoundMessage: string;
}

/** Options of {@link createHttpServer}. */
export interface HttpServerOptions {
  /** Gives each request its id and logger; failures are logged through the request's logger. */
  readonly scope: RequestScope<ScopeLogger>;
  /** Counts and logs the plain HTTP requests; nothing is counted when absent. */
  readonly observer?: HttpObserver | undefined;
  /** The server's own route table. */
  readonly router: Router;
  /**
   * Serves what no route matched, its 404 included (the Connect adapter). The paths it `serves`
   * (RPCs) are counted and logged by its own interceptors, not by the observer.
   */
  readonly rest: { (req: HttpRequest, res: HttpResponse): void; serves(path: string): boolean };
  /** CORS, applied before routing to the paths `applies` names (preflights answered there). */
  readonly cors?: { readonly check: Cors; readonly applies: (path: string) => boolean };
  readonly claimedHosts?: ClaimedHosts | undefined;
  /** Connection, header, idle and body timeouts and the stream cap of the listener. */
  readonly listener: DualListenerOptions;
  /** How long `close()` waits for in-flight requests before cutting connections. */
  readonly shutdownTimeoutMs: number;
  /** Runs once when `close()` starts, before connections drain (ends streaming calls, fails readiness). */
  readonly onClose?: () => void;
}

/** A created (not yet listening) HTTP server. */
export interface HttpServer {
  /** Binds the port (0 picks a free one) and resolves with the port bound. */
  listen(port: number, host?: string): Promise<number>;
  /**
   * Graceful stop: runs `onClose`, refuses new connections, lets in-flight requests finish, and
   * resolves when all connections closed (or were cut after the shutdown timeout). Idempotent.
   */
  close(): Promise<void>;
}

/** The URL path of `req`, without its query. */
const pathOf = (req: HttpRequest): string => (req.url ?? '').split('?', 1)[0]!;

/** Creates the server; nothing is bound until `listen`. */
export function createHttpServer(options: HttpServerOptions): HttpServer {
  const { scope, observer, router, rest, cors, claimedHosts } = options;

  /** A request to a claimed host: its routes, else 404 (never the server's own routes). */
  function serveClaimed(hosts: ClaimedHosts, req: HttpRequest, res: HttpResponse): void | Promise<unknown> {
    const handled = hosts.router.handle(req, res);
    if (handled === false) {
      sendJson(req, res, 404, { ok: false, error: 'not_found', message: hosts.notFoundMessage });
      return;
    }
    return handled === true ? undefined : handled;
  }

  /** A request to the server's own host: CORS, the route table, then the rest. */
  function serveOwn(req: HttpRequest, res: HttpResponse): void | Promise<unknown> {
    const path = pathOf(req);
    if (cors?.applies(path) && cors.check(req, res)) return;
    const handled = router.handle(req, res);
    if (handled === false) {
      // What the rest serves counts itself; any other path is a plain 404, counted as unmatched.
      if (rest.serves(path)) observer?.skip(res);
      rest(req, res);
      return;
    }
    return handled === true ? undefined : handled;
  }

  function handle(req: HttpRequest, res: HttpResponse): void | Promise<unknown> {
    scope.begin(req, res);
    observer?.observe(req, res, scope.log);
    if (claimedHosts !== undefined && !claimedHosts.ownPath(pathOf(req))) {
      const host = claimedHosts.hostOf(req);
      const claimed = host === '' ? false : claimedHosts.claims(host);
      if (claimed === true) return serveClaimed(claimedHosts, req, res);
      if (claimed !== false) return claimed.then((yes) => (yes ? serveClaimed(claimedHosts, req, res) : serveOwn(req, res)));
    }
    return serveOwn(req, res);
  }

  /** A request that failed outside the router (which answers its routes' errors itself): the rest threw, or the claims could not be read. */
  const failed = (req: HttpRequest, res: HttpResponse, err: unknown): void => {
    scope.loggerOf(req).error({ err, method: req.method, path: pathOf(req) }, 'request failed');
    if (!res.headersSent) sendJson(req, res, 500, plainErrorBody(toHttpError(err)));
    else res.destroy();
  };
  const listener = createDualListener((req, res) => {
    try {
      handle(req, res)?.catch((err: unknown) => failed(req, res, err));
    } catch (err) {
      failed(req, res, err);
    }
  }, options.listener);
  let closed: Promise<void> | undefined;
  return {
    listen: (port, host) => listener.listen(port, host),
    close() {
      return (closed ??= (async () => {
        options.onClose?.();
        await listener.close(options.shutdownTimeoutMs);
      })());
    },
  };
}
