// The payload pack worker: claims pending packs (and generating ones whose worker died) and runs
// their generation, `concurrency` at a time per process, at most `perBrand` of one brand across
// every executor. Transport only: the rules are the use case's.

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
  /** Packs generated at once by this process; default 2. */
  readonly concurrency?: number;
  /** Packs of one brand generating at once across all executors; default 1. */
  readonly perBrand?: number;
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

  const concurrency = options.concurrency ?? 2;
  const perBrand = options.perBrand ?? 1;
  // Each slot claims and generates on its own; a slot that found nothing sleeps until the poll.
  const wakers = new Set<() => void>();
  const sleep = (ms: number) =>
    new Promise<void>((resolve) => {
      const waker = () => {
        clearTimeout(timer);
        wakers.delete(waker);
        resolve();
      };
      const timer = setTimeout(waker, ms);
      wakers.add(waker);
    });

  const slot = async () => {
    while (!stopping.signal.aborted) {
      try {
        const claim = await claimPayloadPack(ctx, leaseMs, perBrand);
        if (claim === null) {
          await sleep(pollMs);
          continue;
        }
        const started = performance.now();
        const result = await generatePayloadPack(ctx, claim, {
          store,
          leaseMs,
          signal: stopping.signal,
          ...(options.pageSize === undefined ? {} : { pageSize: options.pageSize }),
        });
        const line = {
          packId: claim.id,
          brandId: claim.brandId,
          attempt: claim.attempts,
          result: result.kind,
          durationMs: Math.round(performance.now() - started),
        };
        if (result.kind === 'retry' || result.kind === 'failed') logger.warn({ ...line, reason: result.reason }, 'payload pack not generated');
        else logger.info(line, 'payload pack generation ended');
      } catch (err) {
        logger.error({ err }, 'payload pack worker error; will retry');
        await sleep(pollMs);
      }
    }
  };
  const loop = Promise.all(Array.from({ length: concurrency }, slot));
  logger.info({ pollMs, leaseMs, concurrency, perBrand }, 'payload pack worker started');
  return {
    async stop() {
      stopping.abort();
      for (const wake of [...wakers]) wake();
      await loop;
    },
  };
}
