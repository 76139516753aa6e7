// Webhook delivery end to end: real PostgreSQL, the executor's webhook worker and real receivers
// (node:http on loopback) that verify every delivery with the standardwebhooks package.

import { Writable } from 'node:stream';
import { appendEvents } from '@mint/db';
import { createLogger } from '@mint/runtime';
import {
  createWebhookEndpoint,
  createWebhookSender,
  deleteWebhookEndpointOf,
  listMintEvents,
  moveSerials,
  processMintJobBatch,
  rotateWebhookSecret,
  updateWebhookEndpointOf,
  type UseCaseContext,
} from '@mint/usecases';
import type { RetryPolicy } from '@mint/domain';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { query } from '../../../test/support/sql.ts';
import { setupUseCases, submitSerial, type SeededBrand, type UseCaseBundle } from '../../../test/support/usecases.ts';
import { startWebhookReceiver, type ReceivedWebhook } from '../../../test/support/webhook-receiver.ts';
import { startWebhookWorker, type WebhookWorker } from '../src/webhook-worker.ts';

let app: UseCaseBundle;
let worker: WebhookWorker;
/** A short schedule: 300 ms doubling to 2 s, exact. */
const shortRetry: RetryPolicy = { baseMs: 300, capMs: 2_000, jitter: 0, maxAttempts: 50 };
const logger = createLogger({ logLevel: 'silent' }, {}, new Writable({ write: (_c, _e, done) => done() }));
const dev = { allowLoopback: true };

beforeAll(async () => {
  app = await setupUseCases();
  worker = startWebhookWorker({
    ctx: app.ctx,
    logger,
    send: createWebhookSender({ allowLoopback: true, allowedAddresses: [] }),
    concurrency: 8,
    perEndpoint: 2,
    pollIntervalMs: 20,
    // The circuit breaker stays closed here, so the retry schedule is what spaces the attempts (test/faults/webhook-fairness.test.ts tests it).
    policy: shortRetry,
    breaker: { threshold: 1_000, basePauseMs: 1, maxPauseMs: 1 },
  });
});
afterAll(async () => {
  await worker.stop();
  await app.close();
});

