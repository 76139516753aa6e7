// API keys through the one enforcement point: the matrix (scopes, revoked, a workspace without
// API access, malformed) over real RPCs (in process, through the server's interceptor chain),
// last_used_at, the /v1 rule that needs a session and a key, and proof that a malformed key never
// reaches the database.

import { Code, ConnectError, type Client } from '@connectrpc/connect';
import { ActivationMode, type CatalogService, IdentityMode, type MintService } from '@mint/contract';
import { ApiKey } from '@mint/db';
import { ForbiddenError, generateApiKey, UnauthenticatedError, type ApiKeyScope } from '@mint/domain';
import {
  apiKeyUseIntervalMs,
  createApiKey,
  createWorkspace,
  listApiKeys,
  recordApiKeyUse,
  revokeApiKey,
  setApiAccess,
  verifyApiKey,
  type UseCaseContext,
} from '@mint/usecases';
import { beforeAll, describe, expect, it } from 'vitest';
import { useUseCases, type SeededBrand } from '../../../test/support/usecases.ts';
import { authorize } from '@mint/usecases';
import { credentialsFrom } from '../src/auth/credentials.ts';
import { expectLogsFreeOf, inProcessApi, type InProcessApi } from './support.ts';

const { app, brand } = useUseCases();
let api: InProcessApi;
let other: SeededBrand;
let mint: Client<typeof MintService>;
let catalog: Client<typeof CatalogService>;
const keys: string[] = [];

async function keyWith(scopes: ApiKeyScope[], brandId = brand.brandId): Promise<{ id: string; key: string }> {
  const created = await createApiKey(app.ctx, { brandId, name: scopes.join('+'), scopes });
  keys.push(created.key);
  return created;
}

const withKey = (key: string) => ({ headers: { 'x-api-key': key } });

async function failure(call: Promise<unknown>): Promise<{ code: Code | 'ok'; message: string }> {
  try {
    await call;
    return { code: 'ok', message: '' };
  } catch (error) {
    const e = ConnectError.from(error);
    return { code: e.code, message: e.rawMessage };
  }
}

const submit = (key: string) =>
  mint.submitMintRequest(
    {
      brandId: brand.brandId,
      productId: brand.productId,
      requestedQuantity: 1,
      identityMode: IdentityMode.SERIAL,
      activationMode: ActivationMode.ACTIVE_AT_MINT,
    },
    withKey(key),
  );

beforeAll(async () => {
  api = inProcessApi(app);
  ({ mint, catalog } = api);
  other = await app.seedBrand();
});

