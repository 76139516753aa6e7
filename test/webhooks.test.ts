// Webhooks end to end across both services: endpoints managed through the API's WebhookService
// (the whole interceptor chain), delivered by the executor's webhook worker to real receivers
// (node:http on loopback), signatures checked by the standardwebhooks package. Time is the use
// cases' injected clock, moved by the test: three days and a secret rotation's 24 hours pass
// without sleeping.

import { lookup } from 'node:dns/promises';
import { hostname } from 'node:os';
import { Writable } from 'node:stream';
import { Code } from '@connectrpc/connect';
import { WebhookDeliveryStatus } from '@mint/contract';
import { webhookRetry, retryDelayMs } from '@mint/domain';
import { createLogger } from '@mint/runtime';
import { createApiKey, createWebhookSender, listMintEvents, sealWebhookSecrets, type UseCaseContext, type WebhookNetworkPolicy } from '@mint/usecases';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { bearer, codeOf, errorOf, inProcessApi } from '../services/api/test/support.ts';
import { startWebhookWorker, type WebhookWorker } from '../services/executor/src/webhook-worker.ts';
import { query, run } from './support/sql.ts';
import { setupUseCases, type UseCaseBundle } from './support/usecases.ts';
import { startWebhookReceiver, type ReceivedWebhook } from './support/webhook-receiver.ts';

let app: UseCaseBundle;
/** The fake clock every use case of this file reads. */
let now = Date.now();
let ctx: UseCaseContext;
const logger = createLogger({ logLevel: 'silent' }, {}, new Writable({ write: (_c, _e, done) => done() }));
const workers: WebhookWorker[] = [];

beforeAll(async () => {
  app = await setupUseCases();
  ctx = { ...app.ctx, clock: () => new Date(now) };
});
afterAll(async () => {
  await Promise.all(workers.map((w) => w.stop()));
  await app.close();
});

/** Starts a webhook worker on `context` (the fake clock by default) with the real schedule and the jitter pinned to its top. */
function worker(policy: WebhookNetworkPolicy, context: UseCaseContext = ctx): WebhookWorker {
  const started = startWebhookWorker({
    ctx: context,
    logger,
    send: createWebhookSender(policy),
    concurrency: 4,
    perEndpoint: 2,
    pollIntervalMs: 10,
    random: () => 0,
  });
  workers.push(started);
  return started;
}

async function stop(w: WebhookWorker): Promise<void> {
  workers.splice(workers.indexOf(w), 1);
  await w.stop();
}

