/**
 * The minting engine (process_mint_job_batch) that the executor and the API both run.
 *
 * - Leases: a worker claims a job (claimMintJob) for an owner and a duration; the claim bumps the
 *   fencing token. Every transaction of the holder checks owner and token before it commits and
 *   renews the lease, so a holder that paused past its lease and was taken over writes nothing.
 * - Exactly once: a chunk is one transaction holding its units, the batch's minted-quantity
 *   increment, its event and, for the last chunk, the completion; units are unique on
 *   (mint_batch_id, seq), and chunks cover only the seqs still missing, so a repeated or
 *   redelivered chunk collides instead of minting twice and a job always ends with seqs 1..N.
 * - Events, each in the transaction of its move (see the table in the domain's events.ts):
 *   claim QUEUED -> RESERVED writes mint_job_started; each chunk writes mint_units_created;
 *   lots confirmed writes mint_lots_confirmed; reaching COMPLETED writes mint_job_completed and
 *   mint_batch_status_changed; reaching FAILED writes mint_job_failed.
 */
import { randomUUID } from 'node:crypto';
import {
  appendEvents,
  advanceMinted,
  assignBatchSerialOrdinal,
  brandSerialCipher,
  serialKeyContext,
  takeSerialOrdinal,
  bumpKpis,
  claimJobLease,
  commitChunk,
  writeCompletion,
  findBatchOfJob,
  findJobRecord,
  findJobStatus,
  findMissingSeqRanges,
  insertEpcisEvents,
  insertUnitChunk,
  isLockNotAvailable,
  isUniqueViolation,
  moveJob,
  readJobLease,
  recordJobAttempt,
  releaseJobLease,
  renewJobLease,
  setIdleInTransactionTimeout,
  sqlState,
  type BatchRecord,
  type Em,
  storedPackProfile,
  unitOfWork,
  transaction,
} from '@mint/db';

/** The executor classifies a failed run by its SQLSTATE (see classifyMintError). */
export { sqlState };
import {
  ConflictError,
  IllegalStateError,
  LeaseLostError,
  completionPackProfile,
  NotFoundError,
  decideClaim,
  defaultChunkSize,
  defaultLeaseMs,
  failJob,
  completeSerialJob,
  completeWithoutUnits,
  firstChunkUnits,
  generateSerialCipherKey,
  generateTimedSerials,
  hasDerivedUnitIds,
  initialUnitStatus,
  sealSecret,
  serialCipherMaxOrdinal,
  type SerialCipher,
  isTerminalJobStatus,
  leaseExpiry,
  lotViolations,
  moveBatch,
  planChunks,
  startProcessing,
  type Chunk,
  type JobStatus,
  type Lease,
  type NewEvent,
} from '@mint/domain';
import type { UseCaseContext } from '../context.ts';
import { mintCommissioningEvents } from '../lifecycle/index.ts';

/** Result of one processing cycle (process_mint_job_batch). */
export interface CycleResult {
  /** True when the job is COMPLETED (insertedCount may then be 0). */
  readonly done: boolean;
  readonly insertedCount: number;
  readonly mintedQuantity: number;
  readonly requestedQuantity: number;
  readonly status: JobStatus;
}

/** A job's status with its batch, as a run of the job starts from. */
export interface LoadedJob {
  readonly status: JobStatus;
  readonly batch: BatchRecord;
}

/** A job and its batch, read at once over two connections (they are on a job's critical path). */
async function loadJob(ctx: UseCaseContext, brandId: string, jobId: string): Promise<LoadedJob> {
  const [status, batch] = await Promise.all([findJobStatus(unitOfWork(ctx.db), brandId, jobId), findBatchOfJob(unitOfWork(ctx.db), brandId, jobId)]);
  if (status === null) throw new NotFoundError(`mint job ${jobId} not found`);
  if (!batch) throw new IllegalStateError(`mint job ${jobId} has no batch yet (status ${status})`);
  return { status, batch };
}

/** The outcome of {@link claimMintJob}. */
export type ClaimResult =
  /**
   * The caller holds the job until it releases it, finishes it, or stops renewing for the lease's
   * length. `job` is the job as the claim left it, for the run right after the claim (runMint's `claimed`).
   */
  | { readonly kind: 'claimed'; readonly lease: Lease; readonly job: LoadedJob }
  /** Another worker holds a live lease (or won the race to claim); ask again in `retryInMs`. */
  | { readonly kind: 'held'; readonly retryInMs: number }
  /** The job is COMPLETED or FAILED. */
  | { readonly kind: 'finished'; readonly status: JobStatus };

