// The unit store of issue 44 (Migration20261128100000): rows stop carrying the batch's GTIN and
// resolver URL, and units minted before it keep their ids, serials and URLs: they still resolve and
// list as they did.

import { randomUUID } from 'node:crypto';
import { createResolverReader, migrate } from '@mint/db';
import { listMintUnits, processMintJobBatch } from '@mint/usecases';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { query, run } from '../../../test/support/sql.ts';
import { setupUseCases, submitSerial, type UseCaseBundle } from '../../../test/support/usecases.ts';

let app: UseCaseBundle;
beforeAll(async () => {
  app = await setupUseCases();
});
afterAll(() => app.close());

const before = 'Migration20261128020000';

describe('Migration20261128100000', () => {
  it('keeps units minted before it resolving and listing with their id, serial and resolver URL', async () => {
    const brand = await app.seedBrand();
    const { mintJobId, mintBatchId } = await submitSerial(app.ctx, brand, 5);
    await processMintJobBatch(app.ctx, brand.brandId, mintJobId, null);
    const reader = createResolverReader(app.db);
    try {
      const listed = async () =>
        (await listMintUnits(app.ctx, brand.brandId, { limit: 100, cursor: null, mintBatchId })).items.map((u) => ({
          id: u.id,
          seq: u.seq,
          serial: u.serial,
          resolverUrl: u.resolverUrl,
          gtin: u.gtin,
          status: u.status,
        }));
      const minted = await listed();

      // The store as it was: each row with its GTIN and resolver URL; a unit written then, with a random id and serial.
      await app.db.migrator.down({ to: before });
      const stored = await query<{ serial: string; resolver_url: string; gtin: string | null }>(
        app.db.em.fork(),
        'select serial, resolver_url, gtin from mint_units where mint_batch_id = ? order by seq',
        [mintBatchId],
      );
      expect(stored.map((u) => u.resolver_url)).toEqual([...minted].sort((a, b) => a.seq - b.seq).map((u) => u.resolverUrl));
      const old = { id: randomUUID(), serial: 'OLDSTYLE0UNIT0000001' };
      const oldUrl = `${stored[0]!.resolver_url.slice(0, -stored[0]!.serial.length)}${old.serial}`;
      await run(
        app.db.em.fork(),
        `insert into mint_units (brand_id, id, mint_batch_id, seq, serial, gtin, resolver_url, status, created_at, activated_at)
        values (?, ?, ?, 6, ?, ?, ?, 'active', now(), now())`,
        [brand.brandId, old.id, mintBatchId, old.serial, brand.gtin, oldUrl],
      );

      await migrate(app.db);
      const unit = await reader.findUnit(brand.brandId, old.serial, brand.gtin);
      expect(unit).toMatchObject({ serial: old.serial, gtin: brand.gtin, resolverUrl: oldUrl, status: 'active', batchStatus: 'minted' });
      expect(await listed()).toEqual([{ id: old.id, seq: 6, serial: old.serial, resolverUrl: oldUrl, gtin: brand.gtin, status: 'active' }, ...minted]);
      for (const u of minted) expect((await reader.findUnit(brand.brandId, u.serial, brand.gtin))?.resolverUrl).toBe(u.resolverUrl);
      // A serial of another GTIN is not the unit's.
      expect(await reader.findUnit(brand.brandId, old.serial, '09506000134352')).toBeNull();
    } finally {
      await reader.close();
    }
  });

  it('refuses to run while a unit holds a URL other than the one derived from its batch, changing nothing', async () => {
    const brand = await app.seedBrand();
    const { mintJobId, mintBatchId } = await submitSerial(app.ctx, brand, 3);
    await processMintJobBatch(app.ctx, brand.brandId, mintJobId, null);
    await app.db.migrator.down({ to: before });
    await run(app.db.em.fork(), `update mint_units set resolver_url = 'https://elsewhere.example/x' where mint_batch_id = ? and seq = 2`, [mintBatchId]);
    await expect(migrate(app.db)).rejects.toThrow(/1 mint units have a resolver URL or GTIN other than their batch's/);
    expect(
      (await query<{ resolver_url: string }>(app.db.em.fork(), 'select resolver_url from mint_units where mint_batch_id = ? and seq = 2', [mintBatchId]))[0],
    ).toEqual({ resolver_url: 'https://elsewhere.example/x' });
    await run(app.db.em.fork(), 'delete from mint_units where mint_batch_id = ? and seq = 2', [mintBatchId]);
    await migrate(app.db);
  });
});
