// A repeated key (a product's SKU or GTIN, a link, a level's default) is refused naming the row it
// repeats however far apart the two rows are: the import keeps the keys it has seen in PostgreSQL
// (import_keys), batch by batch, instead of in the worker's memory, and deletes them when it ends.

import { gtinCheckDigit } from '@mint/domain';
import {
  failProductImport,
  getLinkImport,
  getProductImport,
  purgeStaleImportKeys,
  runProductImport,
  startLinkImport,
  startProductImport,
} from '@mint/usecases';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { query, run } from '../../../test/support/sql.ts';
import { setupUseCases, type SeededBrand, type UseCaseBundle } from '../../../test/support/usecases.ts';

let app: UseCaseBundle;
let brand: SeededBrand;

beforeAll(async () => {
  app = await setupUseCases();
  brand = await app.seedBrand();
});
afterAll(async () => {
  await app?.close();
});

/** The i-th GTIN-14 of these tests (valid check digit). */
function gtin(i: number): string {
  const body = `0${String(5_000_000_000 + i).padStart(12, '0')}`.slice(-13);
  return body + String(gtinCheckDigit(body));
}

/** A product file of `count` rows, SKU `prefix-i` and GTIN `gtin(from + i)` at row i, with some rows replaced. */
function productFile(prefix: string, count: number, from: number, replaced: Record<number, string> = {}): Buffer {
  const lines = ['sku,name,gtin,commercial_status,mint_readiness_status'];
  for (let i = 1; i <= count; i++) lines.push(replaced[i] ?? `${prefix}-${i},Product ${i},${gtin(from + i)},ACTIVE,READY`);
  return Buffer.from(`${lines.join('\n')}\n`);
}

const keysOf = async (importId: string) =>
  (
    await query<{ n: string }>(app.db.em.fork(), 'select count(*)::text as n from import_keys where brand_id = ? and import_id = ?', [brand.brandId, importId])
  )[0]!.n;

