// What an operator sees on the executor's HTTP port (EXECUTOR_HTTP_PORT) after a mint: units
// minted, chunk durations, lease renewals and losses, jobs by status, the outbox lag and the
// consumer's pending messages; /readyz following the database and NATS; jobId on the log lines.

import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectJetStreamBus, type JobBus, type JobMessage } from '@mint/bus';
import type { Database } from '@mint/db';
import { run } from '../../../test/support/sql.ts';
import { countJobsByStatus, createLogger, createMetrics, readinessProbe, type Metrics } from '@mint/runtime';
import { claimMintJob, outboxLag } from '@mint/usecases';
import { startExecutor, type Executor } from '../src/executor.ts';
import { startMetricsServer, type MetricsServer } from '../src/metrics-server.ts';
import { runMintJob } from '../src/mint-worker.ts';
import { startNatsServer, freshStreamNames, type NatsServer } from '../../../test/support/nats.ts';
import { scrape, sampleValue } from '../../../test/support/prometheus.ts';
import { setupUseCases, submitSerial, type SeededBrand, type UseCaseBundle } from '../../../test/support/usecases.ts';
import { jobState, waitUntil } from './executor-process.ts';

let app: UseCaseBundle;
let brand: SeededBrand;
let nats: NatsServer;
let bus: JobBus;
let metrics: Metrics;
let server: MetricsServer;
let executor: Executor;
let base: string;
const logs: Record<string, unknown>[] = [];

beforeAll(async () => {
  app = await setupUseCases();
  brand = await app.seedBrand();
  nats = await startNatsServer();
  bus = await connectJetStreamBus({ url: nats.url, ...freshStreamNames(), ackWaitMs: 5000 });
  const destination = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString().split('\n')) if (line.trim() !== '') logs.push(JSON.parse(line) as Record<string, unknown>);
      done();
    },
  });
  const logger = createLogger({ logLevel: 'info' }, { service: 'executor-test' }, destination);
  metrics = createMetrics({ jobsByStatus: () => countJobsByStatus(app.db), outboxLag: () => outboxLag(app.ctx), consumerPending: () => bus.pending('mint') });
  server = await startMetricsServer({ port: 0, host: '127.0.0.1', metrics, readiness: readinessProbe({ db: app.db, bus }, 1000), logger });
  base = `http://127.0.0.1:${server.port}`;
  executor = startExecutor({ ctx: app.ctx, bus, logger, concurrency: 1, chunkSize: 1000, writers: 1, relayIntervalMs: 50, metrics });
});

afterAll(async () => {
  await executor?.stop();
  await server?.close();
  await bus?.close();
  await nats?.stop();
  await app?.close();
});

async function submit(requestedQuantity: number): Promise<string> {
  return (await submitSerial(app.ctx, brand, requestedQuantity)).mintJobId;
}

