import { ApiKey, Brand, Membership, User } from '../entities/workspace.ts';
import { MintKpis } from '../entities/minting.ts';
import type { Em } from '../orm.ts';

/**
 * Workspaces as they are set up: a brand with its first KPI row, users, their roles on a brand,
 * and the brand's API keys (the brand's listing with partner keys named, revocation, the
 * programmatic-access switch).
 */

/** A new brand's fields. */
export interface NewBrand {
  readonly id: string;
  readonly slug: string;
  readonly name: string;
  readonly resolverBaseUrl: string;
  readonly apiAccessEnabled: boolean;
  readonly createdAt: Date;
}

/** Writes a brand with its KPI row (shard 0, every count zero); a taken slug fails with a unique violation and writes nothing. */
export async function insertBrand(em: Em, brand: NewBrand): Promise<void> {
  em.create(Brand, { ...brand, resolverDomain: null, defaultPassportUrl: null });
  em.create(MintKpis, { brandId: brand.id, shard: 0, totalTokensMinted: 0, activeTokens: 0, batchesCreated: 0, exportedPrinted: 0 });
  await em.flush();
}

/** Writes a user; a taken e-mail address fails with a unique violation. */
export async function insertUser(
  em: Em,
  user: { readonly id: string; readonly email: string; readonly name: string; readonly createdAt: Date },
): Promise<void> {
  em.create(User, { ...user });
  await em.flush();
}

/** Gives a user a role on a brand, replacing any role they had. */
export async function upsertMembership(
  em: Em,
  row: { readonly brandId: string; readonly userId: string; readonly role: string; readonly createdAt: Date },
): Promise<void> {
  await em.upsert(Membership, { ...row });
}

/** An API key of a brand as its listing shows it (no secret hash); a partner key names its partner. */
export interface BrandApiKeyRecord {
  readonly id: string;
  readonly name: string;
  readonly lookupId: string;
  readonly scopes: readonly string[];
  readonly createdAt: Date;
  readonly revokedAt: Date | null;
  readonly lastUsedAt: Date | null;
  readonly partnerId: string | null;
}

/** Every API key of the brand, newest first. */
export async function listBrandApiKeys(em: Em, brandId: string): Promise<BrandApiKeyRecord[]> {
  const keys = await em.find(ApiKey, { brandId }, { orderBy: { createdAt: 'desc' } });
  return keys.map((k) => ({
    id: k.id,
    name: k.name,
    lookupId: k.lookupId,
    scopes: k.scopes,
    createdAt: k.createdAt,
    revokedAt: k.revokedAt ?? null,
    lastUsedAt: k.lastUsedAt ?? null,
    partnerId: k.partnerId ?? null,
  }));
}

/**
 * Marks the brand's key revoked at `at` unless it already was (a repeat changes nothing); false
 * when the brand has no such key.
 */
export async function revokeBrandApiKey(em: Em, brandId: string, keyId: string, at: Date): Promise<boolean> {
  const key = await em.findOne(ApiKey, { brandId, id: keyId });
  if (!key) return false;
  key.revokedAt ??= at;
  await em.flush();
  return true;
}

/** Turns the brand's programmatic (API key) access on or off; false when there is no such brand. */
export async function setBrandApiAccess(em: Em, brandId: string, enabled: boolean): Promise<boolean> {
  const brand = await em.findOne(Brand, { id: brandId });
  if (!brand) return false;
  brand.apiAccessEnabled = enabled;
  await em.flush();
  return true;
}
