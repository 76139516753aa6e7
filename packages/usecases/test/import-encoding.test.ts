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
      Buffer.from('ENC-2,Caf'), Buffer.from([0xe9]), Buffer.from(',ACTIVE,READY\n'), // Latin-1 é
      Buffer.from('ENC-3,Replacement \ufffd kept,ACTIVE,READY\n'), // a real U+FFFD is text
      Buffer.from('ENC-4,"two'), Buffer.from([0xff, 0xfe]), Buffer.from('\nlines",ACTIVE,READY\n'),
      Buffer.from('ENC-5,Fine,ACTIVE,READY'),
    ]);
    const done = await importBytes(csv);
    expect(done).toMatchObject({ status: 'COMPLETED', importedRows: 3, failedRows: 2 });
    expect(done.errors).toEqual([
      { row: 2, field: 'name', message: 'is not valid UTF-8 (the file must be UTF-8 encoded)' },
      { row: 4, field: 'name', message: 'is not valid UTF-8 (the file must be UTF-8 encoded)' },
    ]);
    const rows = await query<{ sku: string; name: string }>(app.db.em.fork(), "select sku, name from products where brand_id = ? and sku like 'ENC-%' order by sku", [brand.brandId]);
    expect(rows).toEqual([{ sku: 'ENC-1', name: 'Café' }, { sku: 'ENC-3', name: 'Replacement \ufffd kept' }, { sku: 'ENC-5', name: 'Fine' }]);
  });
});

describe('link import encoding', () => {
  it('refuses each row that is not UTF-8, naming the row and column, and imports the others as written', async () => {
    const gtin = brand.gtin;
    const csv = Buffer.concat([
      Buffer.from('gtin,lot,serial,link_type,href,title\n'),
      Buffer.from(`${gtin},ENC-L1,,gs1:pip,https://acme.example/ok,Caf\u00e9\n`),
      Buffer.from(`${gtin},ENC-L2,,gs1:pip,https://acme.example/bad,Caf`), Buffer.from([0xe9]), Buffer.from('\n'), // Latin-1 é
      Buffer.from(`${gtin},ENC-L3,,gs1:pip,https://acme.example/`), Buffer.from([0xc3, 0x28]), Buffer.from(',Broken href\n'),
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
    const rows = await query<{ qualifier: string; title: string }>(app.db.em.fork(),
      "select qualifier, title from resolver_links where brand_id = ? and qualifier like 'ENC-L%' order by qualifier", [brand.brandId]);
    expect(rows).toEqual([{ qualifier: 'ENC-L1', title: 'Café' }, { qualifier: 'ENC-L4', title: 'Fine' }]);
  });
});
