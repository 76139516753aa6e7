// WorkspaceService on the real server over Connect JSON (as the web console calls it): an owner
// creates API keys with scopes (the key answered once, never logged, then working with exactly
// those scopes), pages and revokes them; manages the brand's members and roles, the last owner
// always kept. Admins, members, API keys and other brands' owners are refused.

import { Code, createClient, type Client } from '@connectrpc/connect';
import { createConnectTransport } from '@connectrpc/connect-node';
import { AccountService, MintService, WorkspaceService } from '@mint/contract';
import { createUser, grantRole, issueAccessToken } from '@mint/usecases';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { setupUseCases, type SeededBrand, type UseCaseBundle } from '../../../test/support/usecases.ts';
import { bearer, codeOf, errorOf, expectLogsFreeOf, startTestApi, type TestApi } from './support.ts';

let app: UseCaseBundle;
let api: TestApi;
let workspace: Client<typeof WorkspaceService>;
let mint: Client<typeof MintService>;
let account: Client<typeof AccountService>;
let brand: SeededBrand;
let other: SeededBrand;

beforeAll(async () => {
  app = await setupUseCases();
  brand = await app.seedBrand();
  other = await app.seedBrand();
  api = await startTestApi(app);
  const transport = createConnectTransport({ baseUrl: api.baseUrl, httpVersion: '1.1', useBinaryFormat: false });
  workspace = createClient(WorkspaceService, transport);
  mint = createClient(MintService, transport);
  account = createClient(AccountService, transport);
});

afterAll(async () => {
  await api?.close();
  await app?.close();
});

const key = (k: string) => ({ headers: { 'x-api-key': k } });