async function until<T>(what: string, probe: () => Promise<T | undefined | false>, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

type DeliveryRow = { id: string; status: string; attempts: number; next_attempt_at: Date; event_type: string; last_error: string | null };
const deliveriesOf = (endpointId: string) =>
  query<DeliveryRow>(
    app.db.em.fork(),
    `select id, status, attempts, next_attempt_at, event_type, last_error from webhook_deliveries where endpoint_id = ? order by created_at, id`,
    [endpointId],
  );

const headersOf = (r: ReceivedWebhook) => ({
  'webhook-id': String(r.headers['webhook-id']),
  'webhook-timestamp': String(r.headers['webhook-timestamp']),
  'webhook-signature': String(r.headers['webhook-signature']),
});

/** Verifies as a receiver whose clock reads what the service's clock read when it signed (standardwebhooks allows 5 minutes of skew). */
function verifyAt(secret: string, r: ReceivedWebhook): unknown {
  vi.useFakeTimers({ toFake: ['Date'] });
  vi.setSystemTime(Number(r.headers['webhook-timestamp']) * 1000);
  try {
    return new Webhook(secret).verify(r.body, headersOf(r));
  } finally {
    vi.useRealTimers();
  }
}

const hour = 3600_000;

/** Call options of an API key with webhooks:write: unlike a session token it does not expire while the fake clock runs days ahead. */
async function keyOf(brandId: string): Promise<{ headers: Record<string, string> }> {
  const { key } = await createApiKey(app.ctx, { brandId, name: 'webhooks', scopes: ['webhooks:write'] });
  return { headers: { 'x-api-key': key } };
}

describe('webhooks with a fake clock', () => {
  it('disables an endpoint that has failed for three days, with an audit event, after retries spaced by the schedule', async () => {
    const brand = await app.seedBrand();
    const api = inProcessApi(app, { ctx, webhooks: { allowLoopback: true } });
    const receiver = await startWebhookReceiver(() => 500);
    const w = worker({ allowLoopback: true, allowedAddresses: [] });
    const owner = await keyOf(brand.brandId);
    try {
      const created = await api.webhooks.createWebhookEndpoint({ brandId: brand.brandId, url: receiver.url('/down') }, owner);
      const endpointId = created.endpoint!.id;
      const start = now;
      const attemptsAt: number[] = [];
      // Each attempt fails; the clock then jumps to the retry's due time (never sleeping through it).
      for (let attempt = 1; ; attempt++) {
        const row = await until(`attempt ${attempt}`, async () => {
          const [d] = await deliveriesOf(endpointId);
          return d !== undefined && d.attempts === attempt && d.status !== 'delivering' ? d : undefined;
        });
        attemptsAt.push(now);
        const endpoint = (await api.webhooks.listWebhookEndpoints({ brandId: brand.brandId }, owner)).endpoints[0]!;
        if (row.status === 'failed') {
          expect(now - start).toBeGreaterThanOrEqual(3 * 24 * hour);
          expect(endpoint).toMatchObject({ enabled: false, disabledReason: 'failing' });
          break;
        }
        expect(row.status).toBe('pending');
        // Still enabled while it has failed for less than three days.
        expect(now - start).toBeLessThan(3 * 24 * hour);
        expect(endpoint.enabled).toBe(true);
        now = new Date(row.next_attempt_at).getTime();
      }
      // The fastest schedule (jitter takes a quarter off every delay): attempts at 0 s, 7.5 s, 22.5 s, ...
      // up to 6 h apart; the 23rd is 68.5 h after the first, the 24th (74.5 h) is past three days.
      expect(attemptsAt).toHaveLength(24);
      expect((attemptsAt[22]! - start) / hour).toBeCloseTo(68.5, 1);
      for (let i = 1; i < attemptsAt.length; i++) expect(attemptsAt[i]! - attemptsAt[i - 1]!).toBe(retryDelayMs(webhookRetry, i, 0));
      expect(receiver.received).toHaveLength(24);
      expect(new Set(receiver.received.map((r) => r.headers['webhook-id'])).size).toBe(1);
      const events = await listMintEvents(ctx, brand.brandId, {
        limit: 10,
        cursor: null,
        eventType: 'webhook_endpoint_disabled',
        entityType: null,
        entityId: endpointId,
      });
      expect(events.items).toHaveLength(1);
      expect(events.items[0]).toMatchObject({ actor: null, payload: { reason: 'failing', status_code: 500 } });
      expect(events.items[0]!.occurredAt.getTime()).toBe(now);
      // Nothing is sent to it any more: a later event is not even queued for it.
      now += hour;
      await api.webhooks.updateWebhookEndpoint({ brandId: brand.brandId, endpointId, description: 'still down' }, owner);
      await new Promise((r) => setTimeout(r, 200));
      expect(receiver.received).toHaveLength(24);
    } finally {
      await stop(w);
      await receiver.close();
    }
  }, 60_000);

  it('signs with the old and the new secret for 24 hours after RotateWebhookSecret, then with the new one only', async () => {
    const brand = await app.seedBrand();
    const api = inProcessApi(app, { ctx, webhooks: { allowLoopback: true } });
    const receiver = await startWebhookReceiver(() => 204);
    const w = worker({ allowLoopback: true, allowedAddresses: [] });
    const owner = await keyOf(brand.brandId);
    try {
      const created = await api.webhooks.createWebhookEndpoint({ brandId: brand.brandId, url: receiver.url('/rotating') }, owner);
      const endpointId = created.endpoint!.id;
      const old = created.secret;
      /** Makes an event now (a description change), waits for its delivery and returns what the receiver got. */
      const deliverOne = async (description: string): Promise<ReceivedWebhook> => {
        await api.webhooks.updateWebhookEndpoint({ brandId: brand.brandId, endpointId, description }, owner);
        return until(`delivery of "${description}"`, async () =>
          receiver.received.find((r) => (JSON.parse(r.body) as { data: { payload: { description?: string } } }).data.payload.description === description),
        );
      };

      const beforeRotation = await deliverOne('before');
      expect(String(beforeRotation.headers['webhook-signature']).split(' ')).toHaveLength(1);
      expect(() => verifyAt(old, beforeRotation)).not.toThrow();

      now += hour;
      const rotatedAt = now;
      const rotated = await api.webhooks.rotateWebhookSecret({ brandId: brand.brandId, endpointId }, owner);
      const fresh = rotated.secret;
      expect(Number(rotated.endpoint!.previousSecretExpiresAt!.seconds)).toBe(Math.floor((rotatedAt + 24 * hour) / 1000));

      for (const after of [1, 23 * hour + 59 * 60_000]) {
        now = rotatedAt + after;
        const got = await deliverOne(`overlap +${after}`);
        // Both signatures: receivers still on the old secret and those already on the new one verify.
        expect(String(got.headers['webhook-signature']).split(' ')).toHaveLength(2);
        expect(() => verifyAt(old, got)).not.toThrow();
        expect(() => verifyAt(fresh, got)).not.toThrow();
      }

      now = rotatedAt + 24 * hour + 1_000;
      const late = await deliverOne('after the overlap');
      expect(String(late.headers['webhook-signature']).split(' ')).toHaveLength(1);
      expect(() => verifyAt(fresh, late)).not.toThrow();
      expect(() => verifyAt(old, late)).toThrow();
    } finally {
      await stop(w);
      await receiver.close();
    }
  }, 60_000);
});

describe('private addresses through the API', () => {
  const privateUrls = [
    'https://127.0.0.1/hook',
    'https://10.1.2.3/hook',
    'https://[::1]/hook',
    'https://localhost/hook',
    'https://localhost./hook',
    'https://169.254.169.254/latest',
    'https://[::ffff:10.0.0.1]/',
    'https://192.168.1.1/',
  ];

  it('refuses CreateWebhookEndpoint and UpdateWebhookEndpoint to private, loopback and link-local addresses in production, naming url, writing nothing', async () => {
    const brand = await app.seedBrand();
    const production = inProcessApi(app, { webhooks: { allowLoopback: false } }).webhooks;
    for (const url of privateUrls) {
      const error = await errorOf(production.createWebhookEndpoint({ brandId: brand.brandId, url }, bearer(brand.token)));
      expect([url, error.code]).toEqual([url, Code.InvalidArgument]);
      expect(error.rawMessage).toMatch(/url/);
    }
    expect((await production.listWebhookEndpoints({ brandId: brand.brandId }, bearer(brand.token))).endpoints).toEqual([]);
    const ok = await production.createWebhookEndpoint({ brandId: brand.brandId, url: 'https://receiver.example/hook' }, bearer(brand.token));
    expect(
      await codeOf(production.updateWebhookEndpoint({ brandId: brand.brandId, endpointId: ok.endpoint!.id, url: 'https://10.0.0.7/' }, bearer(brand.token))),
    ).toBe(Code.InvalidArgument);
    expect((await production.listWebhookEndpoints({ brandId: brand.brandId }, bearer(brand.token))).endpoints.map((e) => e.url)).toEqual([
      'https://receiver.example/hook',
    ]);

    // The allowance settings let exactly what they name through.
    const onPremises = inProcessApi(app, { webhooks: { allowLoopback: false, allowedAddresses: ['10.1.0.0/16'] } }).webhooks;
    expect(await codeOf(onPremises.createWebhookEndpoint({ brandId: brand.brandId, url: 'https://10.1.2.3/hook' }, bearer(brand.token)))).toBe('ok');
    expect(await codeOf(onPremises.createWebhookEndpoint({ brandId: brand.brandId, url: 'https://10.2.0.1/hook' }, bearer(brand.token)))).toBe(
      Code.InvalidArgument,
    );
    const dev = inProcessApi(app, { webhooks: { allowLoopback: true } }).webhooks;
    expect(await codeOf(dev.createWebhookEndpoint({ brandId: brand.brandId, url: 'https://[::1]/hook' }, bearer(brand.token)))).toBe('ok');
    expect(await codeOf(dev.createWebhookEndpoint({ brandId: brand.brandId, url: 'https://10.1.2.3/hook' }, bearer(brand.token)))).toBe(Code.InvalidArgument);
  });

  it('refuses at delivery a host name that resolves to loopback in production; delivers once the allowance is on', async () => {
    // This machine's own name resolves to a loopback address (it is not an address literal nor localhost, so only resolution tells).
    const name = hostname();
    expect((await lookup(name, { all: true })).every((a) => a.address.startsWith('127.') || a.address === '::1')).toBe(true);
    const brand = await app.seedBrand();
    const receiver = await startWebhookReceiver(() => 204);
    const api = inProcessApi(app, { webhooks: { allowLoopback: false } }).webhooks;
    const production = worker({ allowLoopback: false, allowedAddresses: [] }, app.ctx);
    try {
      const created = await api.createWebhookEndpoint({ brandId: brand.brandId, url: `https://${name}:${receiver.port}/hook` }, bearer(brand.token));
      const endpointId = created.endpoint!.id;
      const listed = await until('a refused attempt', async () => {
        const page = await api.listWebhookDeliveries({ brandId: brand.brandId, endpointId }, bearer(brand.token));
        return page.deliveries[0]?.attempts === 1 && page.deliveries[0].status === WebhookDeliveryStatus.PENDING ? page.deliveries[0] : undefined;
      });
      // The brand learns that the name resolves to a refused address, never which one.
      expect(listed.lastError).toBe(`host ${name} resolves to a refused address (private, loopback, link-local or reserved)`);
      expect(listed.lastResponseCode).toBeUndefined();
      expect(receiver.received).toEqual([]);
    } finally {
      await stop(production);
    }
    // With the test-only allowance (WEBHOOK_ALLOW_LOOPBACK) a loopback receiver gets its deliveries.
    const dev = inProcessApi(app, { webhooks: { allowLoopback: true } }).webhooks;
    const allowed = worker({ allowLoopback: true, allowedAddresses: [] }, app.ctx);
    try {
      const created = await dev.createWebhookEndpoint({ brandId: brand.brandId, url: receiver.url('/allowed') }, bearer(brand.token));
      await until(
        'the allowed delivery',
        async () => (await deliveriesOf(created.endpoint!.id)).every((d) => d.status === 'succeeded') && receiver.received.length > 0,
      );
      expect(receiver.received.every((r) => String(r.headers['webhook-id']).startsWith('msg_'))).toBe(true);
    } finally {
      await stop(allowed);
      await receiver.close();
    }
  }, 30_000);
});

describe('IPv6 forms that embed or translate an IPv4 address', () => {
  /** Each form of a refused target: the address a name may resolve to, and what it reaches. */
  const refusedForms: readonly (readonly [string, string])[] = [
    ['::7f00:1', 'IPv4-compatible 127.0.0.1'],
    ['::a00:5', 'IPv4-compatible 10.0.0.5'],
    ['::ffff:7f00:1', 'IPv4-mapped 127.0.0.1'],
    ['::ffff:a9fe:a9fe', 'IPv4-mapped 169.254.169.254'],
    ['::ffff:0:7f00:1', 'SIIT 127.0.0.1'],
    ['::ffff:0:a00:1', 'SIIT 10.0.0.1'],
    ['64:ff9b::7f00:1', 'NAT64 127.0.0.1'],
    ['64:ff9b::a9fe:a9fe', 'NAT64 169.254.169.254'],
    ['64:ff9b:1::808:808', 'NAT64 local-use prefix'],
    ['2002:7f00:1::1', '6to4 of 127.0.0.1'],
    ['2002:c0a8:101::', '6to4 of 192.168.1.1'],
    ['2001:0:4136:e378:8000:63bf:80ff:fffe', 'Teredo, client 127.0.0.1'],
    ['2001:0:a00:1:8000:63bf:3fff:fdd2', 'Teredo, server 10.0.0.1'],
    ['fec0::1', 'site-local'],
    ['::1', 'loopback'],
    ['::', 'unspecified'],
    ['fe80::1', 'link-local'],
    ['fd12:3456::1', 'unique local'],
    ['ff02::1', 'multicast'],
  ];
  /** Forms with a dotted IPv4 part (the URL parser turns them into the forms above; a resolver may answer them). */
  const dottedForms = ['::127.0.0.1', '::ffff:127.0.0.1', '::ffff:10.0.0.1', '64:ff9b::192.168.0.1'];
  /** The same forms carrying public IPv4 addresses, which stay deliverable. */
  const publicForms = ['::ffff:808:808', '64:ff9b::808:808', '2002:808:808::1', '2001:0:4136:e378:8000:63bf:f7f7:f7f7', '2606:4700:4700::1111'];

  it('refuses every form at CreateWebhookEndpoint and UpdateWebhookEndpoint, naming url, and accepts the public ones', async () => {
    const brand = await app.seedBrand();
    const production = inProcessApi(app, { webhooks: { allowLoopback: false } }).webhooks;
    const refusals = [];
    for (const [address, what] of refusedForms) {
      const error = await errorOf(production.createWebhookEndpoint({ brandId: brand.brandId, url: `https://[${address}]/hook` }, bearer(brand.token)));
      refusals.push([what, error.code, error.rawMessage]);
    }
    expect(refusals).toEqual(
      refusedForms.map(([, what]) => [what, Code.InvalidArgument, 'url: must not point at a refused address (private, loopback, link-local or reserved)']),
    );
    for (const address of dottedForms) {
      const error = await errorOf(production.createWebhookEndpoint({ brandId: brand.brandId, url: `https://[${address}]/hook` }, bearer(brand.token)));
      expect([address, error.code, error.rawMessage]).toEqual([address, Code.InvalidArgument, expect.stringMatching(/^url: /)]);
    }
    expect((await production.listWebhookEndpoints({ brandId: brand.brandId }, bearer(brand.token))).endpoints).toEqual([]);
    const ok = await production.createWebhookEndpoint({ brandId: brand.brandId, url: 'https://receiver.example/hook' }, bearer(brand.token));
    for (const [address] of refusedForms) {
      expect(
        await codeOf(
          production.updateWebhookEndpoint({ brandId: brand.brandId, endpointId: ok.endpoint!.id, url: `https://[${address}]/` }, bearer(brand.token)),
        ),
      ).toBe(Code.InvalidArgument);
    }
    for (const address of publicForms) {
      expect([
        address,
        await codeOf(production.createWebhookEndpoint({ brandId: brand.brandId, url: `https://[${address}]/hook` }, bearer(brand.token))),
      ]).toEqual([address, 'ok']);
    }
  });

  it('refuses at delivery a name resolving to any of them before connecting, and the attempt never names the address', async () => {
    const receiver = await startWebhookReceiver(() => 204);
    try {
      // Each name resolves (through the sender's resolver) to one refused form; nothing is ever sent off this machine.
      const names = new Map([...refusedForms.map(([address]) => address), ...dottedForms].map((address, i) => [`hook-${i}.receiver.example`, address]));
      const resolved: string[] = [];
      const send = createWebhookSender({
        allowLoopback: false,
        allowedAddresses: [],
        resolve: async (host) => {
          resolved.push(host);
          const address = names.get(host);
          return address === undefined
            ? []
            : [
                { address, family: 6 },
                { address: '8.8.8.8', family: 4 },
              ];
        },
      });
      for (const [name, address] of names) {
        const outcome = await send({ url: `https://${name}:${receiver.port}/hook`, headers: {}, body: '{}' });
        expect([address, outcome.status, outcome.error]).toEqual([
          address,
          null,
          `host ${name} resolves to a refused address (private, loopback, link-local or reserved)`,
        ]);
      }
      expect(resolved).toEqual([...names.keys()]);
      expect(receiver.connections()).toBe(0);
    } finally {
      await receiver.close();
    }
  });
});

describe('webhook secrets at rest', () => {
  const stored = async (endpointId: string) =>
    (
      await query<{ secret: string; previous_secret: string | null }>(app.db.em.fork(), `select secret, previous_secret from webhook_endpoints where id = ?`, [
        endpointId,
      ])
    )[0]!;

  it('stores secrets sealed (AES-256-GCM, key id w1): the columns never hold a secret, also after a rotation', async () => {
    const brand = await app.seedBrand();
    const api = inProcessApi(app, { webhooks: { allowLoopback: true } });
    const created = await api.webhooks.createWebhookEndpoint({ brandId: brand.brandId, url: 'https://receiver.example/sealed' }, bearer(brand.token));
    const first = await stored(created.endpoint!.id);
    expect(first.secret).toMatch(/^enc:v1:w1:[A-Za-z0-9_-]{16}:[A-Za-z0-9_-]+$/);
    const rotated = await api.webhooks.rotateWebhookSecret({ brandId: brand.brandId, endpointId: created.endpoint!.id }, bearer(brand.token));
    const second = await stored(created.endpoint!.id);
    expect(second.secret).toMatch(/^enc:v1:w1:/);
    expect(second.previous_secret).toBe(first.secret);
    const columns = JSON.stringify(second);
    for (const secret of [created.secret, rotated.secret]) {
      expect(columns).not.toContain(secret.slice('whsec_'.length));
      expect(columns).not.toContain(Buffer.from(secret.slice('whsec_'.length), 'base64').toString('base64url'));
      expect(columns).not.toContain(Buffer.from(secret.slice('whsec_'.length), 'base64').toString('hex'));
    }
    const dump = JSON.stringify(await query(app.db.em.fork(), `select * from mint_events where brand_id = ?`, [brand.brandId]));
    expect(dump).not.toContain(created.secret.slice(6));
    expect(dump).not.toContain(rotated.secret.slice(6));
  });

  it('seals secrets stored before sealing and re-seals under a new first key; deliveries keep verifying with the same secret', async () => {
    const brand = await app.seedBrand();
    const api = inProcessApi(app, { webhooks: { allowLoopback: true } });
    const receiver = await startWebhookReceiver(() => 204);
    try {
      const created = await api.webhooks.createWebhookEndpoint({ brandId: brand.brandId, url: receiver.url('/legacy') }, bearer(brand.token));
      const endpointId = created.endpoint!.id;
      // A row as it was stored before sealing existed: the secret in plain text.
      await run(app.db.em.fork(), `update webhook_endpoints set secret = ? where id = ?`, [created.secret, endpointId]);
      expect(await sealWebhookSecrets(app.ctx)).toBeGreaterThanOrEqual(1);
      expect((await stored(endpointId)).secret).toMatch(/^enc:v1:w1:/);
      expect(await sealWebhookSecrets(app.ctx)).toBe(0);

      // WEBHOOK_SECRET_KEYS=w2:...,w1:...: the new key first, the old one still listed.
      const rotatedKeys: UseCaseContext = {
        ...app.ctx,
        webhookSecretKeys: [{ id: 'w2', secret: new Uint8Array(Buffer.alloc(32, 42)) }, ...app.ctx.webhookSecretKeys],
      };
      expect(await sealWebhookSecrets(rotatedKeys)).toBeGreaterThanOrEqual(1);
      expect((await stored(endpointId)).secret).toMatch(/^enc:v1:w2:/);
      // A process knowing only w1 can no longer open it; one on the new keys delivers, signed with the unchanged secret.
      const w = worker({ allowLoopback: true, allowedAddresses: [] }, rotatedKeys);
      try {
        await until(
          'delivery under the new key',
          async () => (await deliveriesOf(endpointId)).every((d) => d.status === 'succeeded') && receiver.received.length > 0,
        );
      } finally {
        await stop(w);
      }
      for (const r of receiver.received) expect(() => new Webhook(created.secret).verify(r.body, headersOf(r))).not.toThrow();
    } finally {
      await receiver.close();
    }
  }, 30_000);
});
