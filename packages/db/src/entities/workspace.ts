import { defineEntity, p, type InferEntity } from '@mikro-orm/core';
import { columns } from './columns.ts';

/** A brand workspace: the tenant. Its id is the brand_id of every tenant-owned row. */
export const Brand = defineEntity({
  name: 'Brand',
  tableName: 'brands',
  properties: {
    id: columns.id(),
    /** URL-safe name used in the brand's resolver path. */
    slug: p.text().unique(),
    /** Display name. */
    name: p.text(),
    /** Resolver address that unit URLs start with: `{PUBLIC_BASE_URL}/r/{slug}`, or `https://{resolverDomain}` once the brand has a domain. */
    resolverBaseUrl: p.text(),
    /** The brand's own resolver hostname (lower-case A-label form), unique across brands; null: none. */
    resolverDomain: p.text().nullable().unique(),
    /** Where the resolver sends browsers when a product has no passport URL. */
    defaultPassportUrl: p.text().nullable(),
    /** The logo the hosted passport page shows (an https URL); null: none. */
    passportLogoUrl: p.text().nullable(),
    /** The colour of the hosted passport page's brand bar (#rrggbb); null: the default. */
    passportColour: p.text().nullable(),
    /** The GS1 company prefix its SSCCs carry (4 to 12 digits), unique across brands; null: it mints no containers. */
    companyPrefix: p.text().nullable().unique(),
    /** Programmatic (API key) access is early access, enabled per workspace. */
    apiAccessEnabled: p.boolean().default(false),
    createdAt: columns.createdAt(),
  },
});
export type Brand = InferEntity<typeof Brand>;

/** A person who signs in; `sub` of their session tokens. */
export const User = defineEntity({
  name: 'User',
  tableName: 'users',
  properties: {
    id: columns.id(),
    /** Sign-in address, unique. */
    email: p.text().unique(),
    /** Display name. */
    name: p.text(),
    createdAt: columns.createdAt(),
  },
});
export type User = InferEntity<typeof User>;

/** A user's role on a brand workspace. */
export const Membership = defineEntity({
  name: 'Membership',
  tableName: 'memberships',
  properties: {
    brandId: columns.brandId(),
    userId: p.uuid().primary(),
    /** owner, admin, member or viewer. */
    role: p.text(),
    createdAt: columns.createdAt(),
  },
  indexes: [{ properties: ['userId'] }],
});
export type Membership = InferEntity<typeof Membership>;

/** A workspace API key. Only a hash of its secret is stored. */
export const ApiKey = defineEntity({
  name: 'ApiKey',
  tableName: 'api_keys',
  properties: {
    brandId: columns.brandId(),
    id: columns.id(),
    /** Public lookup part of the key, unique across workspaces. */
    lookupId: p.text().unique(),
    /** Label given at creation. */
    name: p.text(),
    /** SHA-256 of the secret part, hex. */
    secretHash: p.text(),
    /** Granted scopes, e.g. mint:write. */
    scopes: p.array(),
    /** When it stopped working; null while valid. */
    revokedAt: columns.time().nullable(),
    /** Last successful use. */
    lastUsedAt: columns.time().nullable(),
    createdAt: columns.createdAt(),
    /** The partner the key was granted to (a partner key: it requests, reports and returns its allocated serials only); null for a brand key. */
    partnerId: p.uuid().nullable(),
  },
});
export type ApiKey = InferEntity<typeof ApiKey>;
