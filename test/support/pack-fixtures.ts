// Minting helpers for the pack, download and resolver tests: submit a job and run it to completion
// through the real processing use case.

import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ActivationMode, IdentityMode } from '@mint/domain';
import { processMintJobBatch, submitMintRequest, type UseCaseContext } from '@mint/usecases';
import type { SeededBrand } from './usecases.ts';

/** Submits a job for the brand's product and runs it to completion in cycles of `chunk` units. */
export async function mintCompleted(
  ctx: UseCaseContext,
  brand: SeededBrand,
  quantity: number,
  options: { activationMode?: ActivationMode; identityMode?: IdentityMode; lots?: { lotCode: string; qty: number }[]; chunk?: number } = {},
): Promise<{ mintJobId: string; mintBatchId: string }> {
  const result = await submitMintRequest(ctx, { id: brand.userId }, {
    brandId: brand.brandId, productId: brand.productId, productBatchId: null, requestedQuantity: quantity,
    identityMode: options.identityMode ?? 'serial', activationMode: options.activationMode ?? 'active_at_mint',
    lots: options.lots ?? [], idempotencyKey: null,
  });
  if (!result.ok) throw new Error(`mint blocked: ${JSON.stringify(result.blockingReasons)}`);
  for (let i = 0; i < 1000; i++) {
    if ((await processMintJobBatch(ctx, brand.brandId, result.mintJobId, options.chunk ?? 10_000)).done) break;
  }
  return { mintJobId: result.mintJobId, mintBatchId: result.mintBatchId };
}

/** A temporary folder for a pack store; `remove()` deletes it. */
export async function tempStoreDir(): Promise<{ dir: string; remove(): Promise<void> }> {
  const dir = await mkdtemp(join(tmpdir(), 'mint-packs-'));
  return { dir, remove: () => rm(dir, { recursive: true, force: true }) };
}
