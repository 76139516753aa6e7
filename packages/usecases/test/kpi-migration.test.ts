// The migration that makes exported_printed count what was printed or applied: counters kept under
// the former rule (every batch that reached exported, also after a void) are recounted from the
// batches, and the former count comes back down.

import { migrate } from '@mint/db';
import { getMintKpis, processMintJobBatch, setMintBatchStatus } from '@mint/usecases';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { run } from '../../../test/support/sql.ts';
import { setupUseCases, submitSerial, type SeededBrand, type UseCaseBundle } from '../../../test/support/usecases.ts';

let app: UseCaseBundle;
beforeAll(async () => {
  app = await setupUseCases();
});
afterAll(() => app.close());

/** A completed batch of `quantity` units walked through `statuses`. */
async function batchAt(brand: SeededBrand, quantity: number, statuses: readonly ('exported' | 'printed' | 'applied' | 'voided')[]): Promise<void> {
  const { mintJobId, mintBatchId } = await submitSerial(app.ctx, brand, quantity);
  await processMintJobBatch(app.ctx, brand.brandId, mintJobId, null);
  for (const status of statuses) await setMintBatchStatus(app.ctx, { id: brand.userId }, { brandId: brand.brandId, mintBatchId, status, reason: null });
}

describe('Migration20261127000000', () => {
  it('recounts exported_printed as the units of batches now printed or applied, and restores the exported count down', async () => {
    const brand = await app.seedBrand();
    const untouched = await app.seedBrand();
    await batchAt(brand, 5, []);
    await batchAt(brand, 7, ['exported']);
    await batchAt(brand, 11, ['exported', 'printed']);
    await batchAt(brand, 13, ['exported', 'printed', 'applied']);
    await batchAt(brand, 17, ['exported', 'voided']);
    await batchAt(brand, 19, ['exported', 'printed', 'voided']);
    expect((await getMintKpis(app.ctx, brand.brandId)).exportedPrinted).toBe(11 + 13);

    // Down: the former rule's count, every batch that ever reached exported, spread as written then.
    await app.db.migrator.down({ to: 'Migration20261126040000' });
    expect((await getMintKpis(app.ctx, brand.brandId)).exportedPrinted).toBe(7 + 11 + 13 + 17 + 19);
    await run(
      app.db.em.fork(),
      `insert into mint_kpis (brand_id, shard, exported_printed) values (?, 63, 1000)
      on conflict (brand_id, shard) do update set exported_printed = mint_kpis.exported_printed + 1000`,
      [brand.brandId],
    );

    await migrate(app.db);
    expect(await getMintKpis(app.ctx, brand.brandId)).toMatchObject({ totalTokensMinted: 5 + 7 + 11 + 13 + 17 + 19, exportedPrinted: 11 + 13 });
    expect(await getMintKpis(app.ctx, untouched.brandId)).toMatchObject({ exportedPrinted: 0 });
  });
});
