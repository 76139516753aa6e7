// Liveness and readiness: plain `GET /healthz` and `GET /readyz`, and the gRPC health protocol
// (grpc.health.v1.Health/Check) for load balancers and Kubernetes gRPC probes.

import { Code, ConnectError, type ServiceImpl } from '@connectrpc/connect';
import type { Logger, Readiness } from '@mint/runtime';
import { HealthCheckResponse_ServingStatus, type Health } from '@mint/http';

/**
 * Probes the process's dependencies (database, bus) and reports `ok` plus one short state per
 * dependency, e.g. `{ database: 'ok', bus: 'unavailable: ...' }`. Should answer within seconds.
 */
export type ReadinessProbe = () => Promise<Readiness>;

/**
 * Runs `readiness`, turning a throw into a not-ready report (logged) and reporting not ready
 * while the server shuts down, so load balancers stop sending new calls.
 */
export async function checkReadiness(readiness: ReadinessProbe, shuttingDown: boolean, logger: Logger): Promise<Readiness> {
  if (shuttingDown) return { ok: false, checks: { server: 'shutting down' } };
  try {
    return await readiness();
  } catch (err) {
    logger.error({ err }, 'readiness probe failed');
    return { ok: false, checks: { readiness: 'probe failed' } };
  }
}

/** Services whose health Check answers besides the server as a whole (the empty name). */
export const checkedServices: ReadonlySet<string> = new Set(['', 'mint.v1.MintService', 'mint.v1.CatalogService', 'grpc.health.v1.Health']);

/**
 * The gRPC health service: Check reports SERVING when the readiness probe passes and
 * NOT_SERVING otherwise (also while shutting down); an unknown service name is NotFound, as the
 * protocol requires. Watch is not served (Unimplemented).
 */
export function createHealthService(probe: () => Promise<Readiness>): ServiceImpl<typeof Health> {
  return {
    async check(request) {
      if (!checkedServices.has(request.service)) throw new ConnectError(`unknown service ${request.service}`, Code.NotFound);
      const report = await probe();
      return { status: report.ok ? HealthCheckResponse_ServingStatus.SERVING : HealthCheckResponse_ServingStatus.NOT_SERVING };
    },
    // biome-ignore lint/correctness/useYield: a stream that ends at once with Unimplemented
    async *watch() {
      throw new ConnectError('grpc.health.v1.Health/Watch is not served; poll Check', Code.Unimplemented);
    },
  };
}