/** How long a claim waits for a row lock held by a stuck chunk transaction before it reports the job as held. */
const claimLockTimeoutMs = 2000;

/**
 * Claims the lease of a job for `owner` for `leaseMs`: a QUEUED job moves to RESERVED (writing
 * mint_job_started in the same transaction); a RESERVED or PROCESSING job whose lease was released
 * or has lapsed is taken over. Every claim bumps the fencing token, so the previous holder's later
 * chunks are rejected. NotFoundError for a missing job, IllegalStateError for a PREFLIGHTED one.
 */
export async function claimMintJob(ctx: UseCaseContext, brandId: string, jobId: string, owner: string, leaseMs: number = defaultLeaseMs): Promise<ClaimResult> {
  try {
    return await transaction(ctx.db, async (em) => {
      const now = ctx.clock();
      // Also sets the lock timeout of the claim's compare-and-set below.
      const read = await readJobLease(em, brandId, jobId, claimLockTimeoutMs);
      if (!read) throw new NotFoundError(`mint job ${jobId} not found`);
      const { lease: state, batch } = read;
      const decision = decideClaim(state, now);
      switch (decision.kind) {
        case 'finished':
          return { kind: 'finished', status: state.status } as const;
        case 'not_ready':
          throw new IllegalStateError(`mint job ${jobId} is PREFLIGHTED and has no batch`);
        case 'held':
          return { kind: 'held', retryInMs: decision.retryInMs } as const;
      }
      if (batch === null) throw new IllegalStateError(`mint job ${jobId} has no batch yet (status ${state.status})`);
      const started = decision.move === null ? null : jobEvent(brandId, 'mint_job_started', jobId, batch.id, { identity_mode: batch.identityMode });
      const token = await claimJobLease(em, brandId, jobId, state, decision.move, owner, leaseExpiry(now, leaseMs), now, started);
      if (token === null) return { kind: 'held', retryInMs: 100 } as const;
      // The batch as the claim read it is current: a chunk committed since would have renewed the
      // lease and failed the compare-and-set, and while the lease is held only its holder writes.
      return { kind: 'claimed', lease: { brandId, jobId, owner, token }, job: { status: decision.move?.to ?? state.status, batch } } as const;
    });
  } catch (error) {
    // A chunk transaction of a paused holder still has the row locked; its session is ended by
    // PostgreSQL after the lease's length of idleness, then the job can be taken over.
    if (isLockNotAvailable(error)) return { kind: 'held', retryInMs: claimLockTimeoutMs };
    throw error;
  }
}

/** Gives a held lease back so another worker can claim the job at once; false when it was no longer held. */
export async function releaseMintJob(ctx: UseCaseContext, lease: Lease): Promise<boolean> {
  return releaseJobLease(unitOfWork(ctx.db), lease, ctx.clock());
}

/** How {@link runMint} writes a job. */
export interface MintRunOptions {
  /** Units in one chunk transaction at most (default 2,000). */
  readonly chunkSize?: number;
  /** Length of the lease every chunk renews (default 30 s). */
  readonly leaseMs?: number;
  /** Chunks written at once, each in its own transaction over its own connection (default 1). */
  readonly writers?: number;
  /** Units the run writes at most, the lowest missing seqs first (default: all that are missing). */
  readonly unitLimit?: number;
  /** Asked before every chunk: true ends the run between chunks (the writers finish their current one). */
  readonly stopping?: () => boolean;
  /** Told after every committed chunk, with the highest minted quantity committed so far. */
  readonly onChunk?: (chunk: ChunkCommitted) => void;
  /** The job as its claim read it (ClaimResult's `job`), for the run right after the claim; absent: the run reads it. */
  readonly claimed?: LoadedJob;
}

/** A committed chunk as {@link MintRunOptions.onChunk} hears of it: the job's progress after it. */
export interface ChunkCommitted extends CycleResult {
  /** First seq of the chunk's units. */
  readonly firstSeq: number;
  /** Seconds the chunk took: its serials, then its transaction up to the commit. */
  readonly seconds: number;
}

