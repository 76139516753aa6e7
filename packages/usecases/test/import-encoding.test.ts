// The product and link CSV imports read UTF-8 only: a row with bytes that are not UTF-8 is a row
// error naming the row and the column, never a product or link stored with U+FFFD in place of its bytes.

import { getLinkImport, getProductImport, runProductImport, startLinkImport, startProductImport } from '@mint/usecases';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { query } from '../../../test/support/sql.ts';
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

async function importBytes(csv: Uint8Array) {
  const started = await startProductImport(app.ctx, { id: brand.userId }, brand.brandId, csv);
  await runProductImport(app.ctx, brand.brandId, started.id);
  return getProductImport(app.ctx, brand.brandId, started.id);
}

describe('product import encoding', () => {
  it('refuses each row that is not UTF-8, naming the row and column, and imports the others as written', async () => {
    const csv = Buffer.concat([
      Buffer.from('\ufeffsku,name,commercial_status,mint_readiness_status\n'),
      Buffer.from('ENC-1,Café,ACTIVE,READY\n'),
      Buffer.from('ENC-2,Caf'),
      Buffer.from([0xe9]),
      Buffer.from(',ACTIVE,READY\n'), // Latin-1 é
      Buffer.from('ENC-3,Replacement \ufffd kept,ACTIVE,READY\n'), // a real U+FFFD is text
      Buffer.from('ENC-4,"two'),
      Buffer.from([0xff, 0xfe]),
      Buffer.from('\nlines",ACTIVE,READY\n'),
      Buffer.from('ENC-5,Fine,ACTIVE,READY'),
    ]);
    const done = await importBytes(csv);
    expect(done).toMatchObject({ status: 'COMPLETED', importedRows: 3, failedRows: 2 });
    expect(done.errors).toEqual([
      { row: 2, field: 'name', message: 'is not valid UTF-8 (the file must be UTF-8 encoded)' },
      { row: 4, field: 'name', message: 'is not valid UTF-8 (the file must be UTF-8 encoded)' },
    ]);
    const rows = await query<{ sku: string; name: string }>(
      app.db.em.fork(),
      "select sku, name from products where brand_id = ? and sku like 'ENC-%' order by sku",
      [brand.brandId],
    );
    expect(rows).toEqual([
      { sku: 'ENC-1', name: 'Café' },
      { sku: 'ENC-3', name: 'Replacement \ufffd kept' },
      { sku: 'ENC-5', name: 'Fine' },
    ]);
  });
});

describe('a product file read in slices', () => {
  it('reads a file of several MiB the same whatever falls on a slice boundary: a character split across it, a bad byte at it, a SKU repeated after it', async () => {
    const mib = 1024 * 1024;
    const parts: Buffer[] = [Buffer.from('sku,name,commercial_status,mint_readiness_status\n')];
    let size = parts[0]!.length;
    let row = 0;
    /** SKUs of one width, so a row's prefix has a known length. */
    const sku = (n: number) => `S${String(n).padStart(7, '0')}`;
    const push = (part: Buffer) => {
      parts.push(part);
      size += part.length;
    };
    /** Plain rows (200 bytes each, then one of the length left) until the file is exactly `end` bytes long. */
    const fillTo = (end: number) => {
      while (end - size > 250) push(Buffer.from(`${sku(++row)},${'p'.repeat(200 - `${sku(row)},,ACTIVE,READY\n`.length)},ACTIVE,READY\n`));
      const bare = `${sku(++row)},,ACTIVE,READY\n`.length;
      push(Buffer.from(`${sku(row)},${'x'.repeat(end - size - bare)},ACTIVE,READY\n`));
      expect(size).toBe(end);
    };
    // "é" (two bytes) split by the first MiB boundary; a bad byte as the first byte of the second MiB.
    fillTo(mib - 1 - `${sku(0)},Caf`.length);
    const splitRow = ++row;
    push(Buffer.from(`${sku(splitRow)},Caf\u00e9 au lait,ACTIVE,READY\n`));
    fillTo(2 * mib - `${sku(0)},`.length);
    const badRow = ++row;
    push(Buffer.concat([Buffer.from(`${sku(badRow)},`), Buffer.from([0xff]), Buffer.from('bad,ACTIVE,READY\n')]));
    fillTo(2.5 * mib);
    const repeatRow = ++row;
    push(Buffer.from(`${sku(1)},Repeated,ACTIVE,READY\n`));
    const file = Buffer.concat(parts);
    expect([file.subarray(mib - 1, mib + 1).toString(), file[2 * mib]]).toEqual(['\u00e9', 0xff]);
    const done = await importBytes(file);
    expect(done).toMatchObject({ status: 'COMPLETED', importedRows: row - 2, failedRows: 2 });
    expect(done.errors).toEqual([
      { row: badRow, field: 'name', message: 'is not valid UTF-8 (the file must be UTF-8 encoded)' },
      { row: repeatRow, field: 'sku', message: `"${sku(1)}" already appears in row 1; each SKU once per file` },
    ]);
    const [split] = await query<{ name: string }>(app.db.em.fork(), 'select name from products where brand_id = ? and sku = ?', [brand.brandId, sku(splitRow)]);
    expect(split).toEqual({ name: 'Café au lait' });
  });
});

describe('link import encoding', () => {
  it('refuses each row that is not UTF-8, naming the row and column, and imports the others as written', async () => {
    const gtin = brand.gtin;
    const csv = Buffer.concat([
      Buffer.from('gtin,lot,serial,link_type,href,title\n'),
      Buffer.from(`${gtin},ENC-L1,,gs1:pip,https://acme.example/ok,Caf\u00e9\n`),
      Buffer.from(`${gtin},ENC-L2,,gs1:pip,https://acme.example/bad,Caf`),
      Buffer.from([0xe9]),
      Buffer.from('\n'), // Latin-1 é
      Buffer.from(`${gtin},ENC-L3,,gs1:pip,https://acme.example/`),
      Buffer.from([0xc3, 0x28]),
      Buffer.from(',Broken href\n'),
      Buffer.from(`${gtin},ENC-L4,,gs1:pip,https://acme.example/fine,Fine`),
    ]);
    const started = await startLinkImport(app.ctx, { id: brand.userId }, brand.brandId, csv);
    await runProductImport(app.ctx, brand.brandId, started.id);
    const done = await getLinkImport(app.ctx, brand.brandId, started.id);
    expect(done).toMatchObject({ status: 'COMPLETED', importedRows: 2, failedRows: 2 });
    expect(done.errors).toEqual([
      { row: 2, field: 'title', message: 'is not valid UTF-8 (the file must be UTF-8 encoded)' },
      { row: 3, field: 'href', message: 'is not valid UTF-8 (the file must be UTF-8 encoded)' },
    ]);
    const rows = await query<{ qualifier: string; title: string }>(
      app.db.em.fork(),
      "select qualifier, title from resolver_links where brand_id = ? and qualifier like 'ENC-L%' order by qualifier",
      [brand.brandId],
    );
    expect(rows).toEqual([
      { qualifier: 'ENC-L1', title: 'Café' },
      { qualifier: 'ENC-L4', title: 'Fine' },
    ]);
  });
});
