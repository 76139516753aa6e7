/**
 * `npm run bench:growth [-- --jobs 10 --units 1000000]`: what a unit costs as a brand's units grow.
 * Mints `jobs` serial jobs of `units` units each, one after another, into ONE scratch database
 * (nothing truncated between them) through the production processes: submit (the use case, as the
 * API runs it) -> NATS JetStream -> the executor child process -> COMPLETED. After each job it
 * prints:
 *   - the job's rate (units/s, submit to COMPLETED) and its ratio to the first job's rate,
 *   - the units in mint_units after it,
 *   - heap + index bytes per unit (pg_relation_size + pg_indexes_size of mint_units over its rows),
 *   - WAL bytes per unit of the job (pg_current_wal_lsn before and after; the WAL is the cluster's,
 *     so another database's writes in the same seconds count too: read it as an upper bound).
 * After the first and the last job it times, in process, the resolver's unit lookup of a scan
 * (createResolverReader's findUnit, the statement a GET /r/... unit scan runs, on random units of
 * every job so far) and a ListMintUnits page (the use case, default page size, at a random
 * cursor of the brand's list), and prints p50/p99 with the last size's ratio to the first's.
 *
 * Targets (issue 44): the last job's rate >= 0.8x the first's; <= 200 bytes per unit stored; scan
 * and list p99 at the largest size <= 1.2x the smallest. Exits 1 when one is missed.
 * Defaults are CI-size (4 jobs of 100,000 units); the full size is `--jobs 10 --units 1000000`
 * (or BENCH_GROWTH_JOBS / BENCH_GROWTH_UNITS). `--json FILE` (or BENCH_JSON) writes the figures.
 * Uses the machine's stock PostgreSQL settings and drops its database and stream at the end.
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { writeFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { connectJetStreamBus, type JobBus } from '@mint/bus';
import { createResolverReader, openDatabase } from '@mint/db';
import { query, storedOrDerivedUnitId } from '../test/support/sql.ts';
import { createUseCaseContext, createUser, createWorkspace, grantRole, listMintUnits, submitMintRequest, upsertProduct } from '@mint/usecases';
import { createScratchDatabase } from './scratch-database.ts';
import { dropBenchStreams } from './services.ts';
import { executorNodeFlags, percentile, withExecutorEnv } from './child-server.ts';

const repoRoot = fileURLToPath(new URL('../', import.meta.url));
const natsUrl = process.env['NATS_URL'] ?? 'nats://127.0.0.1:4222';

/** One job of the growth run. */
export interface GrowthJob {
  readonly job: number;
  /** units/s, submit to COMPLETED. */
  readonly rate: number;
  /** Rows in mint_units after the job. */
  readonly unitsInTable: number;
  /** (heap + indexes of mint_units) / rows. */
  readonly storedBytesPerUnit: number;
  readonly heapBytesPerUnit: number;
  readonly indexBytesPerUnit: number;
  /** WAL written during the job / its units (cluster-wide WAL: an upper bound). */
  readonly walBytesPerUnit: number;
}

/** Latency of the timed reads at one size, ms. */
export interface GrowthReads {
  readonly unitsInTable: number;
  readonly scan: { readonly p50: number; readonly p99: number };
  readonly list: { readonly p50: number; readonly p99: number };
}

export interface GrowthBenchResult {
  readonly jobs: readonly GrowthJob[];
  readonly reads: readonly GrowthReads[];
  readonly unitsPerJob: number;
  readonly indexes: readonly { readonly name: string; readonly bytes: number }[];
}

async function timed(iterations: number, work: (i: number) => Promise<unknown>): Promise<{ p50: number; p99: number }> {
  for (let i = 0; i < Math.min(200, iterations); i++) await work(i);
  const samples: number[] = [];
  for (let i = 0; i < iterations; i++) {
    const started = performance.now();
    await work(i);
    samples.push(performance.now() - started);
  }
  samples.sort((a, b) => a - b);
  return { p50: percentile(samples, 50), p99: percentile(samples, 99) };
}

