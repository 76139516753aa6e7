import type { BlockingReason } from '@mint/domain';
import { MintJob, MintPreflight } from '../entities/minting.ts';
import type { Em } from '../orm.ts';

/**
 * Mint preflights: each stored verdict of preflight_mint_batch, found again by its idempotency key,
 * and the PREFLIGHTED job a pass leaves behind for the deprecated CreateMintBatchFromJob.
 */

/** A stored preflight. */
export interface PreflightRecord {
  readonly id: string;
  readonly brandId: string;
  readonly productId: string;
  readonly productionBatchId: string | null;
  readonly requestedQuantity: number;
  /** batch or serial. */
  readonly scopeType: string;
  /** pass or blocked. */
  readonly result: string;
  readonly blockingReasons: readonly BlockingReason[];
  readonly idempotencyKey: string | null;
  readonly mintJobId: string | null;
  readonly createdAt: Date;
}

function preflightRecord(row: MintPreflight): PreflightRecord {
  return {
    id: row.id,
    brandId: row.brandId,
    productId: row.productId,
    productionBatchId: row.productionBatchId ?? null,
    requestedQuantity: row.requestedQuantity,
    scopeType: row.scopeType,
    result: row.result,
    blockingReasons: row.blockingReasons,
    idempotencyKey: row.idempotencyKey ?? null,
    mintJobId: row.mintJobId ?? null,
    createdAt: row.createdAt,
  };
}

/** The brand's preflight stored under this idempotency key, or null. */
export async function findPreflightByKey(em: Em, brandId: string, idempotencyKey: string): Promise<PreflightRecord | null> {
  const row = await em.findOne(MintPreflight, { brandId, idempotencyKey });
  return row === null ? null : preflightRecord(row);
}

/**
 * Writes a preflight and, when it names a `mintJobId`, that PREFLIGHTED job (no batch, no
 * idempotency key) in one flush. A key already stored fails with a unique violation.
 */
export async function insertPreflight(em: Em, row: PreflightRecord): Promise<void> {
  if (row.mintJobId !== null) {
    em.create(MintJob, {
      brandId: row.brandId,
      id: row.mintJobId,
      status: 'PREFLIGHTED',
      scopeType: row.scopeType,
      requestedQuantity: row.requestedQuantity,
      productId: row.productId,
      productionBatchId: row.productionBatchId,
      idempotencyKey: null,
      createdAt: row.createdAt,
      updatedAt: row.createdAt,
    });
  }
  em.create(MintPreflight, { ...row, blockingReasons: [...row.blockingReasons] });
  await em.flush();
}
