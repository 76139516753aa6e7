// AccountService on the real server over Connect JSON (as the web console calls it): a session's
// user sees exactly their brand workspaces with the role on each; an API key alone, a bad token
// and no credentials are refused.

import { Code, createClient, type Client } from '@connectrpc/connect';
import { createConnectTransport } from '@connectrpc/connect-node';
import { AccountService } from '@mint/contract';
import { createApiKey, createUser, createWorkspace, grantRole, issueAccessToken } from '@mint/usecases';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { setupUseCases, type SeededBrand, type UseCaseBundle } from '../../../test/support/usecases.ts';
import { bearer, codeOf, errorOf, startTestApi, type TestApi } from './support.ts';

let app: UseCaseBundle;
let api: TestApi;
let account: Client<typeof AccountService>;
let owned: SeededBrand;
let viewed: { id: string; slug: string };
let other: SeededBrand;

beforeAll(async () => {
  app = await setupUseCases();
  owned = await app.seedBrand();
  other = await app.seedBrand();
  const workspace = await createWorkspace(app.ctx, { name: 'Another Brand' });
  viewed = { id: workspace.id, slug: workspace.slug };
  await grantRole(app.ctx, workspace.id, owned.userId, 'viewer');
  api = await startTestApi(app);
  account = createClient(AccountService, createConnectTransport({ baseUrl: api.baseUrl, httpVersion: '1.1', useBinaryFormat: false }));
});

afterAll(async () => {
  await api?.close();
  await app?.close();
});

describe('ListMyMemberships', () => {
  it("lists the session user's brands with the role on each, by brand name, and nobody else's", async () => {
    const answer = await account.listMyMemberships({}, bearer(owned.token));
    expect(answer.ok).toBe(true);
    expect(answer.userId).toBe(owned.userId);
    expect(answer.memberships.map((m) => ({ brandId: m.brandId, brandName: m.brandName, role: m.role }))).toEqual([
      { brandId: viewed.id, brandName: 'Another Brand', role: 'viewer' },
      { brandId: owned.brandId, brandName: 'Test Brand', role: 'owner' },
    ]);
    expect(answer.memberships[0]!.brandSlug).toBe(viewed.slug);
    expect(answer.memberships.map((m) => m.brandId)).not.toContain(other.brandId);
  });

  it('answers an empty list for a user of no brand', async () => {
    const loner = await createUser(app.ctx, { email: 'loner@test.example', name: 'Loner' });
    const answer = await account.listMyMemberships({}, bearer(await issueAccessToken(app.ctx, loner.id)));
    expect(answer.memberships).toEqual([]);
  });

  it('refuses an API key alone (it names a brand, not a user) with PermissionDenied saying so', async () => {
    const { key } = await createApiKey(app.ctx, { brandId: owned.brandId, name: 'ci', scopes: ['mint:read'] });
    const error = await errorOf(account.listMyMemberships({}, { headers: { 'x-api-key': key } }));
    expect(error.code).toBe(Code.PermissionDenied);
    expect(error.rawMessage).toContain('session token');
  });

  it('refuses anonymous callers and bad tokens with Unauthenticated', async () => {
    expect(await codeOf(account.listMyMemberships({}))).toBe(Code.Unauthenticated);
    expect(await codeOf(account.listMyMemberships({}, bearer(`${owned.token.slice(0, -4)}AAAA`)))).toBe(Code.Unauthenticated);
  });
});
