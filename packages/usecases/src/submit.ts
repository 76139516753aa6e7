import { randomUUID } from 'node:crypto';
import { UniqueConstraintViolationException } from '@mikro-orm/core';
import { appendEvents, MintBatch, MintJob, type Em } from '@mint/db';
import { validateMintRequest, type BlockingReason, type JobStatus, type MintRequest } from '@mint/domain';
import type { Actor, UseCaseContext } from './context.ts';
import { checkPreflight, createDraftBatch } from './draft-batch.ts';

/** Result of submit_mint_request: a created or replayed job, or the reasons preflight blocked it. */
export type SubmitResult =
  | { readonly ok: true; readonly mintJobId: string; readonly mintBatchId: string; readonly status: JobStatus; readonly isDuplicate: boolean }
  | { readonly ok: false; readonly blockingReasons: readonly BlockingReason[]; readonly productId: string; readonly productBatchId: string | null };

/**
 * Runs the request's own checks, preflight and production-batch linkage, then creates one QUEUED
 * job and its draft batch (see createDraftBatch: lots, outbox message, counters, events) in one
 * transaction. No units are created. A repeated idempotency key returns the existing job with
 * isDuplicate=true, also when the repeats race each other.
 */
export async function submitMintRequest(ctx: UseCaseContext, actor: Actor, request: MintRequest): Promise<SubmitResult> {
  validateMintRequest(request);
  try {
    return await ctx.db.em.fork().transactional((em) => submitInTransaction(ctx, em, actor, request));
  } catch (error) {
    if (error instanceof UniqueConstraintViolationException && request.idempotencyKey !== null) {
      const existing = await findByIdempotencyKey(ctx.db.em.fork(), request.brandId, request.idempotencyKey);
      if (existing) return existing;
    }
    throw error;
  }
}

async function findByIdempotencyKey(em: Em, brandId: string, key: string): Promise<SubmitResult | null> {
  const job = await em.findOne(MintJob, { brandId, idempotencyKey: key });
  if (!job) return null;
  const batch = await em.findOne(MintBatch, { brandId, mintJobId: job.id });
  if (!batch) return null;
  return { ok: true, mintJobId: job.id, mintBatchId: batch.id, status: job.status as JobStatus, isDuplicate: true };
}

async function submitInTransaction(ctx: UseCaseContext, em: Em, actor: Actor, request: MintRequest): Promise<SubmitResult> {
  const { brandId } = request;
  if (request.idempotencyKey !== null) {
    const existing = await findByIdempotencyKey(em, brandId, request.idempotencyKey);
    if (existing) return existing;
  }
  const { product, reasons: blockingReasons } = await checkPreflight(em, brandId, {
    productId: request.productId, productionBatchId: request.productBatchId, requestedQuantity: request.requestedQuantity,
  });
  if (blockingReasons.length > 0 || product === null) {
    return { ok: false, blockingReasons, productId: request.productId, productBatchId: request.productBatchId };
  }
  const now = ctx.clock();
  const jobId = randomUUID();
  em.create(MintJob, {
    brandId, id: jobId, status: 'QUEUED', scopeType: request.identityMode, requestedQuantity: request.requestedQuantity,
    productId: product.id, productionBatchId: request.productBatchId, idempotencyKey: request.idempotencyKey,
    createdAt: now, updatedAt: now,
  });
  const batchId = randomUUID();
  await appendEvents(em, now, [{
    brandId, eventType: 'mint_job_queued', entityType: 'mint_job', entityId: jobId, actor: actor.id,
    payload: { requested_quantity: request.requestedQuantity, identity_mode: request.identityMode, mint_batch_id: batchId },
  }]);
  await createDraftBatch(em, {
    brandId, batchId, mintJobId: jobId, product, productionBatchId: request.productBatchId, identityMode: request.identityMode,
    activationMode: request.activationMode, requestedQuantity: request.requestedQuantity, lots: request.lots, actor, now,
  });
  return { ok: true, mintJobId: jobId, mintBatchId: batchId, status: 'QUEUED', isDuplicate: false };
}