describe('API keys', () => {
  it('creates a key with its scopes, answered once and never logged; the key then works within those scopes only', async () => {
    const created = await workspace.createApiKey({ brandId: brand.brandId, name: 'warehouse printer', scopes: ['mint:read'] }, bearer(brand.token));
    expect(created.key).toMatch(/^mk_[0-9a-z]{12}_[0-9a-z]{36}$/);
    expect(created.apiKey).toMatchObject({ name: 'warehouse printer', scopes: ['mint:read'], prefix: created.key.slice(0, 15) });
    expect(created.apiKey?.revokedAt).toBeUndefined();
    expect(created.apiAccessEnabled).toBe(true);
    expect((await mint.getMintKpis({ brandId: brand.brandId }, key(created.key))).ok).toBe(true);
    const refused = await errorOf(mint.listMintBatches({ brandId: other.brandId }, key(created.key)));
    expect(refused.code).toBe(Code.PermissionDenied);
    expect(
      await codeOf(
        mint.preflightMintBatch({ brandId: brand.brandId, productId: brand.productId, batchId: crypto.randomUUID(), requestedQuantity: 1 }, key(created.key)),
      ),
    ).toBe(Code.PermissionDenied);
    // The listing never carries the key or its secret; neither does any log line.
    const list = await workspace.listApiKeys({ brandId: brand.brandId }, bearer(brand.token));
    expect(JSON.stringify(list, (_k, v: unknown) => (typeof v === 'bigint' ? String(v) : v))).not.toContain(created.key.slice(16));
    expectLogsFreeOf(api, [created.key, created.key.slice(16, 48)]);
    // The audit trail names the key and who made it, never the key itself.
    const events = await mint.listMintEvents({ brandId: brand.brandId, eventType: 'api_key_created', entityId: created.apiKey!.id }, bearer(brand.token));
    expect(events.events.map((e) => [e.entityType, e.actor, e.payload])).toEqual([
      ['api_key', brand.userId, { name: 'warehouse printer', prefix: created.apiKey!.prefix, scopes: ['mint:read'] }],
    ]);
  });

  it('refuses bad input naming each field, writing nothing', async () => {
    const before = (await workspace.listApiKeys({ brandId: brand.brandId }, bearer(brand.token))).apiKeys.length;
    const error = await errorOf(
      workspace.createApiKey({ brandId: brand.brandId, name: ' ', scopes: ['mint:read', 'workspace:admin', 'fly'] }, bearer(brand.token)),
    );
    expect(error.code).toBe(Code.InvalidArgument);
    expect(error.rawMessage).toContain('name: is required');
    expect(error.rawMessage).toContain('scopes[1]: workspace:admin is never given to a key');
    expect(error.rawMessage).toContain('scopes[2]: "fly" is not a scope');
    expect((await errorOf(workspace.createApiKey({ brandId: brand.brandId, name: 'x', scopes: [] }, bearer(brand.token)))).rawMessage).toMatch(
      /^scopes: must name one or more/,
    );
    expect((await workspace.listApiKeys({ brandId: brand.brandId }, bearer(brand.token))).apiKeys.length).toBe(before);
  });

  it('pages the keys newest first with the cursor, every key once', async () => {
    for (let i = 0; i < 5; i++) await workspace.createApiKey({ brandId: brand.brandId, name: `paged ${i}`, scopes: ['links:read'] }, bearer(brand.token));
    const seen: string[] = [];
    let cursor: string | undefined;
    do {
      const page = await workspace.listApiKeys({ brandId: brand.brandId, limit: 2, ...(cursor === undefined ? {} : { cursor }) }, bearer(brand.token));
      expect(page.apiKeys.length).toBeLessThanOrEqual(2);
      seen.push(...page.apiKeys.map((k) => k.name));
      cursor = page.hasMore ? page.nextCursor : undefined;
    } while (cursor !== undefined);
    expect(seen.slice(0, 5)).toEqual(['paged 4', 'paged 3', 'paged 2', 'paged 1', 'paged 0']);
    expect(new Set(seen).size).toBe(seen.length);
    expect(seen).toContain('warehouse printer');
    expect((await errorOf(workspace.listApiKeys({ brandId: brand.brandId, cursor: 'bogus' }, bearer(brand.token)))).rawMessage).toContain('cursor');
  });

  it("revokes a key at once (repeating it changes nothing); another brand's key is not found", async () => {
    const created = await workspace.createApiKey({ brandId: brand.brandId, name: 'to revoke', scopes: ['mint:read'] }, bearer(brand.token));
    const revoked = await workspace.revokeApiKey({ brandId: brand.brandId, apiKeyId: created.apiKey!.id }, bearer(brand.token));
    expect(revoked.apiKey?.revokedAt).toBeDefined();
    expect(await codeOf(mint.getMintKpis({ brandId: brand.brandId }, key(created.key)))).toBe(Code.Unauthenticated);
    const again = await workspace.revokeApiKey({ brandId: brand.brandId, apiKeyId: created.apiKey!.id }, bearer(brand.token));
    expect(again.apiKey?.revokedAt).toEqual(revoked.apiKey?.revokedAt);
    // One api_key_revoked event: the repeat changed nothing.
    const events = await mint.listMintEvents({ brandId: brand.brandId, eventType: 'api_key_revoked', entityId: created.apiKey!.id }, bearer(brand.token));
    expect(events.events.map((e) => e.payload)).toEqual([{ name: 'to revoke', prefix: created.apiKey!.prefix }]);
    const foreign = await workspace.createApiKey({ brandId: other.brandId, name: 'other', scopes: ['mint:read'] }, bearer(other.token));
    expect(await codeOf(workspace.revokeApiKey({ brandId: brand.brandId, apiKeyId: foreign.apiKey!.id }, bearer(brand.token)))).toBe(Code.NotFound);
    expect((await mint.getMintKpis({ brandId: other.brandId }, key(foreign.key))).ok).toBe(true);
  });

  it("is for owners: an admin, an API key with every scope and another brand's owner are refused", async () => {
    const admin = await createUser(app.ctx, { email: 'admin-keys@test.example', name: 'Admin' });
    await grantRole(app.ctx, brand.brandId, admin.id, 'admin');
    const adminToken = await issueAccessToken(app.ctx, admin.id);
    expect(await codeOf(workspace.listApiKeys({ brandId: brand.brandId }, bearer(adminToken)))).toBe(Code.PermissionDenied);
    const all = await workspace.createApiKey(
      {
        brandId: brand.brandId,
        name: 'all',
        scopes: [
          'mint:write',
          'mint:read',
          'products:write',
          'products:read',
          'links:write',
          'links:read',
          'webhooks:write',
          'scans:write',
          'scans:read',
          'scans:manage',
        ],
      },
      bearer(brand.token),
    );
    expect(await codeOf(workspace.createApiKey({ brandId: brand.brandId, name: 'escalate', scopes: ['mint:read'] }, key(all.key)))).toBe(Code.PermissionDenied);
    expect(await codeOf(workspace.listApiKeys({ brandId: brand.brandId }, bearer(other.token)))).toBe(Code.PermissionDenied);
    expect(await codeOf(workspace.listApiKeys({ brandId: brand.brandId }))).toBe(Code.Unauthenticated);
  });
});

