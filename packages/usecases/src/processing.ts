import { appendEvents, advanceMinted, query, bumpKpis, findBatchOfJob, insertUnitChunk, moveBatchStatus, moveJob, MintJob, type BatchRecord, type Em } from '@mint/db';
import {
  ConflictError, IllegalStateError, NotFoundError, claimJob, failJob, completeSerialJob, completeWithoutUnits, defaultChunkSize,
  generateSerials, initialUnitStatus, isTerminalJobStatus, lotViolations, moveBatch, nextChunk, startProcessing, unitResolverUrl,
  type JobStatus, type NewEvent,
} from '@mint/domain';
import type { UseCaseContext } from './context.ts';

/** Result of one processing cycle (process_mint_job_batch). */
export interface CycleResult {
  /** True when the job is COMPLETED (insertedCount may then be 0). */
  readonly done: boolean;
  readonly insertedCount: number;
  readonly mintedQuantity: number;
  readonly requestedQuantity: number;
  readonly status: JobStatus;
}

async function loadJob(em: Em, brandId: string, jobId: string): Promise<{ job: MintJob; batch: BatchRecord }> {
  const job = await em.findOne(MintJob, { brandId, id: jobId }, { refresh: true });
  if (!job) throw new NotFoundError(`mint job ${jobId} not found`);
  const batch = await findBatchOfJob(em, brandId, jobId);
  if (!batch) throw new IllegalStateError(`mint job ${jobId} has no batch yet (status ${job.status})`);
  return { job, batch };
}

/**
 * Runs one bounded cycle of a job: claims it when QUEUED (QUEUED -> RESERVED, mint_job_started),
 * starts a serial job (RESERVED -> PROCESSING), inserts at most `maxUnits` units in one transaction
 * with the batch's minted quantity advanced by compare-and-set, and completes the job and its batch
 * with the chunk that reaches the requested quantity. Lot and product-only jobs finalise right
 * after the claim without creating tokens. Every move is a compare-and-set: a concurrent cycle on
 * the same job makes this one fail with ConflictError and write nothing.
 */
export async function processMintJobBatch(ctx: UseCaseContext, brandId: string, jobId: string, maxUnits: number | null = null): Promise<CycleResult> {
  const chunkSize = maxUnits ?? defaultChunkSize;
  let { job, batch } = await loadJob(ctx.db.em.fork(), brandId, jobId);
  const result = (inserted: number): CycleResult => ({
    done: job.status === 'COMPLETED', insertedCount: inserted, mintedQuantity: batch.mintedQuantity,
    requestedQuantity: job.requestedQuantity, status: job.status as JobStatus,
  });
  const status = job.status as JobStatus;
  if (isTerminalJobStatus(status)) return result(0);
  if (status === 'PREFLIGHTED') throw new IllegalStateError(`mint job ${jobId} is PREFLIGHTED and has no batch`);

  if (status === 'QUEUED') await transition(ctx, async (em, now) => {
    if (!(await moveJob(em, brandId, jobId, claimJob(), now))) throw new ConflictError(`mint job ${jobId} was claimed concurrently`);
    await appendEvents(em, now, [event(brandId, 'mint_job_started', jobId, { identity_mode: batch.identityMode })]);
  });
  ({ job, batch } = await loadJob(ctx.db.em.fork(), brandId, jobId));

  if (job.status === 'RESERVED') {
    if (batch.identityMode === 'batch') {
      await finaliseWithoutUnits(ctx, batch);
      ({ job, batch } = await loadJob(ctx.db.em.fork(), brandId, jobId));
      return result(0);
    }
    await transition(ctx, async (em, now) => {
      if (!(await moveJob(em, brandId, jobId, startProcessing(), now))) throw new ConflictError(`mint job ${jobId} was started concurrently`);
    });
    ({ job, batch } = await loadJob(ctx.db.em.fork(), brandId, jobId));
  }
  if (job.status !== 'PROCESSING') return result(0);

  const chunk = nextChunk(batch.mintedQuantity, batch.requestedQuantity, chunkSize);
  const serials = generateSerials(chunk.count, ctx.randomFill);
  await transition(ctx, async (em, now) => {
    if (chunk.count > 0) {
      if (!(await advanceMinted(em, brandId, batch.id, batch.mintedQuantity, chunk.count, now))) {
        throw new ConflictError(`mint batch ${batch.id} advanced concurrently`);
      }
      const unitStatus = initialUnitStatus(batch.activationMode);
      await insertUnitChunk(em, {
        brandId, mintBatchId: batch.id, firstSeq: chunk.firstSeq, serials, gtin: batch.gtin,
        resolverUrlPrefix: unitResolverUrl(batch.resolverBaseUrl, batch.gtin, ''), status: unitStatus, createdAt: now,
      });
      await bumpKpis(em, brandId, { totalTokensMinted: chunk.count, activeTokens: unitStatus === 'active' ? chunk.count : 0 });
      await appendEvents(em, now, [
        { ...event(brandId, 'mint_units_created', batch.id, { count: chunk.count, first_seq: chunk.firstSeq, mint_job_id: jobId }), entityType: 'mint_batch' },
      ]);
    }
    if (batch.mintedQuantity + chunk.count >= batch.requestedQuantity) await complete(em, now, batch, completeSerialJob());
  });
  ({ job, batch } = await loadJob(ctx.db.em.fork(), brandId, jobId));
  return result(chunk.count);
}

