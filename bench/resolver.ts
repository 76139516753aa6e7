// `npm run bench:resolver`: the public resolver under load. Seeds a scratch database with one
// brand and 1,000,000 serial units (BENCH_UNITS overrides), then drives two servers in turn, each
// in a child process, with autocannon at 5,000 requests/s (BENCH_RATE) over loopback, every
// request a browser scan of a random unit (`GET /r/{slug}/01/{gtin}/21/{serial}`, 100,000
// distinct units drawn from all of them):
//   - baseline: a minimal node:http server answering every path with the same 307 redirect,
//     without looking anything up,
//   - the API (startApi: the resolver route with its database lookup and scan event recording).
//
// How autocannon paces: with `overallRate` each connection sends its share of a second back to
// back, as fast as answers come, then waits for the next second. So the latency it reports is
// that of a closed loop with as many requests in flight as connections (latency = connections /
// throughput), not of requests arriving one by one. Each load therefore runs at two connection
// counts:
//   - rate x 2 ms (10 at 5,000 requests/s): the requests in flight when 5,000 requests/s are each
//     answered within the 2 ms target (Little's law). The targets (p50 <= 2 ms, p99 <= 10 ms)
//     are judged on this load.
//   - 50: bursts of 50 requests at once, which measure throughput under a queue; reported with
//     its own baseline, without a target.
// Prints p50/p99/max latency, the rate reached and the answers' status counts, the scan events
// written, and drops the database. Exits 1 when a target is missed.
// BENCH_RATE, BENCH_DURATION, BENCH_CONNECTIONS (comma-separated, first one judged; default
// `rate x 2 ms,50`) override the load; BENCH_API_NODE_ARGS (e.g. `--cpu-prof`) go to the API child.
// BENCH_RUNS repeats the loads (both servers stay up), BENCH_JSON names a file for the figures as
// JSON (bench/run.ts reads it); `benchResolver` is the same as a function.

