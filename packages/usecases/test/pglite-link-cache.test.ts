// Dev mode's embedded PGlite has no second connection to LISTEN on, so the resolver's link cache
// is told of changes in process (announceLinkChange). A link written through the use cases shows
// through the resolver of the same process at once, although the cache would keep the old links
// for a minute.

import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { migrate, openDatabase, type Database } from '@mint/db';
import { parseResolverRequest, type LinkPreferences } from '@mint/domain';
import {
  createResolver, createUseCaseContext, createUser, createWorkspace, grantRole, replaceLinks, upsertLink, upsertProduct, type Resolver,
} from '@mint/usecases';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { run } from '../../../test/support/sql.ts';

let dir: string;
let db: Database;
let resolver: Resolver;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'pglite-links-'));
  db = await openDatabase({ dataDir: dir });
  await migrate(db);
}, 120_000);
afterAll(async () => {
  await resolver?.close();
  await db?.close(true);
  await rm(dir, { recursive: true, force: true });
});

describe('link cache on PGlite (dev mode)', () => {
  it('shows a link change made in the same process through the resolver at once', async () => {
    const ctx = createUseCaseContext({ db, publicBaseUrl: 'http://127.0.0.1:8080' });
    const brand = await createWorkspace(ctx, { name: 'Dev Brand' });
    const user = await createUser(ctx, { email: 'owner@dev.example', name: 'Owner' });
    await grantRole(ctx, brand.id, user.id, 'owner');
    const gtin = '09506000134352';
    await upsertProduct(ctx, { id: user.id }, {
      brandId: brand.id, sku: 'SKU-1', name: 'Shoe', gtin, commercialStatus: 'ACTIVE', mintReadinessStatus: 'READY', passportUrl: 'https://dev.example/v1',
    });
    // A minute of link caching: only the in-process announcement can make a change show sooner.
    resolver = createResolver(ctx, { linkCacheMs: 60_000, productCacheMs: 0 });
    const parsed = parseResolverRequest(`/r/${brand.slug}/01/${gtin}`);
    if (parsed.kind !== 'identity') throw new Error(`unexpected ${parsed.kind}`);
    const resolve = async (prefs: LinkPreferences = { linkType: null, languages: [], context: null }) => (await resolver.resolve(parsed.path, 'redirect', prefs)).link?.href ?? null;

    expect(await resolve()).toBe('https://dev.example/v1');
    // A write that bypasses the use cases announces nothing: the cache keeps answering the old link.
    await run(db.em.fork(), `update resolver_links set href = 'https://dev.example/raw' where brand_id = ? and href = 'https://dev.example/v1'`, [brand.id]);
    expect(await resolve()).toBe('https://dev.example/v1');

    await upsertLink(ctx, { id: user.id }, {
      brandId: brand.id, gtin, lot: null, serial: null, linkType: 'gs1:pip', href: 'https://dev.example/v2', title: 'Shoe v2', hreflang: [], mediaType: 'text/html',
      context: [], fwqs: null, isDefault: true,
    });
    expect(await resolve()).toBe('https://dev.example/v2');

    const instructions: LinkPreferences = { linkType: 'instructions', languages: [], context: null };
    expect(await resolve(instructions)).toBeNull();
    await replaceLinks(ctx, { id: user.id }, {
      brandId: brand.id, gtin, lot: null, serial: null, links: [
        { linkType: 'gs1:pip', href: 'https://dev.example/v3', title: 'Shoe v3', hreflang: [], mediaType: 'text/html', context: [], fwqs: null, isDefault: true },
        { linkType: 'gs1:instructions', href: 'https://dev.example/manual', title: 'Manual', hreflang: [], mediaType: null, context: [], fwqs: null, isDefault: false },
      ],
    });
    expect([await resolve(), await resolve(instructions)]).toEqual(['https://dev.example/v3', 'https://dev.example/manual']);
  }, 60_000);
});
