// A serial the brand returned (never allocated to a partner) is never issued again: a later partner
// allocation skips it, whether the return committed before the allocation read the batch or while
// the allocation was between its read and its insert (each case proves one of the allocation's two
// guards: the read that drops units with a lifecycle row, and the last read under the units' locks).

import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { allocateSerials, createPartner, grantPartnerKey, moveSerials } from '@mint/usecases';
import { mintCompleted } from '../../../test/support/pack-fixtures.ts';
import { query } from '../../../test/support/sql.ts';
import { setupUseCases, type SeededBrand, type UseCaseBundle } from '../../../test/support/usecases.ts';

let app: UseCaseBundle;
beforeAll(async () => {
  app = await setupUseCases();
});
afterAll(() => app.close());

const serialsOf = async (batchId: string) =>
  (await query<{ serial: string }>(app.db.em.fork(), 'select serial from mint_units where mint_batch_id = ? order by seq', [batchId])).map((r) => r.serial);
const returnSerials = (brand: SeededBrand, serials: readonly string[], key: string) =>
  moveSerials(
    app.ctx,
    { id: brand.userId },
    {
      brandId: brand.brandId,
      idempotencyKey: key,
      action: 'return',
      reason: null,
      target: { serials },
    },
  );
async function partnerOf(brand: SeededBrand, restriction: { productId: string | null; mintBatchId: string | null }) {
  const actor = { id: brand.userId };
  const { partnerId } = await createPartner(app.ctx, actor, { brandId: brand.brandId, name: 'Contract manufacturer' });
  const granted = await grantPartnerKey(app.ctx, actor, { brandId: brand.brandId, partnerId, name: 'line 1', quota: 100, ...restriction });
  return { apiKeyId: granted.keyId, partnerId };
}
const allocatedSerials = async (brandId: string) =>
  (
    await query<{ serial: string }>(
      app.db.em.fork(),
      `
  select u.serial from unit_allocations a join mint_units u on u.brand_id = a.brand_id and u.mint_batch_id = a.mint_batch_id and u.seq = a.seq
  where a.brand_id = ?`,
      [brandId],
    )
  ).map((r) => r.serial);

describe('a serial the brand returned', () => {
  it('is skipped by a later allocation, which still allocates every other free serial', async () => {
    const brand = await app.seedBrand();
    const { mintBatchId } = await mintCompleted(app.ctx, brand, 10, { activationMode: 'first_scan' });
    const serials = await serialsOf(mintBatchId);
    await returnSerials(brand, serials.slice(0, 3), 'return-3');
    const caller = await partnerOf(brand, { productId: null, mintBatchId });
    // Exactly the seven serials never returned: the returned three neither taken nor in the way.
    const allocation = await allocateSerials(app.ctx, caller, { brandId: brand.brandId, quantity: 7, idempotencyKey: 'a-1' });
    expect(allocation.units.map((u) => u.serial).sort()).toEqual(serials.slice(3).sort());
    expect((await allocatedSerials(brand.brandId)).sort()).toEqual(serials.slice(3).sort());
  });

  it('is skipped when the return commits while the allocation is between its read and its insert', async () => {
    const brand = await app.seedBrand();
    const first = await mintCompleted(app.ctx, brand, 10, { activationMode: 'first_scan' });
    const second = await mintCompleted(app.ctx, brand, 10, { activationMode: 'first_scan' });
    const serials = await serialsOf(first.mintBatchId);
    const caller = await partnerOf(brand, { productId: brand.productId, mintBatchId: null });
    // Another session holds unit_allocations in SHARE mode: the allocation reads the batch (its
    // reads pass) and then waits to insert, while the brand returns three of the serials it read.
    const holder = new pg.Client({ connectionString: app.database.url });
    await holder.connect();
    try {
      await holder.query('begin');
      await holder.query('lock table unit_allocations in share mode');
      const allocation = allocateSerials(app.ctx, caller, { brandId: brand.brandId, quantity: 7, idempotencyKey: 'a-1' });
      allocation.catch(() => undefined);
      let waiting = 0;
      for (let i = 0; i < 200 && waiting === 0; i++) {
        // (Inside a transaction the activity view is a snapshot: cleared before each look.)
        await holder.query('select pg_stat_clear_snapshot()');
        const { rows } = await holder.query<{ n: number }>(`select count(*)::int as n from pg_stat_activity
          where wait_event_type = 'Lock' and position('insert into unit_allocations' in query) > 0 and datname = current_database()`);
        waiting = rows[0]!.n;
        if (waiting === 0) await new Promise((r) => setTimeout(r, 50));
      }
      expect(waiting).toBe(1);
      await returnSerials(brand, serials.slice(0, 3), 'return-3');
      await holder.query('commit');
      const got = (await allocation).units.map((u) => u.serial);
      expect(got).toHaveLength(7);
      expect(got.filter((s) => serials.slice(0, 3).includes(s))).toEqual([]);
      const secondSerials = await serialsOf(second.mintBatchId);
      // The first batch's four read and still free, then the second batch's first three.
      expect(got.sort()).toEqual([...serials.slice(3, 7), ...secondSerials.slice(0, 3)].sort());
      expect((await allocatedSerials(brand.brandId)).filter((s) => serials.slice(0, 3).includes(s))).toEqual([]);
    } finally {
      await holder.end();
    }
  });
});
