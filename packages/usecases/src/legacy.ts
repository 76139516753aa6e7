import { randomUUID } from 'node:crypto';
import {
  appendEvents, bumpKpis, findBatchOfJob, lockJob, moveJob, Brand, MintBatch, MintLot, OutboxMessage, Product, ProductionBatch,
} from '@mint/db';
import {
  ConflictError, IllegalStateError, InvalidInputError, NotFoundError, activationModes, enqueuePreflighted, isUuid, lotResolverUrl,
  lotViolations, preflight, type ActivationMode, type FieldViolation, type JobStatus, type Lot, type NewEvent,
} from '@mint/domain';
import type { Actor, UseCaseContext } from './context.ts';

/** The notice every CreateMintBatchFromJob response (and its log line) carries. */
export const createMintBatchFromJobDeprecation = 'create_mint_batch_from_job is deprecated; use submit_mint_request';

/** Parameters of the deprecated {@link createMintBatchFromJob}. */
export interface CreateMintBatchFromJobInput {
  readonly brandId: string;
  /** A QUEUED or PREFLIGHTED job of the brand that has no batch yet. */
  readonly mintJobId: string;
  readonly activationMode: ActivationMode;
  /** Lots of a batch-mode job (same rules as submit); must be empty for a serial job. */
  readonly lots: readonly Lot[];
}

/** Result of {@link createMintBatchFromJob}. */
export interface CreateMintBatchFromJobResult {
  readonly mintJobId: string;
  readonly mintBatchId: string;
  /** The job's status after the call: always QUEUED. */
  readonly status: JobStatus;
  /** {@link createMintBatchFromJobDeprecation}. */
  readonly deprecation: string;
}

/**
 * Deprecated create_mint_batch_from_job: gives a QUEUED or PREFLIGHTED job (usually the one a
 * passing preflight left) its draft batch, as submit would: the brand's resolver base, the
 * product's GTIN, validated lots as mint_lots rows; moves PREFLIGHTED -> QUEUED by
 * compare-and-set, writes an outbox message so an executor picks the job up, counts the batch in
 * batches_created and writes mint_batch_created (plus mint_job_queued for a PREFLIGHTED job), all
 * in one transaction under the job's row lock. Preflight is checked again, since the product may
 * have changed since: blocked is IllegalStateError naming the codes. Missing or foreign job:
 * NotFoundError; another status, or a job that already has a batch: IllegalStateError.
 */
export async function createMintBatchFromJob(
  ctx: UseCaseContext,
  actor: Actor,
  input: CreateMintBatchFromJobInput,
): Promise<CreateMintBatchFromJobResult> {
  const v: FieldViolation[] = [];
  if (!isUuid(input.mintJobId)) v.push({ field: 'mint_job_id', message: 'must be a uuid' });
  if (!activationModes.includes(input.activationMode)) v.push({ field: 'activation_mode', message: 'must be active_at_mint or first_scan' });
  if (v.length > 0) throw new InvalidInputError(v);
  const { brandId, mintJobId } = input;
  return ctx.db.em.fork().transactional(async (em) => {
    const job = await lockJob(em, brandId, mintJobId);
    if (job === null) throw new NotFoundError(`mint job ${mintJobId} not found`);
    if (job.status !== 'QUEUED' && job.status !== 'PREFLIGHTED') {
      throw new IllegalStateError(`mint job ${mintJobId} is ${job.status}; only QUEUED or PREFLIGHTED jobs get a batch`);
    }
    if ((await findBatchOfJob(em, brandId, mintJobId)) !== null) throw new IllegalStateError(`mint job ${mintJobId} already has a batch`);
    if (job.scopeType === 'serial' && input.lots.length > 0) {
      throw new InvalidInputError([{ field: 'lots', message: 'must not be provided for a serial job' }]);
    }
    const lotProblems = lotViolations(input.lots, job.requestedQuantity);
    if (lotProblems.length > 0) throw new InvalidInputError(lotProblems);

    const product = await em.findOne(Product, { brandId, id: job.productId });
    const productionBatch = job.productionBatchId === null ? null : await em.findOne(ProductionBatch, { brandId, id: job.productionBatchId });
    const reasons = preflight({
      productId: job.productId, product, productBatchRequested: job.productionBatchId !== null, productionBatch,
      requestedQuantity: job.requestedQuantity,
    });
    if (reasons.length > 0 || product === null) {
      throw new IllegalStateError(`mint job ${mintJobId} no longer passes preflight: ${reasons.map((r) => r.code).join(', ')}`);
    }
    const brand = await em.findOneOrFail(Brand, { id: brandId });
    const now = ctx.clock();
    const batchId = randomUUID();
    em.create(MintBatch, {
      brandId, id: batchId, mintJobId, productId: product.id, productionBatchId: job.productionBatchId,
      status: 'draft', identityMode: job.scopeType, activationMode: input.activationMode,
      requestedQuantity: job.requestedQuantity, mintedQuantity: 0, resolverBaseUrl: brand.resolverBaseUrl,
      gtin: product.gtin ?? null, createdAt: now, updatedAt: now,
    });
    for (const lot of input.lots) {
      em.create(MintLot, {
        brandId, mintBatchId: batchId, lotCode: lot.lotCode, qty: lot.qty, gtin: product.gtin ?? null,
        resolverUrl: lotResolverUrl(brand.resolverBaseUrl, product.gtin ?? null, lot.lotCode), createdAt: now,
      });
    }
    em.create(OutboxMessage, { brandId, kind: 'mint', jobId: mintJobId, createdAt: now });
    await em.flush();
    const events: NewEvent[] = [];
    if (job.status === 'PREFLIGHTED') {
      if (!(await moveJob(em, brandId, mintJobId, enqueuePreflighted(), now))) throw new ConflictError(`mint job ${mintJobId} moved concurrently`);
      events.push({
        brandId, eventType: 'mint_job_queued', entityType: 'mint_job', entityId: mintJobId, actor: actor.id,
        payload: { requested_quantity: job.requestedQuantity, identity_mode: job.scopeType, mint_batch_id: batchId, from: 'PREFLIGHTED', deprecated_flow: true },
      });
    }
    events.push({
      brandId, eventType: 'mint_batch_created', entityType: 'mint_batch', entityId: batchId, actor: actor.id,
      payload: { mint_job_id: mintJobId, activation_mode: input.activationMode, lots: input.lots.length, deprecated_flow: true },
    });
    await bumpKpis(em, brandId, { batchesCreated: 1 });
    await appendEvents(em, now, events);
    return { mintJobId, mintBatchId: batchId, status: 'QUEUED', deprecation: createMintBatchFromJobDeprecation };
  });
}