export async function benchGrowth(
  options: { jobs: number; units: number; iterations: number },
  progress: (line: string) => void = console.log,
): Promise<GrowthBenchResult> {
  const id = randomBytes(4).toString('hex');
  const stream = `BENCH_${id.toUpperCase()}`;
  const subjectPrefix = `bench_${id}`;
  const scratch = await createScratchDatabase('bench_growth', id);
  progress(`database ${scratch.name}, stream ${stream}: ${options.jobs} jobs of ${options.units.toLocaleString('en')} units`);
  let executor: ReturnType<typeof spawn> | undefined;
  let bus: JobBus | undefined;
  try {
    const db = await openDatabase({ url: scratch.url }, { poolSize: 4, applicationName: 'bench' });
    bus = await connectJetStreamBus({ url: natsUrl, stream, subjectPrefix, name: 'bench-submit' });
    const publisher = bus;
    // One sealing key for the executor and this process: the executor seals the brand's serial key, the resolver's lookups here open it.
    const secretKey = randomBytes(32);
    const secretKeys = `bench:${secretKey.toString('base64')}`;
    const ctx = createUseCaseContext({
      db,
      publicBaseUrl: 'http://127.0.0.1:8080',
      publishJob: (job) => publisher.announce(job),
      webhookSecretKeys: [{ id: 'bench', secret: new Uint8Array(secretKey) }],
    });
    const brand = await createWorkspace(ctx, { name: 'Growth Brand' });
    const user = await createUser(ctx, { email: `growth-${id}@bench.example`, name: 'Bench' });
    await grantRole(ctx, brand.id, user.id, 'owner');
    const gtin = '00614141000036';
    const { product } = await upsertProduct(
      ctx,
      { id: user.id },
      {
        brandId: brand.id,
        sku: 'GROWTH',
        name: 'Growth product',
        gtin,
        commercialStatus: 'ACTIVE',
        mintReadinessStatus: 'READY',
        passportUrl: null,
      },
    );
    executor = spawn(process.execPath, [...executorNodeFlags, 'services/executor/src/main.ts'], {
      cwd: repoRoot,
      env: withExecutorEnv({
        PATH: process.env['PATH'] ?? '',
        DATABASE_URL: scratch.url,
        NATS_URL: natsUrl,
        NATS_STREAM: stream,
        NATS_SUBJECT_PREFIX: subjectPrefix,
        WEBHOOK_SECRET_KEYS: secretKeys,
        LOG_LEVEL: 'warn',
        EXECUTOR_CONCURRENCY: '1',
      }),
      stdio: ['ignore', 'inherit', 'inherit'],
    });
    const exited = once(executor, 'exit');
    await sleep(1500);
    const done = new Map<string, string>();
    let wake: () => void = () => {};
    const stop = bus.subscribeProgress((u) => {
      if (u.status === 'COMPLETED' || u.status === 'FAILED') done.set(u.mintJobId, u.status);
      wake();
    });
    const one = async <T>(sql: string, params: unknown[] = []) => (await query<T>(db.em.fork(), sql, params))[0]!;
    const waitDone = async (jobId: string) => {
      for (;;) {
        if (done.has(jobId)) return done.get(jobId)!;
        const row = await one<{ status: string }>('select status from mint_jobs where id = ?', [jobId]);
        if (row.status === 'COMPLETED' || row.status === 'FAILED') return row.status;
        if (executor?.exitCode !== null) throw new Error('the executor exited');
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, 250);
          wake = () => {
            clearTimeout(timer);
            resolve();
          };
        });
      }
    };
    const packsSettled = async () => {
      for (;;) {
        const row = await one<{ n: string }>(`select count(*) as n from payload_packs where status in ('pending', 'generating')`);
        if (Number(row.n) === 0) return;
        await sleep(100);
      }
    };
    const submit = async (size: number) => {
      const submitted = await submitMintRequest(
        ctx,
        { id: user.id },
        {
          brandId: brand.id,
          productId: product.id,
          productBatchId: null,
          requestedQuantity: size,
          identityMode: 'serial',
          activationMode: 'active_at_mint',
          lots: [],
          idempotencyKey: null,
        },
      );
      if (!submitted.ok) throw new Error('submit blocked');
      return submitted;
    };
    // Warm-up: the executor's connections, JIT and consumer.
    await waitDone((await submit(100)).mintJobId);
    await packsSettled();

    const reader = createResolverReader(db, { poolSize: 2 });
    const reads = async (unitsInTable: number): Promise<GrowthReads> => {
      // Units drawn uniformly from every job so far (a row sample, not a page sample: a page holds about
      // 70 consecutive seqs, so sampled pages would give clustered cursors, and the share of cursors
      // whose page crosses the start of a chunk, the list's slower path, would swing from run to run):
      // their serials (as a scan names them) and list cursors.
      const percent = Math.min(100, ((options.iterations * 2) / unitsInTable) * 100);
      const sample = await query<{ serial: string; created_at: Date; id: string }>(
        db.em.fork(),
        `select serial, created_at, ${storedOrDerivedUnitId()} as id from mint_units tablesample bernoulli (${percent}) order by random() limit ?`,
        [options.iterations],
      );
      while (sample.length < options.iterations) sample.push(...sample.slice(0, options.iterations - sample.length));
      const scan = await timed(options.iterations, async (i) => {
        const unit = await reader.findUnit(brand.id, sample[i % sample.length]!.serial, gtin);
        if (unit === null) throw new Error('a minted unit did not resolve');
      });
      const list = await timed(options.iterations, async (i) => {
        const at = sample[i % sample.length]!;
        const page = await listMintUnits(ctx, brand.id, { limit: null, cursor: { at: new Date(at.created_at), id: at.id }, mintBatchId: null });
        if (page.items.length === 0 && unitsInTable > 1000) throw new Error('an empty page');
      });
      progress(
        `reads at ${unitsInTable.toLocaleString('en')} units: resolver unit scan p50 ${scan.p50.toFixed(3)} ms p99 ${scan.p99.toFixed(3)} ms, ` +
          `ListMintUnits page p50 ${list.p50.toFixed(3)} ms p99 ${list.p99.toFixed(3)} ms`,
      );
      return { unitsInTable, scan, list };
    };

    const jobs: GrowthJob[] = [];
    const readsAt: GrowthReads[] = [];
    for (let job = 1; job <= options.jobs; job++) {
      await packsSettled();
      await one('checkpoint');
      const walBefore = await one<{ lsn: string }>('select pg_current_wal_lsn()::text as lsn');
      const started = performance.now();
      const submitted = await submit(options.units);
      const status = await waitDone(submitted.mintJobId);
      const rate = options.units / ((performance.now() - started) / 1000);
      const wal = await one<{ bytes: string }>('select pg_wal_lsn_diff(pg_current_wal_lsn(), ?::pg_lsn)::bigint as bytes', [walBefore.lsn]);
      if (status !== 'COMPLETED') throw new Error(`job ${job} ended ${status}`);
      const size = await one<{ n: string; heap: string; indexes: string }>(
        `select (select count(*) from mint_units) as n, pg_relation_size('mint_units') as heap, pg_indexes_size('mint_units') as indexes`,
      );
      const n = Number(size.n);
      const row: GrowthJob = {
        job,
        rate,
        unitsInTable: n,
        heapBytesPerUnit: Number(size.heap) / n,
        indexBytesPerUnit: Number(size.indexes) / n,
        storedBytesPerUnit: (Number(size.heap) + Number(size.indexes)) / n,
        walBytesPerUnit: Number(wal.bytes) / options.units,
      };
      jobs.push(row);
      progress(
        `job ${String(job).padStart(2)}: ${Math.round(rate).toString().padStart(7)} units/s (${(rate / jobs[0]!.rate).toFixed(2)}x job 1), ` +
          `${n.toLocaleString('en').padStart(11)} units in the table, ${row.storedBytesPerUnit.toFixed(0)} B/unit stored ` +
          `(heap ${row.heapBytesPerUnit.toFixed(0)}, indexes ${row.indexBytesPerUnit.toFixed(0)}), WAL ${row.walBytesPerUnit.toFixed(0)} B/unit`,
      );
      if (job === 1 || job === options.jobs) {
        await packsSettled();
        readsAt.push(await reads(n));
      }
    }
    const indexes = await query<{ name: string; bytes: string }>(
      db.em.fork(),
      `select indexrelid::regclass::text as name, pg_relation_size(indexrelid) as bytes from pg_index where indrelid = 'mint_units'::regclass order by 1`,
    );
    stop();
    await reader.close();
    executor.kill('SIGTERM');
    await exited;
    await db.close(true);
    return { jobs, reads: readsAt, unitsPerJob: options.units, indexes: indexes.map((i) => ({ name: i.name, bytes: Number(i.bytes) })) };
  } finally {
    if (executor && executor.exitCode === null) executor.kill('SIGKILL');
    await bus?.close();
    await dropBenchStreams(natsUrl, stream);
    await scratch.drop();
  }
}

