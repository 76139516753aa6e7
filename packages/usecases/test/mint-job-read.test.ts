// getMintJob: the job with its batch and minted quantity at each point of its life (before it has a
// batch, failed, another brand's, a bad id).

import { randomUUID } from 'node:crypto';
import { InvalidInputError, NotFoundError } from '@mint/domain';
import { failMintJob, getMintJob, preflightMintBatch, upsertProductionBatch } from '@mint/usecases';
import { describe, expect, it } from 'vitest';
import { submitSerial, useUseCases } from '../../../test/support/usecases.ts';

const { app, brand } = useUseCases();

describe('getMintJob', () => {
  it('shows a PREFLIGHTED job without a batch: no mint_batch_id, nothing minted', async () => {
    const { productionBatch } = await upsertProductionBatch(
      app.ctx,
      { id: brand.userId },
      {
        brandId: brand.brandId,
        productId: brand.productId,
        code: `PB-${randomUUID().slice(0, 8)}`,
        status: 'READY',
        quantity: null,
      },
    );
    const pass = await preflightMintBatch(
      app.ctx,
      { id: brand.userId },
      {
        brandId: brand.brandId,
        productId: brand.productId,
        productionBatchId: productionBatch.id,
        requestedQuantity: 8,
        identityMode: 'batch',
        idempotencyKey: null,
      },
    );
    const job = await getMintJob(app.ctx, brand.brandId, pass.mintJobId!);
    expect(job).toMatchObject({
      id: pass.mintJobId,
      status: 'PREFLIGHTED',
      scopeType: 'batch',
      requestedQuantity: 8,
      mintedQuantity: 0,
      mintBatchId: null,
      failureReason: null,
    });
  });

  it('gives the reason of a FAILED job, and none while it only had transient errors', async () => {
    const submitted = await submitSerial(app.ctx, brand, 5);
    expect((await getMintJob(app.ctx, brand.brandId, submitted.mintJobId)).failureReason).toBeNull();
    await failMintJob(app.ctx, brand.brandId, submitted.mintJobId, 'product deleted during the mint');
    expect(await getMintJob(app.ctx, brand.brandId, submitted.mintJobId)).toMatchObject({
      status: 'FAILED',
      mintBatchId: submitted.mintBatchId,
      mintedQuantity: 0,
      failureReason: 'product deleted during the mint',
    });
  });

  it("refuses another brand's job as not found, and names a bad id", async () => {
    const submitted = await submitSerial(app.ctx, brand, 2);
    const stranger = await app.seedBrand();
    await expect(getMintJob(app.ctx, stranger.brandId, submitted.mintJobId)).rejects.toThrow(new NotFoundError(`mint job ${submitted.mintJobId} not found`));
    const bad = await getMintJob(app.ctx, brand.brandId, 'job-7').catch((e: unknown) => e);
    expect(bad).toBeInstanceOf(InvalidInputError);
    expect((bad as InvalidInputError).violations).toEqual([{ field: 'mint_job_id', message: 'must be a uuid (got "job-7")' }]);
  });
});