/**
 * Writes a job under `lease` until it is COMPLETED, `unitLimit` units were written or `stopping`
 * says so: the missing seqs are planned once (planChunks: a lead chunk of the job's very first
 * units, then equal chunks of at most `chunkSize` in a multiple of `writers`). The lead chunk
 * commits alone; then each of `writers` writers, over its own connection, takes the next chunk as
 * soon as its last one committed, so no writer waits for another. A chunk is one transaction
 * holding its units, its minted-quantity increment, its event, the job's first move RESERVED ->
 * PROCESSING until one chunk committed it, and (for the chunk that reaches the requested quantity)
 * the completion of the job and its batch; every chunk checks and renews the lease just before it
 * commits (fencing). Lot and product-only jobs finalise at once without tokens. When a chunk fails, the
 * other writers finish their current chunk, take no more, and the first error is thrown:
 * LeaseLostError when the lease was taken over (that chunk wrote nothing), ConflictError when a
 * chunk had already been written by a concurrent run.
 */
export async function runMint(ctx: UseCaseContext, lease: Lease, options: MintRunOptions = {}): Promise<CycleResult> {
  const { brandId, jobId } = lease;
  const leaseMs = options.leaseMs ?? defaultLeaseMs;
  const { status, batch } = options.claimed ?? (await loadJob(ctx, brandId, jobId));
  const result = (inserted: number, minted: number, s: JobStatus = minted >= batch.requestedQuantity ? 'COMPLETED' : 'PROCESSING'): CycleResult => ({
    done: s === 'COMPLETED',
    insertedCount: inserted,
    mintedQuantity: minted,
    requestedQuantity: batch.requestedQuantity,
    status: s,
  });
  if (status !== 'RESERVED' && status !== 'PROCESSING') return result(0, batch.mintedQuantity, status);

  if (batch.identityMode === 'batch') {
    const outcome = await finaliseWithoutUnits(ctx, lease, leaseMs, batch, status);
    return result(0, outcome === 'COMPLETED' ? batch.requestedQuantity : batch.mintedQuantity, outcome);
  }
  const writers = Math.max(1, options.writers ?? 1);
  const coding = await serialCodingOf(ctx, batch);
  const missing = await findMissingSeqRanges(unitOfWork(ctx.db), brandId, batch.id, batch.mintedQuantity, batch.requestedQuantity);
  // A job's first run commits a small lead chunk first, so the job's first units are committed at once.
  const leadUnits = batch.mintedQuantity === 0 ? firstChunkUnits : 0;
  const chunks = planChunks(missing, {
    maxUnits: options.chunkSize ?? defaultChunkSize,
    writers,
    ...(options.unitLimit === undefined ? {} : { unitLimit: options.unitLimit }),
    leadUnits,
  });
  if (chunks.length === 0) {
    // Unreachable while counter, units and completion share a transaction; a re-read settles it.
    throw new ConflictError(`mint job ${jobId} has no units left to mint but is ${status}`);
  }
  let next = 0;
  let inserted = 0;
  let minted = batch.mintedQuantity;
  let starting = status === 'RESERVED';
  let failure: { readonly error: unknown } | null = null;
  const writer = async (upTo = chunks.length): Promise<void> => {
    while (failure === null && next < upTo && !(options.stopping?.() ?? false)) {
      const chunk = chunks[next++]!;
      const started = performance.now();
      try {
        const written = await writeChunk(ctx, lease, leaseMs, batch, chunk, starting, coding);
        if (written.started) starting = false;
        inserted += chunk.count;
        minted = Math.max(minted, written.minted);
        options.onChunk?.({ ...result(chunk.count, minted), firstSeq: chunk.firstSeq, seconds: (performance.now() - started) / 1000 });
      } catch (error) {
        failure ??= { error };
      }
    }
  };
  // The lead chunk commits alone: written beside the next chunks it shares the machine with them,
  // and its commit took up to 2-3 times as long (see firstChunkUnits).
  if (leadUnits > 0 && chunks.length > 1 && chunks[0]!.count === leadUnits) await writer(1);
  await Promise.all(Array.from({ length: Math.min(writers, chunks.length - next) }, () => writer()));
  if (failure !== null) throw (failure as { readonly error: unknown }).error;
  // Stopped before any chunk committed: the job is still RESERVED.
  return inserted === 0 && starting ? result(0, minted, status) : result(inserted, minted);
}

/** How a batch's serials are made: the brand key's encoding of (ordinal, seq), or null for random serials. */
interface SerialCoding {
  readonly ordinal: number;
  readonly cipher: SerialCipher;
}

