// The unit store of issue 44 as a brand sees it: a minted unit's id is its batch's id with its seq,
// its serial starts with the second it was minted, and its GTIN and resolver URL (no longer stored
// per row) come back from every read exactly as they were written before.

import { brandSerialCipher, createResolverReader } from '@mint/db';
import { hasDerivedUnitIds, unitIdOf, unitKeyOfId } from '@mint/domain';
import { activateMintUnits, listMintUnits, processMintJobBatch } from '@mint/usecases';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { query, run, storedOrDerivedUnitId } from '../../../test/support/sql.ts';
import { setupUseCases, submitSerial, type UseCaseBundle } from '../../../test/support/usecases.ts';

let app: UseCaseBundle;
beforeAll(async () => {
  app = await setupUseCases();
});
afterAll(() => app.close());

describe('the unit store', () => {
  it('mints units whose ids ascend with their seq and whose serials encode their batch and seq', async () => {
    const brand = await app.seedBrand();
    const { mintJobId, mintBatchId } = await submitSerial(app.ctx, brand, 4_500);
    for (let i = 0; i < 5 && !(await processMintJobBatch(app.ctx, brand.brandId, mintJobId, 2_000)).done; i++);
    const units = await query<{ id: string; seq: number; serial: string; created_at: string | Date }>(
      app.db.em.fork(),
      `select ${storedOrDerivedUnitId()} as id, seq, serial, created_at from mint_units where brand_id = ? and mint_batch_id = ? order by seq`,
      [brand.brandId, mintBatchId],
    );
    expect(units).toHaveLength(4_500);
    expect(units.every((u) => u.id === unitIdOf(mintBatchId, u.seq))).toBe(true);
    expect(new Set(units.map((u) => u.serial)).size).toBe(4_500);
    // Each serial is the brand key's encoding of the batch's ordinal and the unit's seq.
    const [batch] = await query<{ serial_ordinal: string }>(app.db.em.fork(), 'select serial_ordinal from mint_batches where id = ?', [mintBatchId]);
    const cipher = (await brandSerialCipher(app.db.em.fork(), brand.brandId))!;
    expect(units.every((u) => u.serial === cipher.encode(Number(batch!.serial_ordinal), u.seq))).toBe(true);
    expect(cipher.decodeMany(units.map((u) => u.serial))).toEqual(units.map((u) => ({ batchOrdinal: Number(batch!.serial_ordinal), seq: u.seq })));

    // Every read gives the URL and GTIN the unit was minted with: the list, the resolver.
    const base = `http://127.0.0.1:8080/r/${(await query<{ slug: string }>(app.db.em.fork(), 'select slug from brands where id = ?', [brand.brandId]))[0]!.slug}`;
    const page = await listMintUnits(app.ctx, brand.brandId, { limit: 100, cursor: null, mintBatchId });
    expect(page.items).toHaveLength(100);
    for (const u of page.items) {
      expect(u).toMatchObject({
        id: unitIdOf(mintBatchId, u.seq),
        gtin: brand.gtin,
        resolverUrl: `${base}/01/${brand.gtin}/21/${u.serial}`,
        productSku: expect.any(String),
      });
    }
    const reader = createResolverReader(app.db);
    try {
      const unit = await reader.findUnit(brand.brandId, units[4_499]!.serial, brand.gtin);
      expect(unit).toMatchObject({ serial: units[4_499]!.serial, gtin: brand.gtin, resolverUrl: `${base}/01/${brand.gtin}/21/${units[4_499]!.serial}` });
    } finally {
      await reader.close();
    }
  });

  it("keys a new batch's units by (batch, seq) and stores no id: each id is derived, and activation by id finds the unit", async () => {
    const brand = await app.seedBrand();
    const { mintJobId, mintBatchId } = await submitSerial(app.ctx, brand, 300, { activationMode: 'first_scan' });
    await processMintJobBatch(app.ctx, brand.brandId, mintJobId, null);
    expect(hasDerivedUnitIds(mintBatchId)).toBe(true);
    const [stored] = await query<{ n: string }>(app.db.em.fork(), 'select count(*)::text as n from mint_units where mint_batch_id = ? and id is not null', [
      mintBatchId,
    ]);
    expect(stored!.n).toBe('0');
    const [key] = await query<{ columns: string }>(
      app.db.em.fork(),
      `select string_agg(a.attname, ',' order by k.ord) as columns
      from pg_index i cross join unnest(i.indkey) with ordinality as k(attnum, ord) join pg_attribute a on a.attrelid = i.indrelid and a.attnum = k.attnum
      where i.indrelid = 'mint_units'::regclass and i.indisprimary`,
    );
    expect(key!.columns).toBe('brand_id,mint_batch_id,seq');

    const ids = [unitIdOf(mintBatchId, 1), unitIdOf(mintBatchId, 150), unitIdOf(mintBatchId, 300)];
    // An id of the batch's form but past its last seq, and a random one, name no unit.
    const nobody = [unitIdOf(mintBatchId, 301), '6f1c2b9e-3d4a-4c1b-9e8f-0a1b2c3d4e5f'];
    expect(await activateMintUnits(app.ctx, { id: brand.userId }, { brandId: brand.brandId, unitIds: [...ids, ...nobody] })).toEqual({ activatedCount: 3 });
    const active = await query<{ seq: number }>(app.db.em.fork(), `select seq from mint_units where mint_batch_id = ? and status = 'active' order by seq`, [
      mintBatchId,
    ]);
    expect(active.map((u) => u.seq)).toEqual([1, 150, 300]);
    const [event] = await query<{ payload: { unit_ids: string[] } }>(
      app.db.em.fork(),
      `select payload from mint_events where brand_id = ? and event_type = 'mint_units_activated'`,
      [brand.brandId],
    );
    expect(event!.payload.unit_ids).toEqual([...ids].sort());
    expect(await activateMintUnits(app.ctx, { id: brand.userId }, { brandId: brand.brandId, unitIds: ids })).toEqual({ activatedCount: 0 });
  });

  it("pages through a brand's units in (created_at, id) order from any cursor, inside a chunk and across chunks, with units minted before among them", async () => {
    const brand = await app.seedBrand();
    const first = await submitSerial(app.ctx, brand, 700);
    for (let i = 0; i < 5 && !(await processMintJobBatch(app.ctx, brand.brandId, first.mintJobId, 300)).done; i++);
    // Units minted before ids were derived: a batch with a random id, its units with random ids, one chunk.
    const oldBatch = '3f0d5c1e-8a2b-4c6d-9e0f-1a2b3c4d5e6f';
    await run(
      app.db.em.fork(),
      `insert into mint_units (brand_id, id, mint_batch_id, seq, serial, status, created_at)
      select ?, gen_random_uuid(), ?, s, 'OLDUNIT' || lpad(s::text, 13, '0'), 'active', now() - interval '1 hour' from generate_series(1, 120) s`,
      [brand.brandId, oldBatch],
    );
    const second = await submitSerial(app.ctx, brand, 500);
    for (let i = 0; i < 5 && !(await processMintJobBatch(app.ctx, brand.brandId, second.mintJobId, 200)).done; i++);

    const expected = (
      await query<{ id: string }>(
        app.db.em.fork(),
        `select ${storedOrDerivedUnitId()} as id from mint_units where brand_id = ? order by created_at desc, 1 desc`,
        [brand.brandId],
      )
    ).map((u) => u.id);
    expect(expected).toHaveLength(1_320);
    const all = await listMintUnits(app.ctx, brand.brandId, { limit: 100, cursor: null, mintBatchId: null });
    const walked = [...all.items];
    for (let cursor = all.next; cursor !== null; ) {
      const page = await listMintUnits(app.ctx, brand.brandId, { limit: 100, cursor, mintBatchId: null });
      walked.push(...page.items);
      cursor = page.next;
    }
    expect(walked.map((u) => u.id)).toEqual(expected);
    // From every 37th unit (inside chunks, at their ends, in the old batch), the next 60 are the list's next 60.
    for (let i = 0; i < expected.length; i += 37) {
      const at = walked[i]!;
      const page = await listMintUnits(app.ctx, brand.brandId, { limit: 60, cursor: { at: at.createdAt, id: at.id }, mintBatchId: null });
      expect(page.items.map((u) => u.id)).toEqual(expected.slice(i + 1, i + 61));
      if (unitKeyOfId(at.id) !== null) {
        const ofBatch = await listMintUnits(app.ctx, brand.brandId, { limit: 60, cursor: { at: at.createdAt, id: at.id }, mintBatchId: at.mintBatchId });
        expect(ofBatch.items.map((u) => u.id)).toEqual(expected.filter((_, j) => j > i && walked[j]!.mintBatchId === at.mintBatchId).slice(0, 60));
      }
    }
    // Units minted before keep their ids in every answer and activate by them.
    const oldIds = walked.filter((u) => u.mintBatchId === oldBatch).map((u) => u.id);
    expect(oldIds).toHaveLength(120);
    expect(oldIds.every((id) => /^[0-9a-f-]{14}4/.test(id))).toBe(true);
  });
});