describe('the API key matrix over RPCs', () => {
  it('a key acts only within its scopes: mint:read reads minting but cannot mint or read products', async () => {
    const { key } = await keyWith(['mint:read']);
    expect(await failure(mint.getMintKpis({ brandId: brand.brandId }, withKey(key)))).toEqual({ code: 'ok', message: '' });
    expect(await failure(submit(key))).toEqual({ code: Code.PermissionDenied, message: 'the API key lacks the mint:write scope' });
    expect((await failure(catalog.listProducts({ brandId: brand.brandId }, withKey(key)))).code).toBe(Code.PermissionDenied);
  });

  it('mint:write submits; products:write maintains products; products:read only reads them', async () => {
    expect((await failure(submit((await keyWith(['mint:write'])).key))).code).toBe('ok');
    const writer = (await keyWith(['products:write'])).key;
    const upsert = (key: string) =>
      catalog.upsertProduct({ brandId: brand.brandId, sku: 'KEY-1', name: 'By key', commercialStatus: 1, mintReadinessStatus: 1 }, withKey(key));
    expect((await failure(upsert(writer))).code).toBe('ok');
    const reader = (await keyWith(['products:read'])).key;
    expect((await failure(catalog.listProducts({ brandId: brand.brandId }, withKey(reader)))).code).toBe('ok');
    expect((await failure(upsert(reader))).code).toBe(Code.PermissionDenied);
  });

  it('a revoked key is Unauthenticated from the next call on, answered exactly as a key that never existed', async () => {
    const { id, key } = await keyWith(['mint:read']);
    expect((await failure(mint.getMintKpis({ brandId: brand.brandId }, withKey(key)))).code).toBe('ok');
    await revokeApiKey(app.ctx, brand.brandId, id);
    const unknown = generateApiKey((buffer) => buffer.fill(9)).key;
    const never = await failure(mint.getMintKpis({ brandId: brand.brandId }, withKey(unknown)));
    expect(never).toEqual({ code: Code.Unauthenticated, message: 'unknown API key' });
    expect(await failure(mint.getMintKpis({ brandId: brand.brandId }, withKey(key)))).toEqual(never);
  });

  it('a key of a workspace without API access is refused with a clear early-access error, and works once enabled', async () => {
    const closed = await createWorkspace(app.ctx, { name: 'No API yet' });
    const { key } = await keyWith(['mint:read'], closed.id);
    const refused = await failure(mint.getMintKpis({ brandId: closed.id }, withKey(key)));
    expect(refused.code).toBe(Code.PermissionDenied);
    expect(refused.message).toMatch(/API key access is not enabled for this workspace \(early access\)/);
    await setApiAccess(app.ctx, closed.id, true);
    expect((await failure(mint.getMintKpis({ brandId: closed.id }, withKey(key)))).code).toBe('ok');
  });

  it('malformed, mistyped and unknown keys are Unauthenticated', async () => {
    const { key } = await keyWith(['mint:read']);
    const mistyped = key.slice(0, 10) + (key[10] === 'a' ? 'b' : 'a') + key.slice(11);
    const unknown = generateApiKey((buffer) => buffer.fill(7)).key;
    for (const [candidate, message] of [
      ['hello', 'malformed API key'],
      [key.slice(0, -1), 'malformed API key'],
      [mistyped, 'malformed API key'],
      [unknown, 'unknown API key'],
    ] as const) {
      expect(await failure(mint.getMintKpis({ brandId: brand.brandId }, withKey(candidate)))).toEqual({ code: Code.Unauthenticated, message });
    }
  });

  it("another workspace's key is PermissionDenied on this brand, and a token plus a foreign key is too", async () => {
    const { key } = await keyWith(['mint:read'], other.brandId);
    expect(await failure(mint.getMintKpis({ brandId: brand.brandId }, withKey(key)))).toEqual({
      code: Code.PermissionDenied,
      message: `the API key does not grant access to brand ${brand.brandId}`,
    });
    const both = { headers: { authorization: `Bearer ${brand.token}`, 'x-api-key': key } };
    expect((await failure(mint.getMintKpis({ brandId: brand.brandId }, both))).code).toBe(Code.PermissionDenied);
  });

  it('records last_used_at on an authorized call only, and the stored row holds no secret', async () => {
    const { id, key } = await keyWith(['mint:read']);
    const lastUsed = async () => (await listApiKeys(app.ctx, brand.brandId)).find((k) => k.id === id)!.lastUsedAt;
    expect(await lastUsed()).toBeNull();
    await failure(submit(key));
    expect(await lastUsed()).toBeNull();
    await mint.getMintKpis({ brandId: brand.brandId }, withKey(key));
    expect(await lastUsed()).toBeInstanceOf(Date);
    const row = await app.db.em.fork().findOneOrFail(ApiKey, { id });
    expect(JSON.stringify(row)).not.toContain(key.slice(16, -4));
  });

  it('records the use of a busy key at most once a minute', async () => {
    const { id, key } = await keyWith(['mint:read']);
    const lastUsed = async () => (await listApiKeys(app.ctx, brand.brandId)).find((k) => k.id === id)!.lastUsedAt;
    await mint.getMintKpis({ brandId: brand.brandId }, withKey(key));
    const first = await lastUsed();
    expect(first).toBeInstanceOf(Date);
    for (let i = 0; i < 3; i++) await mint.getMintKpis({ brandId: brand.brandId }, withKey(key));
    expect(await lastUsed()).toEqual(first);
    // A minute later the next authorized call records again.
    const later = { ...app.ctx, clock: () => new Date(first!.getTime() + apiKeyUseIntervalMs + 1) };
    await recordApiKeyUse(later, await verifyApiKey(later, key));
    expect(await lastUsed()).toEqual(new Date(first!.getTime() + apiKeyUseIntervalMs + 1));
  });
});