/**
 * The serial coding of a serial batch: its ordinal, taken from the brand's counter before its
 * first unit (the brand's serial key made, sealed, on its first serial batch), and the brand's
 * cipher. Null (random serials, as before) for a batch that already has units without an ordinal
 * or whose unit ids are not derivable (minted before), and for lot batches.
 */
async function serialCodingOf(ctx: UseCaseContext, batch: BatchRecord): Promise<SerialCoding | null> {
  if (batch.identityMode !== 'serial') return null;
  const em = unitOfWork(ctx.db);
  let ordinal = batch.serialOrdinal;
  if (ordinal === null) {
    if (batch.mintedQuantity > 0 || !hasDerivedUnitIds(batch.id)) return null;
    const sealedKey = () =>
      sealSecret(
        ctx.webhookSecretKeys,
        Buffer.from(generateSerialCipherKey(ctx.randomFill)).toString('base64'),
        serialKeyContext(batch.brandId),
        ctx.randomFill,
      );
    const taken = await takeSerialOrdinal(em, batch.brandId, sealedKey, ctx.clock());
    if (taken > serialCipherMaxOrdinal) throw new IllegalStateError(`brand ${batch.brandId} has used all ${serialCipherMaxOrdinal} serial batch ordinals`);
    ordinal = await assignBatchSerialOrdinal(em, batch.brandId, batch.id, taken);
    if (ordinal === null) return null;
  }
  const cipher = await brandSerialCipher(em, batch.brandId);
  if (cipher === null) throw new IllegalStateError(`mint batch ${batch.id} has serial ordinal ${ordinal} but its brand has no serial key`);
  return { ordinal, cipher };
}

/**
 * Writes one chunk in one transaction and returns the batch's minted quantity after it, and whether
 * the job has left RESERVED (`start`: the job was RESERVED when the run began and no chunk has
 * reported it started; the chunk moves it as a compare-and-set, which a concurrent chunk of the
 * same run may have made first). The expensive insert runs first; the fencing check with all the
 * bookkeeping is one statement after it (commitChunk), so row locks are held only for the commit
 * and concurrent chunks of one job overlap. A lost lease rolls the chunk back (LeaseLostError).
 */
async function writeChunk(
  ctx: UseCaseContext,
  lease: Lease,
  leaseMs: number,
  batch: BatchRecord,
  chunk: Chunk,
  start: boolean,
  coding: SerialCoding | null,
): Promise<{ minted: number; started: boolean }> {
  const { brandId, mintJobId: jobId } = batch;
  const unitStatus = initialUnitStatus(batch.activationMode);
  // Encoded serials: one batched FF1 pass over the chunk (serial-cipher.ts). Random ones (a batch
  // minted before) start with the second of `now`, the units' created_at; drawn before the
  // transaction opens, so concurrent writers of a run draw in the order they started.
  const now = ctx.clock();
  const serials =
    coding === null ? generateTimedSerials(chunk.count, now, ctx.randomFill) : coding.cipher.encodeRange(coding.ordinal, chunk.firstSeq, chunk.count);
  try {
    return await transaction(ctx.db, async (em) => {
      // The insert sets the transaction's idle timeout on its way (as fenced does), so a holder paused after it
      // keeps its units' seqs from a takeover for no longer than its lease.
      await insertUnitChunk(
        em,
        {
          brandId,
          mintBatchId: batch.id,
          firstSeq: chunk.firstSeq,
          serials,
          status: unitStatus,
          createdAt: now,
          serialsEncoded: coding !== null,
        },
        { idleInTransactionTimeoutMs: leaseMs },
      );
      // Units commissioned at mint are reported so, with their chunk: exactly once, before any event packs them.
      if (unitStatus === 'active') {
        await insertEpcisEvents(
          em,
          mintCommissioningEvents({
            brandId,
            mintBatchId: batch.id,
            firstSeq: chunk.firstSeq,
            count: serials.length,
            at: now,
          }),
        );
      }
      // The lease is checked and extended as of the commit, not of the draw.
      const at = ctx.clock();
      const committed = await commitChunk(em, {
        lease,
        expiresAt: leaseExpiry(at, leaseMs),
        at,
        start: start ? startProcessing() : null,
        batchId: batch.id,
        count: chunk.count,
        activeCount: unitStatus === 'active' ? chunk.count : 0,
        event: jobEvent(brandId, 'mint_units_created', jobId, batch.id, { count: chunk.count, first_seq: chunk.firstSeq }),
      });
      if (committed === null) throw new LeaseLostError(`lease ${lease.token} of mint job ${jobId} was lost to another executor; chunk rejected`);
      if (committed.minted === batch.requestedQuantity) await complete(em, at, batch, completeSerialJob());
      return { minted: committed.minted, started: committed.status !== 'RESERVED' };
    });
  } catch (error) {
    if (isUniqueViolation(error))
      throw new ConflictError(`chunk at seq ${chunk.firstSeq} of mint batch ${batch.id} was written concurrently`, { cause: error });
    throw error;
  }
}

