// The explicit allow-list of plain HTTP paths that answer without credentials. Every other plain
// HTTP route checks its caller through the use cases' access rule before doing anything; a route module that serves
// anonymous callers checks its paths against this list, and a test walks the server's paths to
// prove that nothing outside it answers without credentials.

/**
 * Path prefixes anyone may call: liveness/readiness, Prometheus metrics (counts only, no tenant
 * data; restrict them with the chart's NetworkPolicy), the OpenAPI description, the public resolver (`/r/{brand slug}/...`,
 * where the tenant is validated from the path), its GS1 resolver description file
 * (`/.well-known/gs1resolver`), the passport issuer's DID document and status lists (`/.well-known/did.json`,
 * `/.well-known/passport-status/{brand slug}`: public keys and revocation bits) and signed downloads (`/downloads/...`, where the signature in the
 * URL is the credential), and the web console's static files (`/console`, `/console/*`: the app
 * holds no data; every call it makes carries the user's token). A prefix ending in `/` covers the
 * paths below it; one ending in `/*` covers that folder itself too; one without covers that exact
 * path only.
 */
export const publicPathPrefixes: readonly string[] = [
  '/healthz',
  '/readyz',
  '/metrics',
  '/v1/openapi.json',
  '/r/',
  '/.well-known/gs1resolver',
  '/.well-known/did.json',
  '/.well-known/passport-status/',
  '/downloads/',
  '/console',
  '/console/*',
];

/** Connect/gRPC services anyone may call (the gRPC health protocol for probes). */
export const publicRpcServices: readonly string[] = ['grpc.health.v1.Health'];

/**
 * True when `path` (the URL path without its query) may answer without credentials. Paths are
 * compared after rejecting dot segments and encoded slashes, so `/r/../v1/products` is not public.
 */
export function isPublicPath(path: string): boolean {
  if (/(^|\/)\.\.?(\/|$)|%2f|%5c|\\/i.test(path)) return false;
  if (publicRpcServices.some((service) => path.startsWith(`/${service}/`))) return true;
  return publicPathPrefixes.some((prefix) =>
    prefix.endsWith('/*')
      ? path.startsWith(prefix.slice(0, -1))
      : prefix.endsWith('/')
        ? path.startsWith(prefix) && path.length > prefix.length
        : path === prefix,
  );
}
