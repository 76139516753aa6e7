// `npm run bench:webhooks`: webhook delivery throughput. Seeds a scratch database with 10 brands,
// each with one endpoint on its own loopback receiver (node:http, answering 200 at once), and
// 10,000 events (BENCH_EVENTS) spread over them, written by appendEvents (each with its fan-out
// marker: the worker writes the deliveries, then sends them).
// Then, at the same concurrency (BENCH_WEBHOOK_CONCURRENCY, default 16):
//   - baseline: a bare POST loop sending the same number of bodies to the same receivers
//     (node:http, no keep-alive, no database, no signature),
//   - the executor's webhook worker: claim under a lease, sign, send, record each outcome.
// Then the time from commit to delivery: events committed one per transaction at a steady rate
// (BENCH_WEBHOOK_RATE per second, default 100, BENCH_LATENCY_EVENTS of them, default 1,000) while
// the worker (fan-out, then claims) runs at the executor's default poll interval (BENCH_WEBHOOK_POLL_MS, default 500 ms,
// WEBHOOK_POLL_MS's default), each latency taken from the commit's return to the receiver having
// the whole body; the baseline POSTs each body straight after its commit (no queue, no claim).
// BENCH_RUNS runs (default 1) alternate which side goes first. Prints the time to write the events
// with their deliveries, both delivery rates and their ratio, p50/p99 commit -> delivery against the
// baseline's, checks that every delivery succeeded and every receiver got each of its events once,
// and drops the database. BENCH_JSON names a file for the figures as JSON.

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

/** Percentiles of a latency sample, in ms. */
export interface Latency {
  readonly p50: number;
  readonly p99: number;
  readonly max: number;
}

/** The figures of one run. */
export interface WebhooksRun {
  readonly writeSeconds: number;
  readonly baselinePerSecond: number;
  readonly workerPerSecond: number;
  /** Commit -> the receiver has the body, through the worker. */
  readonly commitToDelivery: Latency;
  /** Commit -> the receiver has the body, POSTed straight after the commit. */
  readonly baselineCommitToDelivery: Latency;
}

/** The figures of all runs. */
export interface WebhooksBenchResult {
  readonly events: number;
  readonly endpoints: number;
  readonly concurrency: number;
  readonly latencyEvents: number;
  readonly latencyRate: number;
  readonly pollMs: number;
  readonly runs: readonly WebhooksRun[];
}

const events = Number(process.env['BENCH_EVENTS'] ?? 10_000);
const concurrency = Number(process.env['BENCH_WEBHOOK_CONCURRENCY'] ?? 16);
const latencyEvents = Number(process.env['BENCH_LATENCY_EVENTS'] ?? 1_000);
const latencyRate = Number(process.env['BENCH_WEBHOOK_RATE'] ?? 100);
const pollMs = Number(process.env['BENCH_WEBHOOK_POLL_MS'] ?? 500);
const runCount = Number(process.env['BENCH_RUNS'] ?? 1);
const endpoints = 10;

