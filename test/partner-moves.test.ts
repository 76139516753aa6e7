// A partner's move by seq range at the use-case level: only the units allocated to it move, the
// others of the range are refused one by one as not_allocated, and the restriction is kept in the
// stored move (the executor's later chunks read it from there).

import { allocateSerials, createPartner, getSerialMove, grantPartnerKey, moveSerials } from '@mint/usecases';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mintCompleted } from './support/pack-fixtures.ts';
import { query } from './support/sql.ts';
import { setupUseCases, type SeededBrand, type UseCaseBundle } from './support/usecases.ts';

let app: UseCaseBundle;
let brand: SeededBrand;

beforeAll(async () => {
  app = await setupUseCases();
  brand = await app.seedBrand();
});
afterAll(() => app?.close());

describe('a partner move by seq range', () => {
  it("moves the partner's units of the range and refuses the others as not_allocated", async () => {
    const { mintBatchId } = await mintCompleted(app.ctx, brand, 30, { activationMode: 'first_scan' });
    const actor = { id: brand.userId };
    const { partnerId } = await createPartner(app.ctx, actor, { brandId: brand.brandId, name: 'Line 9' });
    const key = await grantPartnerKey(app.ctx, actor, { brandId: brand.brandId, partnerId, name: 'k', productId: null, mintBatchId, quota: 10 });
    const allocation = await allocateSerials(app.ctx, { apiKeyId: key.keyId, partnerId }, { brandId: brand.brandId, quantity: 10, idempotencyKey: 'a' });
    expect(allocation.units.map((u) => u.seq)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);

    const partner = { id: key.keyId, partnerId };
    const move = await moveSerials(
      app.ctx,
      partner,
      {
        brandId: brand.brandId,
        action: 'encode',
        reason: null,
        target: { mintBatchId, fromSeq: 5, toSeq: 14 },
        idempotencyKey: 'range-1',
      },
      { runAll: true },
    );
    expect(move).toMatchObject({ status: 'done', total: 10, moved: 6, refused: 4 });
    expect(move.refusals.map((r) => [r.seq, r.refusal, r.state])).toEqual([
      [11, 'not_allocated', null],
      [12, 'not_allocated', null],
      [13, 'not_allocated', null],
      [14, 'not_allocated', null],
    ]);
    const [stored] = await query<{ target: { partner_id: string } }>(app.db.em.fork(), 'select target from serial_moves where id = ?', [move.moveId]);
    expect(stored!.target.partner_id).toBe(partnerId);
    // The brand's own key space is apart: the same key from the brand is another move.
    const brandMove = await moveSerials(
      app.ctx,
      actor,
      {
        brandId: brand.brandId,
        action: 'encode',
        reason: null,
        target: { mintBatchId, fromSeq: 11, toSeq: 14 },
        idempotencyKey: 'range-1',
      },
      { runAll: true },
    );
    expect(brandMove).toMatchObject({ moved: 4, refused: 0, replayed: false });
    await expect(getSerialMove(app.ctx, brand.brandId, brandMove.moveId, partnerId)).rejects.toThrow('not found');
    const states = await query<{ seq: number; state: string }>(app.db.em.fork(), 'select seq, state from unit_states where mint_batch_id = ? order by seq', [
      mintBatchId,
    ]);
    expect(states.map((s) => s.seq)).toEqual([5, 6, 7, 8, 9, 10, 11, 12, 13, 14]);
  });
});
