import { randomUUID } from 'node:crypto';
import type { JobMessage } from '@mint/bus';
import {
  attemptsExhausted, isConflictError, isIllegalStateError, isLeaseLostError, isNotFoundError, isPermanentSqlState, isTerminalJobStatus,
  mintJobRetry, retryDelayMs, type Lease,
} from '@mint/domain';
import { claimMintJob, failMintJob, recordFailedAttempt, releaseMintJob, runMintCycle, sqlState, type UseCaseContext } from '@mint/usecases';
import type { Logger } from 'pino';
import type { Metrics } from '@mint/runtime';
import type { Outcome } from './settle.ts';

/** What a mint worker needs. */
export interface MintWorkerOptions {
  readonly ctx: UseCaseContext;
  readonly logger: Logger;
  /** Units per processing cycle (one transaction). */
  readonly chunkSize: number;
  /** Chunks of the job written at once, each in its own transaction over its own connection. */
  readonly writers: number;
  /** Length of this executor's lease on a job; every chunk renews it. */
  readonly leaseMs: number;
  /** This executor's name; each run of a job leases as `<owner>/<random>`. */
  readonly owner: string;
  /** True once shutdown began: the worker takes no new lease, stops between chunks and hands the job back. */
  readonly stopping: () => boolean;
  /** Counts units minted, chunk durations and lease renewals and losses; optional. */
  readonly metrics?: Pick<Metrics, 'unitsMinted' | 'chunkDuration' | 'leaseRenewals' | 'leaseLosses'>;
}

/** Longest a delivery waits before asking again about a job someone else holds (a kick holds it only briefly). */
const maxHeldRetryMs = 5000;

/**
 * Runs one delivered mint job: claims the job's lease (or, when another live worker holds it, asks
 * for a redelivery when that lease would lapse), then runs chunks until the job is terminal,
 * extending the ack deadline after each. A lost lease means another executor took over: nothing
 * was written and the delivery is handed back. On shutdown the lease is released between chunks
 * so another executor continues at once. Permanent errors fail the job at once; transient ones
 * count an attempt and retry with backoff until the attempts or the bus's deliveries run out.
 */
export async function runMintJob(options: MintWorkerOptions, msg: JobMessage): Promise<Outcome> {
  const { ctx, logger, leaseMs } = options;
  const { id: jobId, brandId } = msg.job;
  const log = logger.child({ jobId, brandId, delivery: msg.deliveryCount });
  let lease: Lease | null = null;
  const release = async () => {
    if (lease === null) return;
    const held = lease;
    lease = null;
    await releaseMintJob(ctx, held).catch((err: unknown) => log.warn({ err }, 'releasing the lease failed; it lapses by itself'));
  };
  try {
    if (options.stopping()) return { kind: 'retry', delayMs: 0 };
    const claim = await claimMintJob(ctx, brandId, jobId, `${options.owner}/${randomUUID().slice(0, 8)}`, leaseMs);
    if (claim.kind === 'finished') return { kind: 'done' };
    if (claim.kind === 'held') {
      log.debug({ retryInMs: claim.retryInMs }, 'mint job is held by another worker');
      return { kind: 'retry', delayMs: Math.min(claim.retryInMs, maxHeldRetryMs) + Math.round(Math.random() * 250) };
    }
    lease = claim.lease;
    log.info({ leaseToken: lease.token }, 'mint job leased');
    for (;;) {
      if (options.stopping()) {
        await release();
        log.info('shutting down: lease released, job handed back');
        return { kind: 'retry', delayMs: 0 };
      }
      const cycleStarted = performance.now();
      const cycle = await runMintCycle(ctx, lease, options.chunkSize, leaseMs, options.writers);
      options.metrics?.chunkDuration.observe((performance.now() - cycleStarted) / 1000);
      options.metrics?.unitsMinted.inc(cycle.insertedCount);
      options.metrics?.leaseRenewals.inc();
      msg.working();
      if (isTerminalJobStatus(cycle.status)) {
        lease = null;
        log.info({ status: cycle.status, mintedQuantity: cycle.mintedQuantity }, 'mint job finished');
        return { kind: 'done' };
      }
    }
  } catch (error) {
    // A paused holder's chunk transaction is ended by PostgreSQL (idle-in-transaction timeout) and
    // surfaces as a connection error: when the lease is gone too, that is a lost lease, not a failed attempt.
    const held: Lease | null = lease;
    lease = null;
    const stillHeld = held === null ? null : await releaseMintJob(ctx, held).catch(() => null);
    if (isLeaseLostError(error) || stillHeld === false) {
      options.metrics?.leaseLosses.inc();
      log.warn({ err: error }, 'lease lost: another executor took the job over; late chunk rejected');
      return { kind: 'retry', delayMs: leaseMs };
    }
    if (isNotFoundError(error) || isIllegalStateError(error)) {
      log.warn({ err: error }, 'mint job cannot run; dropping the message');
      return { kind: 'drop' };
    }
    if (isConflictError(error)) {
      log.info({ err: error }, 'mint job moved concurrently; retrying');
      return { kind: 'retry', delayMs: 100 };
    }
    const message = error instanceof Error ? error.message : String(error);
    if (isPermanentSqlState(sqlState(error))) {
      await failMintJob(ctx, brandId, jobId, `permanent error: ${message}`);
      log.error({ err: error }, 'mint job failed (permanent error)');
      return { kind: 'done' };
    }
    const attempts = await recordFailedAttempt(ctx, brandId, jobId, message).catch(() => 0);
    if (attemptsExhausted(mintJobRetry, attempts) || msg.lastDelivery) {
      await failMintJob(ctx, brandId, jobId, `gave up after ${attempts} failed attempts: ${message}`);
      log.error({ err: error, attempts }, 'mint job failed');
      return { kind: 'done' };
    }
    const delayMs = retryDelayMs(mintJobRetry, attempts, Math.random());
    log.warn({ err: error, attempts, delayMs }, 'mint job attempt failed; retrying');
    return { kind: 'retry', delayMs };
  }
}