describe('malformed keys never reach the database', () => {
  it('are rejected by format and check characters with a context whose database throws on any use', async () => {
    const noDatabase = new Proxy(
      {},
      {
        get: () => {
          throw new Error('database touched');
        },
      },
    );
    const ctx = { ...app.ctx, db: noDatabase } as unknown as UseCaseContext;
    const { key } = await keyWith(['mint:read']);
    const mistyped = key.slice(0, -5) + (key.at(-5) === 'a' ? 'b' : 'a') + key.slice(-4);
    for (const candidate of ['', 'mk_', 'Bearer x', mistyped, `${key}x`]) {
      await expect(verifyApiKey(ctx, candidate)).rejects.toThrow(new UnauthenticatedError('malformed API key'));
      await expect(authorize(ctx, { bearer: null, apiKey: candidate }, brand.brandId, 'mint:read')).rejects.toThrow('malformed API key');
    }
    // The same context with a well-formed key does reach the database: the probe is real.
    await expect(verifyApiKey(ctx, key)).rejects.toThrow('database touched');
  });
});

describe('authorize for plain HTTP routes', () => {
  it('reads credentials from Node and Fetch headers and refuses a malformed Authorization header', () => {
    expect(credentialsFrom({ authorization: 'Bearer abc', 'x-api-key': 'mk_x' })).toEqual({ bearer: 'abc', apiKey: 'mk_x' });
    expect(credentialsFrom(new Headers({ authorization: 'bearer  abc ' }))).toEqual({ bearer: 'abc', apiKey: null });
    expect(credentialsFrom({})).toEqual({ bearer: null, apiKey: null });
    expect(() => credentialsFrom({ authorization: 'Basic abc' })).toThrow(UnauthenticatedError);
  });

  it('with requireSessionAndKey needs both headers, naming the missing one; both must pass', async () => {
    const { id, key } = await keyWith(['mint:write', 'mint:read']);
    const required = { requireSessionAndKey: true };
    await expect(authorize(app.ctx, { bearer: null, apiKey: key }, brand.brandId, 'mint:write', required)).rejects.toThrow(/Authorization/);
    await expect(authorize(app.ctx, { bearer: brand.token, apiKey: null }, brand.brandId, 'mint:write', required)).rejects.toThrow(/x-api-key/);
    const caller = await authorize(
      app.ctx,
      credentialsFrom({ authorization: `Bearer ${brand.token}`, 'x-api-key': key }),
      brand.brandId,
      'mint:write',
      required,
    );
    expect(caller).toEqual({ userId: brand.userId, apiKeyId: id, actorId: brand.userId, partnerId: null });
    const readOnly = (await keyWith(['mint:read'])).key;
    await expect(authorize(app.ctx, { bearer: brand.token, apiKey: readOnly }, brand.brandId, 'mint:write', required)).rejects.toThrow(ForbiddenError);
    await expect(authorize(app.ctx, { bearer: other.token, apiKey: key }, brand.brandId, 'mint:write', required)).rejects.toThrow(ForbiddenError);
  });

  it('a key alone acts as the key for the audit trail; no credentials is Unauthenticated', async () => {
    const { id, key } = await keyWith(['mint:read']);
    expect(await authorize(app.ctx, { bearer: null, apiKey: key }, brand.brandId, 'mint:read')).toEqual({
      userId: null,
      apiKeyId: id,
      actorId: id,
      partnerId: null,
    });
    await expect(authorize(app.ctx, { bearer: null, apiKey: null }, brand.brandId, 'mint:read')).rejects.toThrow(UnauthenticatedError);
  });
});

describe('logs', () => {
  it('carry no API key and no token', () => {
    expectLogsFreeOf(api, [...keys.flatMap((key) => [key, key.slice(16)]), brand.token]);
  });
});
