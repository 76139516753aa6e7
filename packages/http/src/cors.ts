// CORS of the API's own routes (Connect, gRPC-Web and /v1): browsers on the allowed origins may
// call them with credentials; every other origin gets no CORS header, so the browser refuses to
// show it the answer. The resolver keeps its own public CORS (any origin, no credentials).

import { cors as connectCors } from '@connectrpc/connect';
import { sendEmpty, sendJson } from './respond.ts';
import type { HttpRequest, HttpResponse } from './types.ts';

/** Request headers the API reads besides the protocols' own: credentials, request id, idempotency, workspace. */
const applicationRequestHeaders = ['authorization', 'x-api-key', 'x-request-id', 'idempotency-key', 'x-workspace-id'];

/** Response headers a browser script may read besides the protocols' own. */
const applicationResponseHeaders = ['x-request-id', 'retry-after', 'location', 'link'];

/** The headers of a preflight answer, the same for every allowed origin. */
const preflightHeaders = {
  'access-control-allow-methods': [...new Set([...connectCors.allowedMethods, 'GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'])].join(', '),
  'access-control-allow-headers': [...new Set([...connectCors.allowedHeaders, ...applicationRequestHeaders].map((h) => h.toLowerCase()))].join(', '),
  'access-control-max-age': 7200,
} as const;

/** Exposed on every answer to an allowed origin: the Connect and gRPC-Web status headers and the API's own. */
const exposedHeaders = [...new Set([...connectCors.exposedHeaders, ...applicationResponseHeaders].map((h) => h.toLowerCase()))].join(', ');

/**
 * Applies CORS to a request of the API's own routes. Returns true when it answered the request
 * (a preflight: 204 with the allowed methods and headers for an allowed origin, 403 naming the
 * setting for any other), false when the request goes on to its route (an allowed origin's answer
 * then carries `Access-Control-Allow-Origin`, credentials and the exposed headers).
 *
 * `allowedOrigins` are exact origins (`https://console.example.com`); `*` allows every origin but
 * without credentials (browsers then send no cookies and the API answers `*`, never the origin
 * with `Access-Control-Allow-Credentials`). Empty allows no cross-origin caller.
 */
export type Cors = (req: HttpRequest, res: HttpResponse) => boolean;

/** The CORS of {@link Cors} for `allowedOrigins` (the `CORS_ALLOWED_ORIGINS` setting). */
export function createCors(allowedOrigins: readonly string[]): Cors {
  const anyOrigin = allowedOrigins.includes('*');
  const origins = new Set(allowedOrigins.filter((o) => o !== '*'));
  return (req, res) => {
    const origin = req.headers.origin;
    const preflight = req.method === 'OPTIONS' && req.headers['access-control-request-method'] !== undefined;
    if (typeof origin !== 'string') return false;
    res.setHeader('vary', 'Origin');
    const exact = origins.has(origin);
    if (exact || anyOrigin) {
      res.setHeader('access-control-allow-origin', exact ? origin : '*');
      if (exact) res.setHeader('access-control-allow-credentials', 'true');
      if (preflight) {
        sendEmpty(res, 204, { ...preflightHeaders, vary: 'Origin, Access-Control-Request-Method, Access-Control-Request-Headers' });
        return true;
      }
      res.setHeader('access-control-expose-headers', exposedHeaders);
      return false;
    }
    if (!preflight) return false;
    sendJson(req, res, 403, {
      ok: false,
      error: 'cors_origin_not_allowed',
      message: `origin ${JSON.stringify(origin)} may not call this API from a browser (not in CORS_ALLOWED_ORIGINS)`,
    });
    return true;
  };
}