/**
 * One processing cycle (process_mint_job_batch, the API's ProcessMintJobBatch): claims a lease of
 * its own for the cycle, writes at most `maxUnits` units (default 2,000) over one connection and
 * releases the lease. A terminal job reports done with nothing inserted; a job another executor is
 * running is a ConflictError (retry later), and nothing is written.
 */
export async function processMintJobBatch(ctx: UseCaseContext, brandId: string, jobId: string, maxUnits: number | null = null): Promise<CycleResult> {
  return leasedRun(ctx, brandId, jobId, maxUnits ?? defaultChunkSize, maxUnits ?? defaultChunkSize);
}

/** Claims a short lease, writes chunks of at most `chunkSize` until `unitLimit` units were inserted or the job is terminal, and releases it. */
async function leasedRun(ctx: UseCaseContext, brandId: string, jobId: string, unitLimit: number, chunkSize: number): Promise<CycleResult> {
  const claim = await claimMintJob(ctx, brandId, jobId, `cycle:${randomUUID()}`, defaultLeaseMs);
  if (claim.kind === 'held') throw new ConflictError(`mint job ${jobId} is being processed by another executor; retry in ${claim.retryInMs} ms`);
  if (claim.kind === 'finished') {
    const { status, batch } = await loadJob(ctx, brandId, jobId);
    return {
      done: status === 'COMPLETED',
      insertedCount: 0,
      mintedQuantity: batch.mintedQuantity,
      requestedQuantity: batch.requestedQuantity,
      status: claim.status,
    };
  }
  let inserted = 0;
  try {
    // One run writes everything it planned; another covers what was beyond its plan (more than 64 gaps).
    for (let claimed: LoadedJob | undefined = claim.job; ; claimed = undefined) {
      const run = await runMint(ctx, claim.lease, { chunkSize, unitLimit: unitLimit - inserted, leaseMs: defaultLeaseMs, ...(claimed ? { claimed } : {}) });
      inserted += run.insertedCount;
      if (isTerminalJobStatus(run.status) || inserted >= unitLimit || run.insertedCount === 0) return { ...run, insertedCount: inserted };
    }
  } finally {
    await releaseMintJob(ctx, claim.lease).catch(() => false);
  }
}

/**
 * Runs one transaction under `lease`: the fencing check that renews the lease (LeaseLostError and
 * a rollback, nothing written, when it is no longer held), then `write`. The check takes the job's
 * row lock, so a takeover waits for this commit and a late holder's transaction sees the new
 * token. A holder paused inside the transaction has its session ended by PostgreSQL after
 * `leaseMs` of idleness, so it cannot block a takeover for long. (A chunk's transaction does the
 * same in two statements: see writeChunk.)
 */
async function fenced(ctx: UseCaseContext, lease: Lease, leaseMs: number, write: (em: Em, now: Date) => Promise<void>): Promise<void> {
  await transaction(ctx.db, async (em) => {
    await setIdleInTransactionTimeout(em, leaseMs);
    const now = ctx.clock();
    if (!(await renewJobLease(em, lease, leaseExpiry(now, leaseMs), now))) {
      throw new LeaseLostError(`lease ${lease.token} of mint job ${lease.jobId} was lost to another executor; nothing written`);
    }
    await write(em, now);
  });
}

/**
 * Lot mode validates and confirms the lots; product-only mode needs nothing. Both complete at once
 * under the lease; invalid lots fail the job at once (permanent). Returns the status reached.
 */
