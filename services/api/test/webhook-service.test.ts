// WebhookService through the interceptor chain: the role and API key scope matrix, a secret
// returned only when made, audit events of every change, URL rules, and delivery listing.

import { Code } from '@connectrpc/connect';
import { WebhookDeliveryStatus } from '@mint/contract';
import { createApiKey, createUser, drainWebhookFanout, grantRole, issueAccessToken, listMintEvents, processMintJobBatch, setApiAccess } from '@mint/usecases';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { setupUseCases, submitSerial, type SeededBrand, type UseCaseBundle } from '../../../test/support/usecases.ts';
import { codeOf, errorOf, expectLogsFreeOf, inProcessApi, type InProcessApi } from './support.ts';

let app: UseCaseBundle;
let brand: SeededBrand;
let api: InProcessApi;
let hooks: InProcessApi['webhooks'];

beforeAll(async () => {
  app = await setupUseCases();
  brand = await app.seedBrand();
  api = inProcessApi(app, { webhooks: { allowLoopback: false } });
  hooks = api.webhooks;
});
afterAll(() => app.close());

const as = (token: string) => ({ headers: { authorization: `Bearer ${token}` } });
const asKey = (key: string) => ({ headers: { 'x-api-key': key } });

async function userWith(role: 'owner' | 'admin' | 'member' | 'viewer'): Promise<string> {
  const user = await createUser(app.ctx, { email: `${role}-${Math.random()}@example.com`, name: role });
  await grantRole(app.ctx, brand.brandId, user.id, role);
  return issueAccessToken(app.ctx, user.id);
}

describe('WebhookService access', () => {
  it('lets owners, admins and keys with webhooks:write manage endpoints; members, viewers and other keys are PermissionDenied', async () => {
    await setApiAccess(app.ctx, brand.brandId, true);
    const withScope = (await createApiKey(app.ctx, { brandId: brand.brandId, name: 'hooks', scopes: ['webhooks:write'] })).key;
    const without = (
      await createApiKey(app.ctx, { brandId: brand.brandId, name: 'mint', scopes: ['mint:write', 'mint:read', 'products:write', 'products:read'] })
    ).key;
    const list = (options: object) => codeOf(hooks.listWebhookEndpoints({ brandId: brand.brandId }, options));
    const create = (options: object) => codeOf(hooks.createWebhookEndpoint({ brandId: brand.brandId, url: 'https://receiver.example/a' }, options));
    const matrix = {
      owner: [await list(as(await userWith('owner'))), await create(as(await userWith('owner')))],
      admin: [await list(as(await userWith('admin'))), await create(as(await userWith('admin')))],
      member: [await list(as(await userWith('member'))), await create(as(await userWith('member')))],
      viewer: [await list(as(await userWith('viewer'))), await create(as(await userWith('viewer')))],
      keyWithScope: [await list(asKey(withScope)), await create(asKey(withScope))],
      keyWithout: [await list(asKey(without)), await create(asKey(without))],
      nobody: [await list({}), await create({})],
    };
    expect(matrix).toEqual({
      owner: ['ok', 'ok'],
      admin: ['ok', 'ok'],
      member: [Code.PermissionDenied, Code.PermissionDenied],
      viewer: [Code.PermissionDenied, Code.PermissionDenied],
      keyWithScope: ['ok', 'ok'],
      keyWithout: [Code.PermissionDenied, Code.PermissionDenied],
      nobody: [Code.Unauthenticated, Code.Unauthenticated],
    });
  });
});

