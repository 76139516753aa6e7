import { sql } from 'kysely';
import type { Em } from '../orm.ts';
import { first, rows } from './kysely.ts';

/** A brand's resolver settings before a change. */
export interface BrandResolverSettings {
  readonly slug: string;
  /** The brand's own resolver hostname; null when it has none. */
  readonly resolverDomain: string | null;
  readonly resolverBaseUrl: string;
}

/** The brand's resolver settings, its row locked until the transaction ends (changes of one brand queue); null when no such brand. */
export async function lockBrandResolverSettings(em: Em, brandId: string): Promise<BrandResolverSettings | null> {
  const row = await first(em, (db) => db.selectFrom('brands').select(['slug', 'resolver_domain', 'resolver_base_url']).where('id', '=', brandId).forUpdate());
  return row === undefined ? null : { slug: row.slug, resolverDomain: row.resolver_domain ?? null, resolverBaseUrl: row.resolver_base_url };
}

/**
 * Sets the brand's resolver domain (null removes it) and the base URL of units minted from now
 * on, and notifies the resolvers. A domain another brand holds fails on the unique constraint (a UniqueConstraintViolationException).
 */
export async function updateBrandResolverDomain(em: Em, brandId: string, domain: string | null, resolverBaseUrl: string): Promise<void> {
  await rows(em, (db) => db.updateTable('brands').set({ resolver_domain: domain, resolver_base_url: resolverBaseUrl }).where('id', '=', brandId));
  // Every API process reloads its table of brand domains (the payload without a GTIN: the brand as a whole), on commit.
  await rows(em, (db) => db.selectNoFrom(sql<string>`pg_notify('resolver_links', ${brandId})::text`.as('notified')));
}
