// The serial move worker: runs the chunks of serial moves (MoveSerials of a batch or range larger
// than one chunk) that the API left running, one chunk per transaction, oldest move first. Several
// executors share the work: a claim skips a move another worker holds, and a move whose chunk
// failed until its backoff ends (the use case counts the attempt and fails the move when they run
// out). Transport only.

import { runSerialMoveChunk, type UseCaseContext } from '@mint/usecases';
import type { Logger } from 'pino';

/** Options of {@link startSerialMoveWorker}. */
export interface SerialMoveWorkerOptions {
  readonly ctx: UseCaseContext;
  readonly logger: Logger;
  /** How long to wait before looking again when no move is running; default 1 s. */
  readonly pollIntervalMs?: number;
}

/** A running serial move worker. */
export interface SerialMoveWorker {
  /** Stops after the chunk in progress (which commits or rolls back whole) and resolves when the loop ended. */
  stop(): Promise<void>;
}

/** Starts the loop: run the next chunk of a running move, repeat; sleep `pollIntervalMs` when there is none. Errors are logged and the loop goes on. */
export function startSerialMoveWorker(options: SerialMoveWorkerOptions): SerialMoveWorker {
  const { ctx, logger } = options;
  const pollMs = options.pollIntervalMs ?? 1_000;
  let stopped = false;
  let wake: (() => void) | null = null;
  const sleep = (ms: number) =>
    new Promise<void>((resolve) => {
      const timer = setTimeout(() => {
        wake = null;
        resolve();
      }, ms);
      wake = () => {
        clearTimeout(timer);
        wake = null;
        resolve();
      };
    });
  const loop = (async () => {
    while (!stopped) {
      try {
        const move = await runSerialMoveChunk(ctx);
        if (move === null) {
          await sleep(pollMs);
          continue;
        }
        if (move.status === 'done') {
          logger.info({ moveId: move.id, brandId: move.brandId, action: move.action, moved: move.moved, refused: move.refused }, 'serial move done');
        } else if (move.status === 'failed') {
          logger.error({ moveId: move.id, brandId: move.brandId, action: move.action, moved: move.moved, error: move.error }, 'serial move failed');
        } else if (move.attempts > 0) {
          logger.warn(
            { moveId: move.id, brandId: move.brandId, attempts: move.attempts, error: move.error },
            'serial move chunk failed; will retry after a backoff',
          );
        }
      } catch (err) {
        logger.error({ err }, 'serial move worker error; will retry');
        await sleep(pollMs);
      }
    }
  })();
  return {
    async stop() {
      stopped = true;
      (wake as (() => void) | null)?.();
      await loop;
    },
  };
}
