/**
 * Preflight: whether a product (and optionally a production batch) may be minted now. A failed
 * check is not an error but a list of blocking reasons, returned to the caller with ok=false.
 */

/** Stable blocking codes. The first two are the spec's; the rest cover the production-batch checks. */
export type BlockingCode =
  /** The product's commercial_status is not ACTIVE. */
  | 'COMMERCIAL_STATUS_NOT_ACTIVE'
  /** The product's mint_readiness_status is not READY. */
  | 'MINT_READINESS_NOT_READY'
  /** The product does not exist for the brand. */
  | 'PRODUCT_NOT_FOUND'
  /** The production batch does not exist for the brand. */
  | 'PRODUCTION_BATCH_NOT_FOUND'
  /** The production batch belongs to another product. */
  | 'PRODUCTION_BATCH_PRODUCT_MISMATCH'
  /** The production batch's status is not READY. */
  | 'PRODUCTION_BATCH_NOT_READY'
  /** The requested quantity exceeds the production batch's quantity. */
  | 'PRODUCTION_BATCH_QUANTITY_EXCEEDED';

/** One reason preflight blocked a request. */
export interface BlockingReason {
  readonly code: BlockingCode;
  readonly message: string;
}

/** What preflight needs to know about the product. */
export interface PreflightProduct {
  readonly commercialStatus: string;
  readonly mintReadinessStatus: string;
}

/** What preflight needs to know about the production batch. */
export interface PreflightProductionBatch {
  readonly productId: string;
  readonly status: string;
  /** Planned quantity; null or absent when open-ended. */
  readonly quantity?: number | null;
}

/** Inputs of one preflight check. A missing row is passed as null. */
export interface PreflightInput {
  readonly productId: string;
  readonly product: PreflightProduct | null;
  /** Whether the request names a production batch at all. */
  readonly productBatchRequested: boolean;
  readonly productionBatch: PreflightProductionBatch | null;
  readonly requestedQuantity: number;
}

/**
 * Every blocking reason of a request, empty when it passes. Without a production batch the ERP
 * checks are bypassed and only the platform limit (validated earlier) applies.
 */
export function preflight(input: PreflightInput): BlockingReason[] {
  const reasons: BlockingReason[] = [];
  const { product, productionBatch } = input;
  if (product === null) {
    reasons.push({ code: 'PRODUCT_NOT_FOUND', message: 'The product does not exist in this brand workspace.' });
  } else {
    if (product.commercialStatus !== 'ACTIVE') {
      reasons.push({ code: 'COMMERCIAL_STATUS_NOT_ACTIVE', message: `Product commercial status is ${product.commercialStatus}; it must be ACTIVE.` });
    }
    if (product.mintReadinessStatus !== 'READY') {
      reasons.push({ code: 'MINT_READINESS_NOT_READY', message: `Product mint readiness status is ${product.mintReadinessStatus}; it must be READY.` });
    }
  }
  if (!input.productBatchRequested) return reasons;
  if (productionBatch === null) {
    reasons.push({ code: 'PRODUCTION_BATCH_NOT_FOUND', message: 'The production batch does not exist in this brand workspace.' });
    return reasons;
  }
  if (productionBatch.productId !== input.productId) {
    reasons.push({ code: 'PRODUCTION_BATCH_PRODUCT_MISMATCH', message: 'The production batch belongs to another product.' });
  }
  if (productionBatch.status !== 'READY') {
    reasons.push({ code: 'PRODUCTION_BATCH_NOT_READY', message: `Production batch status is ${productionBatch.status}; it must be READY.` });
  }
  if (productionBatch.quantity != null && input.requestedQuantity > productionBatch.quantity) {
    reasons.push({
      code: 'PRODUCTION_BATCH_QUANTITY_EXCEEDED',
      message: `Requested quantity ${input.requestedQuantity} exceeds the production batch quantity ${productionBatch.quantity}.`,
    });
  }
  return reasons;
}
