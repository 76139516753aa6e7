import { findBatchOfJob, lockJob, moveJob, transaction } from '@mint/db';
import {
  ConflictError,
  IllegalStateError,
  InvalidInputError,
  NotFoundError,
  activationModes,
  enqueuePreflighted,
  isUuid,
  newMintBatchId,
  lotViolations,
  type ActivationMode,
  type FieldViolation,
  type JobStatus,
  type Lot,
  type NewEvent,
} from '@mint/domain';
import type { Actor, UseCaseContext } from '../context.ts';
import { checkPreflight, createDraftBatch } from './draft-batch.ts';

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
export async function createMintBatchFromJob(ctx: UseCaseContext, actor: Actor, input: CreateMintBatchFromJobInput): Promise<CreateMintBatchFromJobResult> {
  const v: FieldViolation[] = [];
  if (!isUuid(input.mintJobId)) v.push({ field: 'mint_job_id', message: 'must be a uuid' });
  if (!activationModes.includes(input.activationMode)) v.push({ field: 'activation_mode', message: 'must be active_at_mint or first_scan' });
  if (v.length > 0) throw new InvalidInputError(v);
  const { brandId, mintJobId } = input;
  return transaction(ctx.db, async (em) => {
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

    const { product, reasons } = await checkPreflight(em, brandId, {
      productId: job.productId,
      productionBatchId: job.productionBatchId,
      requestedQuantity: job.requestedQuantity,
    });
    if (reasons.length > 0 || product === null) {
      throw new IllegalStateError(`mint job ${mintJobId} no longer passes preflight: ${reasons.map((r) => r.code).join(', ')}`);
    }
    const now = ctx.clock();
    const batchId = newMintBatchId(now, ctx.randomFill);
    const events: NewEvent[] = [];
    if (job.status === 'PREFLIGHTED') {
      if (!(await moveJob(em, brandId, mintJobId, enqueuePreflighted(), now))) throw new ConflictError(`mint job ${mintJobId} moved concurrently`);
      events.push({
        brandId,
        eventType: 'mint_job_queued',
        entityType: 'mint_job',
        entityId: mintJobId,
        actor: actor.id,
        payload: {
          requested_quantity: job.requestedQuantity,
          identity_mode: job.scopeType,
          mint_batch_id: batchId,
          from: 'PREFLIGHTED',
          deprecated_flow: true,
        },
      });
    }
    await createDraftBatch(em, {
      brandId,
      batchId,
      mintJobId,
      product,
      productionBatchId: job.productionBatchId,
      identityMode: job.scopeType,
      activationMode: input.activationMode,
      requestedQuantity: job.requestedQuantity,
      lots: input.lots,
      actor,
      now,
      events,
      eventDetails: { deprecated_flow: true },
    });
    return { mintJobId, mintBatchId: batchId, status: 'QUEUED', deprecation: createMintBatchFromJobDeprecation };
  });
}
