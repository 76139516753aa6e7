// Pack profiles end to end on the use cases: CreatePayloadPack's checks (nothing written on bad
// input), ranges, the EPCIS 2.0 file validated against GS1's JSON Schema, the void pack's
// decommissioning events, and the download verified with `sha256sum -c`.

import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { IllegalStateError, InvalidInputError, NotFoundError } from '@mint/domain';
import type { SigningKey } from '@mint/domain';
import { createFsPackStore, type PackStore } from '@mint/store';
import { createPayloadPack, listPayloadPacks, setMintBatchStatus, submitMintRequest, type CreatePayloadPackInput, type PackManifest } from '@mint/usecases';
import {
  downloadAndVerify,
  epcisValidator,
  generateOnly,
  mintCompleted,
  packsOfBatch,
  serialPackRoundTrip,
  tempStoreDir,
} from '../../../test/support/pack-fixtures.ts';
import { query, unitsWithUrls } from '../../../test/support/sql.ts';
import { setupUseCases, type SeededBrand, type UseCaseBundle } from '../../../test/support/usecases.ts';

let app: UseCaseBundle;
let storeDir: { dir: string; remove(): Promise<void> };
let store: PackStore;
const keys: SigningKey[] = [{ id: 'k1', secret: new Uint8Array(32).fill(7) }];
const validateEpcis = epcisValidator();

beforeAll(async () => {
  app = await setupUseCases();
  storeDir = await tempStoreDir();
  store = createFsPackStore(storeDir.dir);
});
afterAll(async () => {
  await app.close();
  await storeDir.remove();
});

const ask = (brand: SeededBrand, mintBatchId: string, profile: Partial<CreatePayloadPackInput> = {}) =>
  createPayloadPack(app.ctx, {
    brandId: brand.brandId,
    mintBatchId,
    formats: ['csv'],
    seqFrom: null,
    seqTo: null,
    symbology: null,
    layout: null,
    ...profile,
  });

async function packCount(): Promise<number> {
  return Number((await query<{ n: string }>(app.db.em.fork(), 'select count(*) as n from payload_packs'))[0]!.n);
}

/** The error a call throws (or fails the test). */
async function errorOf(call: Promise<unknown>): Promise<Error> {
  try {
    await call;
  } catch (error) {
    return error as Error;
  }
  throw new Error('expected the call to fail');
}

async function unitUrls(batchId: string, from = 1, to = 1e9): Promise<string[]> {
  return (
    await query<{ resolver_url: string }>(
      app.db.em.fork(),
      `select resolver_url from ${unitsWithUrls} where mint_batch_id = ? and seq between ? and ? order by seq`,
      [batchId, from, to],
    )
  ).map((r) => r.resolver_url);
}

type EpcisDocument = { type: string; epcisBody: { eventList: Record<string, unknown>[] } };

