// Serials that decode to their unit: a new serial batch takes its brand's next ordinal and its
// units' serials are the brand key's FF1 encoding of (ordinal, seq). Minting writes no serial index
// entry; every lookup by serial decodes first; units minted before keep resolving through the
// stored serials' partial index; the brand's key is stored sealed.

import { randomUUID } from 'node:crypto';
import {
  brandSerialCipher,
  createResolverReader,
  ingestScanBatch,
  listUnits,
  lockUnitsForMove,
  readSerialState,
  scanStats,
  serialKeyContext,
  unitOfWork,
} from '@mint/db';
import { openSecret, serialAlphabet } from '@mint/domain';
import { processMintJobBatch } from '@mint/usecases';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { query, run } from '../../../test/support/sql.ts';
import { setupUseCases, submitSerial, type SeededBrand, type UseCaseBundle } from '../../../test/support/usecases.ts';

let app: UseCaseBundle;
beforeAll(async () => {
  app = await setupUseCases();
});
afterAll(() => app.close());

const mint = async (brand: SeededBrand, n: number) => {
  const { mintJobId, mintBatchId } = await submitSerial(app.ctx, brand, n);
  for (let i = 0; i < 10 && !(await processMintJobBatch(app.ctx, brand.brandId, mintJobId, 2_000)).done; i++);
  const units = await query<{ seq: number; serial: string; id: string | null }>(
    app.db.em.fork(),
    'select seq, serial, id from mint_units where brand_id = ? and mint_batch_id = ? order by seq',
    [brand.brandId, mintBatchId],
  );
  const [batch] = await query<{ serial_ordinal: string | null }>(app.db.em.fork(), 'select serial_ordinal from mint_batches where id = ?', [mintBatchId]);
  return { mintBatchId, units, ordinal: batch!.serial_ordinal === null ? null : Number(batch!.serial_ordinal) };
};

/** The serial with its character at `i` replaced by the next one of the alphabet. */
const altered = (serial: string, i: number) => {
  const next = serialAlphabet[(serialAlphabet.indexOf(serial[i]!) + 1) % serialAlphabet.length]!;
  return `${serial.slice(0, i)}${next}${serial.slice(i + 1)}`;
};

