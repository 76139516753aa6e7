// The one route table of a process's plain HTTP routes, on find-my-way (the router fastify is
// built on): static, parametric (`:id`) and wildcard (`*`) paths, 405 with `Allow` for a known path
// and another method, and one place where a handler's error becomes a response.

import createFindMyWay, { type HTTPMethod } from 'find-my-way';
import { InvalidInputError, RateLimitedError, isUnavailableError, unavailableRetryAfter } from '@mint/domain';
import { HttpProblem, methodNotAllowedMessage, plainErrorBody, toHttpError, type HttpError } from './errors.ts';
import { sendJson } from './respond.ts';
import type { HttpRequest, HttpResponse } from './types.ts';

/** One request being handled by a route. */
export interface RouteCall {
  readonly req: HttpRequest;
  readonly res: HttpResponse;
  /** The URL path without the query string, as sent (not decoded). */
  readonly path: string;
  /** Path parameters of the route (`:name`, or `*` for the wildcard), percent-decoded. */
  readonly params: Readonly<Record<string, string>>;
  /** The query string without the `?`, '' when absent. */
  readonly queryString: string;
}

/** Handles one route; what it throws is answered by the route's `onError`. */
export type RouteHandler = (call: RouteCall) => void | Promise<void>;

/** Writes the answer to an error a route's handler threw, already mapped to its HTTP error. */
export type ErrorWriter = (call: RouteCall, error: HttpError, cause: unknown) => void;

/** One entry of the route table. */
export interface Route {
  /** The methods served; every other method on the path answers 405 with `Allow`. */
  readonly methods: readonly HTTPMethod[];
  /** A find-my-way path: `/v1/products`, `/v1/imports/products/:id`, `/r/*`. */
  readonly path: string;
  readonly handler: RouteHandler;
  /** Answers errors of this route (its family's error body); default {@link sendHttpError}. */
  readonly onError?: ErrorWriter;
  /** Answers a wrong method on this path (405); default `onError` (a family whose handlers answer in a shape of their own routes this to its family's). */
  readonly onMethodError?: ErrorWriter;
}

/** Where the router records the path pattern of the route that matched a request. */
const matchedKey = Symbol('mint.matchedRoute');
type MatchedRequest = HttpRequest & { [matchedKey]?: string };

/**
 * The path pattern (`/v1/imports/products/:id`, `/r/*`) of the route-table entry that matched
 * `req`, or undefined when no route did. Metrics label requests with it, never with the path
 * itself, so odd paths cannot grow a label's series.
 */
export function matchedRoute(req: HttpRequest): string | undefined {
  return (req as MatchedRequest)[matchedKey];
}

/** The methods a 405 is given for on a known path. */
const allMethods: readonly HTTPMethod[] = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'];

/** Answers in the plain error body ({@link plainErrorBody}): the error writer of routes without a family of their own. */
export const sendHttpError: ErrorWriter = (call, error) => {
  sendJson(call.req, call.res, error.status, plainErrorBody(error));
};

/** A route table ready to serve. */
export interface Router {
  /**
   * Serves `req` when a route matches its path: returns true, or a promise of true once the
   * handler finished (its errors answered by the route's error writer, or the connection cut when
   * the headers were already sent). Returns false, synchronously, when no route matches.
   */
  handle(req: HttpRequest, res: HttpResponse): boolean | Promise<boolean>;
  /** The table, in registration order (for documents generated from it). */
  readonly routes: readonly Route[];
}

/** Options of {@link createRouter}. */
export interface RouterOptions {
  /** Called for every handler error with its mapped HTTP error (log 5xx with the cause, never the query). */
  readonly onError?: (call: RouteCall, error: HttpError, cause: unknown) => void;
  /**
   * Runs before the handler of every matched route (a rate limit): what it throws, or rejects
   * with, is answered by the route's error writer and the handler does not run.
   */
  readonly guard?: (call: RouteCall, route: Route) => void | Promise<void>;
}

/** Builds the route table. A path registered twice for one method is a programming error (throws). */
export function createRouter(routes: readonly Route[], options: RouterOptions = {}): Router {
  const fmw = createFindMyWay({ caseSensitive: true });
  const byPath = new Map<string, Route[]>();
  for (const route of routes) {
    fmw.on([...route.methods], route.path, () => undefined, route);
    byPath.set(route.path, [...(byPath.get(route.path) ?? []), route]);
  }
  for (const [path, onPath] of byPath) {
    const allowed = onPath.flatMap((r) => r.methods);
    const others = allMethods.filter((m) => !allowed.includes(m));
    if (others.length === 0) continue;
    const notAllowed: Route = {
      methods: others,
      path,
      onError: onPath[0]!.onMethodError ?? onPath[0]!.onError,
      handler: (call) => {
        call.res.setHeader('allow', allowed.join(', '));
        throw new HttpProblem(405, 'method_not_allowed', methodNotAllowedMessage(call.req.method, call.path, allowed));
      },
    } as Route;
    fmw.on([...others], path, () => undefined, notAllowed);
  }

  const fail = (call: RouteCall, route: Route | undefined, err: unknown): void => {
    const error = toHttpError(err);
    options.onError?.(call, error, err);
    if (call.res.headersSent) {
      call.res.destroy();
      return;
    }
    // Past a size limit the rest of the body is not read: close the HTTP/1.1 connection.
    if (error.status === 413 && call.req.httpVersionMajor === 1) call.res.setHeader('connection', 'close');
    if (err instanceof RateLimitedError) call.res.setHeader('retry-after', String(err.retryAfterSeconds));
    else if (isUnavailableError(err)) call.res.setHeader('retry-after', String(unavailableRetryAfter(err)));
    (route?.onError ?? sendHttpError)(call, error, err);
  };

  return {
    routes,
    handle(req, res) {
      const url = req.url ?? '/';
      const q = url.indexOf('?');
      const path = q < 0 ? url : url.slice(0, q);
      const queryString = q < 0 ? '' : url.slice(q + 1);
      const found = fmw.find(req.method as HTTPMethod, path);
      if (found === null) {
        // A malformed percent-encoding matches nothing; a path of a route's is then bad input naming it.
        const literal = path.includes('%') ? fmw.find(req.method as HTTPMethod, path.replace(/%/g, '%25')) : null;
        if (literal === null) return false;
        (req as MatchedRequest)[matchedKey] = (literal.store as Route).path;
        const call: RouteCall = { req, res, path, params: {}, queryString };
        fail(call, literal.store as Route, new InvalidInputError([{ field: 'path', message: 'is not a valid percent-encoded path' }]));
        return true;
      }
      const route = found.store as Route;
      (req as MatchedRequest)[matchedKey] = route.path;
      const call: RouteCall = { req, res, path, params: found.params as Record<string, string>, queryString };
      let pending;
      try {
        const guarded = options.guard?.(call, route);
        pending = guarded === undefined ? route.handler(call) : guarded.then(() => route.handler(call));
      } catch (err) {
        fail(call, route, err);
        return true;
      }
      if (pending === undefined) return true;
      return pending.then(
        () => true,
        (err: unknown) => {
          fail(call, route, err);
          return true;
        },
      );
    },
  };
}
