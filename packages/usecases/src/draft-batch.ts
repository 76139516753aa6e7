import { appendEvents, bumpKpis, Brand, MintBatch, MintLot, OutboxMessage, Product, ProductionBatch, type Em } from '@mint/db';
import { lotResolverUrl, preflight, type ActivationMode, type BlockingReason, type IdentityMode, type Lot } from '@mint/domain';
import type { Actor } from './context.ts';

/** What preflight looked at, and its verdict. */
export interface PreflightCheck {
  /** The brand's product, or null when it does not exist there. */
  readonly product: Product | null;
  /** Every blocking reason; empty when the request may be minted. */
  readonly reasons: BlockingReason[];
}

/**
 * Loads the brand's product and production batch (when one is named) and runs the domain's
 * preflight over them, in the caller's transaction. Shared by submit, the standalone preflight
 * and the deprecated CreateMintBatchFromJob, so the three can never disagree.
 */
export async function checkPreflight(
  em: Em,
  brandId: string,
  request: { readonly productId: string; readonly productionBatchId: string | null; readonly requestedQuantity: number },
): Promise<PreflightCheck> {
  const product = await em.findOne(Product, { brandId, id: request.productId });
  const productionBatch = request.productionBatchId === null ? null : await em.findOne(ProductionBatch, { brandId, id: request.productionBatchId });
  const reasons = preflight({
    productId: request.productId, product, productBatchRequested: request.productionBatchId !== null, productionBatch,
    requestedQuantity: request.requestedQuantity,
  });
  return { product, reasons };
}

/** The batch to create for a job. */
export interface DraftBatchInput {
  readonly brandId: string;
  /** Id of the new batch (chosen by the caller, so its own events can name it). */
  readonly batchId: string;
  readonly mintJobId: string;
  readonly product: Product;
  readonly productionBatchId: string | null;
  readonly identityMode: IdentityMode;
  readonly activationMode: ActivationMode;
  readonly requestedQuantity: number;
  /** Already validated against the quantity. */
  readonly lots: readonly Lot[];
  readonly actor: Actor;
  readonly now: Date;
  /** Extra payload of the mint_batch_created event (e.g. that the deprecated flow created it). */
  readonly eventDetails?: Readonly<Record<string, unknown>>;
}

/**
 * Creates a job's draft batch in the caller's transaction, the one way every flow does it: the
 * brand's resolver base and the product's GTIN frozen on the batch, its lots with their GS1
 * Digital Link URIs, the outbox message that gets an executor to the job, the mint_batch_created
 * event and the batches_created counter. Call it last in the transaction: the counter row is the
 * brand's one hot row, so its lock is taken by the final statement and held only for the commit.
 */
export async function createDraftBatch(em: Em, input: DraftBatchInput): Promise<void> {
  const { brandId, batchId, product, now } = input;
  const brand = await em.findOneOrFail(Brand, { id: brandId });
  const gtin = product.gtin ?? null;
  em.create(MintBatch, {
    brandId, id: batchId, mintJobId: input.mintJobId, productId: product.id, productionBatchId: input.productionBatchId,
    status: 'draft', identityMode: input.identityMode, activationMode: input.activationMode,
    requestedQuantity: input.requestedQuantity, mintedQuantity: 0, resolverBaseUrl: brand.resolverBaseUrl,
    gtin, createdAt: now, updatedAt: now,
  });
  for (const lot of input.lots) {
    em.create(MintLot, {
      brandId, mintBatchId: batchId, lotCode: lot.lotCode, qty: lot.qty, gtin,
      resolverUrl: lotResolverUrl(brand.resolverBaseUrl, gtin, lot.lotCode), createdAt: now,
    });
  }
  em.create(OutboxMessage, { brandId, kind: 'mint', jobId: input.mintJobId, createdAt: now });
  await em.flush();
  await appendEvents(em, now, [{
    brandId, eventType: 'mint_batch_created', entityType: 'mint_batch', entityId: batchId, actor: input.actor.id,
    payload: { mint_job_id: input.mintJobId, activation_mode: input.activationMode, lots: input.lots.length, ...input.eventDetails },
  }]);
  await bumpKpis(em, brandId, { batchesCreated: 1 });
}