/** Whether the figures meet issue 44's targets, one line each. */
export function growthTargets(r: GrowthBenchResult): { text: string; met: boolean }[] {
  const first = r.jobs[0]!;
  const last = r.jobs[r.jobs.length - 1]!;
  const small = r.reads[0]!;
  const large = r.reads[r.reads.length - 1]!;
  const stored = Math.max(...r.jobs.map((j) => j.storedBytesPerUnit));
  return [
    { text: `job ${last.job} rate ${(last.rate / first.rate).toFixed(2)}x job 1 (target >= 0.8x)`, met: last.rate / first.rate >= 0.8 },
    { text: `stored ${stored.toFixed(0)} B/unit at most (target <= 200)`, met: stored <= 200 },
    {
      text: `scan p99 ${(large.scan.p99 / small.scan.p99).toFixed(2)}x at ${large.unitsInTable.toLocaleString('en')} units vs ${small.unitsInTable.toLocaleString('en')} (target <= 1.2x)`,
      met: large.scan.p99 / small.scan.p99 <= 1.2,
    },
    {
      text: `list p99 ${(large.list.p99 / small.list.p99).toFixed(2)}x at ${large.unitsInTable.toLocaleString('en')} units vs ${small.unitsInTable.toLocaleString('en')} (target <= 1.2x)`,
      met: large.list.p99 / small.list.p99 <= 1.2,
    },
  ];
}

if (import.meta.main) {
  const { values: args } = parseArgs({
    options: {
      jobs: { type: 'string', default: process.env['BENCH_GROWTH_JOBS'] ?? '4' },
      units: { type: 'string', default: process.env['BENCH_GROWTH_UNITS'] ?? '100000' },
      iterations: { type: 'string', default: process.env['BENCH_ITERATIONS'] ?? '2000' },
      json: { type: 'string', default: process.env['BENCH_JSON'] ?? '' },
    },
  });
  const result = await benchGrowth({ jobs: Number(args.jobs), units: Number(args.units), iterations: Number(args.iterations) });
  console.log('\nindexes of mint_units after the run:');
  for (const i of result.indexes)
    console.log(
      `  ${i.name.padEnd(40)} ${(i.bytes / 1024 / 1024).toFixed(1).padStart(8)} MB  ${(i.bytes / result.jobs[result.jobs.length - 1]!.unitsInTable).toFixed(1)} B/unit`,
    );
  const targets = growthTargets(result);
  for (const t of targets) console.log(`${t.met ? 'met   ' : 'MISSED'} ${t.text}`);
  if (args.json) writeFileSync(args.json, JSON.stringify(result));
  process.exitCode = targets.every((t) => t.met) ? 0 : 1;
}
