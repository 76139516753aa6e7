// `npm run bench:watch`: what open WatchMintJob streams cost the database and the API. For each
// progress mode (`WATCH_PROGRESS=polled`, the per-stream 250 ms read of before, and `pushed`, the
// executor's published progress fanned out by one subscription per API process), in alternating
// order and BENCH_RUNS times (default 2), a fresh stack (bench/services.ts: scratch database,
// stream, the API and one executor as operators run them) mints one job of BENCH_UNITS units
// (default 1,000,000, 100-unit chunks, one writer, so the mint outlasts the measurement). While it
// runs, the database's committed transactions per second (pg_stat_database xact_commit +
// xact_rollback of the scratch database: every statement outside a transaction is one; the
// executor's own chunk transactions are in both windows) and the API process's CPU (from /proc) are
// measured for BENCH_WINDOW seconds (default 8) with BENCH_WATCHERS (default 2,000) streams open on
// the API over one HTTP/2 connection (once all have had their first message, within
// BENCH_OPEN_SECONDS, default 240), with the API's RSS at the end, and right after the streams
// closed for as long again without them (the executor's own load, at the same pace).
// Prints the queries per second the watchers add, the API's CPU and RSS per mode, and the ratios
// pushed / polled. BENCH_JSON names a file for the figures as JSON. Exits 1 when a stream failed
// or the job finished before the measurement did (then raise BENCH_UNITS or lower BENCH_WINDOW).

import { writeFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { createClient, type Client } from '@connectrpc/connect';
import { createConnectTransport } from '@connectrpc/connect-node';
import pg from 'pg';
import { ActivationMode, IdentityMode, MintService } from '@mint/contract';
import { seedDemo } from '@mint/usecases';
import { adminUrl } from './scratch-database.ts';
import { cpuMsOf, createStack, rssOf } from './services.ts';

/** The two designs compared. */
export type WatchMode = 'polled' | 'pushed';

/** What `benchWatch` measures. */
export interface WatchBenchOptions {
  readonly watchers: number;
  readonly units: number;
  readonly windowSeconds: number;
  readonly runs: number;
  /** How long the streams may take to open. */
  readonly openSeconds: number;
}

/** One mode's figures in one run. */
export interface WatchFigures {
  readonly mode: WatchMode;
  /** Committed transactions per second of the database with no stream open (the executor's own). */
  readonly idleQps: number;
  /** The same with the streams open. */
  readonly watchedQps: number;
  /** What the streams add: watchedQps - idleQps. */
  readonly watcherQps: number;
  /** CPU of the API process with the streams open, percent of one core. */
  readonly apiCpuPercent: number;
  /** RSS of the API process at the end of the window, MB. */
  readonly apiRssMb: number;
  /** Updates the streams received during the window, in total. */
  readonly updates: number;
}

/** Everything `benchWatch` measured. */
export interface WatchBenchResult {
  readonly options: WatchBenchOptions;
  readonly runs: readonly (readonly WatchFigures[])[];
}

/** Committed plus rolled-back transactions of database `name` so far (the statistics collector's view). */
async function transactions(adminUrl: string, name: string): Promise<number> {
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  try {
    // The statistics are cached per transaction: a fresh connection reads a fresh snapshot.
    const { rows } = await client.query<{ n: string }>('select xact_commit + xact_rollback as n from pg_stat_database where datname = $1', [name]);
    return Number(rows[0]?.n ?? 0);
  } finally {
    await client.end();
  }
}

/** Transactions per second of the database and CPU ms of `pid` over `seconds`. */
async function measure(adminUrl: string, name: string, pid: number, seconds: number): Promise<{ qps: number; cpuMs: number }> {
  const tx0 = await transactions(adminUrl, name);
  const cpu0 = cpuMsOf(pid) ?? 0;
  const started = performance.now();
  await sleep(seconds * 1000);
  const elapsed = (performance.now() - started) / 1000;
  const tx1 = await transactions(adminUrl, name);
  const cpu1 = cpuMsOf(pid) ?? 0;
  // The statistics reads connect to the admin database, so they are not counted.
  return { qps: (tx1 - tx0) / elapsed, cpuMs: (cpu1 - cpu0) / elapsed };
}

async function oneMode(mode: WatchMode, options: WatchBenchOptions, progress: (line: string) => void): Promise<WatchFigures> {
  const stack = await createStack('bench_watch');
  const abort = new AbortController();
  try {
    const seed = await seedDemo(stack.ctx);
    // One credential opens every stream within a second or two: its request rate limit is off here.
    const api = await stack.start('api', {
      RATE_LIMIT_PER_CREDENTIAL: '0',
      WATCH_PROGRESS: mode,
      WATCH_MAX_STREAMS_PER_CALLER: String(Math.max(options.watchers, 1)),
      HTTP2_MAX_CONCURRENT_STREAMS: String(Math.min(options.watchers + 100, 10_000)),
    });
    await stack.start('executor', { MINT_CHUNK_SIZE: '100', EXECUTOR_JOB_WRITERS: '1', EXECUTOR_CONCURRENCY: '1' });
    const transport = createConnectTransport({ baseUrl: `http://127.0.0.1:${api.port}`, httpVersion: '2' });
    const mint: Client<typeof MintService> = createClient(MintService, transport);
    const auth = { headers: { authorization: `Bearer ${seed.access_token}` } };
    const { mintJobId } = await mint.submitMintRequest(
      {
        brandId: seed.brand_id,
        productId: seed.product_id,
        requestedQuantity: options.units,
        identityMode: IdentityMode.SERIAL,
        activationMode: ActivationMode.ACTIVE_AT_MINT,
      },
      auth,
    );
    let updates = 0;
    let streaming = 0;
    let failures = 0;
    let done = 0;
    const opened: Promise<void>[] = [];
    for (let i = 0; i < options.watchers; i++) {
      opened.push(
        (async () => {
          try {
            let first = true;
            for await (const update of mint.watchMintJob({ brandId: seed.brand_id, mintJobId }, { ...auth, signal: abort.signal })) {
              if (first) streaming += 1;
              first = false;
              updates += 1;
              if (update.done) done += 1;
            }
          } catch (error) {
            if (!abort.signal.aborted) {
              failures += 1;
              if (failures === 1) progress(`  a stream failed: ${error instanceof Error ? error.message : String(error)}`);
            }
          }
        })(),
      );
    }
    // Every stream's first read is behind us once each has had its first update.
    const openDeadline = Date.now() + options.openSeconds * 1000;
    while (streaming < options.watchers && failures === 0 && Date.now() < openDeadline) await sleep(50);
    if (streaming < options.watchers) throw new Error(`only ${streaming} of ${options.watchers} streams opened within ${options.openSeconds} s (${mode})`);
    const before = updates;
    const watched = await measure(adminUrl, stack.dbName, api.child.pid!, options.windowSeconds);
    const rss = rssOf(api.child.pid!)?.rssMb ?? Number.NaN;
    const windowUpdates = updates - before;
    abort.abort();
    await Promise.all(opened);
    // The quiet window right after, so both see the executor at the same pace.
    await sleep(1000);
    const idle = await measure(adminUrl, stack.dbName, api.child.pid!, options.windowSeconds);
    if (failures > 0) throw new Error(`${failures} of ${options.watchers} streams failed (${mode})`);
    if (done > 0) throw new Error(`the job finished during the ${mode} measurement; raise BENCH_UNITS or lower BENCH_WINDOW`);
    const figures: WatchFigures = {
      mode,
      idleQps: idle.qps,
      watchedQps: watched.qps,
      watcherQps: Math.max(0, watched.qps - idle.qps),
      apiCpuPercent: watched.cpuMs / 10,
      apiRssMb: rss,
      updates: windowUpdates,
    };
    progress(
      `  ${mode.padEnd(6)} no streams ${idle.qps.toFixed(0).padStart(6)} tx/s; ${options.watchers} streams ${watched.qps.toFixed(0).padStart(6)} tx/s` +
        ` (+${figures.watcherQps.toFixed(0)}), API CPU ${figures.apiCpuPercent.toFixed(0)}%, RSS ${rss.toFixed(0)} MB, ${windowUpdates} updates received`,
    );
    return figures;
  } finally {
    abort.abort();
    await stack.close();
  }
}

/** Runs both modes `runs` times in alternating order, a fresh stack each. */
export async function benchWatch(options: WatchBenchOptions, progress: (line: string) => void = console.log): Promise<WatchBenchResult> {
  const runs: WatchFigures[][] = [];
  for (let run = 0; run < options.runs; run++) {
    progress(`run ${run + 1}/${options.runs}`);
    const order: WatchMode[] = run % 2 === 0 ? ['polled', 'pushed'] : ['pushed', 'polled'];
    const figures: WatchFigures[] = [];
    for (const mode of order) figures.push(await oneMode(mode, options, progress));
    runs.push(figures);
  }
  return { options, runs };
}

const median = (values: readonly number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor((sorted.length - 1) / 2)]!;
};