describe('CreatePayloadPack', () => {
  it('refuses bad input naming the field, a voided or unminted batch as a failed precondition, and writes nothing', async () => {
    const brand = await app.seedBrand();
    const serial = await mintCompleted(app.ctx, brand, 50);
    const lots = await mintCompleted(app.ctx, brand, 30, {
      identityMode: 'batch',
      lots: [
        { lotCode: 'L1', qty: 10 },
        { lotCode: 'L2', qty: 20 },
      ],
    });
    const voided = await mintCompleted(app.ctx, brand, 5);
    await setMintBatchStatus(app.ctx, { id: brand.userId }, { brandId: brand.brandId, mintBatchId: voided.mintBatchId, status: 'voided', reason: null });
    const draft = await submitMintRequest(
      app.ctx,
      { id: brand.userId },
      {
        brandId: brand.brandId,
        productId: brand.productId,
        productBatchId: null,
        requestedQuantity: 10,
        identityMode: 'serial',
        activationMode: 'active_at_mint',
        lots: [],
        idempotencyKey: null,
      },
    );
    if (!draft.ok) throw new Error('draft submit blocked');
    const before = await packCount();

    const fieldsOf = async (profile: Partial<CreatePayloadPackInput>, batchId = serial.mintBatchId) => {
      const error = await errorOf(ask(brand, batchId, profile));
      expect(error).toBeInstanceOf(InvalidInputError);
      return (error as InvalidInputError).violations.map((v) => v.field);
    };
    expect(await fieldsOf({ formats: ['csv', 'gif'] })).toEqual(['formats']);
    expect(await fieldsOf({ formats: [] })).toEqual(['formats']);
    expect(await fieldsOf({ seqFrom: 1, seqTo: 51 })).toEqual(['seq_to']);
    expect(await fieldsOf({ seqFrom: 0 })).toEqual(['seq_from']);
    expect(await fieldsOf({ seqFrom: 20, seqTo: 10 })).toEqual(['seq_to']);
    expect(await fieldsOf({ seqFrom: 1, seqTo: 5 }, lots.mintBatchId)).toEqual(['seq_from']);
    expect(await fieldsOf({ symbology: 'aztec' })).toEqual(['symbology']);
    // Four 70 mm labels do not fit across A4's 210 mm; nor do 9 rows of 37 mm down its 297 mm.
    expect(await fieldsOf({ layout: { columns: 4 } })).toEqual(['layout.columns']);
    expect(await fieldsOf({ layout: { rows: 9, marginTopMm: 0 } })).toEqual(['layout.rows']);
    expect(await fieldsOf({ layout: { labelWidthMm: 5, dpi: 600 } })).toEqual(['layout.dpi', 'layout.label_width_mm']);
    // A PDF grid that @mint/labels' checkSheetLayout would not lay out, and SVG for a product without a GTIN.
    expect(await fieldsOf({ formats: ['pdf'], layout: { columns: 4 } })).toEqual(['layout.columns']);

    expect(await errorOf(ask(brand, voided.mintBatchId))).toBeInstanceOf(IllegalStateError);
    expect(await errorOf(ask(brand, draft.mintBatchId))).toBeInstanceOf(IllegalStateError);
    const other = await app.seedBrand();
    expect(await errorOf(ask(other, serial.mintBatchId))).toBeInstanceOf(NotFoundError);
    expect(await packCount()).toBe(before);
  });

  it('creates any number of pending packs per batch, each listed with its formats and range', async () => {
    const brand = await app.seedBrand();
    const { mintBatchId } = await mintCompleted(app.ctx, brand, 40);
    const a = await ask(brand, mintBatchId, { formats: ['epcis', 'csv', 'csv'], seqFrom: 1, seqTo: 20 });
    const b = await ask(brand, mintBatchId, {
      formats: ['jsonl'],
      seqFrom: 21,
      seqTo: 40,
      symbology: 'datamatrix',
      layout: { paper: 'letter', rows: 7, dpi: 300 },
    });
    expect(a).toMatchObject({
      status: 'pending',
      storagePath: null,
      purpose: 'request',
      profile: { formats: ['csv', 'epcis'], seqFrom: 1, seqTo: 20, symbology: 'qr' },
    });
    expect(b.profile).toMatchObject({
      formats: ['jsonl'],
      seqFrom: 21,
      seqTo: 40,
      symbology: 'datamatrix',
      layout: { paper: 'letter', dpi: 300, columns: 3, rows: 7 },
    });
    const listed = (await listPayloadPacks(app.ctx, brand.brandId, { limit: null, cursor: null })).items;
    // Newest first; the two requested packs may share a millisecond, so compare them as a set.
    const rows = listed.map((k) => JSON.stringify([k.purpose, k.profile.formats, k.profile.seqFrom, k.profile.seqTo]));
    expect(rows[2]).toBe(JSON.stringify(['completion', ['csv', 'jsonl', 'epcis'], null, null]));
    expect(rows.slice(0, 2).sort()).toEqual([JSON.stringify(['request', ['csv', 'epcis'], 1, 20]), JSON.stringify(['request', ['jsonl'], 21, 40])]);
  });
});

