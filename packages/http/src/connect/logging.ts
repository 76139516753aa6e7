// One log line per RPC: method, protocol, outcome code, duration, caller and request id.

import { Code, ConnectError, type ContextValues, type Interceptor } from '@connectrpc/connect';
import { codeToString } from '@connectrpc/connect/protocol-connect';
import type { ScopeLogger } from '../request-scope.ts';
import { observeCall } from './stream.ts';

/** Codes that mean the server failed; logged at error level with the original error. */
const serverFaults: ReadonlySet<Code> = new Set([Code.Internal, Code.Unknown, Code.DataLoss]);

/** Where the logging interceptor finds a call's logger and caller. */
export interface CallLogOptions {
  /** The call's logger (its lines carry the request id), when the call has one; else the fallback logs. */
  readonly loggerOf: (values: ContextValues) => ScopeLogger | undefined;
  /** The calling user's id (null for an API key), undefined before authorization. */
  readonly userIdOf: (values: ContextValues) => string | null | undefined;
}

/**
 * Logs each call once it ends (for streams: when the stream ends, fails or is cancelled) as
 * `{ rpc, protocol, code, durationMs, userId }` through the call's request logger. Internal
 * errors are logged with their original error as `err` (clients only see "internal error").
 * Headers and messages are never logged, so tokens cannot leak.
 */
export function loggingInterceptor(fallback: ScopeLogger, options: CallLogOptions): Interceptor {
  return (next) => async (req) => {
    const started = performance.now();
    const log = (error: unknown, cancelled = false) => {
      const connectError = error === undefined ? undefined : ConnectError.from(error);
      const fault = connectError !== undefined && serverFaults.has(connectError.code);
      // Below the configured level nothing is built, not even the call's child logger.
      if (!fallback.isLevelEnabled(fault ? 'error' : 'info')) return;
      const logger = options.loggerOf(req.contextValues) ?? fallback;
      const durationMs = Math.round((performance.now() - started) * 10) / 10;
      const userId = options.userIdOf(req.contextValues);
      const code = cancelled ? 'canceled' : connectError === undefined ? 'ok' : codeToString(connectError.code);
      const line = {
        rpc: `${req.service.typeName}/${req.method.name}`,
        protocol: protocolOf(req.header.get('content-type')),
        code,
        durationMs,
        ...(userId === undefined ? {} : { userId }),
      };
      if (fault && connectError !== undefined) {
        logger.error({ ...line, err: connectError.cause ?? connectError }, 'rpc failed');
      } else {
        logger.info(line, 'rpc');
      }
    };
    return observeCall(next, req, log);
  };
}

/** connect, grpc or grpc-web, from the request's content type. */
function protocolOf(contentType: string | null): string {
  if (contentType === null) return 'connect';
  if (contentType.startsWith('application/grpc-web')) return 'grpc-web';
  if (contentType.startsWith('application/grpc')) return 'grpc';
  return 'connect';
}