describe('serials encoded under the brand key', () => {
  it('mints serials that decode to their batch and seq, with no entry in the serial index, and resolves them by decoding', async () => {
    const brand = await app.seedBrand();
    const first = await mint(brand, 2_500);
    const second = await mint(brand, 1_200);
    // Ordinals from the brand's counter, one per batch.
    expect([first.ordinal, second.ordinal]).toEqual([1, 2]);
    const cipher = (await brandSerialCipher(app.db.em.fork(), brand.brandId))!;
    for (const b of [first, second]) {
      expect(b.units.map((u) => cipher.decode(u.serial))).toEqual(b.units.map((u) => ({ batchOrdinal: b.ordinal, seq: u.seq })));
      // No stored id, so no entry in the partial index of stored serials (its predicate is `id is not null`).
      expect(b.units.filter((u) => u.id !== null)).toEqual([]);
    }
    const [index] = await query<{ indexdef: string }>(app.db.em.fork(), `select indexdef from pg_indexes where indexname = 'mint_units_stored_serial_unique'`);
    expect(index!.indexdef).toMatch(/WHERE \(id IS NOT NULL\)$/);
    // Nothing else indexes the serial: the lookup plan is a probe of the batch's ordinal and the primary key.
    const serialIndexes = await query<{ indexname: string }>(
      app.db.em.fork(),
      `select indexname from pg_indexes where tablename = 'mint_units' and indexdef like '%serial%' and indexdef not like '%WHERE (id IS NOT NULL)'`,
    );
    expect(serialIndexes).toEqual([]);

    const reader = createResolverReader(app.db);
    try {
      for (const u of [first.units[0]!, first.units[2_499]!, second.units[600]!]) {
        expect(await reader.findUnit(brand.brandId, u.serial, brand.gtin)).toMatchObject({ serial: u.serial, gtin: brand.gtin, status: 'active' });
      }
      // Coalesced lookups (several at once) decode each.
      const many = await Promise.all(second.units.slice(0, 40).map((u) => reader.findUnit(brand.brandId, u.serial, brand.gtin)));
      expect(many.map((u) => u?.serial)).toEqual(second.units.slice(0, 40).map((u) => u.serial));
      // A forged serial (any one character changed) names no unit: refused as today (the resolver's 404).
      const forged = [0, 7, 19].map((i) => altered(first.units[10]!.serial, i));
      for (const serial of forged) expect(await reader.findUnit(brand.brandId, serial, brand.gtin)).toBeNull();
      for (const serial of forged) expect(await readSerialState(unitOfWork(app.db), brand.brandId, serial)).toBeNull();
      // A serial of the brand under another GTIN is not the unit's.
      expect(await reader.findUnit(brand.brandId, first.units[0]!.serial, '09506000134352')).toBeNull();
    } finally {
      await reader.close();
    }
    // The other lookups by serial decode too: the list's serial filter, lifecycle state, moves by serial list.
    const u = second.units[77]!;
    expect((await listUnits(unitOfWork(app.db), brand.brandId, 10, null, null, { serial: u.serial })).map((r) => r.serial)).toEqual([u.serial]);
    expect(await readSerialState(unitOfWork(app.db), brand.brandId, u.serial)).toMatchObject({ mintBatchId: second.mintBatchId, seq: u.seq });
    const listed = [first.units[5]!.serial, u.serial, altered(u.serial, 3)];
    expect((await lockUnitsForMove(unitOfWork(app.db), brand.brandId, { serials: listed }, false)).map((r) => r.serial).sort()).toEqual(
      [first.units[5]!.serial, u.serial].sort(),
    );
  });

  it('gives two brands different serials for the same ordinal and seq, and keeps their keys sealed', async () => {
    const a = await app.seedBrand();
    const b = await app.seedBrand();
    const ma = await mint(a, 500);
    const mb = await mint(b, 500);
    expect([ma.ordinal, mb.ordinal]).toEqual([1, 1]);
    const serialsA = new Set(ma.units.map((u) => u.serial));
    expect(mb.units.filter((u) => serialsA.has(u.serial))).toEqual([]);
    // A brand's serial does not resolve under the other brand.
    const reader = createResolverReader(app.db);
    try {
      expect(await reader.findUnit(b.brandId, ma.units[0]!.serial, b.gtin)).toBeNull();
    } finally {
      await reader.close();
    }

    // Sealed: the stored value is the secret box's, bound to its brand, and the key's bytes appear nowhere in the row.
    const rows = await query<{ brand_id: string; key_sealed: string; row: string }>(
      app.db.em.fork(),
      'select brand_id, key_sealed, k::text as row from brand_serial_keys k where brand_id in (?, ?)',
      [a.brandId, b.brandId],
    );
    expect(rows).toHaveLength(2);
    for (const r of rows) {
      expect(r.key_sealed).toMatch(/^enc:v1:/);
      const key = Buffer.from(openSecret(app.ctx.webhookSecretKeys, r.key_sealed, serialKeyContext(r.brand_id)), 'base64');
      expect(key).toHaveLength(32);
      for (const spelling of [key.toString('base64'), key.toString('base64url'), key.toString('hex')]) expect(r.row).not.toContain(spelling);
      // Bound to its brand: it does not open as the other brand's.
      const other = r.brand_id === a.brandId ? b.brandId : a.brandId;
      expect(() => openSecret(app.ctx.webhookSecretKeys, r.key_sealed, serialKeyContext(other))).toThrow(/does not open/);
    }
  });

  it('keeps units minted before (random serials, stored ids, no ordinal) resolving, listing and moving by serial', async () => {
    const brand = await app.seedBrand();
    const fresh = await mint(brand, 20);
    // A batch as minted before: no ordinal, random serials, stored ids (as the migration leaves them).
    const { mintBatchId } = await submitSerial(app.ctx, brand, 3);
    const old = [1, 2, 3].map((seq) => ({ seq, id: randomUUID(), serial: `OLDSTYLE${randomUUID().replace(/-/g, '').slice(0, 12).toUpperCase()}` }));
    for (const u of old) {
      await run(
        app.db.em.fork(),
        `insert into mint_units (brand_id, id, mint_batch_id, seq, serial, status, created_at, activated_at) values (?, ?, ?, ?, ?, 'active', now(), now())`,
        [brand.brandId, u.id, mintBatchId, u.seq, u.serial],
      );
    }
    const reader = createResolverReader(app.db);
    try {
      for (const u of old) expect(await reader.findUnit(brand.brandId, u.serial, brand.gtin)).toMatchObject({ serial: u.serial, status: 'active' });
      // Old and new serials looked up together.
      const both = await Promise.all([...old, fresh.units[3]!].map((u) => reader.findUnit(brand.brandId, u.serial, brand.gtin)));
      expect(both.map((u) => u?.serial)).toEqual([...old, fresh.units[3]!].map((u) => u.serial));
    } finally {
      await reader.close();
    }
    expect((await listUnits(unitOfWork(app.db), brand.brandId, 10, null, null, { serial: old[1]!.serial })).map((r) => r.id)).toEqual([old[1]!.id]);
    expect(
      (await lockUnitsForMove(unitOfWork(app.db), brand.brandId, { serials: [old[0]!.serial, fresh.units[0]!.serial] }, false)).map((r) => r.serial).sort(),
    ).toEqual([old[0]!.serial, fresh.units[0]!.serial].sort());
  });

  it('records a scan of an encoded unit with its batch, so scans group by batch without a serial index, and scans recorded before still join by serial', async () => {
    const brand = await app.seedBrand();
    const fresh = await mint(brand, 30);
    const now = new Date();
    const scan = (identifier: string) => ({
      scannedAt: new Date(now.getTime() - 60_000),
      kind: 'serial' as const,
      gtin: brand.gtin,
      identifier,
      lot: null,
      outcome: 'resolved',
      representation: 'redirect',
      linkType: null,
      country: null,
      clientClass: 'app' as const,
      visitor: null,
      count: 1,
    });
    const serial = fresh.units[4]!.serial;
    await ingestScanBatch(unitOfWork(app.db), brand.brandId, randomUUID(), [scan(serial), scan(altered(serial, 5))], [], now);
    const recorded = await query<{ identifier: string; unit_known: boolean; mint_batch_id: string | null }>(
      app.db.em.fork(),
      'select identifier, unit_known, mint_batch_id from scan_events where brand_id = ? order by identifier',
      [brand.brandId],
    );
    expect(recorded).toEqual(
      [
        { identifier: serial, unit_known: true, mint_batch_id: fresh.mintBatchId },
        { identifier: altered(serial, 5), unit_known: false, mint_batch_id: null },
      ].sort((a, b) => (a.identifier < b.identifier ? -1 : 1)),
    );
    // A scan of a unit minted before, recorded before batches were kept (no batch on the row): joined by serial.
    const { mintBatchId: oldBatch } = await submitSerial(app.ctx, brand, 1);
    const oldSerial = `OLDSCAN${randomUUID().replace(/-/g, '').slice(0, 13).toUpperCase()}`;
    await run(
      app.db.em.fork(),
      `insert into mint_units (brand_id, id, mint_batch_id, seq, serial, status, created_at, activated_at) values (?, ?, ?, 1, ?, 'active', now(), now())`,
      [brand.brandId, randomUUID(), oldBatch, oldSerial],
    );
    await ingestScanBatch(unitOfWork(app.db), brand.brandId, randomUUID(), [scan(oldSerial)], [], now);
    await run(app.db.em.fork(), 'update scan_events set mint_batch_id = null where brand_id = ? and identifier = ?', [brand.brandId, oldSerial]);
    const byBatch = await scanStats(
      unitOfWork(app.db),
      { brandId: brand.brandId, from: new Date(now.getTime() - 3_600_000), to: new Date(now.getTime() + 1000) },
      'batch',
      'key',
      null,
      10,
    );
    expect(Object.fromEntries(byBatch.map((r) => [r.key, r.scans]))).toEqual({ [fresh.mintBatchId]: 1, [oldBatch]: 1, '': 1 });
  });
});