describe('WebhookService endpoints', () => {
  it('returns the secret once, never in lists; rotates it; audits every change without secrets', async () => {
    const owner = as(brand.token);
    const created = await hooks.createWebhookEndpoint(
      { brandId: brand.brandId, url: 'https://receiver.example/hook', eventTypes: ['mint_job_completed'], description: 'ERP' },
      owner,
    );
    expect(created.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    const id = created.endpoint!.id;
    expect(created.endpoint).toMatchObject({ url: 'https://receiver.example/hook', eventTypes: ['mint_job_completed'], enabled: true, description: 'ERP' });
    const listed = await hooks.listWebhookEndpoints({ brandId: brand.brandId }, owner);
    expect(JSON.stringify(listed, (_key, value: unknown) => (typeof value === 'bigint' ? String(value) : value))).not.toContain(created.secret.slice(6));
    const updated = await hooks.updateWebhookEndpoint(
      { brandId: brand.brandId, endpointId: id, enabled: false, eventTypes: [], replaceEventTypes: true },
      owner,
    );
    expect(updated.endpoint).toMatchObject({ enabled: false, eventTypes: [] });
    const rotated = await hooks.rotateWebhookSecret({ brandId: brand.brandId, endpointId: id }, owner);
    expect(rotated.secret).toMatch(/^whsec_/);
    expect(rotated.secret).not.toBe(created.secret);
    expect(rotated.endpoint?.previousSecretExpiresAt).toBeDefined();
    await hooks.deleteWebhookEndpoint({ brandId: brand.brandId, endpointId: id }, owner);
    expect(await codeOf(hooks.rotateWebhookSecret({ brandId: brand.brandId, endpointId: id }, owner))).toBe(Code.NotFound);
    const events = await listMintEvents(app.ctx, brand.brandId, { limit: 100, cursor: null, eventType: null, entityType: 'webhook_endpoint', entityId: id });
    expect(events.items.map((e) => e.eventType).reverse()).toEqual([
      'webhook_endpoint_created',
      'webhook_endpoint_updated',
      'webhook_endpoint_secret_rotated',
      'webhook_endpoint_deleted',
    ]);
    expect(events.items.every((e) => e.actor === brand.userId)).toBe(true);
    const text = JSON.stringify(events.items);
    expect(text).not.toContain(created.secret.slice(6));
    expect(text).not.toContain(rotated.secret.slice(6));
    expectLogsFreeOf(api, [created.secret.slice(6), rotated.secret.slice(6)]);
  });

  it('refuses http:// and malformed URLs naming the field; http:// loopback only when allowed', async () => {
    const owner = as(brand.token);
    const http = await errorOf(hooks.createWebhookEndpoint({ brandId: brand.brandId, url: 'http://127.0.0.1:9/hook' }, owner));
    expect(http.code).toBe(Code.InvalidArgument);
    expect(http.rawMessage).toContain('url');
    expect(await codeOf(hooks.createWebhookEndpoint({ brandId: brand.brandId, url: 'https://user:pw@receiver.example/' }, owner))).toBe(Code.InvalidArgument);
    expect(await codeOf(hooks.createWebhookEndpoint({ brandId: brand.brandId, url: 'ftp://receiver.example/' }, owner))).toBe(Code.InvalidArgument);
    const dev = inProcessApi(app, { webhooks: { allowLoopback: true } }).webhooks;
    expect(await codeOf(dev.createWebhookEndpoint({ brandId: brand.brandId, url: 'http://127.0.0.1:9/hook' }, owner))).toBe('ok');
    expect(await codeOf(dev.createWebhookEndpoint({ brandId: brand.brandId, url: 'http://receiver.example/hook' }, owner))).toBe(Code.InvalidArgument);
  });

  it('writes one delivery per matching event and enabled endpoint, lists them keyset paged and redelivers', async () => {
    const other = await app.seedBrand();
    const owner = as(other.token);
    const all = await hooks.createWebhookEndpoint({ brandId: other.brandId, url: 'https://receiver.example/all' }, owner);
    const completed = await hooks.createWebhookEndpoint(
      { brandId: other.brandId, url: 'https://receiver.example/done', eventTypes: ['mint_job_completed'] },
      owner,
    );
    const off = await hooks.createWebhookEndpoint({ brandId: other.brandId, url: 'https://receiver.example/off' }, owner);
    await hooks.updateWebhookEndpoint({ brandId: other.brandId, endpointId: off.endpoint!.id, enabled: false }, owner);
    const { mintJobId } = await submitSerial(app.ctx, other, 10);
    await processMintJobBatch(app.ctx, other.brandId, mintJobId, null);
    // The deliveries are written by the webhook worker's fan-out, after the events' commits.
    await drainWebhookFanout(app.ctx);
    const events = (await listMintEvents(app.ctx, other.brandId, { limit: 100, cursor: null, eventType: null, entityType: null, entityId: null })).items;
    // Every event after the first endpoint's creation reaches it (its own creation event included),
    // except the other endpoints' own events: an endpoint's management goes to that endpoint alone.
    const eventCount = events.filter((e) => e.entityType !== 'webhook_endpoint' || e.entityId === all.endpoint!.id).length;
    expect(eventCount).toBeLessThan(events.length);
    const first = await hooks.listWebhookDeliveries({ brandId: other.brandId, endpointId: all.endpoint!.id, limit: 3 }, owner);
    expect(first.deliveries).toHaveLength(3);
    expect(first.hasMore).toBe(true);
    const rest = await hooks.listWebhookDeliveries({ brandId: other.brandId, endpointId: all.endpoint!.id, limit: 100, cursor: first.nextCursor! }, owner);
    expect(first.deliveries.length + rest.deliveries.length).toBe(eventCount);
    expect(new Set([...first.deliveries, ...rest.deliveries].map((d) => d.id)).size).toBe(eventCount);
    expect(rest.deliveries.every((d) => d.status === WebhookDeliveryStatus.PENDING && d.attempts === 0)).toBe(true);
    const done = await hooks.listWebhookDeliveries({ brandId: other.brandId, endpointId: completed.endpoint!.id }, owner);
    expect(done.deliveries.map((d) => d.eventType)).toEqual(['mint_job_completed']);
    // The disabled endpoint got only what happened while it was enabled: its own creation.
    expect((await hooks.listWebhookDeliveries({ brandId: other.brandId, endpointId: off.endpoint!.id }, owner)).deliveries.map((d) => d.eventType)).toEqual([
      'webhook_endpoint_created',
    ]);
    expect(await codeOf(hooks.redeliverWebhook({ brandId: other.brandId, deliveryId: done.deliveries[0]!.id }, owner))).toBe('ok');
    // Another brand's endpoint and delivery are NotFound under this brand.
    expect(await codeOf(hooks.listWebhookDeliveries({ brandId: brand.brandId, endpointId: all.endpoint!.id }, as(brand.token)))).toBe(Code.NotFound);
    expect(await codeOf(hooks.redeliverWebhook({ brandId: brand.brandId, deliveryId: done.deliveries[0]!.id }, as(brand.token)))).toBe(Code.NotFound);
  });
});
