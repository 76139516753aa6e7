import { randomUUID } from 'node:crypto';
import { UniqueConstraintViolationException } from '@mikro-orm/core';
import { findJobByIdempotencyKey, type Em } from '@mint/db';
import { validateMintRequest, type BlockingReason, type JobStatus, type MintRequest } from '@mint/domain';
import type { Actor, PublishedJob, UseCaseContext } from './context.ts';
import { checkPreflight, createDraftBatch } from './draft-batch.ts';

/** Result of submit_mint_request: a created or replayed job, or the reasons preflight blocked it. */
export type SubmitResult =
  | { readonly ok: true; readonly mintJobId: string; readonly mintBatchId: string; readonly status: JobStatus; readonly isDuplicate: boolean }
  | { readonly ok: false; readonly blockingReasons: readonly BlockingReason[]; readonly productId: string; readonly productBatchId: string | null };

/**
 * Runs the request's own checks, preflight and production-batch linkage, then creates one QUEUED
 * job and its draft batch (see createDraftBatch: lots, outbox message, counters, events). No
 * units are created. Two round trips: one query reads the product, the production batch and any
 * job of the same idempotency key; one statement writes everything, atomic on its own (a refused
 * or failed submit leaves nothing behind). A repeated idempotency key returns the existing job
 * with isDuplicate=true, also when the repeats race each other (the loser of the race hits the
 * key's unique constraint, writes nothing, and reads the winner's job).
 */
export async function submitMintRequest(ctx: UseCaseContext, actor: Actor, request: MintRequest): Promise<SubmitResult> {
  validateMintRequest(request);
  return submitValid(ctx, actor, request);
}

/** {@link submitMintRequest} of a request that passed `validateMintRequest`. */
export async function submitValid(ctx: UseCaseContext, actor: Actor, request: MintRequest): Promise<SubmitResult> {
  const em = ctx.db.em.fork();
  try {
    return await submit(ctx, em, actor, request);
  } catch (error) {
    if (error instanceof UniqueConstraintViolationException && request.idempotencyKey !== null) {
      const existing = await findJobByIdempotencyKey(ctx.db.em.fork(), request.brandId, request.idempotencyKey);
      if (existing) return duplicateOf(existing);
    }
    throw error;
  }
}

function duplicateOf(job: { readonly jobId: string; readonly status: string; readonly batchId: string }): SubmitResult {
  return { ok: true, mintJobId: job.jobId, mintBatchId: job.batchId, status: job.status as JobStatus, isDuplicate: true };
}

async function submit(ctx: UseCaseContext, em: Em, actor: Actor, request: MintRequest): Promise<SubmitResult> {
  const { brandId } = request;
  const { product, reasons: blockingReasons, existingJob } = await checkPreflight(em, brandId, {
    productId: request.productId, productionBatchId: request.productBatchId, requestedQuantity: request.requestedQuantity,
    idempotencyKey: request.idempotencyKey,
  });
  if (existingJob !== null) return duplicateOf(existingJob);
  if (blockingReasons.length > 0 || product === null) {
    return { ok: false, blockingReasons, productId: request.productId, productBatchId: request.productBatchId };
  }
  const now = ctx.clock();
  const jobId = randomUUID();
  const batchId = randomUUID();
  await createDraftBatch(em, {
    brandId, batchId, mintJobId: jobId, newJob: { idempotencyKey: request.idempotencyKey }, product, productionBatchId: request.productBatchId,
    identityMode: request.identityMode, activationMode: request.activationMode, requestedQuantity: request.requestedQuantity, lots: request.lots,
    actor, now,
    events: [{
      brandId, eventType: 'mint_job_queued', entityType: 'mint_job', entityId: jobId, actor: actor.id,
      payload: { requested_quantity: request.requestedQuantity, identity_mode: request.identityMode, mint_batch_id: batchId },
    }],
  });
  announce(ctx, { kind: 'mint', id: jobId, brandId });
  return { ok: true, mintJobId: jobId, mintBatchId: batchId, status: 'QUEUED', isDuplicate: false };
}

/**
 * Publishes a committed job at once (ctx.publishJob), without making the caller wait for the bus:
 * the answer goes out while the publish travels. Failures are dropped on purpose, the outbox
 * message committed with the job gets it published by the relay.
 */
function announce(ctx: UseCaseContext, job: PublishedJob): void {
  if (ctx.publishJob === null) return;
  ctx.publishJob(job).catch(() => undefined);
}
