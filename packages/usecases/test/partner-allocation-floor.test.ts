// An allocation reads a batch from just above its allocation floor (the run of units from seq 1 that
// no allocation may take any more), so its cost does not grow with what was allocated before. These
// cases prove the floor never passes a unit that may still be allocated: a unit a concurrent
// transaction held locked (and then let go) is allocated later, units the brand returned above the
// floor are passed over and closed, and allocators racing on one batch never share a unit and leave
// none behind.

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
async function partnerOf(brand: SeededBrand, mintBatchId: string, name: string, quota = 1_000) {
  const actor = { id: brand.userId };
  const { partnerId } = await createPartner(app.ctx, actor, { brandId: brand.brandId, name });
  const granted = await grantPartnerKey(app.ctx, actor, { brandId: brand.brandId, partnerId, name: `${name} line`, quota, productId: null, mintBatchId });
  return { apiKeyId: granted.keyId, partnerId };
}
/** The batch's allocation floor; 0 while it has none (read from seq 1). */
const floorOf = async (brandId: string, batchId: string) =>
  (await query<{ seq: number }>(app.db.em.fork(), 'select seq from allocation_floors where brand_id = ? and mint_batch_id = ?', [brandId, batchId]))[0]?.seq ??
  0;
/** Every allocation row of the batch's units, as serials (one per row: a serial twice would show twice). */
const allocatedRows = async (brandId: string, batchId: string) =>
  (
    await query<{ serial: string }>(
      app.db.em.fork(),
      `select u.serial from unit_allocations a join mint_units u on u.brand_id = a.brand_id and u.mint_batch_id = a.mint_batch_id and u.seq = a.seq
      where a.brand_id = ? and a.mint_batch_id = ?`,
      [brandId, batchId],
    )
  ).map((r) => r.serial);