describe('a pack of a unit range', () => {
  it('writes only the range to every file, counted in the manifest, with an EPCIS document that validates and lists exactly those units', async () => {
    const brand = await app.seedBrand();
    const { mintBatchId } = await mintCompleted(app.ctx, brand, 250);
    const pack = await ask(brand, mintBatchId, { formats: ['csv', 'jsonl', 'epcis'], seqFrom: 101, seqTo: 180 });
    expect(await generateOnly(app.ctx, store, pack.id)).toEqual({ kind: 'ready', unitCount: 80, storagePath: `${brand.brandId}/${pack.id}` });
    const folder = join(storeDir.dir, brand.brandId, pack.id);
    const manifest = JSON.parse(await readFile(join(folder, 'manifest.json'), 'utf8')) as PackManifest;
    expect(manifest).toMatchObject({ purpose: 'request', seq_from: 101, seq_to: 180, unit_count: 80, row_count: 80 });
    expect(manifest.files.map((f) => [f.name, f.format, f.rows, f.count])).toEqual([
      ['units.csv', 'csv', 80, 80],
      ['units.jsonl', 'jsonl', 80, 80],
      ['epcis.json', 'epcis', 1, 80],
    ]);
    const expected = await unitUrls(mintBatchId, 101, 180);
    const csv = (await readFile(join(folder, 'units.csv'), 'utf8')).trim().split('\n').slice(1);
    expect(csv.map((line) => line.split(',')[1])).toEqual(expected);
    const epcis = JSON.parse(await readFile(join(folder, 'epcis.json'), 'utf8')) as EpcisDocument;
    expect(validateEpcis(epcis), JSON.stringify(validateEpcis.errors)).toBe(true);
    expect(epcis.epcisBody.eventList).toHaveLength(1);
    expect(epcis.epcisBody.eventList[0]).toMatchObject({
      type: 'ObjectEvent',
      action: 'ADD',
      bizStep: 'commissioning',
      disposition: 'active',
      epcList: expected,
    });
  });
});

describe('the EPCIS file', () => {
  it('splits a serial batch into events of at most 10,000 EPCs, validates, and its download verifies with sha256sum -c', async () => {
    const brand = await app.seedBrand();
    const { mintBatchId } = await mintCompleted(app.ctx, brand, 20_500, { chunk: 20_000 });
    const [completion] = await packsOfBatch(app.ctx, mintBatchId);
    expect(await generateOnly(app.ctx, store, completion!.id)).toMatchObject({ kind: 'ready', unitCount: 20_500 });
    const { dir, manifest, check } = await downloadAndVerify(app.ctx, { keys, store }, brand.brandId, completion!.id);
    expect(check.trim().split('\n')).toEqual(['units.csv: OK', 'units.jsonl: OK', 'epcis.json: OK']);
    expect(manifest.files.map((f) => [f.name, f.count])).toEqual([
      ['units.csv', 20_500],
      ['units.jsonl', 20_500],
      ['epcis.json', 20_500],
    ]);
    const epcis = JSON.parse(await readFile(join(dir, 'epcis.json'), 'utf8')) as EpcisDocument;
    expect(validateEpcis(epcis), JSON.stringify(validateEpcis.errors?.slice(0, 3))).toBe(true);
    const lists = epcis.epcisBody.eventList.map((e) => e['epcList'] as string[]);
    expect(lists.map((l) => l.length)).toEqual([10_000, 10_000, 500]);
    expect(lists.flat()).toEqual(await unitUrls(mintBatchId));
    expect(new Set(epcis.epcisBody.eventList.map((e) => e['eventID'])).size).toBe(3);
  });

  it('reports lots by class with the lot number in ilmd, and a product-only batch by class', async () => {
    const brand = await app.seedBrand();
    const lots = await mintCompleted(app.ctx, brand, 30, {
      identityMode: 'batch',
      lots: [
        { lotCode: 'A-1', qty: 10 },
        { lotCode: 'B.2', qty: 20 },
      ],
    });
    const product = await mintCompleted(app.ctx, brand, 7, { identityMode: 'batch' });
    const docs: EpcisDocument[] = [];
    for (const batch of [lots, product]) {
      const pack = await ask(brand, batch.mintBatchId, { formats: ['epcis'] });
      expect(await generateOnly(app.ctx, store, pack.id)).toMatchObject({ kind: 'ready' });
      const doc = JSON.parse(await readFile(join(storeDir.dir, brand.brandId, pack.id, 'epcis.json'), 'utf8')) as EpcisDocument;
      expect(validateEpcis(doc), JSON.stringify(validateEpcis.errors)).toBe(true);
      docs.push(doc);
    }
    const base = (
      await query<{ resolver_base_url: string }>(app.db.em.fork(), 'select resolver_base_url from mint_batches where id = ?', [lots.mintBatchId])
    )[0]!.resolver_base_url;
    expect(docs[0]!.epcisBody.eventList.map((e) => [e['quantityList'], e['ilmd'], e['action'], e['bizStep']])).toEqual([
      [[{ epcClass: `${base}/01/${brand.gtin}/10/A-1`, quantity: 10 }], { 'cbvmda:lotNumber': 'A-1' }, 'ADD', 'commissioning'],
      [[{ epcClass: `${base}/01/${brand.gtin}/10/B.2`, quantity: 20 }], { 'cbvmda:lotNumber': 'B.2' }, 'ADD', 'commissioning'],
    ]);
    expect(docs[1]!.epcisBody.eventList.map((e) => e['quantityList'])).toEqual([[{ epcClass: `${base}/01/${brand.gtin}`, quantity: 7 }]]);
  });

  it('gets a decommissioning event listing exactly the units of a voided batch, in a void pack of its own', async () => {
    const brand = await app.seedBrand();
    const { mintBatchId } = await mintCompleted(app.ctx, brand, 30);
    const other = await mintCompleted(app.ctx, brand, 4);
    await setMintBatchStatus(app.ctx, { id: brand.userId }, { brandId: brand.brandId, mintBatchId, status: 'voided', reason: 'recall' });
    // Voiding twice is refused by the lifecycle; the void pack exists once.
    const packs = await packsOfBatch(app.ctx, mintBatchId);
    expect(packs.map((k) => [k.purpose, k.status])).toEqual([
      ['completion', 'pending'],
      ['void', 'pending'],
    ]);
    expect(await generateOnly(app.ctx, store, packs[0]!.id)).toEqual({ kind: 'failed', reason: 'mint batch voided' });
    expect(await generateOnly(app.ctx, store, packs[1]!.id)).toMatchObject({ kind: 'ready', unitCount: 30 });
    const { dir, manifest } = await downloadAndVerify(app.ctx, { keys, store }, brand.brandId, packs[1]!.id);
    expect(manifest).toMatchObject({ purpose: 'void', unit_count: 30 });
    expect(manifest.files.map((f) => [f.name, f.count])).toEqual([['epcis-decommissioning.json', 30]]);
    const doc = JSON.parse(await readFile(join(dir, 'epcis-decommissioning.json'), 'utf8')) as EpcisDocument;
    expect(validateEpcis(doc), JSON.stringify(validateEpcis.errors)).toBe(true);
    expect(doc.epcisBody.eventList).toHaveLength(1);
    expect(doc.epcisBody.eventList[0]).toMatchObject({
      action: 'DELETE',
      bizStep: 'decommissioning',
      disposition: 'inactive',
      epcList: await unitUrls(mintBatchId),
    });
    expect(await packsOfBatch(app.ctx, other.mintBatchId)).toHaveLength(1);
  });
});

