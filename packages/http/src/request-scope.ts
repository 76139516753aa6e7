// A request's id (from `x-request-id`, or generated, echoed on the response) and its child logger,
// kept on the request itself and created only when something logs for it.

import { randomUUID } from 'node:crypto';
import type { RequestLog } from './metrics/http.ts';
import type { HttpRequest, HttpResponse } from './types.ts';

/** The header carrying a request's id in both directions. */
export const requestIdHeader = 'x-request-id';
const acceptableRequestId = /^[A-Za-z0-9._:-]{1,128}$/;

/** The part of a logger (pino's) a request scope uses. */
export interface ScopeLogger {
  isLevelEnabled(level: string): boolean;
  child(bindings: { requestId: string }): unknown;
  debug(line: object, msg: string): void;
  info(line: object, msg: string): void;
  error(line: object, msg: string): void;
}

/** The requests of one server, each with its id and child logger. */
export interface RequestScope<L extends ScopeLogger> {
  /** Gives `req` its id (the client's `x-request-id` when acceptable, else a new one) and sets it on the response. */
  begin(req: HttpRequest, res: HttpResponse): void;
  /** The id given by {@link begin}; undefined for a request that did not begin here. */
  idOf(req: HttpRequest): string | undefined;
  /** The request's logger (a child carrying its request id), created on first use; the process logger outside a request. */
  loggerOf(req: HttpRequest): L;
  /** One line for a request; its child logger is created only when the level is enabled. */
  readonly log: RequestLog;
}

interface RequestState<L> {
  readonly id: string;
  logger: L | undefined;
}
/** Where a request's state lives: on the request itself (cheaper than a WeakMap entry per request). */
const requestState = Symbol('mint.request');
type StatefulRequest<L> = HttpRequest & { [requestState]?: RequestState<L> };

export function requestScope<L extends ScopeLogger>(logger: L): RequestScope<L> {
  const loggerOf = (req: HttpRequest): L => {
    const state = (req as StatefulRequest<L>)[requestState];
    return state === undefined ? logger : (state.logger ??= logger.child({ requestId: state.id }) as L);
  };
  return {
    begin(req, res) {
      const header = req.headers[requestIdHeader];
      const id = typeof header === 'string' && acceptableRequestId.test(header) ? header : randomUUID();
      (req as StatefulRequest<L>)[requestState] = { id, logger: undefined };
      res.setHeader(requestIdHeader, id);
    },
    idOf: (req) => (req as StatefulRequest<L>)[requestState]?.id,
    loggerOf,
    log: (req, level, line, msg) => {
      if (logger.isLevelEnabled(level)) loggerOf(req)[level](line, msg);
    },
  };
}
