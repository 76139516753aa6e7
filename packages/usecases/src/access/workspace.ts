import { randomUUID } from 'node:crypto';
import { insertApiKey, insertBrand, insertUser, listBrandApiKeys, revokeBrandApiKey, setBrandApiAccess, unitOfWork, upsertMembership } from '@mint/db';
import {
  apiKeyScopes,
  assertValid,
  brandResolverBaseUrl,
  generateApiKey,
  gtinCheckDigit,
  hashApiKeySecret,
  isUuid,
  NotFoundError,
  roles,
  type ApiKeyScope,
  type Role,
} from '@mint/domain';
import { issueAccessToken } from './auth.ts';
import { upsertProduct } from '../catalog/index.ts';
import type { UseCaseContext } from '../context.ts';

/** A brand workspace as created. */
export interface WorkspaceView {
  readonly id: string;
  readonly slug: string;
  readonly name: string;
  readonly resolverBaseUrl: string;
}

/**
 * Creates a brand workspace with its KPI row. The slug (URL-safe, unique) names its resolver path
 * `{PUBLIC_BASE_URL}/r/{slug}`; a random suffix is added when none is given.
 */
export async function createWorkspace(ctx: UseCaseContext, input: { name: string; slug?: string; apiAccessEnabled?: boolean }): Promise<WorkspaceView> {
  const base =
    (input.slug ?? input.name)
      .toLowerCase()
      .replace(/[^a-z0-9]+/g, '-')
      .replace(/^-|-$/g, '')
      .slice(0, 40) || 'brand';
  const slug = input.slug ?? `${base}-${randomUUID().slice(0, 8)}`;
  assertValid(/^[a-z0-9](?:[a-z0-9-]{0,62})$/.test(slug) ? [] : [{ field: 'slug', message: 'must be lower-case letters, digits and dashes' }]);
  const id = randomUUID();
  const resolverBaseUrl = brandResolverBaseUrl(ctx.publicBaseUrl, slug);
  await insertBrand(unitOfWork(ctx.db), {
    id,
    slug,
    name: input.name,
    resolverBaseUrl,
    apiAccessEnabled: input.apiAccessEnabled ?? false,
    createdAt: ctx.clock(),
  });
  return { id, slug, name: input.name, resolverBaseUrl };
}

/** Creates a user. */
export async function createUser(ctx: UseCaseContext, input: { email: string; name: string }): Promise<{ id: string }> {
  const id = randomUUID();
  await insertUser(unitOfWork(ctx.db), { id, email: input.email, name: input.name, createdAt: ctx.clock() });
  return { id };
}

/** Gives a user a role on a brand (replacing any role they had). */
export async function grantRole(ctx: UseCaseContext, brandId: string, userId: string, role: Role): Promise<void> {
  assertValid(roles.includes(role) ? [] : [{ field: 'role', message: `must be one of ${roles.join(', ')}` }]);
  await upsertMembership(unitOfWork(ctx.db), { brandId, userId, role, createdAt: ctx.clock() });
}

/** Creates an API key for a brand; the full key is returned once and only its hash is stored. */
export async function createApiKey(
  ctx: UseCaseContext,
  input: { brandId: string; name: string; scopes: readonly ApiKeyScope[] },
): Promise<{ id: string; key: string; lookupId: string }> {
  assertValid(
    input.scopes.every((s) => apiKeyScopes.includes(s)) && input.scopes.length > 0
      ? []
      : [{ field: 'scopes', message: `must be one or more of ${apiKeyScopes.join(', ')}` }],
  );
  const generated = generateApiKey(ctx.randomFill);
  const id = randomUUID();
  await insertApiKey(unitOfWork(ctx.db), {
    brandId: input.brandId,
    id,
    lookupId: generated.lookupId,
    name: input.name,
    secretHash: hashApiKeySecret(generated.secret),
    scopes: input.scopes,
    createdAt: ctx.clock(),
  });
  return { id, key: generated.key, lookupId: generated.lookupId };
}

/** What `mintctl seed-demo` creates and prints. */
export interface DemoSeed {
  readonly brand_id: string;
  readonly brand_slug: string;
  readonly resolver_base_url: string;
  readonly user_id: string;
  readonly product_id: string;
  readonly gtin: string;
  readonly access_token: string;
  readonly api_key: string;
}

function randomGtin14(ctx: UseCaseContext): string {
  const bytes = new Uint8Array(12);
  ctx.randomFill(bytes);
  const body = `0${[...bytes].map((b) => b % 10).join('')}`;
  return body + String(gtinCheckDigit(body));
}

/**
 * Creates an independent demo workspace: a brand with API access, an owner, an ACTIVE + READY
 * product with a GTIN, an API key with every scope and a 24-hour session token.
 */
export async function seedDemo(ctx: UseCaseContext): Promise<DemoSeed> {
  const brand = await createWorkspace(ctx, { name: 'Demo Brand', apiAccessEnabled: true });
  const user = await createUser(ctx, { email: `owner+${brand.slug}@demo.example`, name: 'Demo Owner' });
  await grantRole(ctx, brand.id, user.id, 'owner');
  const gtin = randomGtin14(ctx);
  const { product } = await upsertProduct(
    ctx,
    { id: user.id },
    {
      brandId: brand.id,
      sku: 'DEMO-SKU-1',
      name: 'Demo Product',
      gtin,
      commercialStatus: 'ACTIVE',
      mintReadinessStatus: 'READY',
      passportUrl: null,
    },
  );
  const apiKey = await createApiKey(ctx, { brandId: brand.id, name: 'demo', scopes: [...apiKeyScopes] });
  return {
    brand_id: brand.id,
    brand_slug: brand.slug,
    resolver_base_url: brand.resolverBaseUrl,
    user_id: user.id,
    product_id: product.id,
    gtin,
    access_token: await issueAccessToken(ctx, user.id),
    api_key: apiKey.key,
  };
}

/** A brand's API keys, newest first, without secrets; a partner key names its partner (`partnerId`, null for a brand key). */
export async function listApiKeys(ctx: UseCaseContext, brandId: string) {
  const keys = await listBrandApiKeys(unitOfWork(ctx.db), brandId);
  return keys.map((k) => ({
    id: k.id,
    name: k.name,
    prefix: `mk_${k.lookupId}`,
    scopes: k.scopes,
    createdAt: k.createdAt,
    revokedAt: k.revokedAt,
    lastUsedAt: k.lastUsedAt,
    partnerId: k.partnerId,
  }));
}

/** Revokes a brand's API key; repeating it changes nothing. NotFoundError for another brand's key. */
export async function revokeApiKey(ctx: UseCaseContext, brandId: string, keyId: string): Promise<void> {
  if (!isUuid(keyId) || !(await revokeBrandApiKey(unitOfWork(ctx.db), brandId, keyId, ctx.clock()))) throw new NotFoundError(`api key ${keyId} not found`);
}

/** Turns programmatic (API key) access of a workspace on or off (early access). */
export async function setApiAccess(ctx: UseCaseContext, brandId: string, enabled: boolean): Promise<void> {
  if (!isUuid(brandId) || !(await setBrandApiAccess(unitOfWork(ctx.db), brandId, enabled))) throw new NotFoundError(`workspace ${brandId} not found`);
}
