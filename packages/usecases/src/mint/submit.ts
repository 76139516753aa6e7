import { hash, randomUUID } from 'node:crypto';
import { findJobByIdempotencyKey, isUniqueViolation, retryingDeadlocks, type Em, type ExpectedSubjects, type KeyedJob, standalone } from '@mint/db';
import { IdempotencyKeyReusedError, newMintBatchId, validateMintRequest, type BlockingReason, type JobStatus, type MintRequest } from '@mint/domain';
import type { Actor, PublishedJob, UseCaseContext } from '../context.ts';
import { checkPreflight, createDraftBatch, preflightOf } from './draft-batch.ts';

/** Result of submit_mint_request: a created or replayed job, or the reasons preflight blocked it. */
export type SubmitResult =
  | { readonly ok: true; readonly mintJobId: string; readonly mintBatchId: string; readonly status: JobStatus; readonly isDuplicate: boolean }
  | { readonly ok: false; readonly blockingReasons: readonly BlockingReason[]; readonly productId: string; readonly productBatchId: string | null };

/**
 * Runs the request's own checks, preflight and production-batch linkage, then creates one QUEUED
 * job and its draft batch (see createDraftBatch: lots, outbox message, counters, events). No
 * units are created. One round trip once the product (and production batch) were read before:
 * preflight decides on the rows as last read, and the one statement that writes everything
 * (atomic on its own: a refused or failed submit leaves nothing behind) writes only while they
 * still read so. Otherwise, or when that compare is lost, two: one query reads the product, the
 * production batch and any job of the same idempotency key, one statement writes. A repeated idempotency key returns the existing job
 * with isDuplicate=true, also when the repeats race each other (the loser of the race hits the
 * key's unique constraint, writes nothing, and reads the winner's job). The same key with a
 * different request (another product, quantity, mode, production batch or lots) is refused with
 * IdempotencyKeyReusedError naming the key, on every protocol alike, and the key's job stays as
 * it is. Concurrent requests under one key can meet in a deadlock inside PostgreSQL (each waits
 * for the other's insert of the key); the one PostgreSQL aborts is run again, and then finds the
 * winner's job, so callers never see it.
 */
export async function submitMintRequest(ctx: UseCaseContext, actor: Actor, request: MintRequest, options: SubmitOptions = {}): Promise<SubmitResult> {
  validateMintRequest(request);
  return submitValid(ctx, actor, request, options);
}

/** How a submit hands its job on. */
export interface SubmitOptions {
  /**
   * Publish the new job right after commit through ctx.publishJob (default true). Submit + kick
   * passes false: it runs the job's first cycle itself, and an executor woken at once would only
   * race it for the lease; the outbox relay still hands the job on.
   */
  readonly publish?: boolean;
}

/** {@link submitMintRequest} of a request that passed `validateMintRequest`. */
export async function submitValid(ctx: UseCaseContext, actor: Actor, request: MintRequest, options: SubmitOptions = {}): Promise<SubmitResult> {
  const requestHash = request.idempotencyKey === null ? null : mintRequestHash(request);
  // Every statement of a submit stands alone (no transaction, no entities), so it runs on the
  // entity manager's pool without a fork of its own: a fork cost about 4 % of the API's CPU per submit.
  const em = standalone(ctx.db);
  // Concurrent requests under one key can deadlock inside PostgreSQL; the victim wrote nothing and runs again.
  const result = await retryingDeadlocks(async () => {
    try {
      return await submit(ctx, em, actor, request, requestHash);
    } catch (error) {
      if (isUniqueViolation(error) && request.idempotencyKey !== null) {
        const existing = await findJobByIdempotencyKey(em, request.brandId, request.idempotencyKey);
        if (existing) return duplicateOf(existing, request, requestHash);
      }
      throw error;
    }
  });
  if (result.ok && !result.isDuplicate && options.publish !== false) announce(ctx, { kind: 'mint', id: result.mintJobId, brandId: request.brandId });
  return result;
}

/**
 * Fingerprint of what a mint request asks for (everything but its workspace and key): SHA-256 of
 * its fields in a fixed order, so one key never stands for two different requests.
 */
export function mintRequestHash(request: MintRequest): string {
  const fields = [
    request.productId,
    request.productBatchId,
    request.requestedQuantity,
    request.identityMode,
    request.activationMode,
    request.lots.map((l) => [l.lotCode, l.qty]),
  ];
  return hash('sha256', JSON.stringify(fields), 'hex');
}

