// The web console's files (services/console/dist, built by Vite) served at /console/ through the
// one route table (held by packages/http's static files: index.html revalidated on every load,
// content-hashed assets cached for good), with its security headers and sign-in settings.

import { HttpProblem, loadStaticFiles, send, sendEmpty, type Route, type StaticFile } from '@mint/http';
import { isPublicPath } from '../auth/public-paths.ts';

/**
 * Headers of every console file: a same-origin-only content security policy (the console calls
 * the API on its own origin, so it needs no CORS), no sniffing, no framing, no referrer.
 */
function securityHeaders(connectOrigins: readonly string[]): Record<string, string> {
  return {
    'content-security-policy': `default-src 'self'; img-src 'self' data:; style-src 'self'; connect-src ${["'self'", ...connectOrigins].join(' ')}; object-src 'none'; base-uri 'self'; frame-ancestors 'none'`,
    'x-content-type-options': 'nosniff',
    'referrer-policy': 'no-referrer',
  };
}

/** `&`, `<`, `>` and `"` escaped for an HTML attribute value. */
function escapeAttribute(value: string): string {
  return value.replaceAll('&', '&amp;').replaceAll('<', '&lt;').replaceAll('>', '&gt;').replaceAll('"', '&quot;');
}

/**
 * index.html with the OpenID Connect provider the console signs in with, as two meta tags
 * (`mint-oidc-issuer`, `mint-oidc-client-id`) before `</head>`; unchanged without one.
 */
export function withOidcSettings(html: string, oidc: ConsoleOidc | undefined): string {
  if (oidc === undefined) return html;
  const tags = `<meta name="mint-oidc-issuer" content="${escapeAttribute(oidc.issuer)}"><meta name="mint-oidc-client-id" content="${escapeAttribute(oidc.clientId)}">`;
  return html.replace('</head>', `${tags}</head>`);
}

// The console's files answer anonymous callers, so their paths must be on the allow-list.
for (const path of ['/console', '/console/', '/console/assets/x.js']) {
  if (!isPublicPath(path)) throw new Error(`${path} must be on the public path allow-list`);
}

/** The OpenID Connect provider the console signs in with (CONSOLE_OIDC_ISSUER, CONSOLE_OIDC_CLIENT_ID). */
export interface ConsoleOidc {
  readonly issuer: string;
  readonly clientId: string;
}

/** Options of {@link consoleRoutes}. */
export interface ConsoleRouteOptions {
  /** The Vite build output (`services/console/dist`). */
  readonly dir: string;
  /** The sign-in provider, told to the console in index.html; its origin is added to `connect-src`. */
  readonly oidc?: ConsoleOidc | undefined;
}

/**
 * `/console` (redirects to `/console/`) and `/console/*`: index.html at `/console/`, the build's
 * other files by name (an unknown name answers 404). The files are read on the first request and
 * kept, so a running server keeps serving one consistent build; until the console is built every
 * path answers 503 naming the build command. Only files of the build are ever served: a request
 * path is a key into that set, never joined to a folder.
 */
export function consoleRoutes(options: ConsoleRouteOptions): Route[] {
  let files: Map<string, StaticFile> | null = null;
  const headers = securityHeaders(options.oidc === undefined ? [] : [new URL(options.oidc.issuer).origin]);
  const serve: Route['handler'] = ({ req, res, params }) => {
    if (files === null) {
      files = loadStaticFiles(options.dir);
      const index = files?.get('index.html');
      if (files !== null && index !== undefined)
        files.set('index.html', { ...index, body: Buffer.from(withOidcSettings(index.body.toString('utf8'), options.oidc)) });
    }
    if (files === null) throw new HttpProblem(503, 'console_not_built', 'The console is not built: run npm run build -w @mint/console (npm ci does it).');
    const name = params['*'] === undefined || params['*'] === '' ? 'index.html' : params['*'];
    const file = files.get(name);
    if (file === undefined) throw new HttpProblem(404, 'not_found', `The console has no file ${name}.`);
    send(req, res, 200, file.contentType, file.body, { ...headers, 'cache-control': file.cacheControl });
  };
  return [
    { methods: ['GET', 'HEAD'], path: '/console', handler: ({ res }) => sendEmpty(res, 308, { location: '/console/' }) },
    { methods: ['GET', 'HEAD'], path: '/console/*', handler: serve },
  ];
}

/**
 * `GET /` answered with a redirect (302) to the console, for dev mode, where `/` is the first URL a
 * newcomer opens; production leaves `/` unrouted.
 */
export function consoleRootRedirect(): Route {
  return { methods: ['GET', 'HEAD'], path: '/', handler: ({ res }) => sendEmpty(res, 302, { location: '/console/' }) };
}
