// The unit store of issue 44 as a brand sees it: a minted unit's id is its batch's id with its seq,
// its serial starts with the second it was minted, and its GTIN and resolver URL (no longer stored
// per row) come back from every read exactly as they were written before.

import { createResolverReader } from '@mint/db';
import { generateTimedSerials, serialTimeLength, unitIdOf } from '@mint/domain';
import { listMintUnits, processMintJobBatch } from '@mint/usecases';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { query, storedOrDerivedUnitId } from '../../../test/support/sql.ts';
import { setupUseCases, submitSerial, type UseCaseBundle } from '../../../test/support/usecases.ts';

let app: UseCaseBundle;
beforeAll(async () => {
  app = await setupUseCases();
});
afterAll(() => app.close());

describe('the unit store', () => {
  it('mints units whose ids ascend with their seq and whose serials start with their minting second', async () => {
    const brand = await app.seedBrand();
    const { mintJobId, mintBatchId } = await submitSerial(app.ctx, brand, 4_500);
    for (let i = 0; i < 5 && !(await processMintJobBatch(app.ctx, brand.brandId, mintJobId, 2_000)).done; i++);
    const units = await query<{ id: string; seq: number; serial: string; created_at: string | Date }>(app.db.em.fork(),
      `select ${storedOrDerivedUnitId()} as id, seq, serial, created_at from mint_units where brand_id = ? and mint_batch_id = ? order by seq`, [brand.brandId, mintBatchId]);
    expect(units).toHaveLength(4_500);
    expect(units.every((u) => u.id === unitIdOf(mintBatchId, u.seq))).toBe(true);
    expect(new Set(units.map((u) => u.serial)).size).toBe(4_500);
    const prefixOf = (at: Date) => generateTimedSerials(1, at, (b) => b.fill(0))[0]!.slice(0, serialTimeLength);
    expect(units.every((u) => u.serial.startsWith(prefixOf(new Date(u.created_at))))).toBe(true);

    // Every read gives the URL and GTIN the unit was minted with: the list, the resolver.
    const base = `http://127.0.0.1:8080/r/${(await query<{ slug: string }>(app.db.em.fork(), 'select slug from brands where id = ?', [brand.brandId]))[0]!.slug}`;
    const page = await listMintUnits(app.ctx, brand.brandId, { limit: 100, cursor: null, mintBatchId });
    expect(page.items).toHaveLength(100);
    for (const u of page.items) {
      expect(u).toMatchObject({ id: unitIdOf(mintBatchId, u.seq), gtin: brand.gtin, resolverUrl: `${base}/01/${brand.gtin}/21/${u.serial}`, productSku: expect.any(String) });
    }
    const reader = createResolverReader(app.db);
    try {
      const unit = await reader.findUnit(brand.brandId, units[4_499]!.serial, brand.gtin);
      expect(unit).toMatchObject({ serial: units[4_499]!.serial, gtin: brand.gtin, resolverUrl: `${base}/01/${brand.gtin}/21/${units[4_499]!.serial}` });
    } finally {
      await reader.close();
    }
  });
});
