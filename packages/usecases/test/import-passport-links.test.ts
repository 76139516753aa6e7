// A product import keeps each product's passport_url as its GTIN's gs1:pip link, as UpsertProduct
// does: the import's upsert moves the links itself (no trigger, so the same holds on Citus), and
// tells the resolvers (and so the caching proxy in front) of the products it renamed.

import { createResolver, getProductImport, runProductImport, startProductImport } from '@mint/usecases';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { query } from '../../../test/support/sql.ts';
import { nextGtin, setupUseCases, type SeededBrand, type UseCaseBundle } from '../../../test/support/usecases.ts';

let app: UseCaseBundle;
let brand: SeededBrand;

beforeAll(async () => {
  app = await setupUseCases();
  brand = await app.seedBrand();
});
afterAll(async () => {
  await app?.close();
});

async function importRows(...rows: string[]): Promise<void> {
  const csv = Buffer.from(`sku,name,gtin,commercial_status,mint_readiness_status,passport_url\n${rows.join('\n')}\n`);
  const started = await startProductImport(app.ctx, { id: brand.userId }, brand.brandId, csv);
  await runProductImport(app.ctx, brand.brandId, started.id);
  expect((await getProductImport(app.ctx, brand.brandId, started.id)).status).toBe('COMPLETED');
}

const pipLinks = async () =>
  (
    await query<{ gtin: string; href: string; is_default: boolean }>(
      app.db.em.fork(),
      `select gtin, href, is_default from resolver_links where brand_id = ? and level = 'gtin' and link_type = 'pip' order by gtin, href`,
      [brand.brandId],
    )
  ).map((l) => [l.gtin, l.href, l.is_default]);

describe('a product import', () => {
  it("makes each passport_url its GTIN's default gs1:pip link, moves it with a new URL or GTIN, and leaves unchanged rows alone", async () => {
    const [a, b, moved] = [nextGtin(), nextGtin(), nextGtin()].sort() as [string, string, string];
    await importRows(`P-A,Alpha,${a},ACTIVE,READY,https://passports.example/a`, `P-B,Beta,${b},ACTIVE,READY,https://passports.example/b`);
    expect(await pipLinks()).toEqual([
      [a, 'https://passports.example/a', true],
      [b, 'https://passports.example/b', true],
    ]);
    // A new URL for A, B moved to another GTIN; a row equal to the stored product changes nothing.
    await importRows(`P-A,Alpha,${a},ACTIVE,READY,https://passports.example/a2`, `P-B,Beta,${moved},ACTIVE,READY,https://passports.example/b`);
    expect(await pipLinks()).toEqual(
      [
        [a, 'https://passports.example/a2', true],
        [moved, 'https://passports.example/b', true],
      ].sort((x, y) => String(x[0]).localeCompare(String(y[0]))),
    );
    await importRows(`P-A,Alpha,${a},ACTIVE,READY,https://passports.example/a2`);
    expect(await pipLinks()).toHaveLength(2);
  });
  it("tells the resolvers of each renamed product's GTIN (not of unchanged ones), and of the brand as a whole when more than 100 changed at once", async () => {
    const heard: string[] = [];
    const resolver = createResolver(app.ctx, { onLinkChange: (brandId, gtin) => heard.push(`${brandId} ${gtin}`) });
    try {
      await resolver.listening;
      const gtins = Array.from({ length: 120 }, () => nextGtin());
      const rows = (name: (i: number) => string, count: number) =>
        gtins.slice(0, count).map((g, i) => `R-${i},${name(i)},${g},ACTIVE,READY,https://passports.example/r${i}`);
      await importRows(...rows((i) => `Item ${i}`, 120));
      const settle = async () => {
        await new Promise((resolve) => setTimeout(resolve, 300));
        heard.length = 0;
      };
      await settle();
      // Two renamed, one unchanged: the two GTINs.
      await importRows(...rows((i) => (i < 2 ? `Item ${i} renamed` : `Item ${i}`), 3));
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(heard.sort()).toEqual([`${brand.brandId} ${gtins[0]}`, `${brand.brandId} ${gtins[1]}`].sort());
      await settle();
      // 120 renamed: the brand, once.
      await importRows(...rows((i) => `Item ${i} new range`, 120));
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(heard).toEqual([`${brand.brandId} null`]);
    } finally {
      await resolver.close();
    }
  });
});
