// Liveness and readiness: plain `GET /healthz` and `GET /readyz`, and the gRPC health protocol
// (grpc.health.v1.Health/Check) for load balancers and Kubernetes gRPC probes.

import { Code, ConnectError, type ServiceImpl } from '@connectrpc/connect';
import { sendJson } from '../respond.ts';
import type { Route } from '../router.ts';
import { HealthCheckResponse_ServingStatus, type Health } from './gen/grpc/health/v1/health_pb.js';

/** Whether the process is ready, and one short state per dependency, e.g. `{ database: 'ok', bus: 'unavailable: ...' }`. */
export interface Readiness {
  readonly ok: boolean;
  readonly checks: Readonly<Record<string, string>>;
}

/** Probes the process's dependencies (database, bus); should answer within seconds. */
export type ReadinessProbe = () => Promise<Readiness>;

/**
 * Runs `readiness`, turning a throw into a not-ready report (logged) and reporting not ready
 * while the server shuts down, so load balancers stop sending new calls.
 */
export async function checkReadiness(readiness: ReadinessProbe, shuttingDown: boolean, logger: { error(line: object, msg: string): void }): Promise<Readiness> {
  if (shuttingDown) return { ok: false, checks: { server: 'shutting down' } };
  try {
    return await readiness();
  } catch (err) {
    logger.error({ err }, 'readiness probe failed');
    return { ok: false, checks: { readiness: 'probe failed' } };
  }
}

/** `GET /healthz` (200 while the process runs) and `GET /readyz` (200 when `probe` reports ready, else 503 with its checks). */
export function probeRoutes(probe: ReadinessProbe): Route[] {
  return [
    { methods: ['GET', 'HEAD'], path: '/healthz', handler: ({ req, res }) => sendJson(req, res, 200, { ok: true }) },
    {
      methods: ['GET', 'HEAD'],
      path: '/readyz',
      handler: async ({ req, res }) => {
        const report = await probe();
        sendJson(req, res, report.ok ? 200 : 503, { ok: report.ok, checks: report.checks });
      },
    },
  ];
}

/**
 * The gRPC health service: Check reports SERVING when the readiness probe passes and
 * NOT_SERVING otherwise (also while shutting down); a service name outside `checked` (the empty
 * name is the server as a whole) is NotFound, as the protocol requires. Watch is not served (Unimplemented).
 */
export function createHealthService(probe: ReadinessProbe, checked: ReadonlySet<string>): ServiceImpl<typeof Health> {
  return {
    async check(request) {
      if (!checked.has(request.service)) throw new ConnectError(`unknown service ${request.service}`, Code.NotFound);
      const report = await probe();
      return { status: report.ok ? HealthCheckResponse_ServingStatus.SERVING : HealthCheckResponse_ServingStatus.NOT_SERVING };
    },
    // biome-ignore lint/correctness/useYield: a stream that ends at once with Unimplemented
    async *watch() {
      throw new ConnectError('grpc.health.v1.Health/Watch is not served; poll Check', Code.Unimplemented);
    },
  };
}
