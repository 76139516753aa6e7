import type { JobBus, JobSubscription } from '@mint/bus';
import { findIdleJobs, relayOutbox, type UseCaseContext } from '@mint/usecases';
import type { Logger } from 'pino';
import { runMintJob } from './mint-worker.ts';
import { settle } from './settle.ts';

/** Options of {@link startExecutor}. */
export interface ExecutorOptions {
  readonly ctx: UseCaseContext;
  readonly bus: JobBus;
  readonly logger: Logger;
  /** Jobs run at once by this process. */
  readonly concurrency: number;
  /** Units per processing cycle. */
  readonly chunkSize: number;
  /** How often the outbox relay publishes new jobs. */
  readonly relayIntervalMs?: number;
  /** How often the sweeper looks for idle jobs, and how idle they must be. */
  readonly sweepIntervalMs?: number;
  readonly idleJobMs?: number;
}

/** A running executor. */
export interface Executor {
  /** Takes no new job, hands running jobs back between chunks, and resolves when all handlers returned. */
  stop(): Promise<void>;
}

/** Repeats `task` every `intervalMs` (never overlapping) until stopped; errors go to `onError`. */
function every(intervalMs: number, task: () => Promise<unknown>, onError: (e: unknown) => void): () => Promise<void> {
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<unknown> = Promise.resolve();
  const tick = () => {
    running = task().catch(onError).finally(() => {
      if (!stopped) timer = setTimeout(tick, intervalMs);
    });
  };
  timer = setTimeout(tick, 0);
  return async () => {
    stopped = true;
    clearTimeout(timer);
    await running;
  };
}

/**
 * Starts the executor: consumes mint jobs from the bus, relays the outbox to the bus, and sweeps
 * idle jobs back onto it (the spec's background scheduler).
 */
export function startExecutor(options: ExecutorOptions): Executor {
  const { ctx, bus, logger } = options;
  let stopping = false;
  const subscription: JobSubscription = bus.subscribe(
    'mint',
    async (msg) => settle(msg, await runMintJob({ ctx, logger, chunkSize: options.chunkSize, stopping: () => stopping }, msg)),
    { concurrency: options.concurrency, onError: (err, job) => logger.error({ err, job }, 'mint job handler error') },
  );
  const stopRelay = every(options.relayIntervalMs ?? 200, async () => {
    while ((await relayOutbox(ctx, (job) => bus.publish(job))) > 0);
  }, (err) => logger.warn({ err }, 'outbox relay failed; will retry'));
  const stopSweeper = every(options.sweepIntervalMs ?? 15_000, async () => {
    for (const job of await findIdleJobs(ctx, options.idleJobMs ?? 60_000)) await bus.publish({ kind: 'mint', ...job });
  }, (err) => logger.warn({ err }, 'sweeper failed; will retry'));
  logger.info({ concurrency: options.concurrency, chunkSize: options.chunkSize }, 'executor started');
  return {
    async stop() {
      stopping = true;
      await Promise.all([subscription.stop(), stopRelay(), stopSweeper()]);
      logger.info('executor stopped');
    },
  };
}
