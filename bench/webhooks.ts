// `npm run bench:webhooks`: webhook delivery throughput. Seeds a scratch database with 10 brands,
// each with one endpoint on its own loopback receiver (node:http, answering 200 at once), and
// 10,000 events (BENCH_EVENTS) spread over them, written with their deliveries by appendEvents.
// Then, at the same concurrency (BENCH_WEBHOOK_CONCURRENCY, default 16):
//   - baseline: a bare POST loop sending the same number of bodies to the same receivers
//     (node:http, no keep-alive, no database, no signature),
//   - the executor's webhook worker: claim under a lease, sign, send, record each outcome.
// Prints the time to write the events with their deliveries, both delivery rates and their ratio,
// checks that every delivery succeeded and every receiver got each of its events once, and drops
// the database. BENCH_JSON names a file for the figures as JSON.

import { writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { Writable } from 'node:stream';
import { appendEvents, openDatabase } from '@mint/db';
import { startWebhookWorker } from '@mint/executor';
import { createLogger } from '@mint/runtime';
import { createUseCaseContext, createWebhookEndpoint, createWebhookSender, createWorkspace } from '@mint/usecases';
import { query } from '../test/support/sql.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../test/support/webhook-receiver.ts';
import { createScratchDatabase } from './scratch-database.ts';

/** The figures of one run. */
export interface WebhooksBenchResult {
  readonly events: number;
  readonly endpoints: number;
  readonly concurrency: number;
  readonly writeSeconds: number;
  readonly baselinePerSecond: number;
  readonly workerPerSecond: number;
  readonly ratio: number;
}

const events = Number(process.env['BENCH_EVENTS'] ?? 10_000);
const concurrency = Number(process.env['BENCH_WEBHOOK_CONCURRENCY'] ?? 16);
const endpoints = 10;

function post(url: string, body: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method: 'POST', agent: false, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', reject);
    req.end(body);
  });
}

async function main(): Promise<WebhooksBenchResult> {
  const scratch = await createScratchDatabase('bench_webhooks');
  const receivers: WebhookReceiver[] = [];
  const db = await openDatabase({ url: scratch.url }, { poolSize: concurrency + 4, applicationName: 'bench-webhooks' });
  try {
    const ctx = createUseCaseContext({ db, publicBaseUrl: 'http://127.0.0.1:8080' });
    const brands: string[] = [];
    for (let i = 0; i < endpoints; i++) {
      const receiver = await startWebhookReceiver();
      receivers.push(receiver);
      const brand = await createWorkspace(ctx, { name: `Bench ${i}` });
      await createWebhookEndpoint(ctx, { id: brand.id }, { allowLoopback: true }, {
        brandId: brand.id, url: receiver.url(), eventTypes: ['mint_units_activated'], description: 'bench',
      });
      brands.push(brand.id);
    }
    // The events with their deliveries, 500 per transaction.
    const written = performance.now();
    for (let i = 0; i < events; i += 500) {
      await db.em.fork().transactional((em) => appendEvents(em, new Date(), Array.from({ length: Math.min(500, events - i) }, (_, k) => ({
        brandId: brands[(i + k) % endpoints]!, eventType: 'mint_units_activated' as const, entityType: 'mint_batch' as const,
        entityId: brands[(i + k) % endpoints]!, actor: null, payload: { n: i + k },
      }))));
    }
    const writeSeconds = (performance.now() - written) / 1000;

    // Baseline: a bare POST loop at the same concurrency.
    const body = JSON.stringify({ type: 'mint_units_activated', timestamp: new Date().toISOString(), data: { n: 0 } });
    let next = 0;
    const baselineStart = performance.now();
    await Promise.all(Array.from({ length: concurrency }, async () => {
      for (let i = next++; i < events; i = next++) await post(receivers[i % endpoints]!.url('/baseline'), body);
    }));
    const baselineSeconds = (performance.now() - baselineStart) / 1000;
    for (const r of receivers) r.received.length = 0;

    // The webhook worker.
    const logger = createLogger({ logLevel: 'warn' }, {}, new Writable({ write: (_c, _e, done) => done() }));
    const workerStart = performance.now();
    const worker = startWebhookWorker({
      ctx, logger, send: createWebhookSender({ allowLoopback: true, allowedAddresses: [] }), concurrency, perEndpoint: Math.max(1, Math.ceil(concurrency / endpoints) * 2),
      pollIntervalMs: 5,
    });
    const pending = async () => Number((await query<{ n: string }>(db.em.fork(), `select count(*) as n from webhook_deliveries where status <> 'succeeded'`))[0]!.n);
    while ((await pending()) > 0) await new Promise((r) => setTimeout(r, 20));
    const workerSeconds = (performance.now() - workerStart) / 1000;
    await worker.stop();
    const distinct = receivers.reduce((n, r) => n + new Set(r.received.map((x) => String(x.headers['webhook-id']))).size, 0);
    if (distinct !== events) throw new Error(`receivers got ${distinct} distinct deliveries of ${events}`);

    const result: WebhooksBenchResult = {
      events, endpoints, concurrency, writeSeconds,
      baselinePerSecond: events / baselineSeconds, workerPerSecond: events / workerSeconds, ratio: baselineSeconds / workerSeconds,
    };
    console.log(`webhooks: ${events.toLocaleString('en')} events to ${endpoints} endpoints, concurrency ${concurrency}`);
    console.log(`  events written with their deliveries: ${writeSeconds.toFixed(2)} s (${Math.round(events / writeSeconds).toLocaleString('en')} events/s)`);
    console.log(`  baseline, bare POST loop:             ${Math.round(result.baselinePerSecond).toLocaleString('en')} POST/s`);
    console.log(`  webhook worker (claim, sign, record): ${Math.round(result.workerPerSecond).toLocaleString('en')} deliveries/s (${(result.ratio * 100).toFixed(0)} % of the baseline)`);
    if (process.env['BENCH_JSON']) writeFileSync(process.env['BENCH_JSON'], JSON.stringify(result));
    return result;
  } finally {
    await db.close(true);
    for (const r of receivers) await r.close();
    await scratch.drop();
  }
}

await main();