describe('the allocation floor of a batch', () => {
  it('stops below a unit another transaction holds locked, and a later allocation takes that unit once it is free', async () => {
    const brand = await app.seedBrand();
    const { mintBatchId } = await mintCompleted(app.ctx, brand, 12, { activationMode: 'first_scan' });
    const serials = await serialsOf(mintBatchId);
    const caller = await partnerOf(brand, mintBatchId, 'Contract manufacturer');
    // Another session locks seqs 1..3 (as a move or an allocation that will roll back does).
    const holder = new pg.Client({ connectionString: app.database.url });
    await holder.connect();
    try {
      await holder.query('begin');
      await holder.query('select seq from mint_units where mint_batch_id = $1 and seq between 1 and 3 for update', [mintBatchId]);
      const first = await allocateSerials(app.ctx, caller, { brandId: brand.brandId, quantity: 5, idempotencyKey: 'a-1' });
      expect(first.units.map((u) => u.serial)).toEqual(serials.slice(3, 8));
      // Seq 1 may still be allocated: the floor stays below it.
      expect(await floorOf(brand.brandId, mintBatchId)).toBe(0);
      await holder.query('rollback');
    } finally {
      await holder.end();
    }
    // The three let go are allocated now, then the rest, and the floor closes over everything taken.
    const second = await allocateSerials(app.ctx, caller, { brandId: brand.brandId, quantity: 5, idempotencyKey: 'a-2' });
    expect(second.units.map((u) => u.serial)).toEqual([...serials.slice(0, 3), ...serials.slice(8, 10)]);
    expect(await floorOf(brand.brandId, mintBatchId)).toBe(10);
    const last = await allocateSerials(app.ctx, caller, { brandId: brand.brandId, quantity: 2, idempotencyKey: 'a-3' });
    expect(last.units.map((u) => u.serial)).toEqual(serials.slice(10, 12));
    await expect(allocateSerials(app.ctx, caller, { brandId: brand.brandId, quantity: 1, idempotencyKey: 'a-4' })).rejects.toThrow(
      /only 0 unallocated issued serials/,
    );
    expect((await allocatedRows(brand.brandId, mintBatchId)).sort()).toEqual([...serials].sort());
  });

  it('passes over units the brand returned above it, and never passes an issued unit it did not allocate', async () => {
    const brand = await app.seedBrand();
    const { mintBatchId } = await mintCompleted(app.ctx, brand, 20, { activationMode: 'first_scan' });
    const serials = await serialsOf(mintBatchId);
    const caller = await partnerOf(brand, mintBatchId, 'Packaging line');
    const first = await allocateSerials(app.ctx, caller, { brandId: brand.brandId, quantity: 2, idempotencyKey: 'a-1' });
    expect(first.units.map((u) => u.serial)).toEqual(serials.slice(0, 2));
    expect(await floorOf(brand.brandId, mintBatchId)).toBe(2);
    // The brand returns seqs 3..5 and 9: closed for good, never allocated.
    const returned = [...serials.slice(2, 5), serials[8]!];
    await moveSerials(
      app.ctx,
      { id: brand.userId },
      { brandId: brand.brandId, idempotencyKey: 'r-1', action: 'return', reason: null, target: { serials: returned } },
    );
    const second = await allocateSerials(app.ctx, caller, { brandId: brand.brandId, quantity: 3, idempotencyKey: 'a-2' });
    expect(second.units.map((u) => u.serial)).toEqual(serials.slice(5, 8));
    // Over the returned three, this allocation's three and returned seq 9, up to seq 10: issued, left for a later request.
    expect(await floorOf(brand.brandId, mintBatchId)).toBe(9);
    const rest = await allocateSerials(app.ctx, caller, { brandId: brand.brandId, quantity: 11, idempotencyKey: 'a-3' });
    expect(rest.units.map((u) => u.serial)).toEqual(serials.slice(9));
    expect(await floorOf(brand.brandId, mintBatchId)).toBe(20);
    const allocated = await allocatedRows(brand.brandId, mintBatchId);
    expect(allocated.sort()).toEqual(serials.filter((s) => !returned.includes(s)).sort());
  });

  it('goes on to the next free units when another allocation commits the ones it read before it locks them', async () => {
    const brand = await app.seedBrand();
    const { mintBatchId } = await mintCompleted(app.ctx, brand, 12, { activationMode: 'first_scan' });
    const serials = await serialsOf(mintBatchId);
    const caller = await partnerOf(brand, mintBatchId, 'Packaging line');
    const other = await partnerOf(brand, mintBatchId, 'Contract manufacturer');
    // Another session holds unit_allocations in SHARE mode: the allocation reads seqs 1..12 as free
    // and waits to insert, while that session allocates seqs 1..3 to the other partner and commits.
    const holder = new pg.Client({ connectionString: app.database.url });
    await holder.connect();
    try {
      await holder.query('begin');
      await holder.query('lock table unit_allocations in share mode');
      const allocation = allocateSerials(app.ctx, caller, { brandId: brand.brandId, quantity: 5, idempotencyKey: 'a-1' });
      allocation.catch(() => undefined);
      let waiting = 0;
      for (let i = 0; i < 200 && waiting === 0; i++) {
        await holder.query('select pg_stat_clear_snapshot()');
        const { rows } = await holder.query<{ n: number }>(`select count(*)::int as n from pg_stat_activity
          where wait_event_type = 'Lock' and position('insert into unit_allocations' in query) > 0 and datname = current_database()`);
        waiting = rows[0]!.n;
        if (waiting === 0) await new Promise((r) => setTimeout(r, 50));
      }
      expect(waiting).toBe(1);
      await holder.query(
        `insert into unit_allocations (brand_id, mint_batch_id, seq, partner_id, grant_id, request_id, allocated_at)
        select $1, $2, g, $3, $4, gen_random_uuid(), now() from generate_series(1, 3) g`,
        [brand.brandId, mintBatchId, other.partnerId, other.apiKeyId],
      );
      await holder.query('commit');
      // Exactly five, none of the other partner's: seqs 4..8.
      expect((await allocation).units.map((u) => u.serial)).toEqual(serials.slice(3, 8));
    } finally {
      await holder.end();
    }
    const rows = await allocatedRows(brand.brandId, mintBatchId);
    expect(rows).toHaveLength(8);
    expect(new Set(rows).size).toBe(8);
  });

  it('lets allocators racing on one batch share no unit and leave none behind', { timeout: 120_000 }, async () => {
    const brand = await app.seedBrand();
    const size = 400;
    const { mintBatchId } = await mintCompleted(app.ctx, brand, size, { activationMode: 'first_scan' });
    const serials = await serialsOf(mintBatchId);
    const callers = await Promise.all([1, 2, 3, 4].map((i) => partnerOf(brand, mintBatchId, `Line ${i}`)));
    // Four partners, three rounds each of 25 at once: 300 units.
    for (let round = 1; round <= 3; round++) {
      const got = await Promise.all(
        callers.map((caller, i) => allocateSerials(app.ctx, caller, { brandId: brand.brandId, quantity: 25, idempotencyKey: `r${round}-${i}` })),
      );
      for (const g of got) expect(g.units).toHaveLength(25);
    }
    const allocated = await allocatedRows(brand.brandId, mintBatchId);
    expect(allocated).toHaveLength(300);
    expect(new Set(allocated).size).toBe(300);
    // Whatever the floor the race left, the last 100 are all still allocatable, and then none is.
    const last = await allocateSerials(app.ctx, callers[0]!, { brandId: brand.brandId, quantity: 100, idempotencyKey: 'last' });
    expect(last.units).toHaveLength(100);
    const all = await allocatedRows(brand.brandId, mintBatchId);
    expect(all.sort()).toEqual([...serials].sort());
    expect(await floorOf(brand.brandId, mintBatchId)).toBe(size);
  });
});
