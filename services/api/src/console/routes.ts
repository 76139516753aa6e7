// The web console's files (services/console/dist, built by Vite) served at /console/ through the
// one route table (held by packages/http's static files: index.html revalidated on every load,
// content-hashed assets cached for good), with its security headers and sign-in settings.

import { sendEmpty, staticFilesHandler, type Route } from '@mint/http';
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
 * other files by name, as `staticFilesHandler` serves them (read once and kept, 404 for an unknown
 * name); until the console is built every path answers 503 naming the build command.
 */
export function consoleRoutes(options: ConsoleRouteOptions): Route[] {
  const headers = securityHeaders(options.oidc === undefined ? [] : [new URL(options.oidc.issuer).origin]);
  const notBuilt = 'The console is not built: run npm run build -w @mint/console (npm ci does it).';
  const serve = staticFilesHandler('console', options.dir, headers, notBuilt, (files) => {
    const index = files.get('index.html')!;
    files.set('index.html', { ...index, body: Buffer.from(withOidcSettings(index.body.toString('utf8'), options.oidc)) });
  });
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