describe('a serial batch packed into its streamed formats (the small size of npm run test:packs:full)', () => {
  it('downloads as a pack that verifies with sha256sum -c and lists every unit once in the EPCIS file', async () => {
    const brand = await app.seedBrand();
    const trip = await serialPackRoundTrip(app.ctx, brand, store, keys, 2_500);
    expect(trip.check.trim().split('\n')).toEqual(trip.formats.map((f) => `${f === 'zpl' ? 'labels.zpl' : 'epcis.json'}: OK`));
    expect(trip.manifest.files.map((f) => [f.format, f.count])).toEqual(trip.formats.map((f) => [f, 2_500]));
  });
});

describe('label formats', () => {
  it('writes svg, pdf and zpl files listed in the manifest with their counts and checksums', async () => {
    const brand = await app.seedBrand();
    const { mintBatchId } = await mintCompleted(app.ctx, brand, 30);
    const pack = await ask(brand, mintBatchId, { formats: ['zpl', 'pdf', 'svg'], seqFrom: 3, seqTo: 27, symbology: 'datamatrix' });
    expect(await generateOnly(app.ctx, store, pack.id)).toMatchObject({ kind: 'ready', unitCount: 25 });
    const { dir, manifest, check } = await downloadAndVerify(app.ctx, { keys, store }, brand.brandId, pack.id);
    expect(check.trim().split('\n')).toEqual(['labels-svg.tar: OK', 'labels.pdf: OK', 'labels.zpl: OK']);
    expect(manifest.files.map((f) => [f.name, f.format, f.rows, f.count])).toEqual([
      ['labels-svg.tar', 'svg', 25, 25],
      ['labels.pdf', 'pdf', 25, 25],
      ['labels.zpl', 'zpl', 25, 25],
    ]);
    const zpl = await readFile(join(dir, 'labels.zpl'), 'utf8');
    expect(zpl.match(/\^XA/g)).toHaveLength(25);
    expect((await readFile(join(dir, 'labels.pdf'))).subarray(0, 5).toString()).toBe('%PDF-');
  });
});
