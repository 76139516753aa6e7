// RPC counts and latency for Prometheus, by method and Connect code.

import { ConnectError, type Interceptor } from '@connectrpc/connect';
import { codeToString } from '@connectrpc/connect/protocol-connect';
import { observeCall } from '../connect/stream.ts';
import type { Metrics } from './metrics.ts';

/**
 * Counts each call once it ends into `minting_rpc_requests_total` and `minting_rpc_duration_seconds`,
 * labelled `method` (`package.Service/Method`) and `code` (`ok`, a Connect code such as `not_found`,
 * or `canceled` when a streaming client stops early). Mount it outside the error interceptor so
 * domain errors are counted with the code the client receives.
 */
export function metricsInterceptor(metrics: Pick<Metrics, 'rpcRequests' | 'rpcDuration'>): Interceptor {
  return (next) => async (req) => {
    const started = performance.now();
    const method = `${req.service.typeName}/${req.method.name}`;
    const count = (error: unknown, cancelled = false) => {
      const code = cancelled ? 'canceled' : error === undefined ? 'ok' : codeToString(ConnectError.from(error).code);
      metrics.rpcRequests.inc({ method, code });
      metrics.rpcDuration.observe({ method, code }, (performance.now() - started) / 1000);
    };
    return observeCall(next, req, count);
  };
}