/** The key's job as a duplicate answer, or IdempotencyKeyReusedError when it was created by another request. */
function duplicateOf(job: KeyedJob, request: MintRequest, requestHash: string | null): SubmitResult {
  if (job.requestHash !== null && requestHash !== null && job.requestHash !== requestHash) {
    throw new IdempotencyKeyReusedError(`idempotency_key ${request.idempotencyKey} was already used with a different request`);
  }
  return { ok: true, mintJobId: job.jobId, mintBatchId: job.batchId, status: job.status as JobStatus, isDuplicate: true };
}

async function submit(ctx: UseCaseContext, em: Em, actor: Actor, request: MintRequest, requestHash: string | null): Promise<SubmitResult> {
  const { brandId } = request;
  const subjects = rememberedSubjects(ctx);
  const key = `${brandId}/${request.productId}/${request.productBatchId ?? ''}`;
  const remembered = subjects.get(key);
  // Decided on the rows as last read; the write compares them, and a lost compare reads afresh below.
  // A repeated idempotency key meets the key's unique constraint there (see submitValid).
  if (
    remembered !== undefined &&
    preflightOf(
      { productId: request.productId, productionBatchId: request.productBatchId, requestedQuantity: request.requestedQuantity },
      remembered.product,
      remembered.productionBatch,
    ).length === 0
  ) {
    const created = await create(ctx, em, actor, request, requestHash, remembered.product, remembered);
    if (created !== null) return created;
    subjects.delete(key);
  }
  const {
    product,
    productionBatch,
    reasons: blockingReasons,
    existingJob,
  } = await checkPreflight(em, brandId, {
    productId: request.productId,
    productionBatchId: request.productBatchId,
    requestedQuantity: request.requestedQuantity,
    idempotencyKey: request.idempotencyKey,
  });
  if (existingJob !== null) return duplicateOf(existingJob, request, requestHash);
  if (blockingReasons.length > 0 || product === null) {
    return { ok: false, blockingReasons, productId: request.productId, productBatchId: request.productBatchId };
  }
  if (subjects.size >= rememberedSubjectsSize) subjects.delete(subjects.keys().next().value!);
  subjects.set(key, { product, productionBatch });
  return (await create(ctx, em, actor, request, requestHash, product, undefined))!;
}

/** Product and production-batch rows kept per process from the last read (oldest dropped first). */
const rememberedSubjectsSize = 10_000;

const subjectMemories = new WeakMap<UseCaseContext['db'], Map<string, ExpectedSubjects>>();

/**
 * The product and production batch each brand/product/production-batch combination last read as,
 * for this context's database: a submit decides on them without reading, and its write compares
 * them with the rows (a compare-and-set), so a changed or deleted row is never written past.
 */
function rememberedSubjects(ctx: UseCaseContext): Map<string, ExpectedSubjects> {
  let memory = subjectMemories.get(ctx.db);
  if (memory === undefined) subjectMemories.set(ctx.db, (memory = new Map()));
  return memory;
}

/**
 * Writes the QUEUED job of a request that passed preflight on `product`; with `expected`, only
 * while the product and production batch still read so (null when they no longer do, nothing written).
 */
async function create(
  ctx: UseCaseContext,
  em: Em,
  actor: Actor,
  request: MintRequest,
  requestHash: string | null,
  product: ExpectedSubjects['product'],
  expected: ExpectedSubjects | undefined,
): Promise<SubmitResult | null> {
  const { brandId } = request;
  const now = ctx.clock();
  const jobId = randomUUID();
  const batchId = newMintBatchId(now, ctx.randomFill);
  const written = await createDraftBatch(em, {
    brandId,
    batchId,
    mintJobId: jobId,
    newJob: { idempotencyKey: request.idempotencyKey, requestHash },
    product,
    productionBatchId: request.productBatchId,
    identityMode: request.identityMode,
    activationMode: request.activationMode,
    requestedQuantity: request.requestedQuantity,
    lots: request.lots,
    actor,
    now,
    events: [
      {
        brandId,
        eventType: 'mint_job_queued',
        entityType: 'mint_job',
        entityId: jobId,
        actor: actor.id,
        payload: { requested_quantity: request.requestedQuantity, identity_mode: request.identityMode, mint_batch_id: batchId },
      },
    ],
    ...(expected === undefined ? {} : { expected }),
  });
  return written ? { ok: true, mintJobId: jobId, mintBatchId: batchId, status: 'QUEUED', isDuplicate: false } : null;
}

/**
 * Publishes a committed job at once (ctx.publishJob), without making the caller wait for the bus.
 * Failures are dropped on purpose: the outbox message committed with the job gets it published by
 * the relay.
 */
function announce(ctx: UseCaseContext, job: PublishedJob): void {
  try {
    ctx.publishJob?.(job);
  } catch {
    // the relay publishes it
  }
}
