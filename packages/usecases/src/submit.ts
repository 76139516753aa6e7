import { randomUUID } from 'node:crypto';
import { UniqueConstraintViolationException } from '@mikro-orm/core';
import { appendEvents, bumpKpis, Brand, MintBatch, MintJob, MintLot, OutboxMessage, Product, ProductionBatch, type Em } from '@mint/db';
import {
  lotResolverUrl, preflight, validateMintRequest,
  type BlockingReason, type JobStatus, type MintRequest,
} from '@mint/domain';
import type { Actor, UseCaseContext } from './context.ts';

/** Result of submit_mint_request: a created or replayed job, or the reasons preflight blocked it. */
export type SubmitResult =
  | { readonly ok: true; readonly mintJobId: string; readonly mintBatchId: string; readonly status: JobStatus; readonly isDuplicate: boolean }
  | { readonly ok: false; readonly blockingReasons: readonly BlockingReason[]; readonly productId: string; readonly productBatchId: string | null };

/**
 * Runs the request's own checks, preflight and production-batch linkage, then creates one QUEUED
 * job, its draft batch, its lots (batch mode), an outbox message and audit events in one
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
  const product = await em.findOne(Product, { brandId, id: request.productId });
  const productionBatch = request.productBatchId === null ? null : await em.findOne(ProductionBatch, { brandId, id: request.productBatchId });
  const blockingReasons = preflight({
    productId: request.productId,
    product,
    productBatchRequested: request.productBatchId !== null,
    productionBatch,
    requestedQuantity: request.requestedQuantity,
  });
  if (blockingReasons.length > 0 || product === null) {
    return { ok: false, blockingReasons, productId: request.productId, productBatchId: request.productBatchId };
  }
  const brand = await em.findOneOrFail(Brand, { id: brandId });
  const now = ctx.clock();
  const jobId = randomUUID();
  const batchId = randomUUID();
  em.create(MintJob, {
    brandId, id: jobId, status: 'QUEUED', scopeType: request.identityMode, requestedQuantity: request.requestedQuantity,
    productId: product.id, productionBatchId: request.productBatchId, idempotencyKey: request.idempotencyKey,
    createdAt: now, updatedAt: now,
  });
  em.create(MintBatch, {
    brandId, id: batchId, mintJobId: jobId, productId: product.id, productionBatchId: request.productBatchId,
    status: 'draft', identityMode: request.identityMode, activationMode: request.activationMode,
    requestedQuantity: request.requestedQuantity, mintedQuantity: 0, resolverBaseUrl: brand.resolverBaseUrl,
    gtin: product.gtin ?? null, createdAt: now, updatedAt: now,
  });
  for (const lot of request.lots) {
    em.create(MintLot, {
      brandId, mintBatchId: batchId, lotCode: lot.lotCode, qty: lot.qty, gtin: product.gtin ?? null,
      resolverUrl: lotResolverUrl(brand.resolverBaseUrl, product.gtin ?? null, lot.lotCode), createdAt: now,
    });
  }
  em.create(OutboxMessage, { brandId, kind: 'mint', jobId, createdAt: now });
  await em.flush();
  await bumpKpis(em, brandId, { batchesCreated: 1 });
  await appendEvents(em, now, [
    {
      brandId, eventType: 'mint_job_queued', entityType: 'mint_job', entityId: jobId, actor: actor.id,
      payload: { requested_quantity: request.requestedQuantity, identity_mode: request.identityMode, mint_batch_id: batchId },
    },
    {
      brandId, eventType: 'mint_batch_created', entityType: 'mint_batch', entityId: batchId, actor: actor.id,
      payload: { mint_job_id: jobId, activation_mode: request.activationMode, lots: request.lots.length },
    },
  ]);
  return { ok: true, mintJobId: jobId, mintBatchId: batchId, status: 'QUEUED', isDuplicate: false };
}