describe('members and roles', () => {
  it('lists the owner, adds a new address as a member (the user made), who then signs in to the brand with that role', async () => {
    const first = await workspace.listBrandMembers({ brandId: brand.brandId }, bearer(brand.token));
    expect(first.members[0]).toMatchObject({ userId: brand.userId, role: 'owner' });
    const added = await workspace.addBrandMember(
      { brandId: brand.brandId, email: 'new.operator@test.example', name: 'New Operator', role: 'member' },
      bearer(brand.token),
    );
    expect(added.userCreated).toBe(true);
    expect(added.member).toMatchObject({ email: 'new.operator@test.example', name: 'New Operator', role: 'member' });
    const token = await issueAccessToken(app.ctx, added.member!.userId);
    const mine = await account.listMyMemberships({}, bearer(token));
    expect(mine.memberships.map((m) => [m.brandId, m.role])).toEqual([[brand.brandId, 'member']]);
    // Adding the same person again is refused naming their role; adding a known address reuses the user.
    const twice = await errorOf(workspace.addBrandMember({ brandId: brand.brandId, email: 'NEW.operator@test.example', role: 'viewer' }, bearer(brand.token)));
    expect(twice.rawMessage).toBe('new.operator@test.example is already a member of this brand as member: change their role instead');
    const elsewhere = await workspace.addBrandMember({ brandId: other.brandId, userId: added.member!.userId, role: 'viewer' }, bearer(other.token));
    expect(elsewhere.userCreated).toBe(false);
  });

  it('refuses bad input naming the field', async () => {
    const both = await errorOf(
      workspace.addBrandMember({ brandId: brand.brandId, email: 'a@b.example', userId: brand.userId, role: 'boss' }, bearer(brand.token)),
    );
    expect(both.code).toBe(Code.InvalidArgument);
    expect(both.rawMessage).toContain('user_id: cannot be combined with email');
    expect(both.rawMessage).toContain('role: must be one of owner, admin, member, viewer');
    expect((await errorOf(workspace.addBrandMember({ brandId: brand.brandId, email: 'not an address', role: 'viewer' }, bearer(brand.token)))).rawMessage).toBe(
      'email: must be an e-mail address (name@example.com)',
    );
    expect(await codeOf(workspace.addBrandMember({ brandId: brand.brandId, userId: crypto.randomUUID(), role: 'viewer' }, bearer(brand.token)))).toBe(
      Code.NotFound,
    );
  });

  it('never demotes or removes the last owner; with a second owner both work, and a removed member loses access', async () => {
    const demote = await errorOf(workspace.setBrandMemberRole({ brandId: brand.brandId, userId: brand.userId, role: 'admin' }, bearer(brand.token)));
    expect(demote.code).toBe(Code.FailedPrecondition);
    expect(demote.rawMessage).toBe("the brand's last owner cannot become admin: make another member owner first");
    const remove = await errorOf(workspace.removeBrandMember({ brandId: brand.brandId, userId: brand.userId }, bearer(brand.token)));
    expect(remove.rawMessage).toBe("the brand's last owner cannot be removed: make another member owner first");
    const second = await workspace.addBrandMember({ brandId: brand.brandId, email: 'second.owner@test.example', role: 'viewer' }, bearer(brand.token));
    const promoted = await workspace.setBrandMemberRole({ brandId: brand.brandId, userId: second.member!.userId, role: 'owner' }, bearer(brand.token));
    expect(promoted.member?.role).toBe('owner');
    const secondToken = await issueAccessToken(app.ctx, second.member!.userId);
    // Two owners demoting each other at once: one wins, the brand keeps an owner.
    const outcomes = await Promise.all([
      codeOf(workspace.setBrandMemberRole({ brandId: brand.brandId, userId: brand.userId, role: 'viewer' }, bearer(secondToken))),
      codeOf(workspace.setBrandMemberRole({ brandId: brand.brandId, userId: second.member!.userId, role: 'viewer' }, bearer(brand.token))),
    ]);
    expect(outcomes.filter((o) => o === 'ok').length).toBe(1);
    const members = (await workspace.listBrandMembers({ brandId: brand.brandId, limit: 100 }, bearer(outcomes[0] === 'ok' ? secondToken : brand.token)))
      .members;
    expect(members.filter((m) => m.role === 'owner').length).toBe(1);
    // The remaining owner removes the demoted one, who can no longer read the brand.
    const [owner, gone] = outcomes[0] === 'ok' ? [secondToken, brand] : [brand.token, { userId: second.member!.userId, token: secondToken }];
    await workspace.removeBrandMember({ brandId: brand.brandId, userId: gone.userId }, bearer(owner));
    expect(await codeOf(mint.getMintKpis({ brandId: brand.brandId }, bearer(gone.token)))).toBe(Code.PermissionDenied);
    expect(await codeOf(workspace.removeBrandMember({ brandId: brand.brandId, userId: gone.userId }, bearer(owner)))).toBe(Code.NotFound);
    // The audit trail of the second owner's membership: added, promoted, (perhaps demoted,) and of the one removed.
    const trail = await mint.listMintEvents({ brandId: brand.brandId, entityType: 'membership', entityId: second.member!.userId }, bearer(owner));
    expect(
      trail.events
        .map((e) => e.eventType)
        .reverse()
        .slice(0, 2),
    ).toEqual(['brand_member_added', 'brand_member_role_changed']);
    const removal = await mint.listMintEvents({ brandId: brand.brandId, eventType: 'brand_member_removed', entityId: gone.userId }, bearer(owner));
    expect(removal.events[0]?.payload).toMatchObject({ user_id: gone.userId, role: 'viewer' });
  });

  it('pages the members with the cursor, oldest first, every member once', async () => {
    for (let i = 0; i < 3; i++)
      await workspace.addBrandMember({ brandId: other.brandId, email: `paged${i}@test.example`, role: 'viewer' }, bearer(other.token));
    const seen: string[] = [];
    let cursor: string | undefined;
    do {
      const page = await workspace.listBrandMembers({ brandId: other.brandId, limit: 2, ...(cursor === undefined ? {} : { cursor }) }, bearer(other.token));
      seen.push(...page.members.map((m) => m.email));
      cursor = page.hasMore ? page.nextCursor : undefined;
    } while (cursor !== undefined);
    expect(seen.slice(-3)).toEqual(['paged0@test.example', 'paged1@test.example', 'paged2@test.example']);
    expect(new Set(seen).size).toBe(seen.length);
    expect(seen.length).toBe(5);
  });
});
