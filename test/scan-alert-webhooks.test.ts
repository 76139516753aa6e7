// A scan alert end to end across both services: a forged serial scanned at the API's resolver
// raises scan_never_issued_serial, the executor's webhook worker delivers it to a real receiver
// (node:http on loopback), and the standardwebhooks package verifies its signature. The latency
// from the scan to the verified delivery is measured against the 60 seconds the alerts promise.

import { Writable } from 'node:stream';
import { createLogger } from '@mint/runtime';
import { createWebhookEndpoint, createWebhookSender } from '@mint/usecases';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApi, type TestApi } from '../services/api/test/support.ts';
import { startWebhookWorker, type WebhookWorker } from '../services/executor/src/webhook-worker.ts';
import { mintCompleted } from './support/pack-fixtures.ts';
import { query } from './support/sql.ts';
import { setupUseCases, type UseCaseBundle } from './support/usecases.ts';
import { startWebhookReceiver, type WebhookReceiver } from './support/webhook-receiver.ts';

let app: UseCaseBundle;
let api: TestApi;
let worker: WebhookWorker;
let receiver: WebhookReceiver;

beforeAll(async () => {
  app = await setupUseCases();
  api = await startTestApi(app);
  receiver = await startWebhookReceiver(() => 200);
  const logger = createLogger({ logLevel: 'silent' }, {}, new Writable({ write: (_c, _e, done) => done() }));
  worker = startWebhookWorker({
    ctx: app.ctx,
    logger,
    send: createWebhookSender({ allowLoopback: true, allowedAddresses: [] }),
    concurrency: 2,
    perEndpoint: 1,
    pollIntervalMs: 50,
    random: () => 0,
  });
});
afterAll(async () => {
  await worker?.stop();
  await receiver?.close();
  await api?.close();
  await app.close();
});

describe('scan alerts as signed webhooks', () => {
  it("delivers a forged serial's alert, signed and verifiable, well within 60 seconds of the scan", async () => {
    const brand = await app.seedBrand();
    await mintCompleted(app.ctx, brand, 1);
    const [{ slug }] = (await query<{ slug: string }>(app.db.em.fork(), 'select slug from brands where id = ?', [brand.brandId])) as [{ slug: string }];
    const { secret } = await createWebhookEndpoint(
      app.ctx,
      { id: brand.userId },
      { allowLoopback: true },
      {
        brandId: brand.brandId,
        url: receiver.url('/alerts'),
        eventTypes: ['scan_never_issued_serial'],
        description: 'alerts',
      },
    );
    const scannedAt = performance.now();
    const answer = await fetch(`${api.baseUrl}/r/${slug}/01/${brand.gtin}/21/FORGED-WEBHOOK`, { headers: { accept: 'application/json' } });
    expect(answer.status).toBe(200);
    const deadline = Date.now() + 60_000;
    while (receiver.received.length === 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
    const [delivered] = receiver.received;
    expect(delivered).toBeDefined();
    const latencyMs = delivered!.at - scannedAt;
    const headers = {
      'webhook-id': String(delivered!.headers['webhook-id']),
      'webhook-timestamp': String(delivered!.headers['webhook-timestamp']),
      'webhook-signature': String(delivered!.headers['webhook-signature']),
    };
    const verified = new Webhook(secret).verify(delivered!.body, headers) as { type: string; data: { entity_id: string; payload: Record<string, unknown> } };
    expect(verified.type).toBe('scan_never_issued_serial');
    expect(verified.data.entity_id).toBe(`${brand.gtin} FORGED-WEBHOOK`);
    expect(verified.data.payload).toMatchObject({ gtin: brand.gtin, serial: 'FORGED-WEBHOOK' });
    // The recorder writes within a quarter second, the worker polls every 50 ms here (500 ms by default).
    expect(latencyMs).toBeLessThan(60_000);
    console.log(`scan to verified alert webhook: ${latencyMs.toFixed(0)} ms`);
  });
});