describe('the executor HTTP port', () => {
  it('exposes units minted, chunk durations, lease renewals, jobs by status, outbox lag and consumer pending after a mint', async () => {
    const jobId = await submit(2500);
    await waitUntil('the job to complete', async () => (await jobState(app.db, jobId)).status === 'COMPLETED');

    const samples = await scrape(`${base}/metrics`);
    expect(sampleValue(samples, 'minting_units_minted_total')).toBe(2500);
    // 2,500 units in chunks of at most 1,000: a lead of 50, then three of 816 or 817, each committed under a renewed lease.
    expect(sampleValue(samples, 'minting_chunk_duration_seconds_count')).toBe(4);
    expect(sampleValue(samples, 'minting_chunk_duration_seconds_bucket', { le: '+Inf' })).toBe(4);
    expect(sampleValue(samples, 'minting_chunk_duration_seconds_sum')).toBeGreaterThan(0);
    expect(sampleValue(samples, 'minting_lease_renewals_total')).toBe(4);
    expect(sampleValue(samples, 'minting_lease_losses_total')).toBe(0);
    expect(sampleValue(samples, 'minting_jobs', { status: 'COMPLETED' })).toBe(1);
    expect(sampleValue(samples, 'minting_jobs', { status: 'PROCESSING' })).toBe(0);
    expect(sampleValue(samples, 'minting_outbox_pending_messages')).toBe(0);
    expect(sampleValue(samples, 'minting_outbox_oldest_age_seconds')).toBe(0);
    expect(sampleValue(samples, 'minting_consumer_pending_messages')).toBe(0);

    // Every line the worker wrote about the job names it.
    const jobLines = logs.filter((l) => typeof l['msg'] === 'string' && (l['msg'] as string).startsWith('mint job'));
    expect(jobLines.map((l) => l['msg'])).toEqual(expect.arrayContaining(['mint job leased', 'mint job finished']));
    for (const line of jobLines) expect(line['jobId'], JSON.stringify(line)).toBe(jobId);
  });

  it('counts a lease lost to another executor', async () => {
    // Stop the daemon's consumer so this test's delivery is the only one running the job.
    await executor.stop();
    const jobId = await submit(3000);
    let chunksDone = 0;
    let takenOver = false;
    const message: JobMessage = {
      job: { kind: 'mint', id: jobId, brandId: brand.brandId },
      deliveryCount: 1,
      lastDelivery: false,
      working: () => void chunksDone++,
      ack: async () => {},
      nak() {},
      term() {},
    };
    const before = sampleValue(await scrape(`${base}/metrics`), 'minting_lease_losses_total');
    const outcome = await runMintJob(
      {
        ctx: { ...app.ctx, db: gatedDatabase() },
        logger: createLogger({ logLevel: 'silent' }),
        chunkSize: 1000,
        writers: 1,
        leaseMs: 30_000,
        owner: 'paused',
        metrics,
        // Asked before each chunk: once the lead chunk (50 units) committed, the lease lapses and another executor
        // takes the job over before the next chunk's transaction begins (see gatedDatabase).
        stopping: () => {
          if (chunksDone === 1 && !takenOver) {
            takenOver = true;
            takingOver = takeOver(jobId);
          }
          return false;
        },
      },
      message,
    );
    expect(outcome).toMatchObject({ kind: 'retry' });
    expect((await jobState(app.db, jobId)).owner).toMatch(/^thief/);
    const samples = await scrape(`${base}/metrics`);
    expect(sampleValue(samples, 'minting_lease_losses_total')).toBe((before ?? 0) + 1);
    expect(sampleValue(samples, 'minting_units_minted_total')).toBe(2500 + 50);
  });

  it('answers /healthz, and /readyz following the database and NATS', async () => {
    expect((await fetch(`${base}/healthz`)).status).toBe(200);
    const nothing = await fetch(`${base}/nothing`);
    expect([nothing.status, await nothing.json()]).toEqual([
      404,
      {
        ok: false,
        error: 'not_found',
        message: 'nothing is served at /nothing; this server serves /healthz, /readyz and /metrics',
      },
    ]);
    const posted = await fetch(`${base}/metrics`, { method: 'POST' });
    expect([posted.status, posted.headers.get('allow'), await posted.json()]).toEqual([
      405,
      'GET, HEAD',
      {
        ok: false,
        error: 'method_not_allowed',
        message: 'POST is not allowed on /metrics: use GET or HEAD',
      },
    ]);
    const ready = await fetch(`${base}/readyz`);
    expect(ready.status).toBe(200);
    expect(await ready.json()).toEqual({ ok: true, checks: { database: 'ok', bus: 'ok' } });

    await nats.kill('SIGKILL');
    const down = await fetch(`${base}/readyz`);
    expect(down.status).toBe(503);
    const report = (await down.json()) as { ok: boolean; checks: Record<string, string> };
    expect(report.ok).toBe(false);
    expect(report.checks['database']).toBe('ok');
    expect(report.checks['bus']).toMatch(/^unavailable/);
    // The scrape still answers; the gauge whose source failed reads NaN (unknown, not a stale 0) and the failure is counted.
    const samples = await scrape(`${base}/metrics`);
    expect(sampleValue(samples, 'minting_consumer_pending_messages')).toBeNaN();
    // Counted while the scrape runs, so it shows from the next scrape on.
    const next = await scrape(`${base}/metrics`);
    expect(sampleValue(next, 'minting_metric_source_errors_total', { source: 'consumer_pending' })).toBeGreaterThanOrEqual(1);
    expect(sampleValue(samples, 'minting_jobs', { status: 'COMPLETED' })).toBe(1);

    await nats.restart();
    await waitUntil('readiness after NATS is back', async () => (await fetch(`${base}/readyz`)).status === 200);

    server.markStopping();
    const stopping = await fetch(`${base}/readyz`);
    expect(stopping.status).toBe(503);
    expect(await stopping.json()).toEqual({ ok: false, checks: { executor: 'shutting down' } });
    expect((await fetch(`${base}/healthz`)).status).toBe(200);
  });
});

/** A take-over in progress; transactions of the gated database wait for it. */
let takingOver: Promise<unknown> = Promise.resolve();

/** Another executor takes `jobId` over: the current lease is made to lapse, then claimed anew. */
async function takeOver(jobId: string): Promise<void> {
  await run(app.db.em.fork(), `update mint_jobs set lease_expires_at = now() - interval '1 minute' where id = ?`, [jobId]);
  const claim = await claimMintJob(app.ctx, brand.brandId, jobId, 'thief/1', 30_000);
  if (claim.kind !== 'claimed') throw new Error(`take-over failed: ${claim.kind}`);
}

/** The test database, whose transactions begin only once a pending take-over finished (so the order is fixed, not timed). */
function gatedDatabase(): Database {
  const em = Object.create(app.db.em) as Database['em'];
  em.fork = ((...args: Parameters<Database['em']['fork']>) => {
    const fork = app.db.em.fork(...args);
    const transactional = fork.transactional.bind(fork);
    fork.transactional = (async (...txArgs: Parameters<typeof transactional>) => {
      await takingOver;
      return transactional(...txArgs);
    }) as typeof fork.transactional;
    return fork;
  }) as Database['em']['fork'];
  const db = Object.create(app.db) as Database;
  Object.defineProperty(db, 'em', { value: em });
  return db;
}