function post(url: string, body: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      { method: 'POST', agent: false, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

function latencyOf(samples: number[]): Latency {
  const sorted = [...samples].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)]!;
  return { p50: at(0.5), p99: at(0.99), max: sorted[sorted.length - 1]! };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const ms = (l: Latency) => `p50 ${l.p50.toFixed(1)} ms, p99 ${l.p99.toFixed(1)} ms, max ${l.max.toFixed(1)} ms`;

async function main(): Promise<WebhooksBenchResult> {
  const scratch = await createScratchDatabase('bench_webhooks');
  const receivers: WebhookReceiver[] = [];
  const db = await openDatabase({ url: scratch.url }, { poolSize: concurrency + 4, applicationName: 'bench-webhooks' });
  try {
    const ctx = createUseCaseContext({ db, publicBaseUrl: 'http://127.0.0.1:8080' });
    const logger = createLogger(
      { logLevel: (process.env['BENCH_LOG'] as 'warn' | undefined) ?? 'warn' },
      {},
      new Writable({
        write: (c, _e, done) => {
          if (process.env['BENCH_LOG']) process.stderr.write(c);
          done();
        },
      }),
    );
    const send = createWebhookSender({ allowLoopback: true, allowedAddresses: [] });
    const brands: string[] = [];
    for (let i = 0; i < endpoints; i++) {
      const receiver = await startWebhookReceiver();
      receivers.push(receiver);
      const brand = await createWorkspace(ctx, { name: `Bench ${i}` });
      await createWebhookEndpoint(
        ctx,
        { id: brand.id },
        { allowLoopback: true },
        {
          brandId: brand.id,
          url: receiver.url(),
          eventTypes: ['mint_units_activated'],
          description: 'bench',
        },
      );
      brands.push(brand.id);
    }
    // Deliveries not yet sent, and events whose deliveries the worker's fan-out has yet to write.
    const pending = async () =>
      Number(
        (
          await query<{ n: string }>(
            db.em.fork(),
            `select (select count(*) from webhook_deliveries where status <> 'succeeded') + (select count(*) from webhook_fanouts) as n`,
          )
        )[0]!.n,
      );
    const eventOf = (n: number) => ({
      brandId: brands[n % endpoints]!,
      eventType: 'mint_units_activated' as const,
      entityType: 'mint_batch' as const,
      entityId: brands[n % endpoints]!,
      actor: null,
      payload: { n },
    });
    const clearReceivers = () => {
      for (const r of receivers) r.received.length = 0;
    };
    let serial = 0;

    /** Throughput: the backlog written first, then drained by a bare POST loop and by the worker. */
    const throughput = async (baselineFirst: boolean) => {
      const first = serial;
      const written = performance.now();
      for (let i = 0; i < events; i += 500) {
        await db.em.fork().transactional((em) =>
          appendEvents(
            em,
            new Date(),
            Array.from({ length: Math.min(500, events - i) }, (_, k) => eventOf(serial + i + k)),
          ),
        );
      }
      serial += events;
      const writeSeconds = (performance.now() - written) / 1000;
      const baseline = async () => {
        const body = JSON.stringify({ type: 'mint_units_activated', timestamp: new Date().toISOString(), data: { n: 0 } });
        let next = 0;
        const started = performance.now();
        await Promise.all(
          Array.from({ length: concurrency }, async () => {
            for (let i = next++; i < events; i = next++) await post(receivers[i % endpoints]!.url('/baseline'), body);
          }),
        );
        clearReceivers();
        return (performance.now() - started) / 1000;
      };
      const worker = async () => {
        const started = performance.now();
        const w = startWebhookWorker({ ctx, logger, send, concurrency, perEndpoint: Math.max(1, Math.ceil(concurrency / endpoints) * 2), pollIntervalMs: 5 });
        while ((await pending()) > 0) await sleep(20);
        const seconds = (performance.now() - started) / 1000;
        await w.stop();
        const ns = new Set(receivers.flatMap((r) => r.received.map((x) => String(x.headers['webhook-id']))));
        if (ns.size !== events) throw new Error(`receivers got ${ns.size} distinct deliveries of ${events} (from event ${first})`);
        clearReceivers();
        return seconds;
      };
      const [baselineSeconds, workerSeconds] = baselineFirst
        ? [await baseline(), await worker()]
        : await (async () => {
            const w = await worker();
            return [await baseline(), w];
          })();
      return { writeSeconds, baselinePerSecond: events / baselineSeconds, workerPerSecond: events / workerSeconds };
    };

    /** Commit -> delivery at a steady rate, through the worker or (baseline) POSTed straight after the commit. */
    const commitToDelivery = async (through: 'worker' | 'baseline'): Promise<Latency> => {
      const committed = new Map<number, number>();
      const w =
        through === 'worker'
          ? startWebhookWorker({ ctx, logger, send, concurrency, perEndpoint: Math.max(1, Math.ceil(concurrency / endpoints) * 2), pollIntervalMs: pollMs })
          : null;
      const posts: Promise<number>[] = [];
      const started = performance.now();
      for (let i = 0; i < latencyEvents; i++) {
        const due = started + (i * 1000) / latencyRate;
        if (due > performance.now()) await sleep(due - performance.now());
        const n = serial++;
        const at = new Date();
        await db.em.fork().transactional((em) => appendEvents(em, at, [eventOf(n)]));
        committed.set(n, performance.now());
        if (w === null) {
          // The baseline's deliveries are not the worker's: their markers go and any delivery is marked done, so the worker phases do not send them.
          posts.push(
            post(
              receivers[n % endpoints]!.url('/direct'),
              JSON.stringify({ type: 'mint_units_activated', timestamp: at.toISOString(), data: { payload: { n } } }),
            ),
          );
        }
      }
      await Promise.all(posts);
      if (w !== null) {
        while ((await pending()) > 0) await sleep(20);
        await w.stop();
      } else {
        await db.em.fork().execute(`delete from webhook_fanouts`);
        await db.em.fork().execute(`update webhook_deliveries set status = 'succeeded' where status = 'pending'`);
      }
      const samples: number[] = [];
      for (const r of receivers) {
        for (const x of r.received) {
          const n = (JSON.parse(x.body) as { data: { payload: { n: number } } }).data.payload.n;
          const t = committed.get(n);
          if (t !== undefined) samples.push(x.at - t);
        }
      }
      clearReceivers();
      if (samples.length !== latencyEvents) throw new Error(`${through}: ${samples.length} of ${latencyEvents} events arrived`);
      return latencyOf(samples);
    };

    const runs: WebhooksRun[] = [];
    for (let run = 0; run < runCount; run++) {
      const baselineFirst = run % 2 === 0;
      const rates = await throughput(baselineFirst);
      const [baselineCommitToDelivery, workerLatency] = baselineFirst
        ? [await commitToDelivery('baseline'), await commitToDelivery('worker')]
        : await (async () => {
            const w = await commitToDelivery('worker');
            return [await commitToDelivery('baseline'), w];
          })();
      const result: WebhooksRun = { ...rates, commitToDelivery: workerLatency, baselineCommitToDelivery };
      runs.push(result);
      console.log(
        `run ${run + 1}: ${Math.round(result.workerPerSecond)} deliveries/s vs ${Math.round(result.baselinePerSecond)} POST/s; commit -> delivery ${ms(workerLatency)} (baseline ${ms(baselineCommitToDelivery)})`,
      );
    }

    const result: WebhooksBenchResult = { events, endpoints, concurrency, latencyEvents, latencyRate, pollMs, runs };
    console.log(`webhooks: ${events.toLocaleString('en')} events to ${endpoints} endpoints, concurrency ${concurrency}, ${runs.length} run(s)`);
    for (const r of runs) {
      console.log(
        `  events written (with their fan-out markers): ${r.writeSeconds.toFixed(2)} s (${Math.round(events / r.writeSeconds).toLocaleString('en')} events/s)`,
      );
      console.log(`  baseline, bare POST loop:             ${Math.round(r.baselinePerSecond).toLocaleString('en')} POST/s`);
      console.log(
        `  webhook worker (claim, sign, record): ${Math.round(r.workerPerSecond).toLocaleString('en')} deliveries/s (${((r.workerPerSecond / r.baselinePerSecond) * 100).toFixed(0)} % of the baseline)`,
      );
      console.log(
        `  commit -> delivery at ${latencyRate}/s, poll ${pollMs} ms: ${ms(r.commitToDelivery)}; baseline (POST after commit): ${ms(r.baselineCommitToDelivery)}; p99 ratio ${(r.commitToDelivery.p99 / r.baselineCommitToDelivery.p99).toFixed(1)}x`,
      );
    }
    if (process.env['BENCH_JSON']) writeFileSync(process.env['BENCH_JSON'], JSON.stringify(result));
    return result;
  } finally {
    await db.close(true);
    for (const r of receivers) await r.close();
    await scratch.drop();
  }
}

await main();
