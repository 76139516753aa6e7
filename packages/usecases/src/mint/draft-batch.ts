import {
  findPreflightSubjects,
  insertDraftBatch,
  type Em,
  type ExpectedSubjects,
  type PreflightProductionBatchRow,
  type PreflightProductRow,
  type PreflightSubjects,
} from '@mint/db';
import { lotResolverUrl, preflight, type ActivationMode, type BlockingReason, type IdentityMode, type Lot, type NewEvent } from '@mint/domain';
import type { Actor } from '../context.ts';

/** What preflight looked at, and its verdict. */
export interface PreflightCheck {
  /** The brand's product (with its brand's resolver base), or null when it does not exist there. */
  readonly product: PreflightProductRow | null;
  /** The production batch the request names, or null when it names none or the brand has no such batch. */
  readonly productionBatch: PreflightProductionBatchRow | null;
  /** Every blocking reason; empty when the request may be minted. */
  readonly reasons: BlockingReason[];
  /** The job of an earlier submit with the request's idempotency key, when one was given and found. */
  readonly existingJob: PreflightSubjects['existingJob'];
}

/**
 * Loads the brand's product and production batch (when one is named), and the job of an earlier
 * submit with the same idempotency key (when one is given), in one query, and runs the domain's
 * preflight over them. Shared by submit, the standalone preflight and the deprecated
 * CreateMintBatchFromJob, so the three can never disagree.
 */
export async function checkPreflight(
  em: Em,
  brandId: string,
  request: {
    readonly productId: string;
    readonly productionBatchId: string | null;
    readonly requestedQuantity: number;
    readonly idempotencyKey?: string | null;
  },
): Promise<PreflightCheck> {
  const { product, productionBatch, existingJob } = await findPreflightSubjects(
    em,
    brandId,
    request.productId,
    request.productionBatchId,
    request.idempotencyKey ?? null,
  );
  return { product, productionBatch, reasons: preflightOf(request, product, productionBatch), existingJob };
}

/** The domain's preflight of a request over the product and production batch it names (as read, or as remembered from a read). */
export function preflightOf(
  request: { readonly productId: string; readonly productionBatchId: string | null; readonly requestedQuantity: number },
  product: PreflightProductRow | null,
  productionBatch: PreflightProductionBatchRow | null,
): BlockingReason[] {
  return preflight({
    productId: request.productId,
    product,
    productBatchRequested: request.productionBatchId !== null,
    productionBatch,
    requestedQuantity: request.requestedQuantity,
  });
}

/** The batch to create for a job. */
export interface DraftBatchInput {
  readonly brandId: string;
  /** Id of the new batch (chosen by the caller, so its own events can name it). */
  readonly batchId: string;
  readonly mintJobId: string;
  /** Creates the QUEUED job too (submit); absent when the job exists (the deprecated flow). */
  readonly newJob?: { readonly idempotencyKey: string | null; readonly requestHash: string | null };
  readonly product: PreflightProductRow;
  readonly productionBatchId: string | null;
  readonly identityMode: IdentityMode;
  readonly activationMode: ActivationMode;
  readonly requestedQuantity: number;
  /** Already validated against the quantity. */
  readonly lots: readonly Lot[];
  readonly actor: Actor;
  readonly now: Date;
  /** Events of the caller's own moves, written by the same statement as mint_batch_created. */
  readonly events?: readonly NewEvent[];
  /** Extra payload of the mint_batch_created event (e.g. that the deprecated flow created it). */
  readonly eventDetails?: Readonly<Record<string, unknown>>;
  /** Create it only while the product and production batch still read as these (see insertDraftBatch); absent: unconditionally. */
  readonly expected?: ExpectedSubjects;
}

/**
 * Creates a job's draft batch, the one way every flow does it, in one statement (insertDraftBatch;
 * atomic by itself, or part of the caller's transaction): the brand's resolver base and the product's GTIN frozen on the
 * batch, its lots with their GS1 Digital Link URIs, the outbox message that gets an executor to
 * the job, the mint_batch_created event and the batches_created counter. Call it last in the
 * transaction: the counter row is the brand's one hot row, so its lock is taken by the final
 * statement and held only for the commit. Returns false, having written nothing, when `expected`
 * is given and the product or production batch no longer reads so.
 */
export async function createDraftBatch(em: Em, input: DraftBatchInput): Promise<boolean> {
  const { brandId, batchId, product, now } = input;
  const gtin = product.gtin ?? null;
  return insertDraftBatch(em, {
    brandId,
    batchId,
    mintJobId: input.mintJobId,
    job:
      input.newJob === undefined ? null : { scopeType: input.identityMode, idempotencyKey: input.newJob.idempotencyKey, requestHash: input.newJob.requestHash },
    productId: product.id,
    productionBatchId: input.productionBatchId,
    identityMode: input.identityMode,
    activationMode: input.activationMode,
    requestedQuantity: input.requestedQuantity,
    resolverBaseUrl: product.resolverBaseUrl,
    gtin,
    lots: input.lots.map((lot) => ({ lotCode: lot.lotCode, qty: lot.qty, resolverUrl: lotResolverUrl(product.resolverBaseUrl, gtin, lot.lotCode) })),
    events: [
      ...(input.events ?? []),
      {
        brandId,
        eventType: 'mint_batch_created',
        entityType: 'mint_batch',
        entityId: batchId,
        actor: input.actor.id,
        payload: { mint_job_id: input.mintJobId, activation_mode: input.activationMode, lots: input.lots.length, ...input.eventDetails },
      },
    ],
    now,
    ...(input.expected === undefined ? {} : { expected: input.expected }),
  });
}
