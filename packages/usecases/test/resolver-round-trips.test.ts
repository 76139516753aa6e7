// The resolver's lookups per scan on PostgreSQL: a known unit comes with its own links in one
// query, so a warm scan costs one round trip whether or not the unit has links of its own; a
// serial the brand never minted still finds the links stored for it. Under a GTIN without unit
// links the unit query skips looking for them, and a unit link added later still shows.

import { randomUUID } from 'node:crypto';
import { createResolverReader, type ResolverReader } from '@mint/db';
import type { SeededBrand } from '../../../test/support/usecases.ts';
import { parseResolverRequest, type ResolverPath } from '@mint/domain';
import { createResolver } from '@mint/usecases';
import { beforeAll, describe, expect, it } from 'vitest';
import { mintCompleted } from '../../../test/support/pack-fixtures.ts';
import { query, run, setPassportUrl } from '../../../test/support/sql.ts';
import { useUseCases } from '../../../test/support/usecases.ts';

const { app, brand } = useUseCases();
let slug: string;
let serials: string[];

/** Stores a default gs1:pip link of the brand's serial `qualifier` (under its GTIN). */
async function serialLink(qualifier: string, href: string, of: SeededBrand = brand): Promise<void> {
  await run(
    app.db.em.fork(),
    `insert into resolver_links (brand_id, id, level, gtin, qualifier, link_type, href, title, media_type, is_default, created_at, updated_at)
     values (?, ?, 'serial', ?, ?, 'pip', ?, 'This unit', 'text/html', true, now(), now())`,
    [of.brandId, randomUUID(), of.gtin, qualifier, href],
  );
  // Announced as the application's link writes announce theirs.
  await query(app.db.em.fork(), `select pg_notify('resolver_links', ?)::text`, [`${of.brandId} ${of.gtin}`]);
}

function pathOf(serial: string, of: { slug: string; gtin: string } = { slug, gtin: brand.gtin }): ResolverPath {
  const parsed = parseResolverRequest(`/r/${of.slug}/01/${of.gtin}/21/${serial}`);
  if (parsed.kind !== 'identity') throw new Error(`not an identity: ${serial}`);
  return parsed.path;
}

beforeAll(async () => {
  const { mintBatchId } = await mintCompleted(app.ctx, brand, 2);
  [{ slug }] = (await query<{ slug: string }>(app.db.em.fork(), 'select slug from brands where id = ?', [brand.brandId])) as [{ slug: string }];
  serials = (await query<{ serial: string }>(app.db.em.fork(), 'select serial from mint_units where mint_batch_id = ? order by seq', [mintBatchId])).map(
    (r) => r.serial,
  );
  await setPassportUrl(app.db.em.fork(), brand.brandId, 'https://acme.example/product');
  await serialLink(serials[0]!, 'https://acme.example/unit');
  await serialLink('NEVERMINTED', 'https://acme.example/never-minted');
});

describe('resolver lookups per scan', () => {
  it("reads a known unit and its own links in one query; a never-minted serial's links apart", async () => {
    const real = createResolverReader(app.db);
    const calls: string[] = [];
    const reader: ResolverReader = {
      ...real,
      findUnit: (...args) => (calls.push('unit'), real.findUnit(...args)),
      findProduct: (...args) => (calls.push('product'), real.findProduct(...args)),
      links: {
        levelOf: (...args) => (calls.push('levels'), real.links.levelOf(...args)),
        qualified: (...args) => (calls.push('own links'), real.links.qualified(...args)),
      },
    };
    const resolver = createResolver(app.ctx, { reader });
    try {
      // Once the resolver listens for link changes (which forgets what was cached before), the
      // first scan loads the brand's and the GTIN's links into the cache.
      await resolver.listening;
      expect((await resolver.resolve(pathOf(serials[1]!), 'redirect')).link?.href).toBe('https://acme.example/product');
      calls.length = 0;
      const own = await resolver.resolve(pathOf(serials[0]!), 'redirect');
      expect([own.link?.href, own.unitKnown, calls]).toEqual(['https://acme.example/unit', true, ['unit']]);
      calls.length = 0;
      const walkUp = await resolver.resolve(pathOf(serials[1]!), 'linkset');
      expect([walkUp.link?.href, walkUp.levels[0]!.links, calls]).toEqual(['https://acme.example/product', [], ['unit']]);
      calls.length = 0;
      const unknown = await resolver.resolve(pathOf('NEVERMINTED'), 'redirect');
      expect([unknown.link?.href, unknown.unitKnown, calls]).toEqual(['https://acme.example/never-minted', false, ['unit', 'product', 'own links']]);
    } finally {
      await resolver.close();
      await real.close();
    }
  });

  it('skips the own-links subquery under a GTIN without unit links, and shows a unit link added later once announced', async () => {
    const other = await app.seedBrand();
    const { mintBatchId } = await mintCompleted(app.ctx, other, 1);
    const [{ serial }] = (await query<{ serial: string }>(app.db.em.fork(), 'select serial from mint_units where mint_batch_id = ?', [mintBatchId])) as [
      { serial: string },
    ];
    const [{ slug: otherSlug }] = (await query<{ slug: string }>(app.db.em.fork(), 'select slug from brands where id = ?', [other.brandId])) as [
      { slug: string },
    ];
    await setPassportUrl(app.db.em.fork(), other.brandId, 'https://other.example/product');
    const real = createResolverReader(app.db);
    const withLinks: (boolean | undefined)[] = [];
    const reader: ResolverReader = { ...real, findUnit: (...args) => (withLinks.push(args[3]), real.findUnit(...args)) };
    const resolver = createResolver(app.ctx, { reader });
    const path = pathOf(serial, { slug: otherSlug, gtin: other.gtin });
    try {
      await resolver.listening;
      // The first scan loads the GTIN's links (none below it); the second knows and skips them.
      expect((await resolver.resolve(path, 'redirect')).link?.href).toBe('https://other.example/product');
      expect((await resolver.resolve(path, 'redirect')).link?.href).toBe('https://other.example/product');
      expect(withLinks).toEqual([true, false]);
      await serialLink(serial, 'https://other.example/unit', other);
      let href: string | undefined;
      for (let tries = 0; tries < 100 && href !== 'https://other.example/unit'; tries++) {
        await new Promise((resolve) => setTimeout(resolve, 50));
        href = (await resolver.resolve(path, 'redirect')).link?.href;
      }
      expect([href, withLinks.at(-1)]).toEqual(['https://other.example/unit', true]);
    } finally {
      await resolver.close();
      await real.close();
    }
  });
});
