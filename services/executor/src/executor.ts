import type { JobBus, JobSubscription } from '@mint/bus';
import { defaultLeaseMs } from '@mint/domain';
import {
  findImportsToSweep,
  findJobsToSweep,
  purgeStaleImportKeys,
  maintainScanLedger,
  purgeExpiredIdempotencyRecords,
  relayOutbox,
  sweepPackStore,
  type UseCaseContext,
} from '@mint/usecases';
import type { Logger } from 'pino';
import type { Metrics } from '@mint/runtime';
import { runMintJob } from './mint-worker.ts';
import { runImportJob } from './import-worker.ts';
import { settle } from './settle.ts';
import { startPackWorker } from './pack-worker.ts';
import { startSerialMoveWorker } from './serial-move-worker.ts';
import { startWebhookWorker, type WebhookWorkerOptions } from './webhook-worker.ts';

/** Expired Idempotency-Key records deleted per statement by the sweeper. */
const purgeBatch = 1_000;
import type { PackStore } from '@mint/store';

/** Options of {@link startExecutor}. */
export interface ExecutorOptions {
  readonly ctx: UseCaseContext;
  readonly bus: JobBus;
  readonly logger: Logger;
  /** Jobs run at once by this process. */
  readonly concurrency: number;
  /** Units in one chunk transaction at most. */
  readonly chunkSize: number;
  /** Lease on a job (default 30 s); every chunk renews it, a crashed executor's job is taken over after it. */
  readonly leaseMs?: number;
  /** Chunks of one job written at once, each over its own connection (default 1); see the measurements below. */
  readonly writers?: number;
  /** Name of this executor in leases (default `executor-<pid>`). */
  readonly owner?: string;
  /** How often the outbox relay publishes new jobs (default 50 ms: an empty outbox costs one indexed query). */
  readonly relayIntervalMs?: number;
  /** How often the sweeper looks for jobs to republish and deletes expired Idempotency-Key records, and keeps the scan ledger's partitions and rollups (default 15 s). */
  readonly sweepIntervalMs?: number;
  /** Days raw scan events are kept: the sweeper drops a day's partition whole past it (its daily rollups stay). 0 or absent keeps them all. */
  readonly scanEventRetentionDays?: number;
  /** How long a QUEUED job, or a job whose lease lapsed, must be untouched before the sweeper republishes it (default 60 s). */
  readonly idleJobMs?: number;
  /** The private pack store; when given, the payload pack worker runs in this process. */
  readonly packStore?: PackStore;
  /** How often the pack worker looks for pending packs when idle (default 1 s). */
  readonly packPollIntervalMs?: number;
  /** Packs this process generates at once (PACK_CONCURRENCY; default 2). */
  readonly packConcurrency?: number;
  /** Packs of one brand generating at once across every executor (PACK_CONCURRENCY_PER_BRAND; default 1). */
  readonly packConcurrencyPerBrand?: number;
  /** Imports of one brand running at once across every executor (IMPORT_CONCURRENCY_PER_BRAND; default 1). */
  readonly importConcurrencyPerBrand?: number;
  /** How often the pack store is swept of what interrupted pack writes left (default every 10 minutes, first at start). */
  readonly packStoreSweepIntervalMs?: number;
  /** Counts units minted, chunk durations and lease renewals and losses (serving them is main's job); optional. */
  readonly metrics?: Pick<Metrics, 'unitsMinted' | 'chunkDuration' | 'leaseRenewals' | 'leaseLosses' | 'webhookDeliveries' | 'webhookDuration'>;
  /** How long the serial move worker waits before looking again when no move is running (default 1 s). */
  readonly serialMovePollIntervalMs?: number;
  /** Webhook delivery settings; when given, the webhook worker runs in this process. */
  readonly webhooks?: Omit<WebhookWorkerOptions, 'ctx' | 'logger' | 'metrics'>;
}

/** A running executor. */
export interface Executor {
  /** Takes no new lease, releases running jobs' leases between chunks and naks their messages, and resolves when all handlers returned. */
  stop(): Promise<void>;
}

