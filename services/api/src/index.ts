/**
 * The API process: Connect, gRPC and gRPC-Web handlers of the mint.v1 services, /v1, the resolver,
 * the console, the gRPC health service, /healthz and /readyz, on one port (HTTP/1.1 and h2c).
 */
export { createApiServer, rpcInterceptors, type ApiServerOptions } from './server.ts';
export { startApi, type RunningApi, type StartApiOptions } from './start.ts';
export { consoleRootRedirect } from './console/routes.ts';
