import { mkdir, mkdtemp, readdir, rm, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createFsPackStore } from '@mint/store';
import { query } from '../../../test/support/sql.ts';
import { createUseCaseContext, getJobProgress, submitMintRequest } from '@mint/usecases';
import { testInfra } from '../../../test/support/context.ts';
import { useUseCases } from '../../../test/support/usecases.ts';
import { startInProcessExecutor, type InProcessExecutor } from './executor-process.ts';

const { app, brand } = useUseCases();
let running: InProcessExecutor;
let storeRoot: string;
/** The file's executor: short sweep intervals, scan events kept 30 days, a pack store in a temporary folder. */
const startFileExecutor = () =>
  startInProcessExecutor(app, testInfra().natsUrl, {
    concurrency: 2,
    sweepIntervalMs: 200,
    scanEventRetentionDays: 30,
    packStore: createFsPackStore(storeRoot),
    packStoreSweepIntervalMs: 200,
  });
beforeAll(async () => {
  storeRoot = await mkdtemp(join(tmpdir(), 'executor-store-'));
  running = await startFileExecutor();
});
afterAll(async () => {
  await running.stop();
  await rm(storeRoot, { recursive: true, force: true });
});

async function waitForTerminal(jobId: string, timeoutMs = 20_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const progress = await getJobProgress(app.ctx, brand.brandId, jobId);
    if (progress.done || Date.now() > deadline) return progress;
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe('executor over NATS JetStream', () => {
  it('takes submitted serial jobs from QUEUED to COMPLETED through the outbox and the bus', async () => {
    const submits = await Promise.all(
      [10_000, 3_001].map((requestedQuantity) =>
        submitMintRequest(
          app.ctx,
          { id: brand.userId },
          {
            brandId: brand.brandId,
            productId: brand.productId,
            productBatchId: null,
            requestedQuantity,
            identityMode: 'serial',
            activationMode: 'active_at_mint',
            lots: [],
            idempotencyKey: null,
          },
        ),
      ),
    );
    for (const submitted of submits) {
      if (!submitted.ok) throw new Error('blocked');
      const progress = await waitForTerminal(submitted.mintJobId);
      expect(progress.status).toBe('COMPLETED');
      const [units] = await query<{ n: string; serials: string; max: number }>(
        app.db.em.fork(),
        `select count(*) as n, count(distinct serial) as serials, max(seq) as max from mint_units where mint_batch_id = ?`,
        [submitted.mintBatchId],
      );
      expect(Number(units!.n)).toBe(progress.requestedQuantity);
      expect(Number(units!.serials)).toBe(progress.requestedQuantity);
      expect(units!.max).toBe(progress.requestedQuantity);
    }
    const [outbox] = await query<{ n: string }>(app.db.em.fork(), 'select count(*) as n from outbox');
    expect(outbox!.n).toBe('0');
  });

  it('starts a submitted job without the outbox relay when the submit publishes it right after commit', async () => {
    // The file's executor (its relay) is stopped meanwhile. An executor whose relay polls once at start and then not for
    // ten minutes: only the submit's own publish can reach it.
    await running.stop();
    const quiet = await startInProcessExecutor(app, testInfra().natsUrl, { relayIntervalMs: 600_000 });
    try {
      await new Promise((r) => setTimeout(r, 300));
      const ctx = createUseCaseContext({ db: app.db, publicBaseUrl: 'http://127.0.0.1:8080', publishJob: (job) => quiet.bus.announce(job) });
      const submitted = await submitMintRequest(
        ctx,
        { id: brand.userId },
        {
          brandId: brand.brandId,
          productId: brand.productId,
          productBatchId: null,
          requestedQuantity: 500,
          identityMode: 'serial',
          activationMode: 'active_at_mint',
          lots: [],
          idempotencyKey: null,
        },
      );
      if (!submitted.ok) throw new Error('blocked');
      const deadline = Date.now() + 10_000;
      let status = '';
      while (Date.now() < deadline) {
        const [job] = await query<{ status: string }>(app.db.em.fork(), 'select status from mint_jobs where id = ?', [submitted.mintJobId]);
        status = job!.status;
        if (status === 'COMPLETED') break;
        await new Promise((r) => setTimeout(r, 20));
      }
      expect(status).toBe('COMPLETED');
      // The relay never ran: the job's outbox message is still there (the relay's later publish is a duplicate).
      const [outbox] = await query<{ n: string }>(app.db.em.fork(), 'select count(*) as n from outbox where job_id = ?', [submitted.mintJobId]);
      expect(outbox!.n).toBe('1');
    } finally {
      await quiet.stop();
      running = await startFileExecutor();
    }
  });

  it('deletes expired Idempotency-Key records and keeps the live ones', async () => {
    const em = app.db.em.fork();
    await query(
      em,
      `insert into idempotency_records (brand_id, key, route, request_hash, state, response_status, response_body, created_at, expires_at)
      select ?, 'key-' || n, 'POST /v1/mint/jobs', 'hash', 'completed', 201, '{}'::jsonb, now() - interval '2 days',
             case when n <= 1500 then now() - interval '1 hour' else now() + interval '1 hour' end
      from generate_series(1, 1502) as n`,
      [brand.brandId],
    );
    const keysLeft = async () =>
      (await query<{ key: string }>(app.db.em.fork(), 'select key from idempotency_records where brand_id = ? order by key', [brand.brandId])).map(
        (r) => r.key,
      );
    const deadline = Date.now() + 10_000;
    while ((await keysLeft()).length > 2 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    // 1,500 expired: more than one batch of the sweeper's delete.
    expect(await keysLeft()).toEqual(['key-1501', 'key-1502']);
  });

  it('deletes scan events past the retention (30 days here) and keeps the newer ones', async () => {
    const em = app.db.em.fork();
    // 12,000 events of 31-40 days ago (more than one batch of the sweeper's delete), then 3 recent ones.
    await query(
      em,
      `insert into scan_events (brand_id, scanned_at, kind, gtin, identifier, outcome, representation)
      select ?, now() - interval '40 days' + (n * interval '1 minute'), 'serial', '09506000134352', 'OLD' || n, 'resolved', 'redirect'
      from generate_series(1, 12000) as n`,
      [brand.brandId],
    );
    await query(
      em,
      `insert into scan_events (brand_id, scanned_at, kind, gtin, identifier, outcome, representation)
      select ?, now() - (n * interval '1 day'), 'serial', '09506000134352', 'NEW' || n, 'resolved', 'redirect' from generate_series(1, 3) as n`,
      [brand.brandId],
    );
    const left = async () =>
      (await query<{ identifier: string }>(app.db.em.fork(), 'select identifier from scan_events where brand_id = ? order by identifier', [brand.brandId])).map(
        (r) => r.identifier,
      );
    const deadline = Date.now() + 15_000;
    while ((await left()).length > 3 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    expect(await left()).toEqual(['NEW1', 'NEW2', 'NEW3']);
  });

  it('forgets ingest batch keys past the retention with their scans, and keeps the newer ones', async () => {
    await query(
      app.db.em.fork(),
      `insert into scan_ingest_batches (brand_id, batch_key, accepted, rejected, created_at)
      values (?, 'old-batch', 1, '[]', now() - interval '31 days'), (?, 'new-batch', 1, '[]', now() - interval '1 day')`,
      [brand.brandId, brand.brandId],
    );
    const keys = async () =>
      (
        await query<{ batch_key: string }>(app.db.em.fork(), 'select batch_key from scan_ingest_batches where brand_id = ? order by batch_key', [brand.brandId])
      ).map((r) => r.batch_key);
    const deadline = Date.now() + 15_000;
    while ((await keys()).length > 1 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    expect(await keys()).toEqual(['new-batch']);
  });
  it('sweeps the pack store of what interrupted pack writes left over an hour ago, and keeps a write going on', async () => {
    const brandFolder = join(storeRoot, brand.brandId);
    const leftover = join(brandFolder, `.staging-${'0a'.repeat(6)}`);
    const ongoing = join(brandFolder, `.staging-${'0b'.repeat(6)}`);
    for (const folder of [leftover, ongoing]) {
      await mkdir(folder, { recursive: true });
      await writeFile(join(folder, 'units.csv'), 'serial\n');
    }
    const twoHoursAgo = new Date(Date.now() - 7_200_000);
    await utimes(join(leftover, 'units.csv'), twoHoursAgo, twoHoursAgo);
    await utimes(leftover, twoHoursAgo, twoHoursAgo);
    const folders = async () => (await readdir(brandFolder)).filter((name) => name.startsWith('.staging-'));
    const deadline = Date.now() + 10_000;
    while ((await folders()).length > 1 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    expect(await folders()).toEqual([`.staging-${'0b'.repeat(6)}`]);
  });
});
