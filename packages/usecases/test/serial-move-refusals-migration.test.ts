// Migration20261130020000_serial_move_refusals: a move's report kept as one JSON value before it
// reads back the same after it, as rows in their order, and its `down` writes the value back.

import { getSerialMove, moveSerials, processMintJobBatch } from '@mint/usecases';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrate } from '@mint/db';
import { query } from '../../../test/support/sql.ts';
import { setupUseCases, submitSerial, type UseCaseBundle } from '../../../test/support/usecases.ts';

let app: UseCaseBundle;
beforeAll(async () => {
  app = await setupUseCases();
});
afterAll(() => app.close());

describe('Migration20261130020000_serial_move_refusals', () => {
  it("keeps every move's refused units in their order across the migration and back", async () => {
    const brand = await app.seedBrand();
    const { mintJobId, mintBatchId } = await submitSerial(app.ctx, brand, 6, { activationMode: 'first_scan' });
    await processMintJobBatch(app.ctx, brand.brandId, mintJobId, null);
    const actor = { id: brand.userId };
    await moveSerials(app.ctx, actor, {
      brandId: brand.brandId,
      action: 'scrap',
      reason: null,
      target: { mintBatchId, fromSeq: 2, toSeq: 3 },
      idempotencyKey: 'k1',
    });
    const move = await moveSerials(app.ctx, actor, {
      brandId: brand.brandId,
      action: 'encode',
      reason: null,
      target: { mintBatchId, toSeq: 8 },
      idempotencyKey: 'k2',
    });
    const expected = ['2 wrong_state scrapped', '3 wrong_state scrapped', '7 unknown null', '8 unknown null'];
    const lines = async () => (await getSerialMove(app.ctx, brand.brandId, move.moveId)).refusals.map((r) => `${r.seq} ${r.refusal} ${r.state}`);
    expect(await lines()).toEqual(expected);

    await app.db.migrator.down({ to: 'Migration20261129050000_epcis_unit_ranges' });
    const [stored] = await query<{ refusals: unknown }>(app.db.em.fork(), 'select refusals from serial_moves where id = ?', [move.moveId]);
    const json = (typeof stored!.refusals === 'string' ? JSON.parse(stored!.refusals) : stored!.refusals) as {
      seq: number;
      refusal: string;
      state: string | null;
    }[];
    expect(json.map((r) => `${r.seq} ${r.refusal} ${r.state}`)).toEqual(expected);

    await migrate(app.db);
    expect(await lines()).toEqual(expected);
    expect(await getSerialMove(app.ctx, brand.brandId, move.moveId)).toMatchObject({ status: 'done', refused: 4, error: null });
  });
});