async function finaliseWithoutUnits(ctx: UseCaseContext, lease: Lease, leaseMs: number, batch: BatchRecord, from: JobStatus): Promise<JobStatus> {
  const { brandId, mintJobId: jobId } = batch;
  const violations = lotViolations(batch.lots, batch.requestedQuantity);
  if (violations.length > 0) {
    const reason = `lots invalid: ${violations.map((v) => `${v.field}: ${v.message}`).join('; ')}`;
    await fenced(ctx, lease, leaseMs, async (em, now) => {
      if (!(await moveJob(em, brandId, jobId, failJob(from), now, reason))) throw new ConflictError(`mint job ${jobId} moved concurrently`);
      await appendEvents(em, now, [jobEvent(brandId, 'mint_job_failed', jobId, batch.id, { reason, from })]);
    });
    return 'FAILED';
  }
  await fenced(ctx, lease, leaseMs, async (em, now) => {
    if (!(await advanceMinted(em, brandId, batch.id, 0, batch.requestedQuantity, now))) throw new ConflictError(`mint batch ${batch.id} advanced concurrently`);
    if (batch.lots.length > 0) {
      await appendEvents(em, now, [jobEvent(brandId, 'mint_lots_confirmed', jobId, batch.id, { lots: batch.lots.length, quantity: batch.requestedQuantity })]);
    }
    await complete(em, now, batch, from === 'RESERVED' ? completeWithoutUnits() : completeSerialJob());
    await bumpKpis(em, brandId, { totalTokensMinted: batch.requestedQuantity });
  });
  return 'COMPLETED';
}

async function complete(em: Em, now: Date, batch: BatchRecord, move: ReturnType<typeof completeSerialJob>): Promise<void> {
  const { brandId, mintJobId: jobId } = batch;
  const batchMove = moveBatch('draft', 'minted');
  // The batch's payload pack is created pending, until the executor's pack worker generates it.
  const done = await writeCompletion(em, {
    brandId,
    jobId,
    batchId: batch.id,
    jobMove: move,
    batchMove,
    at: now,
    pack: { purpose: 'completion', profile: storedPackProfile(completionPackProfile) },
    events: [
      jobEvent(brandId, 'mint_job_completed', jobId, batch.id, { minted_quantity: batch.requestedQuantity, mint_batch_id: batch.id }),
      {
        brandId,
        eventType: 'mint_batch_status_changed',
        entityType: 'mint_batch',
        entityId: batch.id,
        actor: null,
        payload: { from: batchMove.from, to: batchMove.to },
      },
    ],
  });
  if (!done.jobMoved) throw new ConflictError(`mint job ${jobId} completed concurrently`);
  if (!done.batchMoved) throw new ConflictError(`mint batch ${batch.id} moved concurrently`);
}

/**
 * An executor event of a job: an event of the job's batch (`entity_type = mint_batch`, the batch
 * id as entity id, the job id in the payload as `mint_job_id`), so the batch's history lists its
 * processing. A job without a batch (never the case once queued) keeps the job as its entity.
 */
function jobEvent(brandId: string, eventType: NewEvent['eventType'], jobId: string, batchId: string | null, payload: Record<string, unknown>): NewEvent {
  return batchId === null
    ? { brandId, eventType, entityType: 'mint_job', entityId: jobId, payload: { ...payload, mint_job_id: jobId }, actor: null }
    : { brandId, eventType, entityType: 'mint_batch', entityId: batchId, payload: { ...payload, mint_job_id: jobId }, actor: null };
}

/**
 * Marks a job FAILED from whatever non-terminal status it has, keeping `reason` and writing a
 * mint_job_failed event. Returns false when the job was already terminal (nothing changes).
 */
export async function failMintJob(ctx: UseCaseContext, brandId: string, jobId: string, reason: string): Promise<boolean> {
  return transaction(ctx.db, async (em) => {
    const job = await findJobRecord(em, brandId, jobId);
    if (!job || isTerminalJobStatus(job.status)) return false;
    const now = ctx.clock();
    if (!(await moveJob(em, brandId, jobId, failJob(job.status), now, reason))) return false;
    await appendEvents(em, now, [jobEvent(brandId, 'mint_job_failed', jobId, job.mintBatchId, { reason, from: job.status })]);
    return true;
  });
}

/** Counts one more failed attempt of a job (keeping the error) and returns the new total. */
export async function recordFailedAttempt(ctx: UseCaseContext, brandId: string, jobId: string, error: string): Promise<number> {
  return recordJobAttempt(unitOfWork(ctx.db), brandId, jobId, error, ctx.clock());
}