/** Repeats `task` every `intervalMs` (never overlapping) until stopped; errors go to `onError`. */
function every(intervalMs: number, task: () => Promise<unknown>, onError: (e: unknown) => void): () => Promise<void> {
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<unknown> = Promise.resolve();
  const tick = () => {
    running = task()
      .catch(onError)
      .finally(() => {
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
 * Starts the executor: consumes mint jobs from the bus (each under a database lease), relays the
 * outbox to the bus, and sweeps jobs nobody holds back onto it (the spec's background scheduler).
 *
 * One job is written by one lease holder, `writers` chunks at a time (EXECUTOR_JOB_WRITERS, default
 * 2), each chunk its own transaction over its own connection, covering the lowest missing seqs;
 * each writer takes the job's next chunk as soon as its last one committed (usecases' runMint).
 * Measured on the 2-core target (PostgreSQL 15, mint_units with its five indexes, 200k rows per
 * run): unnest chunks of 2,000 rows write ~45k rows/s over one connection and ~55k over two; COPY
 * ~33k over one (the rows are built in JavaScript on the same cores) and ~64k over two. End to end
 * (`npm run bench:mint`, 100k units) one writer reached ~36k units/s (0.61 of the two-connection
 * COPY baseline), two writers ~78-80k units/s (0.91-0.96). Two writers pay; more than two add
 * nothing on two cores. The unnest writer stays: it matches COPY per connection and stays inside
 * the ORM's transaction.
 */
export function startExecutor(options: ExecutorOptions): Executor {
  const { ctx, bus, logger } = options;
  let stopping = false;
  const subscription: JobSubscription = bus.subscribe(
    'mint',
    async (msg) =>
      settle(
        msg,
        await runMintJob(
          {
            ctx,
            logger,
            chunkSize: options.chunkSize,
            leaseMs: options.leaseMs ?? defaultLeaseMs,
            writers: options.writers ?? 1,
            owner: options.owner ?? `executor-${process.pid}`,
            stopping: () => stopping,
            progress: bus,
            ...(options.metrics === undefined ? {} : { metrics: options.metrics }),
          },
          msg,
        ),
      ),
    { concurrency: options.concurrency, onError: (err, job) => logger.error({ err, jobId: job?.id, brandId: job?.brandId }, 'mint job handler error') },
  );
  // Product CSV imports: one at a time per process, so an import never crowds out mint jobs.
  const imports: JobSubscription = bus.subscribe(
    'import',
    async (msg) =>
      settle(
        msg,
        await runImportJob(
          {
            ctx,
            logger,
            ...(options.importConcurrencyPerBrand === undefined ? {} : { perBrand: options.importConcurrencyPerBrand }),
          },
          msg,
        ),
      ),
    {
      concurrency: 1,
      onError: (err, job) => logger.error({ err, job }, 'import job handler error'),
    },
  );
  const stopRelay = every(
    options.relayIntervalMs ?? 50,
    async () => {
      while ((await relayOutbox(ctx, (job) => bus.publish(job))) > 0);
    },
    (err) => logger.warn({ err }, 'outbox relay failed; will retry'),
  );
  const stopSweeper = every(
    options.sweepIntervalMs ?? 15_000,
    async () => {
      const idleJobMs = options.idleJobMs ?? 60_000;
      // One republish per job and idle window: distinct from the original publish, which the bus
      // would otherwise drop as a duplicate inside its deduplication window.
      const republish = String(Math.floor(ctx.clock().getTime() / idleJobMs));
      for (const job of await findJobsToSweep(ctx, idleJobMs)) await bus.publish({ kind: 'mint', ...job }, { republish });
      // Imports deferred for their brand's cap (or whose message was lost) are published again.
      for (const job of await findImportsToSweep(ctx, idleJobMs)) await bus.publish({ kind: 'import', ...job }, { republish });
      // Keys of ended or abandoned imports that their end did not delete.
      await purgeStaleImportKeys(ctx);
      // Idempotency-Key records past their expiry and scan events past retention, a bounded batch at a time.
      while ((await purgeExpiredIdempotencyRecords(ctx, purgeBatch)) === purgeBatch);
      // The scan ledger: day partitions made ahead, closed days rolled up, days past retention dropped whole.
      if (!stopping) {
        const upkeep = await maintainScanLedger(ctx, { retentionDays: options.scanEventRetentionDays ?? 0 });
        if (upkeep.partitionsDropped.length > 0) logger.info({ days: upkeep.partitionsDropped }, 'dropped scan partitions past retention');
      }
    },
    (err) => logger.warn({ err }, 'sweeper failed; will retry'),
  );
  const packStore = options.packStore;
  const stopStoreSweeper =
    packStore === undefined
      ? null
      : every(
          options.packStoreSweepIntervalMs ?? 10 * 60_000,
          async () => {
            const removed = await sweepPackStore(ctx, packStore);
            if (removed > 0) logger.info({ removed }, 'deleted what interrupted pack writes left in the pack store');
          },
          (err) => logger.warn({ err }, 'pack store sweep failed; will retry'),
        );
  const packs =
    options.packStore === undefined
      ? null
      : startPackWorker({
          ctx,
          store: options.packStore,
          logger,
          ...(options.packPollIntervalMs === undefined ? {} : { pollIntervalMs: options.packPollIntervalMs }),
          ...(options.packConcurrency === undefined ? {} : { concurrency: options.packConcurrency }),
          ...(options.packConcurrencyPerBrand === undefined ? {} : { perBrand: options.packConcurrencyPerBrand }),
        });
  const webhooks =
    options.webhooks === undefined
      ? null
      : startWebhookWorker({
          ctx,
          logger,
          ...options.webhooks,
          ...(options.metrics === undefined ? {} : { metrics: options.metrics }),
        });
  const serialMoves = startSerialMoveWorker({
    ctx,
    logger,
    ...(options.serialMovePollIntervalMs === undefined ? {} : { pollIntervalMs: options.serialMovePollIntervalMs }),
  });
  logger.info({ concurrency: options.concurrency, chunkSize: options.chunkSize, leaseMs: options.leaseMs ?? defaultLeaseMs }, 'executor started');
  return {
    async stop() {
      stopping = true;
      await Promise.all([
        subscription.stop(),
        stopRelay(),
        stopSweeper(),
        stopStoreSweeper?.(),
        packs?.stop(),
        webhooks?.stop(),
        imports.stop(),
        serialMoves.stop(),
      ]);
      logger.info('executor stopped');
    },
  };
}
