import { defineEntity, p, type InferEntity } from '@mikro-orm/core';
import { columns } from './columns.ts';

/**
 * A link of the public resolver at one level of a brand: the brand's default (gtin and qualifier
 * ''), a product (gtin), a lot (gtin + lot code) or one serial unit (gtin, '' for a product
 * without GTIN, + serial). A level with links has exactly one default (a partial unique index).
 * Every change notifies the `resolver_links` channel with `{brand_id} {gtin}` (a trigger), which
 * the resolvers' caches listen to.
 */
export const ResolverLink = defineEntity({
  name: 'ResolverLink',
  tableName: 'resolver_links',
  properties: {
    brandId: columns.brandId(),
    id: columns.id(),
    /** brand, gtin, lot or serial. */
    level: p.text(),
    /** GTIN-14 of the level; '' for the brand level and for serials of products without GTIN. */
    gtin: p.text().default(''),
    /** Lot code (lot level) or serial (serial level); '' otherwise. */
    qualifier: p.text().default(''),
    /** GS1 Web Vocabulary link type, by name (pip, sustainabilityInfo, ...). */
    linkType: p.text(),
    /** The https target. */
    href: p.text(),
    /** Human-readable title. */
    title: p.text(),
    /** Languages of the target, as a JSON array of tags. */
    hreflang: p.json<string[]>().default('[]'),
    /** Media type of the target; null when not known. */
    mediaType: p.text().nullable(),
    /** Contexts the link applies in, as a JSON array. */
    context: p.json<string[]>().default('[]'),
    /** Whether a redirect forwards the request's query string. */
    fwqs: p.boolean().default(true),
    /** The level's one default link. */
    isDefault: p.boolean().default(false),
    createdAt: columns.createdAt(),
    updatedAt: columns.updatedAt(),
  },
  uniques: [{ name: 'resolver_links_target_unique', properties: ['brandId', 'gtin', 'level', 'qualifier', 'linkType', 'href'] }],
  indexes: [
    { name: 'resolver_links_page_index', properties: ['brandId', 'createdAt', 'id'] },
    // At most one default per level; the writers keep at least one (see the repository).
    {
      name: 'resolver_links_one_default',
      expression: 'create unique index "resolver_links_one_default" on "resolver_links" ("brand_id", "gtin", "level", "qualifier") where "is_default"',
    },
  ],
});
export type ResolverLink = InferEntity<typeof ResolverLink>;
