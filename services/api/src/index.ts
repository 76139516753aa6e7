/**
 * The API process's transport: Connect, gRPC and gRPC-Web handlers of MintService and
 * CatalogService, the gRPC health service, /healthz and /readyz, on one port (HTTP/1.1 and h2c).
 */
export { createApiServer, rpcInterceptors, requestIdHeader, type ApiServer, type ApiServerOptions, type RequestListener } from './server.ts';
export { startApi, useCaseAuthenticator, type RunningApi, type StartApiOptions } from './start.ts';
export { createConnectRoutes, type ConnectRoutesDeps } from './routes.ts';
export { createMintServiceHandlers, type MintServiceDeps, type WatchLimits } from './handlers/mint-service.ts';
export { createCatalogServiceHandlers, type CatalogServiceDeps } from './handlers/catalog-service.ts';
export { authenticationInterceptor, authorizationInterceptor, contextAuthenticator, type Authenticator } from './auth/interceptors.ts';
export { credentialsFrom } from './auth/credentials.ts';
export { isPublicPath, publicPathPrefixes, publicRpcServices } from './auth/public-paths.ts';
export { permissionFor, publicServices } from './auth/permissions.ts';
export { rpcPermissions } from '@mint/wire';
export { principalOf, principalKey, requestIdKey, loggerKey, type Principal } from './context.ts';
export type { ReadinessProbe } from '@mint/http';
export { v1Routes, type V1Deps } from './v1/routes.ts';
export { consoleRootRedirect } from './console/routes.ts';