import type { ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { Writable } from 'node:stream';
import autocannon from 'autocannon';
import { percentile, spawnServer } from './child-server.ts';

const passport = 'https://passports.example/bench';

/** Child mode: serve the API or the baseline on a free port and print it. */
async function serve(mode: string, dbUrl: string): Promise<void> {
  if (mode === 'baseline') {
    const server = createServer((req, res) => {
      res.statusCode = 307;
      res.setHeader('location', passport);
      res.setHeader('cache-control', 'no-store');
      res.setHeader('content-length', 0);
      res.end();
    });
    server.listen(0, '127.0.0.1', () => process.stdout.write(`PORT ${(server.address() as { port: number }).port}\n`));
    return;
  }
  const { openDatabase } = await import('@mint/db');
  const { createLogger } = await import('@mint/runtime');
  const { createUseCaseContext } = await import('@mint/usecases');
  const { startApi } = await import('@mint/api');
  const db = await openDatabase({ url: dbUrl }, { poolSize: 10, applicationName: 'bench-resolver' });
  const ctx = createUseCaseContext({ db, publicBaseUrl: 'http://127.0.0.1:8080' });
  const api = await startApi({
    ctx, config: { port: 0, host: '127.0.0.1', shutdownTimeoutMs: 2_000 },
    logger: createLogger({ logLevel: 'warn' }, { service: 'bench-api' }, new Writable({ write: (c, _e, done) => { process.stderr.write(c); done(); } })),
    readiness: async () => ({ ok: true, checks: {} }),
  });
  process.stdout.write(`PORT ${api.port}\n`);
  process.once('SIGTERM', () => void api.close().then(() => db.close()).then(() => process.exit(0)));
}

function start(mode: string, dbUrl: string): Promise<{ child: ChildProcess; port: number }> {
  const childArgs = mode === 'api' && process.env.BENCH_API_NODE_ARGS ? process.env.BENCH_API_NODE_ARGS.split(' ') : [];
  return spawnServer([...childArgs, import.meta.filename, 'serve', mode, dbUrl], `${mode} server`);
}

/** Latency (ms), answers and the rate reached (answers per second) of one load. */
export interface Figures { p50: number; p99: number; max: number; sent: number; rate: number; statuses: Record<number, number>; errors: number }

/** What `benchResolver` measures. */
export interface ResolverBenchOptions {
  /** Units seeded (the scans pick random ones). */
  readonly units: number;
  /** Requests per second autocannon sends. */
  readonly rate: number;
  /** Seconds of each timed load (after a 3-second warm-up per server). */
  readonly durationSeconds: number;
  /** Connection counts; each run loads both servers at each. The first is the one the targets are judged on. */
  readonly connections: readonly number[];
  /** Rounds of loads (at each connection count: baseline, then API). */
  readonly runs: number;
}

/** One round at one connection count. */
export interface ResolverRun {
  readonly connections: number;
  readonly baseline: Figures;
  readonly api: Figures;
}

/** Everything `benchResolver` measured. */
export interface ResolverBenchResult {
  readonly units: number;
  readonly rate: number;
  readonly durationSeconds: number;
  /** The connection count the targets are judged on (the first of the options'). */
  readonly targetConnections: number;
  readonly runs: readonly ResolverRun[];
  /** Scan events the API recorded (warm-up included). */
  readonly scanEvents: number;
}

/**
 * The connection counts to load with: `spec` (comma-separated) when given, else rate x 2 ms (the
 * requests in flight when every answer takes the 2 ms target; Little's law) and 50.
 */
export function resolverConnections(rate: number, spec?: string): number[] {
  if (spec !== undefined && spec.trim() !== '') return spec.split(',').map((c) => Number(c.trim()));
  return [...new Set([Math.max(1, Math.round(rate * 0.002)), 50])];
}

async function load(port: number, paths: readonly string[], seconds: number, rate: number, connections: number): Promise<Figures> {
  const samples: number[] = [];
  const statuses: Record<number, number> = {};
  let i = 0;
  let finish: (result: autocannon.Result) => void = () => {};
  let fail: (error: unknown) => void = () => {};
  const done = new Promise<autocannon.Result>((resolve, reject) => {
    finish = resolve;
    fail = reject;
  });
  const instance = autocannon({
    url: `http://127.0.0.1:${port}`,
    connections,
    overallRate: rate,
    duration: seconds,
    headers: { accept: 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8' },
    requests: [{ method: 'GET', setupRequest: (req) => ({ ...req, path: paths[i++ % paths.length]! }) }],
  }, (error, result) => (error ? fail(error) : finish(result)));
  instance.on('response', (_client: unknown, statusCode: number, _bytes: number, responseTime: number) => {
    samples.push(responseTime);
    statuses[statusCode] = (statuses[statusCode] ?? 0) + 1;
  });
  const result = await done;
  samples.sort((a, b) => a - b);
  return {
    p50: percentile(samples, 50), p99: percentile(samples, 99), max: samples[samples.length - 1] ?? Number.NaN, sent: samples.length,
    rate: samples.length / seconds, statuses, errors: result.errors + result.timeouts,
  };
}

/**
 * Seeds a scratch database, starts the baseline and the API in child processes, warms each up for
 * 3 s, then runs `runs` rounds of loads (at each connection count: baseline, then API). Kills both
 * children and drops the database whatever happens.
 */
export async function benchResolver(options: ResolverBenchOptions, progress: (line: string) => void = console.log): Promise<ResolverBenchResult> {
  const { units, rate, durationSeconds, connections } = options;
  const { seedUnits } = await import('./unit-seed.ts');
  const { query } = await import('../test/support/sql.ts');
  const started = performance.now();
  const seeded = await seedUnits('bench_resolver', units);
  progress(`seeded ${units.toLocaleString('en')} units in ${((performance.now() - started) / 1000).toFixed(1)} s`);
  const paths: string[] = [];
  for (let n = 0; n < 100_000; n++) {
    const seq = 1 + Math.floor(Math.random() * units);
    paths.push(`/r/${seeded.slug}/01/${seeded.gtin}/21/${createHash('md5').update(String(seq)).digest('hex').slice(0, 20).toUpperCase()}`);
  }
  const servers: { child: ChildProcess; port: number }[] = [];
  try {
    for (const mode of ['baseline', 'api']) servers.push(await start(mode, seeded.url));
    const [baselinePort, apiPort] = servers.map((s) => s.port) as [number, number];
    await load(baselinePort, paths, 3, rate, connections[0]!);
    await load(apiPort, paths, 3, rate, connections[0]!);
    const runs: ResolverRun[] = [];
    for (let run = 0; run < options.runs; run++) {
      for (const count of connections) {
        const baseline = await load(baselinePort, paths, durationSeconds, rate, count);
        const api = await load(apiPort, paths, durationSeconds, rate, count);
        runs.push({ connections: count, baseline, api });
        progress(`run ${run + 1}/${options.runs}, ${count} connections: baseline p50 ${baseline.p50.toFixed(2)} p99 ${baseline.p99.toFixed(2)} ms; API p50 ${api.p50.toFixed(2)} p99 ${api.p99.toFixed(2)} ms`);
      }
    }
    const [scans] = await query<{ n: string }>(seeded.db.em.fork(), 'select count(*) as n from scan_events');
    return { units, rate, durationSeconds, targetConnections: connections[0]!, runs, scanEvents: Number(scans!.n) };
  } finally {
    for (const { child } of servers) {
      if (child.exitCode !== null || child.signalCode !== null) continue;
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      await exited;
    }
    await seeded.drop();
  }
}

if (process.argv[2] === 'serve') {
  await serve(process.argv[3]!, process.argv[4]!);
} else if (import.meta.main) {
  let failed = false;
  try {
    const rate = Number(process.env.BENCH_RATE ?? 5_000);
    const result = await benchResolver({
      units: Number(process.env.BENCH_UNITS ?? 1_000_000), rate,
      durationSeconds: Number(process.env.BENCH_DURATION ?? 20), runs: Number(process.env.BENCH_RUNS ?? 1),
      connections: resolverConnections(rate, process.env.BENCH_CONNECTIONS),
    });
    console.log(`\n${result.rate.toLocaleString('en')} requests/s for ${result.durationSeconds} s (after 3 s warm-up), loopback, milliseconds:`);
    console.log(`${'server'.padEnd(44)} ${'conns'.padStart(5)} ${'p50'.padStart(6)} ${'p99'.padStart(6)} ${'max'.padStart(7)} ${'req/s'.padStart(7)}  statuses`);
    const labels: Record<string, string> = { baseline: 'baseline: bare node:http, fixed 307', api: 'API resolver (lookup + scan event)' };
    for (const run of result.runs) {
      for (const mode of ['baseline', 'api'] as const) {
        const f = run[mode];
        console.log(`${labels[mode]!.padEnd(44)} ${String(run.connections).padStart(5)} ${f.p50.toFixed(2).padStart(6)} ${f.p99.toFixed(2).padStart(6)} ${f.max.toFixed(2).padStart(7)} ${f.rate.toFixed(0).padStart(7)}  ${JSON.stringify(f.statuses)}${f.errors ? ` errors ${f.errors}` : ''}`);
      }
    }
    const judged = result.runs.filter((run) => run.connections === result.targetConnections);
    const ok = judged.every(({ api }) => api.p50 <= 2 && api.p99 <= 10 && Object.keys(api.statuses).join() === '307' && api.errors === 0 && api.rate >= result.rate * 0.98);
    failed = !ok;
    console.log(`targets at ${result.targetConnections} connections (requests in flight at ${result.rate.toLocaleString('en')}/s x 2 ms): p50 <= 2 ms, p99 <= 10 ms, the full rate, every answer a 307: ${ok ? 'ok' : 'MISSED'}`);
    console.log(`scan events written by the API runs (warm-up included): ${result.scanEvents.toLocaleString('en')}`);
    if (process.env.BENCH_JSON) writeFileSync(process.env.BENCH_JSON, JSON.stringify(result));
  } catch (error) {
    failed = true;
    console.error(error);
  }
  process.exitCode = failed ? 1 : 0;
}