async function until(what: string, check: () => Promise<boolean> | boolean, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

async function deliveries(endpointId: string) {
  return query<{ id: string; status: string; attempts: number; event_id: string }>(
    app.db.em.fork(),
    `select id, status, attempts, event_id from webhook_deliveries where endpoint_id = ?`,
    [endpointId],
  );
}

/** Whether the endpoint has `n` deliveries, all succeeded (the worker's fan-out writes them after the events' commit). */
async function delivered(endpointId: string, n: number): Promise<boolean> {
  const rows = await deliveries(endpointId);
  return rows.length === n && rows.every((d) => d.status === 'succeeded');
}

async function mintOne(ctx: UseCaseContext, brand: SeededBrand) {
  const { mintJobId } = await submitSerial(ctx, brand, 3);
  await processMintJobBatch(ctx, brand.brandId, mintJobId, null);
}

const headersOf = (r: ReceivedWebhook) => ({
  'webhook-id': String(r.headers['webhook-id']),
  'webhook-timestamp': String(r.headers['webhook-timestamp']),
  'webhook-signature': String(r.headers['webhook-signature']),
});

describe('webhook delivery', () => {
  it('delivers every event, each verified with standardwebhooks, also across a secret rotation', async () => {
    const receiver = await startWebhookReceiver();
    const brand = await app.seedBrand();
    const { endpoint, secret } = await createWebhookEndpoint(app.ctx, { id: brand.userId }, dev, {
      brandId: brand.brandId,
      url: receiver.url(),
      eventTypes: [],
      description: '',
    });
    try {
      await mintOne(app.ctx, brand);
      await until('first deliveries', () => delivered(endpoint.id, 7));
      const before = receiver.received.length;
      expect(before).toBe((await deliveries(endpoint.id)).length);
      for (const r of receiver.received) {
        const verified = new Webhook(secret).verify(r.body, headersOf(r)) as {
          type: string;
          timestamp: string;
          data: { event_type: string; brand_id: string };
        };
        expect(verified.type).toBe(verified.data.event_type);
        expect(verified.data.brand_id).toBe(brand.brandId);
        expect(Number.isNaN(Date.parse(verified.timestamp))).toBe(false);
        expect(r.headers['content-type']).toBe('application/json');
      }
      const types = receiver.received.map((r) => (JSON.parse(r.body) as { type: string }).type).sort();
      expect(types).toEqual([
        'mint_batch_created',
        'mint_batch_status_changed',
        'mint_job_completed',
        'mint_job_queued',
        'mint_job_started',
        'mint_units_created',
        'webhook_endpoint_created',
      ]);

      const rotated = await rotateWebhookSecret(app.ctx, { id: brand.userId }, brand.brandId, endpoint.id);
      await mintOne(app.ctx, brand);
      await until('deliveries after rotation', () => delivered(endpoint.id, 14));
      const after = receiver.received.slice(before);
      expect(after.length).toBe(7);
      for (const r of after) {
        // Both signatures are sent during the overlap: receivers on the old and on the new secret verify.
        expect(() => new Webhook(rotated.secret).verify(r.body, headersOf(r))).not.toThrow();
        expect(() => new Webhook(secret).verify(r.body, headersOf(r))).not.toThrow();
        expect(String(r.headers['webhook-signature']).split(' ')).toHaveLength(2);
      }
      expect(() => new Webhook(`whsec_${Buffer.alloc(32, 1).toString('base64')}`).verify(after[0]!.body, headersOf(after[0]!))).toThrow();
    } finally {
      await deleteWebhookEndpointOf(app.ctx, { id: brand.userId }, brand.brandId, endpoint.id);
      await receiver.close();
    }
  }, 30_000);

  it('delivers every event exactly once by webhook-id after the receiver was down, retries spaced by the schedule', async () => {
    let up = false;
    const seen = new Set<string>();
    const processed: string[] = [];
    const receiver = await startWebhookReceiver((r) => {
      if (!up) return 503;
      const id = String(r.headers['webhook-id']);
      if (!seen.has(id)) processed.push(id);
      seen.add(id);
      return 204;
    });
    const brand = await app.seedBrand();
    const { endpoint, secret } = await createWebhookEndpoint(app.ctx, { id: brand.userId }, dev, {
      brandId: brand.brandId,
      url: receiver.url(),
      eventTypes: [],
      description: '',
    });
    try {
      await mintOne(app.ctx, brand);
      await new Promise((r) => setTimeout(r, 2_500));
      expect(processed).toEqual([]);
      up = true;
      await until('every delivery', () => delivered(endpoint.id, 7));
      const rows = await deliveries(endpoint.id);
      expect(rows).toHaveLength(7);
      // Every event arrived once after deduplication by webhook-id, and its signature verifies.
      expect(processed.sort()).toEqual(rows.map((d) => `msg_${d.id.replaceAll('-', '')}`).sort());
      for (const r of receiver.received) expect(() => new Webhook(secret).verify(r.body, headersOf(r))).not.toThrow();
      // The same webhook-id on every attempt, attempts spaced 300, 600, 1200 ms ... (exact schedule, no jitter).
      const byId = new Map<string, number[]>();
      for (const r of receiver.received) byId.set(String(r.headers['webhook-id']), [...(byId.get(String(r.headers['webhook-id'])) ?? []), r.at]);
      for (const times of byId.values()) {
        expect(times.length).toBeGreaterThanOrEqual(4);
        for (let i = 1; i < times.length; i++) {
          const expected = Math.min(shortRetry.capMs, shortRetry.baseMs * 2 ** (i - 1));
          expect(times[i]! - times[i - 1]!).toBeGreaterThanOrEqual(expected - 30);
          expect(times[i]! - times[i - 1]!).toBeLessThan(expected + 1_000);
        }
      }
    } finally {
      await deleteWebhookEndpointOf(app.ctx, { id: brand.userId }, brand.brandId, endpoint.id);
      await receiver.close();
    }
  }, 30_000);

  it("does not let a slow receiver (5 s an answer) delay another brand's deliveries", async () => {
    const slow = await startWebhookReceiver(() => new Promise<number>((resolve) => setTimeout(() => resolve(200), 5_000)));
    const fast = await startWebhookReceiver();
    const a = await app.seedBrand();
    const b = await app.seedBrand();
    const slowHook = await createWebhookEndpoint(app.ctx, { id: a.userId }, dev, { brandId: a.brandId, url: slow.url(), eventTypes: [], description: '' });
    try {
      await mintOne(app.ctx, a);
      await until('the slow receiver busy', () => slow.inFlight().now === 2);
      const started = performance.now();
      const fastHook = await createWebhookEndpoint(app.ctx, { id: b.userId }, dev, { brandId: b.brandId, url: fast.url(), eventTypes: [], description: '' });
      await mintOne(app.ctx, b);
      await until("the other brand's deliveries", () => delivered(fastHook.endpoint.id, 7), 4_000);
      expect(performance.now() - started).toBeLessThan(2_000);
      expect(fast.received).toHaveLength(7);
      // The slow endpoint never had more than its two slots, and is still working through its backlog.
      expect(slow.inFlight().max).toBe(2);
      expect((await deliveries(slowHook.endpoint.id)).filter((d) => d.status === 'succeeded').length).toBeLessThan(7);
      await deleteWebhookEndpointOf(app.ctx, { id: b.userId }, b.brandId, fastHook.endpoint.id);
    } finally {
      await deleteWebhookEndpointOf(app.ctx, { id: a.userId }, a.brandId, slowHook.endpoint.id);
      await fast.close();
      await slow.close();
    }
  }, 30_000);

  it('disables an endpoint that answers 410 Gone, with an audit event, and stops delivering to it', async () => {
    const receiver = await startWebhookReceiver(() => 410);
    const brand = await app.seedBrand();
    const { endpoint } = await createWebhookEndpoint(app.ctx, { id: brand.userId }, dev, {
      brandId: brand.brandId,
      url: receiver.url(),
      eventTypes: [],
      description: '',
    });
    try {
      await until('the endpoint disabled', async () => {
        const [row] = await query<{ enabled: boolean; disabled_reason: string | null }>(
          app.db.em.fork(),
          `select enabled, disabled_reason from webhook_endpoints where id = ?`,
          [endpoint.id],
        );
        return row!.enabled === false && row!.disabled_reason === 'gone';
      });
      const events = await listMintEvents(app.ctx, brand.brandId, {
        limit: 10,
        cursor: null,
        eventType: 'webhook_endpoint_disabled',
        entityType: null,
        entityId: endpoint.id,
      });
      expect(events.items.map((e) => [e.payload['reason'], e.payload['status_code'], e.actor])).toEqual([['gone', 410, null]]);
      expect((await deliveries(endpoint.id)).map((d) => d.status)).toEqual(['failed']);
      await mintOne(app.ctx, brand);
      await new Promise((r) => setTimeout(r, 300));
      expect(receiver.received).toHaveLength(1);
    } finally {
      await receiver.close();
    }
  }, 30_000);

  it('parks the deliveries of an endpoint its brand disabled, and sends them once it is enabled again', async () => {
    let up = false;
    const receiver = await startWebhookReceiver(() => (up ? 200 : 503));
    const brand = await app.seedBrand();
    const actor = { id: brand.userId };
    const { endpoint } = await createWebhookEndpoint(app.ctx, actor, dev, { brandId: brand.brandId, url: receiver.url(), eventTypes: [], description: '' });
    try {
      await mintOne(app.ctx, brand);
      await until('first attempts', () => receiver.received.length >= 7);
      await updateWebhookEndpointOf(app.ctx, actor, dev, { brandId: brand.brandId, endpointId: endpoint.id, enabled: false });
      await until(
        'retries parked',
        async () =>
          (
            await query<{ n: string }>(
              app.db.em.fork(),
              `select count(*) as n from webhook_deliveries where endpoint_id = ? and next_attempt_at > now() + interval '1000 years'`,
              [endpoint.id],
            )
          )[0]!.n === '7',
      );
      const seen = receiver.received.length;
      await new Promise((r) => setTimeout(r, 700));
      expect(receiver.received.length).toBe(seen);
      up = true;
      await updateWebhookEndpointOf(app.ctx, actor, dev, { brandId: brand.brandId, endpointId: endpoint.id, enabled: true });
      await until('every delivery after enabling', () => delivered(endpoint.id, 8));
      expect((await deliveries(endpoint.id)).length).toBe(8);
    } finally {
      await deleteWebhookEndpointOf(app.ctx, actor, brand.brandId, endpoint.id);
      await receiver.close();
    }
  }, 30_000);

  it("writes no delivery for a rolled-back change, and a committed one's deliveries through the worker's fan-out", async () => {
    const brand = await app.seedBrand();
    const { endpoint } = await createWebhookEndpoint(
      app.ctx,
      { id: brand.userId },
      { allowLoopback: false },
      {
        brandId: brand.brandId,
        url: 'https://receiver.invalid/hook',
        eventTypes: ['mint_units_activated'],
        description: '',
      },
    );
    const event = {
      brandId: brand.brandId,
      eventType: 'mint_units_activated',
      entityType: 'mint_batch',
      entityId: brand.productId,
      actor: null,
      payload: {},
    } as const;
    await expect(
      app.db.em.fork().transactional(async (em) => {
        await appendEvents(em, new Date(), [event]);
        throw new Error('roll back');
      }),
    ).rejects.toThrow('roll back');
    const count = async () =>
      (
        await query<{ n: string }>(
          app.db.em.fork(),
          `select count(*) as n from webhook_deliveries where endpoint_id = ? and event_type = 'mint_units_activated'`,
          [endpoint.id],
        )
      )[0]!.n;
    expect(await count()).toBe('0');
    const markers = async () =>
      (await query<{ n: string }>(app.db.em.fork(), `select count(*) as n from webhook_fanouts where brand_id = ?`, [brand.brandId]))[0]!.n;
    await app.db.em.fork().transactional((em) => appendEvents(em, new Date(), [event, event]));
    // The worker's fan-out writes the committed events' deliveries after the commit, and only theirs.
    await until("the committed events' deliveries", async () => (await count()) === '2');
    await new Promise((r) => setTimeout(r, 200));
    expect(await count()).toBe('2');
    expect(await markers()).toBe('0');
    await deleteWebhookEndpointOf(app.ctx, { id: brand.userId }, brand.brandId, endpoint.id);
  });
});

describe('lifecycle moves as webhooks', () => {
  it('delivers a serial move to an endpoint subscribed to it exactly once, with its counts, and nothing for its replay', async () => {
    const receiver = await startWebhookReceiver();
    const brand = await app.seedBrand();
    const { endpoint, secret } = await createWebhookEndpoint(app.ctx, { id: brand.userId }, dev, {
      brandId: brand.brandId,
      url: receiver.url(),
      eventTypes: ['mint_units_moved', 'serial_move_completed'],
      description: '',
    });
    try {
      const { mintJobId, mintBatchId } = await submitSerial(app.ctx, brand, 5);
      await processMintJobBatch(app.ctx, brand.brandId, mintJobId, null);
      const serials = (
        await query<{ serial: string }>(app.db.em.fork(), 'select serial from mint_units where mint_batch_id = ? order by seq', [mintBatchId])
      ).map((r) => r.serial);
      const input = {
        brandId: brand.brandId,
        idempotencyKey: 'recall-3',
        action: 'decommission',
        reason: 'recalled',
        target: { serials: serials.slice(0, 3) },
      } as const;
      const moved = await moveSerials(app.ctx, { id: brand.userId }, input);
      expect(moved).toMatchObject({ moved: 3, refused: 0 });
      // A replay under the same key moves nothing and writes no event, so nothing more is delivered.
      expect(await moveSerials(app.ctx, { id: brand.userId }, input)).toMatchObject({ replayed: true });
      await until('the move delivered', () => delivered(endpoint.id, 2));
      await new Promise((r) => setTimeout(r, 500));
      expect(receiver.received).toHaveLength(2);
      const bodies = receiver.received.map(
        (r) => new Webhook(secret).verify(r.body, headersOf(r)) as { type: string; data: { payload: Record<string, unknown> } },
      );
      const byType = new Map(bodies.map((b) => [b.type, b.data.payload]));
      expect([...byType.keys()].sort()).toEqual(['mint_units_moved', 'serial_move_completed']);
      expect(byType.get('mint_units_moved')).toMatchObject({
        move_id: moved.moveId,
        action: 'decommission',
        reason: 'recalled',
        count: 3,
        serials: serials.slice(0, 3),
      });
      expect(byType.get('serial_move_completed')).toMatchObject({ moved: 3, refused: 0 });
    } finally {
      await receiver.close();
      await deleteWebhookEndpointOf(app.ctx, { id: brand.userId }, brand.brandId, endpoint.id);
    }
  });
});

describe('webhook sender network rules', () => {
  it('refuses private, loopback and link-local addresses in production mode before connecting; an allow-list lifts it', async () => {
    const receiver = await startWebhookReceiver();
    try {
      const production = createWebhookSender({ allowLoopback: false, allowedAddresses: [] });
      const send = (url: string) => production({ url, headers: {}, body: '{}' });
      for (const url of [
        `https://127.0.0.1:${receiver.port}/`,
        `https://localhost:${receiver.port}/`,
        'https://10.1.2.3/',
        'https://192.168.1.1/',
        'https://169.254.169.254/latest',
        'https://[::1]/',
        'https://[::ffff:127.0.0.1]/',
        'https://[fd00::1]/',
        'https://[fe80::1]/',
        'https://0.0.0.0/',
      ]) {
        const outcome = await send(url);
        expect({ url, status: outcome.status, error: outcome.error }).toEqual({
          url,
          status: null,
          error: expect.stringMatching(/refused address \(private, loopback, link-local or reserved\)$/),
        });
      }
      expect((await send(receiver.url())).error).toMatch(/url refused/);
      expect(receiver.connections()).toBe(0);
      const onPremises = createWebhookSender({ allowLoopback: false, allowedAddresses: ['127.0.0.0/8'] });
      const allowed = await onPremises({ url: `https://127.0.0.1:${receiver.port}/`, headers: {}, body: '{}' });
      // Allowed, it connects (and fails the TLS handshake with this plain HTTP receiver).
      expect(allowed.error).toMatch(/request failed/);
      expect(receiver.connections()).toBe(1);
    } finally {
      await receiver.close();
    }
  });

  it('follows no redirect: a 302 is a failed attempt and its target is never called', async () => {
    const target = await startWebhookReceiver();
    const redirecting = await startWebhookReceiver((_r, res) => {
      res.writeHead(302, { location: target.url() });
      res.end();
    });
    try {
      const outcome = await createWebhookSender({ allowLoopback: true, allowedAddresses: [] })({
        url: redirecting.url(),
        headers: {},
        body: '{}',
      });
      expect(outcome.status).toBe(302);
      await new Promise((r) => setTimeout(r, 100));
      expect(target.received).toHaveLength(0);
      expect(redirecting.received).toHaveLength(1);
    } finally {
      await target.close();
      await redirecting.close();
    }
  });

  it('reads at most 4 KiB of an answer and gives up after the time limit', async () => {
    const big = await startWebhookReceiver((_r, res) => {
      res.writeHead(500);
      res.end('x'.repeat(1_000_000));
    });
    const silent = await startWebhookReceiver(() => new Promise<number>((resolve) => setTimeout(() => resolve(200), 2_000)));
    try {
      const send = createWebhookSender({ allowLoopback: true, allowedAddresses: [], timeoutMs: 300 });
      const large = await send({ url: big.url(), headers: {}, body: '{}' });
      expect(large.status).toBe(500);
      expect(large.error!.length).toBeLessThanOrEqual(4096);
      const slow = await send({ url: silent.url(), headers: {}, body: '{}' });
      expect(slow).toMatchObject({ status: null, error: 'no answer within 300 ms' });
      expect(slow.durationMs).toBeLessThan(1_000);
    } finally {
      await big.close();
      await silent.close();
    }
  });
});