/** Lot mode validates and confirms the lots; product-only mode needs nothing. Both complete at once. */
async function finaliseWithoutUnits(ctx: UseCaseContext, batch: BatchRecord): Promise<void> {
  const { brandId, mintJobId: jobId } = batch;
  const violations = lotViolations(batch.lots, batch.requestedQuantity);
  if (violations.length > 0) {
    const reason = `lots invalid: ${violations.map((v) => `${v.field}: ${v.message}`).join('; ')}`;
    await transition(ctx, async (em, now) => {
      if (!(await moveJob(em, brandId, jobId, { from: 'RESERVED', to: 'FAILED' }, now, reason))) throw new ConflictError(`mint job ${jobId} moved concurrently`);
      await appendEvents(em, now, [event(brandId, 'mint_job_failed', jobId, { reason })]);
    });
    return;
  }
  await transition(ctx, async (em, now) => {
    if (!(await advanceMinted(em, brandId, batch.id, 0, batch.requestedQuantity, now))) throw new ConflictError(`mint batch ${batch.id} advanced concurrently`);
    await bumpKpis(em, brandId, { totalTokensMinted: batch.requestedQuantity });
    if (batch.lots.length > 0) {
      await appendEvents(em, now, [{
        ...event(brandId, 'mint_lots_confirmed', batch.id, { lots: batch.lots.length, quantity: batch.requestedQuantity, mint_job_id: jobId }),
        entityType: 'mint_batch',
      }]);
    }
    await complete(em, now, batch, completeWithoutUnits());
  });
}

async function complete(em: Em, now: Date, batch: BatchRecord, move: ReturnType<typeof completeSerialJob>): Promise<void> {
  const { brandId, mintJobId: jobId } = batch;
  if (!(await moveJob(em, brandId, jobId, move, now))) throw new ConflictError(`mint job ${jobId} completed concurrently`);
  const batchMove = moveBatch('draft', 'minted');
  if (!(await moveBatchStatus(em, brandId, batch.id, batchMove, now))) throw new ConflictError(`mint batch ${batch.id} moved concurrently`);
  await appendEvents(em, now, [
    event(brandId, 'mint_job_completed', jobId, { minted_quantity: batch.requestedQuantity, mint_batch_id: batch.id }),
    { ...event(brandId, 'mint_batch_status_changed', batch.id, { from: batchMove.from, to: batchMove.to }), entityType: 'mint_batch' },
  ]);
}

function event(brandId: string, eventType: NewEvent['eventType'], entityId: string, payload: Record<string, unknown>): NewEvent {
  return { brandId, eventType, entityType: 'mint_job', entityId, payload, actor: null };
}

/** Runs one state change in its own transaction, stamped with one clock reading. */
async function transition(ctx: UseCaseContext, body: (em: Em, now: Date) => Promise<void>): Promise<void> {
  await ctx.db.em.fork().transactional((em) => body(em, ctx.clock()));
}

/**
 * Marks a job FAILED from whatever non-terminal status it has, keeping `reason` and writing a
 * mint_job_failed event. Returns false when the job was already terminal (nothing changes).
 */
export async function failMintJob(ctx: UseCaseContext, brandId: string, jobId: string, reason: string): Promise<boolean> {
  return ctx.db.em.fork().transactional(async (em) => {
    const job = await em.findOne(MintJob, { brandId, id: jobId });
    if (!job || isTerminalJobStatus(job.status as JobStatus)) return false;
    const now = ctx.clock();
    if (!(await moveJob(em, brandId, jobId, failJob(job.status as JobStatus), now, reason))) return false;
    await appendEvents(em, now, [event(brandId, 'mint_job_failed', jobId, { reason, from: job.status })]);
    return true;
  });
}

/** Counts one more failed attempt of a job (keeping the error) and returns the new total. */
export async function recordFailedAttempt(ctx: UseCaseContext, brandId: string, jobId: string, error: string): Promise<number> {
  const [row] = await query<{ attempts: number }>(
    ctx.db.em.fork(),
    `update mint_jobs set attempts = attempts + 1, last_error = ?, updated_at = ? where brand_id = ? and id = ? returning attempts`,
    [error.slice(0, 2000), ctx.clock(), brandId, jobId],
  );
  return row?.attempts ?? 0;
}
