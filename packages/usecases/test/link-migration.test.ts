// The migration that turned `passport_url` and `default_passport_url` into resolver links
// (Migration20261124025102), run on a fresh database: every migration before it, rows in the old
// shape, then the rest. Each product's passport page becomes its GTIN's default gs1:pip link, each
// brand's default page its brand level's, and the fields keep working through the triggers.

import { randomUUID } from 'node:crypto';
import { migrate, openDatabase, upsertProductBySku, type Database } from '@mint/db';
import { parseResolverRequest } from '@mint/domain';
import { createResolver, createUseCaseContext } from '@mint/usecases';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testInfra } from '../../../test/support/context.ts';
import { cloneName, createDatabase, databaseUrlFor, dropDatabase } from '../../../test/support/pg-admin.ts';
import { query, run } from '../../../test/support/sql.ts';

let db: Database;
let name: string;

beforeAll(async () => {
  const { databaseUrl, runId } = testInfra();
  name = cloneName(runId);
  // An empty database, not a clone of the migrated template.
  await createDatabase(databaseUrl, name);
  db = await openDatabase({ url: databaseUrlFor(databaseUrl, name) }, { poolSize: 2 });
});
afterAll(async () => {
  await db?.close(true);
  await dropDatabase(testInfra().databaseUrl, name);
});

type LinkRow = {
  brand_id: string;
  level: string;
  gtin: string;
  qualifier: string;
  link_type: string;
  href: string;
  title: string;
  media_type: string;
  is_default: boolean;
};
const links = () =>
  query<LinkRow>(
    db.em.fork(),
    `select brand_id, level, gtin, qualifier, link_type, href, title, media_type, is_default from resolver_links order by level, gtin, href`,
  );

describe('Migration20261124025102 (passport_url into resolver links)', () => {
  it('turns the old-shape rows into default gs1:pip links at their levels, and the old fields keep working', async () => {
    await db.migrator.up({ to: 'Migration20261121081401' });
    expect(await db.migrator.getPending().then((p) => p.map((m) => m.name))).toContain('Migration20261124025102');
    const withDefault = randomUUID();
    const without = randomUUID();
    const now = new Date();
    const em = db.em.fork();
    await run(
      em,
      `insert into brands (id, slug, name, resolver_base_url, default_passport_url, created_at) values (?, 'acme', 'Acme', 'https://id.example/r/acme', 'https://acme.example/about', ?)`,
      [withDefault, now],
    );
    await run(
      em,
      `insert into brands (id, slug, name, resolver_base_url, default_passport_url, created_at) values (?, 'plain', 'Plain', 'https://id.example/r/plain', null, ?)`,
      [without, now],
    );
    const product = (brand: string, sku: string, productName: string, gtin: string | null, passport: string | null) =>
      run(
        em,
        `insert into products (brand_id, id, sku, name, gtin, commercial_status, mint_readiness_status, passport_url, created_at, updated_at)
       values (?, ?, ?, ?, ?, 'active', 'ready', ?, ?, ?)`,
        [brand, randomUUID(), sku, productName, gtin, passport, now, now],
      );
    await product(withDefault, 'SHOE', 'Running shoe', '09506000134352', 'https://acme.example/shoe');
    await product(withDefault, 'SOCK', 'Sock', '09506000134369', null);
    await product(withDefault, 'LOOSE', 'No GTIN', null, 'https://acme.example/loose');
    await product(without, 'CUP', 'Cup', '04012345999969', 'https://plain.example/cup?x=1');

    await migrate(db);
    expect(await db.migrator.getPending()).toEqual([]);
    expect(await links()).toEqual([
      {
        brand_id: withDefault,
        level: 'brand',
        gtin: '',
        qualifier: '',
        link_type: 'pip',
        href: 'https://acme.example/about',
        title: 'Acme',
        media_type: 'text/html',
        is_default: true,
      },
      {
        brand_id: without,
        level: 'gtin',
        gtin: '04012345999969',
        qualifier: '',
        link_type: 'pip',
        href: 'https://plain.example/cup?x=1',
        title: 'Cup',
        media_type: 'text/html',
        is_default: true,
      },
      {
        brand_id: withDefault,
        level: 'gtin',
        gtin: '09506000134352',
        qualifier: '',
        link_type: 'pip',
        href: 'https://acme.example/shoe',
        title: 'Running shoe',
        media_type: 'text/html',
        is_default: true,
      },
    ]);

    // The field keeps working after the migration: a new passport_url moves the product's link.
    const write = (sku: string, productName: string, gtin: string, passportUrl: string) =>
      upsertProductBySku(
        db.em.fork(),
        withDefault,
        randomUUID(),
        { sku, name: productName, gtin, commercialStatus: 'active', mintReadinessStatus: 'ready', passportUrl },
        new Date(),
      );
    await write('SHOE', 'Running shoe', '09506000134352', 'https://acme.example/shoe-v2');
    await write('SOCK', 'Sock', '09506000134369', 'https://acme.example/sock');
    const after = (await links()).filter((l) => l.brand_id === withDefault && l.level === 'gtin').map((l) => [l.gtin, l.href, l.is_default]);
    expect(after).toEqual([
      ['09506000134352', 'https://acme.example/shoe-v2', true],
      ['09506000134369', 'https://acme.example/sock', true],
    ]);

    // And the resolver sends the migrated product's scans to its page.
    const ctx = createUseCaseContext({ db, publicBaseUrl: 'https://id.example' });
    const resolver = createResolver(ctx);
    try {
      const parsed = parseResolverRequest('/r/plain/01/04012345999969');
      if (parsed.kind !== 'identity') throw new Error(`unexpected ${parsed.kind}`);
      const resolution = await resolver.resolve(parsed.path, 'redirect');
      expect(resolution.link?.href).toBe('https://plain.example/cup?x=1');
    } finally {
      await resolver.close();
    }
  });
});
