import { randomUUID } from 'node:crypto';
import { classifyMintError, decideMintFailure, isTerminalJobStatus, type Lease, type MintSetback } from '@mint/domain';
import type { ProgressFeed } from '@mint/bus';
import {
  claimMintJob,
  failMintJob,
  publishJobProgress,
  recordFailedAttempt,
  releaseMintJob,
  runMint,
  sqlState,
  type CycleResult,
  type LoadedJob,
  type UseCaseContext,
} from '@mint/usecases';
import type { Logger } from 'pino';
import type { Metrics } from '@mint/runtime';
import type { Delivery, Outcome } from './settle.ts';

/** What a mint worker needs. */
export interface MintWorkerOptions {
  readonly ctx: UseCaseContext;
  readonly logger: Logger;
  /** Units in one chunk transaction at most. */
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
  /** Where the job's progress is published after every committed chunk (the job bus), for the API's watchers; optional. */
  readonly progress?: Pick<ProgressFeed, 'publishProgress'>;
}

/**
 * Runs one delivered mint job: claims the job's lease (or, when another live worker holds it, asks
 * for a redelivery when that lease would lapse), then runs chunks until the job is terminal,
 * extending the ack deadline after each. On shutdown the lease is released between chunks so
 * another executor continues at once. Every setback (held, stopping, lost lease, error) is decided
 * by the domain's decideMintFailure; this worker only counts the attempt and writes FAILED.
 */
export async function runMintJob(options: MintWorkerOptions, msg: Delivery): Promise<Outcome> {
  const { ctx, logger, leaseMs } = options;
  const { id: jobId, brandId } = msg.job;
  const log = logger.child({ jobId, brandId, delivery: msg.deliveryCount });
  let lease: Lease | null = null;
  // The last committed progress, for the FAILED update (watchers keep the count they saw).
  let lastMinted = 0;
  let lastRequested = 0;
  // Publishes committed progress for the API's watchers, once per change.
  let reported = '';
  const report = (progress: CycleResult) => {
    lastMinted = progress.mintedQuantity;
    lastRequested = progress.requestedQuantity;
    const seen = `${progress.status}/${progress.mintedQuantity}`;
    if (options.progress === undefined || seen === reported) return;
    reported = seen;
    publishJobProgress(options.progress, brandId, {
      mintJobId: jobId,
      status: progress.status,
      mintedQuantity: progress.mintedQuantity,
      requestedQuantity: progress.requestedQuantity,
      failureReason: null,
    });
  };
  const release = async () => {
    if (lease === null) return;
    const held = lease;
    lease = null;
    await releaseMintJob(ctx, held).catch((err: unknown) => log.warn({ err }, 'releasing the lease failed; it lapses by itself'));
  };
  const setback = async (what: MintSetback, error?: unknown): Promise<Outcome> => {
    const attempts = what.kind === 'transient' ? await recordFailedAttempt(ctx, brandId, jobId, what.message).catch(() => 0) : 0;
    const decision = decideMintFailure(what, { attempts, lastDelivery: msg.lastDelivery }, Math.random());
    if (decision.kind !== 'fail') return decision;
    if ((await failMintJob(ctx, brandId, jobId, decision.reason)) && options.progress !== undefined) {
      publishJobProgress(options.progress, brandId, {
        mintJobId: jobId,
        status: 'FAILED',
        mintedQuantity: lastMinted,
        requestedQuantity: lastRequested,
        failureReason: decision.reason,
      });
    }
    log.error({ err: error, attempts }, `mint job failed (${what.kind} error)`);
    return { kind: 'done' };
  };
  try {
    if (options.stopping()) return await setback({ kind: 'stopping' });
    const claim = await claimMintJob(ctx, brandId, jobId, `${options.owner}/${randomUUID().slice(0, 8)}`, leaseMs);
    if (claim.kind === 'finished') return { kind: 'done' };
    if (claim.kind === 'held') {
      log.debug({ retryInMs: claim.retryInMs }, 'mint job is held by another worker');
      return await setback({ kind: 'held', retryInMs: claim.retryInMs });
    }
    lease = claim.lease;
    log.info({ leaseToken: lease.token }, 'mint job leased');
    // The first run starts from what the claim read; a later one (the job had gaps beyond one plan) reads it again.
    for (let claimed: LoadedJob | undefined = claim.job; ; claimed = undefined) {
      if (options.stopping()) {
        await release();
        log.info('shutting down: lease released, job handed back');
        return await setback({ kind: 'stopping' });
      }
      const run = await runMint(ctx, lease, {
        chunkSize: options.chunkSize,
        leaseMs,
        writers: options.writers,
        stopping: options.stopping,
        ...(claimed ? { claimed } : {}),
        onChunk: (chunk) => {
          options.metrics?.chunkDuration.observe(chunk.seconds);
          options.metrics?.unitsMinted.inc(chunk.insertedCount);
          options.metrics?.leaseRenewals.inc();
          msg.working();
          report(chunk);
          // The job's timeline at LOG_LEVEL=debug: each chunk's commit (pino's time) and duration.
          log.debug(
            { firstSeq: chunk.firstSeq, units: chunk.insertedCount, mintedQuantity: chunk.mintedQuantity, ms: Math.round(chunk.seconds * 1000) },
            'mint chunk committed',
          );
        },
      });
      // A lot or product-only job, or a run that wrote nothing, has no chunk that reported it.
      report(run);
      if (isTerminalJobStatus(run.status)) {
        lease = null;
        log.info({ status: run.status, mintedQuantity: run.mintedQuantity }, 'mint job finished');
        return { kind: 'done' };
      }
    }
  } catch (error) {
    // A paused holder's chunk transaction is ended by PostgreSQL (idle-in-transaction timeout) and
    // surfaces as a connection error: when the lease is gone too, that is a lost lease, not a failed attempt.
    const held: Lease | null = lease;
    lease = null;
    const stillHeld = held === null ? null : await releaseMintJob(ctx, held).catch(() => null);
    const what = classifyMintError(error, sqlState(error), stillHeld === false, leaseMs);
    if (what.kind === 'lease_lost') {
      options.metrics?.leaseLosses.inc();
      log.warn({ err: error }, 'lease lost: another executor took the job over; late chunk rejected');
    } else if (what.kind === 'cannot_run') log.warn({ err: error }, 'mint job cannot run; dropping the message');
    else if (what.kind === 'conflict') log.info({ err: error }, 'mint job moved concurrently; retrying');
    const outcome = await setback(what, error);
    if (what.kind === 'transient' && outcome.kind === 'retry') log.warn({ err: error, delayMs: outcome.delayMs }, 'mint job attempt failed; retrying');
    return outcome;
  }
}
