import type { JobMessage } from '@mint/bus';
import { attemptsExhausted, isConflictError, isIllegalStateError, isNotFoundError, isTerminalJobStatus, retryDelayMs } from '@mint/domain';
import { failMintJob, processMintJobBatch, recordFailedAttempt, type UseCaseContext } from '@mint/usecases';
import type { Logger } from 'pino';
import type { Outcome } from './settle.ts';

/** What a mint worker needs. */
export interface MintWorkerOptions {
  readonly ctx: UseCaseContext;
  readonly logger: Logger;
  /** Units per processing cycle. */
  readonly chunkSize: number;
  /** True once shutdown began: the worker stops between chunks and hands the job back. */
  readonly stopping: () => boolean;
}

/**
 * Runs one delivered mint job: processing cycles until the job is terminal, extending the ack
 * deadline between chunks. A lost compare-and-set means another worker advanced the job: the
 * loop re-reads and goes on. Transient errors count an attempt and retry with backoff until the
 * attempts (or the bus's deliveries) run out, then the job is marked FAILED.
 */
export async function runMintJob(options: MintWorkerOptions, msg: JobMessage): Promise<Outcome> {
  const { ctx, logger } = options;
  const { id: jobId, brandId } = msg.job;
  const log = logger.child({ jobId, brandId, delivery: msg.deliveryCount });
  try {
    for (;;) {
      if (options.stopping()) return { kind: 'retry', delayMs: 0 };
      let cycle;
      try {
        cycle = await processMintJobBatch(ctx, brandId, jobId, options.chunkSize);
      } catch (error) {
        if (isConflictError(error)) continue;
        throw error;
      }
      msg.working();
      if (isTerminalJobStatus(cycle.status)) {
        log.info({ status: cycle.status, mintedQuantity: cycle.mintedQuantity }, 'mint job finished');
        return { kind: 'done' };
      }
    }
  } catch (error) {
    if (isNotFoundError(error) || isIllegalStateError(error)) {
      log.warn({ err: error }, 'mint job cannot run; dropping the message');
      return { kind: 'drop' };
    }
    const message = error instanceof Error ? error.message : String(error);
    const attempts = await recordFailedAttempt(ctx, brandId, jobId, message).catch(() => 0);
    if (attemptsExhausted(attempts) || msg.lastDelivery) {
      await failMintJob(ctx, brandId, jobId, `gave up after ${attempts} failed attempts: ${message}`);
      log.error({ err: error, attempts }, 'mint job failed');
      return { kind: 'done' };
    }
    const delayMs = retryDelayMs(Math.max(1, attempts), Math.random());
    log.warn({ err: error, attempts, delayMs }, 'mint job attempt failed; retrying');
    return { kind: 'retry', delayMs };
  }
}
