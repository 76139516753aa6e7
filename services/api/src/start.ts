// Starts the API on a use-case context: what the production entry and the one-process dev mode
// both call.

import type { Config, Logger } from '@mint/runtime';
import * as useCases from '@mint/usecases';
import type { Authenticator } from './auth/interceptors.ts';
import type { ReadinessProbe } from './health.ts';
import { createConnectRoutes } from './routes.ts';
import { composeRoutes, createApiServer, type HttpRoutes } from './server.ts';

/** Options of {@link startApi}. */
export interface StartApiOptions {
  /** The use-case context (database, clock, token settings). */
  readonly ctx: useCases.UseCaseContext;
  /** Listening address and shutdown timeout come from here (`PORT`, `HOST`, `SHUTDOWN_TIMEOUT_MS`). */
  readonly config: Pick<Config, 'port' | 'host' | 'shutdownTimeoutMs'>;
  readonly logger: Logger;
  /** Probes the dependencies for /readyz and the gRPC health Check. */
  readonly readiness: ReadinessProbe;
  /** Plain HTTP routes tried before the Connect handlers. */
  readonly httpRoutes?: HttpRoutes;
  /** Serve SetMintBatchStatus (the spec keeps it unexposed; off by default). */
  readonly setMintBatchStatusEnabled?: boolean;
}

/** A running API. */
export interface RunningApi {
  /** The port bound (the configured one, or the one picked for port 0). */
  readonly port: number;
  /** Graceful stop: see `ApiServer.close`. Does not close the database. */
  close(): Promise<void>;
}

/** Session tokens and roles checked by the use cases on `ctx`. */
export function useCaseAuthenticator(ctx: useCases.UseCaseContext): Authenticator {
  return {
    authenticate: (token) => useCases.authenticateBearer(ctx, token),
    roleOnBrand: (userId, brandId) => useCases.roleOnBrand(ctx, userId, brandId),
  };
}

/** Creates the API server on `ctx` and listens on `config.port` / `config.host`. */
export async function startApi(options: StartApiOptions): Promise<RunningApi> {
  const { ctx, config, logger } = options;
  // Plain HTTP route sets, tried in order before the Connect handlers.
  const httpRouteSets: HttpRoutes[] = [
    ...(options.httpRoutes === undefined ? [] : [options.httpRoutes]),
  ];
  const server = createApiServer({
    routes: createConnectRoutes({ ctx, useCases, setMintBatchStatusEnabled: options.setMintBatchStatusEnabled ?? false }),
    httpRoutes: composeRoutes(httpRouteSets),
    authenticator: useCaseAuthenticator(ctx),
    readiness: options.readiness,
    logger,
    shutdownTimeoutMs: config.shutdownTimeoutMs,
  });
  const port = await server.listen(config.port, config.host);
  logger.info({ port, host: config.host }, 'api listening');
  return { port, close: () => server.close() };
}