describe('repeated keys of an import', () => {
  it('refuses a SKU and a GTIN repeated batches apart (rows 3 and 1,203; 5 and 1,250) naming the first row, and keeps no key once the import ends', async () => {
    const csv = productFile('REP', 1300, 0, {
      1203: 'REP-3,Again,,ACTIVE,READY',
      1250: `REP-OTHER,Other,${gtin(5)},ACTIVE,READY`,
    });
    const started = await startProductImport(app.ctx, { id: brand.userId }, brand.brandId, csv);
    expect(await runProductImport(app.ctx, brand.brandId, started.id)).toEqual({ kind: 'finished', status: 'COMPLETED' });
    const done = await getProductImport(app.ctx, brand.brandId, started.id);
    expect(done).toMatchObject({ status: 'COMPLETED', totalRows: 1300, importedRows: 1298, failedRows: 2 });
    expect(done.errors).toEqual([
      { row: 1203, field: 'sku', message: '"REP-3" already appears in row 3; each SKU once per file' },
      { row: 1250, field: 'gtin', message: 'already appears in row 5; each GTIN once per file' },
    ]);
    const name = await query<{ name: string }>(app.db.em.fork(), "select name from products where brand_id = ? and sku = 'REP-3'", [brand.brandId]);
    expect(name).toEqual([{ name: 'Product 3' }]);
    expect(await keysOf(started.id)).toBe('0');
  });

  it('refuses a link and a second default repeated batches apart, naming the first row, and keeps no key once the import ends', async () => {
    const lines = ['gtin,link_type,href,title,is_default'];
    for (let i = 1; i <= 1300; i++) lines.push(`${gtin(10_000 + Math.ceil(i / 10))},gs1:pip,https://acme.example/l/${i},Link ${i},${i === 2 ? 'true' : ''}`);
    // Row 1,203 repeats row 3's link; row 700 is a second default of row 2's level.
    lines[1203] = `${gtin(10_001)},gs1:pip,https://acme.example/l/3,Again,`;
    lines[700] = `${gtin(10_001)},gs1:epil,https://acme.example/other,Other,true`;
    const started = await startLinkImport(app.ctx, { id: brand.userId }, brand.brandId, Buffer.from(`${lines.join('\n')}\n`));
    expect(await runProductImport(app.ctx, brand.brandId, started.id)).toEqual({ kind: 'finished', status: 'COMPLETED' });
    const done = await getLinkImport(app.ctx, brand.brandId, started.id);
    expect(done).toMatchObject({ status: 'COMPLETED', totalRows: 1300, importedRows: 1298, failedRows: 2 });
    expect(done.errors).toEqual([
      { row: 700, field: 'is_default', message: 'a second default for this level (row 2 is its default); a level has exactly one' },
      { row: 1203, field: 'href', message: 'already appears in row 3 with this level and link type; each link once per file' },
    ]);
    expect(await keysOf(started.id)).toBe('0');
  });

  it('gives the same outcome when a run starts over after an earlier one wrote keys and died', async () => {
    const csv = productFile('RERUN', 1300, 20_000, { 1203: 'RERUN-3,Again,,ACTIVE,READY' });
    const started = await startProductImport(app.ctx, { id: brand.userId }, brand.brandId, csv);
    // What an earlier run left: the keys of rows 1 to 1,100 (its first batch and some of a second it never committed).
    await run(
      app.db.em.fork(),
      `insert into import_keys (brand_id, import_id, kind, key, first_row)
      select ?, ?, 'sku', 'RERUN-' || i, i from generate_series(1, 1100) i`,
      [brand.brandId, started.id],
    );
    expect(await runProductImport(app.ctx, brand.brandId, started.id)).toEqual({ kind: 'finished', status: 'COMPLETED' });
    const done = await getProductImport(app.ctx, brand.brandId, started.id);
    expect(done).toMatchObject({ importedRows: 1299, failedRows: 1 });
    expect(done.errors).toEqual([{ row: 1203, field: 'sku', message: '"RERUN-3" already appears in row 3; each SKU once per file' }]);
    expect(await keysOf(started.id)).toBe('0');
  });

  it('deletes the keys of an import marked FAILED, and the sweeper those of ended imports, never of a running one', async () => {
    const failed = await startProductImport(app.ctx, { id: brand.userId }, brand.brandId, productFile('FAIL', 2, 30_000));
    const ended = await startProductImport(app.ctx, { id: brand.userId }, brand.brandId, productFile('ENDED', 2, 30_010));
    const running = await startProductImport(app.ctx, { id: brand.userId }, brand.brandId, productFile('RUNNING', 2, 30_020));
    const em = app.db.em.fork();
    for (const id of [failed.id, ended.id, running.id]) {
      await run(em, "insert into import_keys (brand_id, import_id, kind, key, first_row) values (?, ?, 'sku', 'X', 1)", [brand.brandId, id]);
    }
    expect(await failProductImport(app.ctx, brand.brandId, failed.id, 'gave up')).toBe(true);
    expect(await keysOf(failed.id)).toBe('0');
    // Keys an end left behind (the process died between), and a run at work (a fresh heartbeat).
    await run(em, "update product_imports set status = 'COMPLETED', finished_at = now() where brand_id = ? and id = ?", [brand.brandId, ended.id]);
    await run(em, "update product_imports set status = 'PROCESSING', heartbeat_at = now() where brand_id = ? and id = ?", [brand.brandId, running.id]);
    expect(await purgeStaleImportKeys(app.ctx)).toBeGreaterThanOrEqual(1);
    expect([await keysOf(ended.id), await keysOf(running.id)]).toEqual(['0', '1']);
    // Without a heartbeat for over an hour, a PROCESSING import is abandoned: its keys go too.
    await run(em, "update product_imports set heartbeat_at = now() - interval '2 hours' where brand_id = ? and id = ?", [brand.brandId, running.id]);
    await purgeStaleImportKeys(app.ctx);
    expect(await keysOf(running.id)).toBe('0');
  });
});