if (import.meta.url === `file://${process.argv[1]}`) {
  const int = (name: string, fallback: number) => Number(process.env[name] ?? fallback);
  const options: WatchBenchOptions = {
    watchers: int('BENCH_WATCHERS', 2_000),
    units: int('BENCH_UNITS', 1_000_000),
    windowSeconds: int('BENCH_WINDOW', 8),
    runs: int('BENCH_RUNS', 2),
    openSeconds: int('BENCH_OPEN_SECONDS', 240),
  };
  console.log(
    `WatchMintJob: ${options.watchers} streams on one API during a ${options.units}-unit mint, ${options.windowSeconds} s windows, ${options.runs} run(s)`,
  );
  benchWatch(options).then(
    (result) => {
      const of = (mode: WatchMode, pick: (f: WatchFigures) => number) =>
        median(
          result.runs
            .flat()
            .filter((f) => f.mode === mode)
            .map(pick),
        );
      const rows: [string, (f: WatchFigures) => number, number][] = [
        ['database tx/s, streams open', (f) => f.watchedQps, 0],
        ['database tx/s the streams add', (f) => f.watcherQps, 0],
        ['API CPU, % of a core', (f) => f.apiCpuPercent, 0],
        ['API RSS, MB', (f) => f.apiRssMb, 0],
      ];
      console.log(`\n${'medians'.padEnd(32)} ${'polled'.padStart(8)} ${'pushed'.padStart(10)} ${'pushed/polled'.padStart(14)}`);
      for (const [label, pick] of rows) {
        const polled = of('polled', pick);
        const pushed = of('pushed', pick);
        console.log(`${label.padEnd(32)} ${polled.toFixed(0).padStart(8)} ${pushed.toFixed(0).padStart(10)} ${(pushed / polled).toFixed(3).padStart(14)}`);
      }
      const json = process.env['BENCH_JSON'];
      if (json) writeFileSync(json, JSON.stringify(result, null, 2));
    },
    (error: unknown) => {
      console.error(error instanceof Error ? error.message : error);
      process.exit(1);
    },
  );
}
