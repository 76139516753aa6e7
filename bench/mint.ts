/**
 * `npm run bench:mint [-- --sizes 10000,100000,1000000 --chunk 2000]`: mints serial units end to
 * end (submit -> outbox -> NATS JetStream -> executor child process -> COMPLETED) and, in the same
 * run, the raw baseline: COPY of the same number of rows into the same table (mint_units, all its
 * indexes) over two connections. Prints units/s per size, the ratio to the baseline and the
 * executor's peak RSS (`--runs N` measures each size N times, and jobs of up to 10,000 units five
 * times as often: see `measurementsOf`; `--json FILE` also writes the figures as
 * JSON for bench/run.ts; `benchMint` is the same as a function). Uses a database of its own
 * (bench/scratch-database.ts) and a fresh stream on NATS_URL
 * (default nats://127.0.0.1:4222). Not a test: nothing asserts, it reports.
 *
 * A job is followed as the API's watchers follow it, on the progress the executor publishes after
 * each commit (`--watch poll` reads the job every 2 ms instead, as this bench did before: those
 * reads run on the same two cores as the executor and PostgreSQL and are not part of the
 * baseline), and each measurement starts once the executor has generated every payload pack, so
 * a finished job's pack falls into neither the next mint nor the baseline.
 */
import { spawn } from 'node:child_process';
import { randomBytes, randomFillSync, randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { connectJetStreamBus, type JobBus } from '@mint/bus';
import { openDatabase } from '@mint/db';
import { query } from '../test/support/sql.ts';
import { generateTimedSerials, unitIdOf } from '@mint/domain';
import { loadConfig } from '@mint/runtime';
import { createUseCaseContext, createUser, createWorkspace, grantRole, submitMintRequest, upsertProduct } from '@mint/usecases';
import { createScratchDatabase } from './scratch-database.ts';
import { dropBenchStreams } from './services.ts';
import { executorNodeFlags, executorNodeOptions, percentile, withExecutorEnv } from './child-server.ts';

const require = createRequire(import.meta.resolve('@mint/db'));
const copyFrom = (require('pg-copy-streams') as { from: (sql: string) => NodeJS.WritableStream & pg.Submittable }).from;

/** What `benchMint` measures; the CLI flags of the same names set them. */
export interface MintBenchOptions {
  /** Job sizes in units, each measured `runs` times (see {@link measurementsOf}). */
  readonly sizes: readonly number[];
  /** MINT_CHUNK_SIZE of the executor (its default when empty). */
  readonly chunk: string;
  /** EXECUTOR_JOB_WRITERS of the executor (its default when empty). */
  readonly writers: string;
  /** `chunk`: one COPY transaction per executor chunk (the fair limit); `one`: a single COPY per connection. */
  readonly baselineTx: string;
  /** One-chunk jobs submitted one after another to measure submit -> first chunk committed. */
  readonly latencyJobs: number;
  /** NODE_OPTIONS of the executor child ('' for V8's defaults). */
  readonly nodeOptions: string;
  /** V8 flags of the executor child (default the image's, executor_node_flags; [] for none). */
  readonly nodeFlags?: readonly string[];
  /** Submits publish their job right after commit, as the API does (false: the outbox relay only, as before). */
  readonly publish: boolean;
  /** Measurements per size (mint, then baseline, each from an empty table). */
  readonly runs: number;
  /** How the bench learns that a job progressed: `progress` (the bus, as watchers do) or `poll` (a read every 2 ms). */
  readonly watch: 'progress' | 'poll';
}

/** One measurement of one size: the end-to-end mint against the COPY baseline of the same run. */
export interface MintRun {
  readonly size: number;
  readonly status: string;
  /** End-to-end units/s (submit to COMPLETED). */
  readonly mintRate: number;
  /** The fair limit: COPY rows/s in the executor's chunk size over its number of writer connections. */
  readonly baseRate: number;
  /** Submit -> first chunk committed, ms. */
  readonly firstChunkMs: number;
  /** Executor resident set after the run and its peak so far, MB. */
  readonly rssMb: number;
  readonly peakMb: number;
}

/** Everything `benchMint` measured. */
export interface MintBenchResult {
  readonly runs: readonly MintRun[];
  /** Executor peak RSS over the whole run, MB. */
  readonly executorPeakMb: number;
  /** Submit -> first chunk committed over `latencyJobs` one-chunk jobs (null when none ran). */
  readonly firstChunk: { readonly p50Ms: number; readonly p99Ms: number; readonly jobs: number } | null;
}

const config = loadConfig();
const natsUrl = config.natsUrl ?? 'nats://127.0.0.1:4222';
const repoRoot = fileURLToPath(new URL('../', import.meta.url));

/** Peak and current resident set of a process, in MB, from /proc. */
function memoryOf(pid: number): { peakMb: number; rssMb: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (field: string) => Number(new RegExp(`${field}:\\s+(\\d+) kB`).exec(status)?.[1] ?? 0);
  return { peakMb: Math.round(kb('VmHWM') / 1024), rssMb: Math.round(kb('VmRSS') / 1024) };
}

/** COPY text of `count` units of one batch from `firstSeq`, built before the clock starts. */
function copyBlock(brandId: string, batchId: string, firstSeq: number, count: number, at: string): string {
  const serials = generateTimedSerials(count, new Date(at), (b) => void randomFillSync(b));
  let text = '';
  for (let i = 0; i < count; i++) {
    const s = serials[i]!;
    text += `${brandId}\t${unitIdOf(batchId, firstSeq + i)}\t${batchId}\t${firstSeq + i}\t${s}\tactive\t${at}\t${at}\n`;
  }
  return text;
}

const copySql = 'copy mint_units (brand_id, id, mint_batch_id, seq, serial, status, created_at, activated_at) from stdin';

/**
 * The fair limit: `count` rows COPYed into mint_units in the executor's own chunk size over as many
 * connections as it writes with (EXECUTOR_JOB_WRITERS), one COPY and one transaction per chunk,
 * each connection taking the next chunk as soon as its last one committed; in rows/s. The rows are
 * built before the clock starts, so this is the database's limit for the executor's work at every
 * size. With `--baseline-tx one`, one COPY per connection instead (the old, unfair shape).
 */
async function copyBaseline(dbUrl: string, baselineTx: string, chunk: number, connections: number, brandId: string, count: number): Promise<number> {
  const batchId = randomUUID();
  const at = new Date().toISOString();
  const blocks: string[] = [];
  if (baselineTx === 'one') {
    const per = Math.ceil(count / connections);
    for (let first = 0; first < count; first += per) blocks.push(copyBlock(brandId, batchId, first + 1, Math.min(per, count - first), at));
  } else {
    for (let first = 0; first < count; first += chunk) blocks.push(copyBlock(brandId, batchId, first + 1, Math.min(chunk, count - first), at));
  }
  const clients = await Promise.all(
    Array.from({ length: connections }, async () => {
      const c = new pg.Client({ connectionString: dbUrl });
      await c.connect();
      return c;
    }),
  );
  let next = 0;
  const started = performance.now();
  await Promise.all(
    clients.map(async (c) => {
      for (let i = next++; i < blocks.length; i = next++) await pipeline(Readable.from([blocks[i]!]), c.query(copyFrom(copySql)));
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  await Promise.all(clients.map((c) => c.end()));
  return count / seconds;
}

/**
 * How many times a job of `size` units is measured for `runs`: five times as often up to 10,000
 * units. Such a job takes about a tenth of a second, so one measurement's ratio to the fair limit
 * swings with whatever else the two cores do in that moment (0.45-1.34 over 15 measurements on the
 * 2-core target); a median of three was a coarse reading, and 15 cost a few seconds.
 */
export function measurementsOf(size: number, runs: number): number {
  return size <= 10_000 ? runs * 5 : runs;
}

/**
 * Runs the benchmark: a scratch database and stream, one executor child, then for each size
 * `runs` times the end-to-end mint and the COPY baseline, each from an empty mint_units. `progress`
 * receives one line per measurement. Drops the database and the stream whatever happens.
 */
export async function benchMint(options: MintBenchOptions, progress: (line: string) => void = console.log): Promise<MintBenchResult> {
  const id = randomBytes(4).toString('hex');
  const stream = `BENCH_${id.toUpperCase()}`;
  const subjectPrefix = `bench_${id}`;
  const runs: MintRun[] = [];
  const chunk = Number(options.chunk || config.chunkSize);
  const writers = Number(options.writers || config.executorJobWriters);
  const nodeFlags = options.nodeFlags ?? executorNodeFlags;
  const scratch = await createScratchDatabase('bench_mint', id);
  const dbUrl = scratch.url;
  progress(
    `database ${scratch.name}, stream ${stream}, executor NODE_OPTIONS "${options.nodeOptions}", flags "${nodeFlags.join(' ')}", baseline COPY transactions: ${options.baselineTx} ` +
      `(${chunk} rows, ${writers} connections), publish: ${options.publish ? 'after commit' : 'relay only'}`,
  );
  let executor: ReturnType<typeof spawn> | undefined;
  let bus: JobBus | undefined;
  try {
    const db = await openDatabase({ url: dbUrl }, { poolSize: 4, applicationName: 'bench' });
    // Submits publish right after commit as the API does (the executor's outbox relay stays the safety net).
    bus = await connectJetStreamBus({ url: natsUrl, stream, subjectPrefix, name: 'bench-submit' });
    const feed = bus;
    const publisher = options.publish ? bus : undefined;
    const ctx = createUseCaseContext({ db, publicBaseUrl: 'http://127.0.0.1:8080', ...(publisher ? { publishJob: (job) => publisher.announce(job) } : {}) });
    const brand = await createWorkspace(ctx, { name: 'Bench Brand' });
    const user = await createUser(ctx, { email: `bench-${id}@bench.example`, name: 'Bench' });
    await grantRole(ctx, brand.id, user.id, 'owner');
    const gtin = '00614141000036';
    const { product } = await upsertProduct(
      ctx,
      { id: user.id },
      {
        brandId: brand.id,
        sku: 'BENCH',
        name: 'Bench product',
        gtin,
        commercialStatus: 'ACTIVE',
        mintReadinessStatus: 'READY',
        passportUrl: null,
      },
    );

    executor = spawn(process.execPath, [...nodeFlags, 'services/executor/src/main.ts'], {
      cwd: repoRoot,
      env: withExecutorEnv({
        PATH: process.env['PATH'] ?? '',
        DATABASE_URL: dbUrl,
        NATS_URL: natsUrl,
        NATS_STREAM: stream,
        NATS_SUBJECT_PREFIX: subjectPrefix,
        WEBHOOK_SECRET_KEYS: `bench:${randomBytes(32).toString('base64')}`,
        LOG_LEVEL: 'warn',
        EXECUTOR_CONCURRENCY: '1',
        ...(options.chunk ? { MINT_CHUNK_SIZE: options.chunk } : {}),
        ...(options.writers ? { EXECUTOR_JOB_WRITERS: options.writers } : {}),
        ...(options.nodeOptions ? { NODE_OPTIONS: options.nodeOptions } : {}),
      }),
      stdio: ['ignore', 'inherit', 'inherit'],
    });
    const exited = once(executor, 'exit');
    await sleep(1500);
    // A warm-up job (below) so the executor's first connection, JIT and consumer are ready.
    // `progress` (default): the job's progress as the API's watchers get it, the executor publishing
    // each commit on the bus, so the bench adds no database load while a job runs; a read every
    // 250 ms is the safety net for a lost message. `poll`: the job read every 2 ms, a query the
    // database answers beside the executor's (measured: see the header). `firstChunkAt` is when the
    // first committed units were seen.
    const seen = new Map<string, { firstChunkAt: number | null; doneAt: number | null; status: string }>();
    let wake: () => void = () => {};
    const stopWatching = feed.subscribeProgress((update) => {
      const at = performance.now();
      const job = seen.get(update.mintJobId) ?? { firstChunkAt: null, doneAt: null, status: update.status };
      if (job.firstChunkAt === null && update.mintedQuantity > 0) job.firstChunkAt = at;
      if (job.doneAt === null && (update.status === 'COMPLETED' || update.status === 'FAILED')) job.doneAt = at;
      job.status = update.status;
      seen.set(update.mintJobId, job);
      wake();
    });
    const read = async (jobId: string) =>
      (
        await query<{ status: string; minted: number | null }>(
          db.em.fork(),
          'select j.status, b.minted_quantity as minted from mint_jobs j left join mint_batches b on b.brand_id = j.brand_id and b.mint_job_id = j.id where j.id = ?',
          [jobId],
        )
      )[0];
    const waitDone = async (jobId: string): Promise<{ status: string; firstChunkAt: number }> => {
      let firstChunkAt: number | null = null;
      let lastRead = performance.now();
      for (;;) {
        const pushed = seen.get(jobId);
        if (pushed?.doneAt != null) {
          seen.delete(jobId);
          return { status: pushed.status, firstChunkAt: pushed.firstChunkAt ?? pushed.doneAt };
        }
        if (options.watch === 'poll' || performance.now() - lastRead >= 250) {
          lastRead = performance.now();
          const row = await read(jobId);
          if (firstChunkAt === null && Number(row?.minted ?? 0) > 0) firstChunkAt = pushed?.firstChunkAt ?? performance.now();
          if (row?.status === 'COMPLETED' || row?.status === 'FAILED') {
            seen.delete(jobId);
            return { status: row.status, firstChunkAt: firstChunkAt ?? performance.now() };
          }
        }
        if (executor?.exitCode !== null) throw new Error('the executor exited');
        if (options.watch === 'poll') await sleep(2);
        else
          await new Promise<void>((resolve) => {
            const timer = setTimeout(resolve, 250);
            wake = () => {
              clearTimeout(timer);
              resolve();
            };
          });
      }
    };
    // The executor generates the completed job's payload pack after its commit (its pack worker
    // looks every second); each measurement waits until no pack is left to generate, so that
    // work falls into neither the next mint nor the baseline.
    const packsSettled = async () => {
      const deadline = performance.now() + 600_000;
      for (;;) {
        const [row] = await query<{ n: string }>(db.em.fork(), `select count(*) as n from payload_packs where status in ('pending', 'generating')`);
        if (Number(row?.n) === 0) return;
        if (performance.now() > deadline) throw new Error(`${row?.n} payload packs still generating after 10 minutes`);
        await sleep(50);
      }
    };
    const submitSerial = async (size: number) => {
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
    await waitDone((await submitSerial(100)).mintJobId);

    // Submit -> first chunk committed, over jobs of one chunk each, one after another.
    const latencies: number[] = [];
    for (let i = 0; i < options.latencyJobs; i++) {
      const started = performance.now();
      const submitted = await submitSerial(chunk);
      const { firstChunkAt } = await waitDone(submitted.mintJobId);
      latencies.push(firstChunkAt - started);
    }
    latencies.sort((x, y) => x - y);
    const firstChunk = latencies.length === 0 ? null : { p50Ms: percentile(latencies, 50), p99Ms: percentile(latencies, 99), jobs: latencies.length };
    if (firstChunk)
      progress(
        `submit -> first chunk committed (${firstChunk.jobs} jobs of ${chunk} units): p50 ${firstChunk.p50Ms.toFixed(1)} ms, p99 ${firstChunk.p99Ms.toFixed(1)} ms`,
      );

    // Both measurements of a size start from an empty mint_units (indexes included) after a checkpoint,
    // so neither pays for the other's rows.
    const reset = async () => {
      await query(db.em.fork(), 'truncate mint_units');
      await query(db.em.fork(), 'checkpoint');
    };
    for (const size of options.sizes) {
      for (let run = 0; run < measurementsOf(size, options.runs); run++) {
        await packsSettled();
        await reset();
        const started = performance.now();
        const submitted = await submitSerial(size);
        const { status, firstChunkAt } = await waitDone(submitted.mintJobId);
        const mintRate = size / ((performance.now() - started) / 1000);
        const [minted] = await query<{ n: string }>(db.em.fork(), 'select count(*) as n from mint_units where mint_batch_id = ?', [submitted.mintBatchId]);
        if (Number(minted?.n) !== size) throw new Error(`expected ${size} units, found ${minted?.n}`);
        if ((await read(submitted.mintJobId))?.status !== status) throw new Error(`job ${submitted.mintJobId} reported ${status}, the database disagrees`);
        await packsSettled();
        await reset();
        const baseRate = await copyBaseline(dbUrl, options.baselineTx, chunk, writers, brand.id, size);
        const mem = memoryOf(executor.pid!);
        const firstChunkMs = firstChunkAt - started;
        runs.push({ size, status, mintRate, baseRate, firstChunkMs, rssMb: mem.rssMb, peakMb: mem.peakMb });
        const line =
          `${String(size).padStart(9)} units  ${status.padEnd(9)}  mint ${Math.round(mintRate).toString().padStart(7)} units/s  ` +
          `COPY ${chunk}/tx x${writers} ${Math.round(baseRate).toString().padStart(7)} rows/s  ratio ${(mintRate / baseRate).toFixed(2)}  ` +
          `first chunk ${firstChunkMs.toFixed(1)} ms  ${(1e6 / mintRate).toFixed(1)} us/unit  executor RSS ${mem.rssMb} MB (peak ${mem.peakMb} MB)`;
        progress(line);
      }
    }
    stopWatching();
    const executorPeakMb = memoryOf(executor.pid!).peakMb;
    progress(`executor peak RSS over the run: ${executorPeakMb} MB`);
    executor.kill('SIGTERM');
    await exited;
    await db.close(true);
    return { runs, executorPeakMb, firstChunk };
  } finally {
    if (executor && executor.exitCode === null) executor.kill('SIGKILL');
    await bus?.close();
    await dropBenchStreams(natsUrl, stream);
    await scratch.drop();
  }
}

if (import.meta.main) {
  const { values: args } = parseArgs({
    options: {
      sizes: { type: 'string', default: '10000,100000,1000000' },
      /** MINT_CHUNK_SIZE of the executor (its default when empty). */
      chunk: { type: 'string', default: '' },
      /** EXECUTOR_JOB_WRITERS of the executor (its default when empty). */
      writers: { type: 'string', default: '' },
      /** `chunk` (default): one COPY transaction per executor chunk; `one`: a single COPY per connection. */
      'baseline-tx': { type: 'string', default: 'chunk' },
      /** One-chunk jobs measured for submit -> first chunk committed. */
      'latency-jobs': { type: 'string', default: '30' },
      /**
       * NODE_OPTIONS of the executor child (which always gets the image's node flags, executor_node_flags).
       * The default is what the image starts it with (deploy/bin/mint):
       * a small young generation and old space keep its RSS near 140 MB instead of 190-250 MB at 1M
       * units, at no measurable cost in throughput. Pass '' to measure V8's defaults.
       */
      'node-options': { type: 'string', default: executorNodeOptions },
      /** V8 flags of the executor child, space-separated; the default is the image's (executor_node_flags). Pass '' to measure without them. */
      'node-flags': { type: 'string', default: executorNodeFlags.join(' ') },
      /** `after-commit` (default, as the API does): submits publish their job at once; `relay`: through the outbox relay only. */
      publish: { type: 'string', default: 'after-commit' },
      /** Measurements per size. */
      runs: { type: 'string', default: '1' },
      /** `progress` (default): jobs followed on the bus as watchers do; `poll`: read every 2 ms. */
      watch: { type: 'string', default: 'progress' },
      /** Also write the result as JSON to this file (bench/run.ts sets BENCH_JSON). */
      json: { type: 'string', default: process.env['BENCH_JSON'] ?? '' },
    },
  });
  const result = await benchMint({
    sizes: args.sizes.split(',').map(Number),
    chunk: args.chunk,
    writers: args.writers,
    baselineTx: args['baseline-tx'],
    nodeOptions: args['node-options'],
    nodeFlags: args['node-flags'].split(' ').filter((flag) => flag !== ''),
    runs: Number(args.runs),
    latencyJobs: Number(args['latency-jobs']),
    publish: args.publish !== 'relay',
    watch: args.watch === 'poll' ? 'poll' : 'progress',
  });
  if (args.json) writeFileSync(args.json, JSON.stringify(result));
}
