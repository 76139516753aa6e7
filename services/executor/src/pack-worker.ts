// The payload pack worker: claims pending packs (and generating ones whose worker died) and runs
// their generation, one at a time per process. Transport only: the rules are the use case's.

import type { PackStore } from '@mint/store';
import { claimPayloadPack, defaultPackLeaseMs, generatePayloadPack, type UseCaseContext } from '@mint/usecases';
import type { Logger } from 'pino';

/** Options of {@link startPackWorker}. */
export interface PackWorkerOptions {
  readonly ctx: UseCaseContext;
  readonly store: PackStore;
  readonly logger: Logger;
  /** How long to wait before looking again when no pack is pending; default 1 s. */
  readonly pollIntervalMs?: number;
  /** Lease on a generating pack (default 30 s); a pack whose worker died is claimed again after it. */
  readonly leaseMs?: number;
  /** Units per keyset page. */
  readonly pageSize?: number;
}

/** A running pack worker. */
export interface PackWorker {
  /** Stops claiming, releases a pack being generated back to pending, and resolves when the loop ended. */
  stop(): Promise<void>;
}

/**
 * Starts the loop: claim a pack (a compare-and-set, so several executors share the work), generate it,
 * repeat; sleep `pollIntervalMs` when there is none. Errors are logged and the loop goes on.
 */
export function startPackWorker(options: PackWorkerOptions): PackWorker {
  const { ctx, store, logger } = options;
  const pollMs = options.pollIntervalMs ?? 1_000;
  const leaseMs = options.leaseMs ?? defaultPackLeaseMs;
  const stopping = new AbortController();
  let wake: (() => void) | null = null;

  const sleep = (ms: number) => new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, ms);
    wake = () => {
      clearTimeout(timer);
      resolve();
    };
  }).finally(() => {
    wake = null;
  });

  const loop = (async () => {
    while (!stopping.signal.aborted) {
      try {
        const claim = await claimPayloadPack(ctx, leaseMs);
        if (claim === null) {
          await sleep(pollMs);
          continue;
        }
        const started = performance.now();
        const result = await generatePayloadPack(ctx, claim, {
          store, leaseMs, signal: stopping.signal, ...(options.pageSize === undefined ? {} : { pageSize: options.pageSize }),
        });
        const line = { packId: claim.id, brandId: claim.brandId, attempt: claim.attempts, result: result.kind, durationMs: Math.round(performance.now() - started) };
        if (result.kind === 'retry' || result.kind === 'failed') logger.warn({ ...line, reason: result.reason }, 'payload pack not generated');
        else logger.info(line, 'payload pack generation ended');
      } catch (err) {
        logger.error({ err }, 'payload pack worker error; will retry');
        await sleep(pollMs);
      }
    }
  })();
  logger.info({ pollMs, leaseMs }, 'payload pack worker started');
  return {
    async stop() {
      stopping.abort();
      (wake as (() => void) | null)?.();
      await loop;
    },
  };
}
