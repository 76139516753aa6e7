// `npm run bench`: every benchmark in one run, written up as bench/REPORT.md and bench/report.json.
// Each benchmark script runs as its own child process (`node bench/<name>.ts`, so one's memory or
// open handles cannot skew the next) with BENCH_JSON naming the file for its figures; its output
// goes to a log in a temporary folder, and this process prints one progress line per step with the
// elapsed time. Every figure is the median of BENCH_RUNS runs with min and max, every speed also as
// a ratio to its baseline measured in the same run. All traffic stays on loopback; each script
// drops its scratch database and stream and stops its children, and this runner kills any child
// still alive when it ends.
//
// Sized to finish within 15 minutes on 2 cores; environment variables scale it:
//   BENCH_RUNS           runs per figure (default 3)
//   BENCH_UNITS          units seeded for reads, resolver and pack export (default 1,000,000)
//   BENCH_LABEL_UNITS    units of the svg and pdf pack rows (default 10,000; their full size is 100,000)
//   BENCH_MINT_SIZES     job sizes of the mint benchmark (default 10000,100000,1000000)
//   BENCH_LOAD_SECONDS   seconds of each resolver and submit load (default 10)
//   BENCH_ITERATIONS     timed calls per read case and run (default 5,000)
//   BENCH_ONLY           comma-separated subset of mint,reads,resolver,passport,packs,submit,webhooks,watch,scans,growth,serials,aggregation,allocation
//   BENCH_ALLOCATION_REQUESTS partner allocations of 10,000 in a row over one batch (default 40: the 1,000,000-unit scenario's partner B)
//   BENCH_SERIAL_UNITS   units of the bulk serial move (default 1,000,000: the issue's size)
//   BENCH_AGGREGATION_UNITS units packed and unpacked (default 1,000,000: the issue's size)
//   BENCH_GROWTH_JOBS    jobs of the growth benchmark, one after another into one database (default 4; the issue's size: 10)
//   BENCH_GROWTH_UNITS   units of each growth job (default 100,000; the issue's size: 1,000,000)
//   BENCH_SCANS          scans replayed by the scan benchmark (default 1,000,000; one run)
//   BENCH_WEBHOOK_EVENTS events of the webhook throughput backlog (default 10,000)
//   BENCH_WATCH_RUNS     runs of the watcher benchmark, each a fresh stack per design (default 2)
//   BENCH_WATCHERS       WatchMintJob streams open on one API (default 2,000)
//   BENCH_REPORT_DIR     where REPORT.md and report.json go (default bench/)
//   BENCH_SOURCE         what to call the code under test in the report (default: git commit, and whether the tree is dirty)
// `node bench/run.ts --render` rewrites REPORT.md from report.json without measuring.

import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, readFileSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { cpus, freemem, hostname, loadavg, release, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { connect } from '@nats-io/transport-node';
import pg from 'pg';
import { adminUrl } from './scratch-database.ts';
import type { MintBenchResult } from './mint.ts';
import type { PacksBenchResult } from './packs.ts';
import type { ReadsBenchResult } from './reads.ts';
import {
  passportBaseline,
  passportScenarios,
  passportTargets,
  resolverScenarios,
  resolverTargets,
  type Figures,
  type Pacing,
  type ResolverBenchResult,
  type ResolverScenario,
} from './resolver.ts';
import type { PassportBenchResult } from './passport.ts';
import type { SubmitBenchResult } from './submit.ts';
import type { WatchBenchResult, WatchFigures, WatchMode } from './watch.ts';
import type { WebhooksBenchResult } from './webhooks.ts';
import type { ScansBenchResult } from './scans.ts';
import type { GrowthBenchResult } from './growth.ts';
import type { SerialMovesBenchResult } from './serial-moves.ts';
import type { AggregationBenchResult } from './aggregation.ts';
import type { AllocationBenchResult } from './allocation.ts';

const benchDir = fileURLToPath(new URL('./', import.meta.url));
const repoRoot = fileURLToPath(new URL('../', import.meta.url));
const env = process.env;
const runs = Number(env['BENCH_RUNS'] ?? 3);
const units = Number(env['BENCH_UNITS'] ?? 1_000_000);
const mintSizes = env['BENCH_MINT_SIZES'] ?? '10000,100000,1000000';
const loadSeconds = Number(env['BENCH_LOAD_SECONDS'] ?? 10);
const iterations = Number(env['BENCH_ITERATIONS'] ?? 5_000);
const only = env['BENCH_ONLY'] ? new Set(env['BENCH_ONLY'].split(',').map((s) => s.trim())) : null;
const reportDir = env['BENCH_REPORT_DIR'] ?? benchDir;
const natsUrl = env['NATS_URL'] ?? 'nats://127.0.0.1:4222';

const started = performance.now();
const elapsed = () => {
  const s = Math.round((performance.now() - started) / 1000);
  return `${String(Math.floor(s / 60)).padStart(2, '0')}:${String(s % 60).padStart(2, '0')}`;
};
const progress = (line: string) => console.log(`[${elapsed()}] ${line}`);

/** Median, min and max of a figure over the runs. */
interface Spread {
  readonly median: number;
  readonly min: number;
  readonly max: number;
  readonly runs: readonly number[];
}

function spread(values: readonly number[]): Spread {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  const median = sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
  return { median, min: sorted[0]!, max: sorted[sorted.length - 1]!, runs: values };
}

/** One row of the report: a figure, its unit, its baseline of the same runs and their per-run ratio. */
interface Row {
  readonly benchmark: string;
  readonly figure: string;
  readonly unit: string;
  readonly value: Spread;
  readonly baseline: { readonly label: string; readonly value: Spread } | null;
  /** value / baseline per run (for rates: the share of the baseline's speed; for times: how many times slower). */
  readonly ratio: Spread | null;
  /** A target of the issue and whether the median meets it. */
  readonly target?: { readonly text: string; readonly met: boolean };
}

const children = new Set<ChildProcess>();
const killChildren = () => {
  for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
};
process.once('SIGINT', () => {
  killChildren();
  process.exit(130);
});

/** Runs `node bench/<script>` with BENCH_JSON set, its output to a log; resolves its JSON figures. */
async function step<T>(name: string, script: string, args: readonly string[], childEnv: Record<string, string>, logDir: string): Promise<T> {
  const jsonFile = join(logDir, `${name}.json`);
  const logFile = join(logDir, `${name}.log`);
  const log = createWriteStream(logFile);
  progress(
    `${name}: node bench/${script} ${args.join(' ')} ${Object.entries(childEnv)
      .map(([k, v]) => `${k}=${v}`)
      .join(' ')}`.trimEnd(),
  );
  const child = spawn(process.execPath, [join(benchDir, script), ...args], {
    cwd: repoRoot,
    env: { ...env, ...childEnv, BENCH_JSON: jsonFile },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.add(child);
  let partial = '';
  child.stdout!.on('data', (chunk: Buffer) => {
    log.write(chunk);
    partial += chunk.toString();
    const lines = partial.split('\n');
    partial = lines.pop()!;
    // The script's own step lines (seeding, runs) as progress; its final tables go to the log only.
    for (const line of lines) if (/^(seeded|vacuum|run \d|database|job\s+\d|reads at|\s*\d+ units)/.test(line)) progress(`${name}: ${line.trim()}`);
  });
  child.stderr!.pipe(log, { end: false });
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  children.delete(child);
  log.end();
  let figures: T;
  try {
    figures = JSON.parse(readFileSync(jsonFile, 'utf8')) as T;
  } catch {
    throw new Error(`${name} produced no figures (exit ${code}); its log:\n${readFileSync(logFile, 'utf8').slice(-3000)}`);
  }
  progress(`${name}: done (exit ${code}${code ? ', a target missed or a check failed: see the report' : ''})`);
  return figures;
}

function firstLine(command: string, args: readonly string[]): string {
  try {
    return execFileSync(command, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] })
      .split('\n')[0]!
      .trim();
  } catch {
    return 'unknown';
  }
}

/** The machine and every version the figures depend on. */
async function machine(): Promise<Record<string, string | number>> {
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  const { rows } = await client.query<{ version: string }>('select version()');
  const settings = await client.query<{ name: string; setting: string }>(
    `select name, current_setting(name) as setting from pg_settings where name in ('shared_buffers', 'synchronous_commit', 'max_wal_size', 'fsync') order by name`,
  );
  await client.end();
  const nc = await connect({ servers: natsUrl });
  const natsVersion = nc.info?.version ?? 'unknown';
  await nc.close();
  const osRelease = (() => {
    try {
      return /PRETTY_NAME="([^"]+)"/.exec(readFileSync('/etc/os-release', 'utf8'))?.[1] ?? 'unknown';
    } catch {
      return 'unknown';
    }
  })();
  const cpu = cpus();
  return {
    host: hostname(),
    cpuModel: cpu[0]?.model ?? 'unknown',
    cores: cpu.length,
    memoryGb: Math.round((totalmem() / 1024 ** 3) * 10) / 10,
    freeMemoryGbAtStart: Math.round((freemem() / 1024 ** 3) * 10) / 10,
    loadAverageAtStart: loadavg()
      .map((l) => l.toFixed(2))
      .join(' '),
    os: `${osRelease}, Linux ${release()}`,
    node: process.version,
    postgres: rows[0]!.version.split(' on ')[0]!,
    postgresSettings: settings.rows.map((s) => `${s.name}=${s.setting}`).join(', '),
    natsServer: `v${natsVersion}`,
    natsServerBinary: firstLine('nats-server', ['--version']),
  };
}

function packageVersions(): Record<string, string> {
  const names = [
    '@mikro-orm/core',
    '@mikro-orm/postgresql',
    'pg',
    'pg-copy-streams',
    '@connectrpc/connect',
    '@connectrpc/connect-node',
    '@bufbuild/protobuf',
    '@nats-io/jetstream',
    '@nats-io/transport-node',
    'pino',
    'jose',
    'autocannon',
    'typescript',
  ];
  const versions: Record<string, string> = {};
  const own = JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')) as { name: string };
  const dirty = firstLine('git', ['-C', repoRoot, 'status', '--porcelain']);
  versions[own.name] =
    env['BENCH_SOURCE'] ??
    `${firstLine('git', ['-C', repoRoot, 'rev-parse', '--short', 'HEAD'])}${dirty !== '' && dirty !== 'unknown' ? ' + uncommitted changes' : ''}`;
  for (const name of names) {
    for (const base of [repoRoot, join(repoRoot, 'packages/db'), join(repoRoot, 'packages/bus'), join(repoRoot, 'services/api')]) {
      try {
        versions[name] = (JSON.parse(readFileSync(join(base, 'node_modules', name, 'package.json'), 'utf8')) as { version: string }).version;
        break;
      } catch {
        // not installed under this folder
      }
    }
  }
  return versions;
}

const rows: Row[] = [];
const notes: string[] = [];
const ratioOf = (a: readonly number[], b: readonly number[]) => spread(a.map((v, i) => v / b[i]!));

function addMint(r: MintBenchResult): void {
  const sizes = [...new Set(r.runs.map((x) => x.size))];
  for (const size of sizes) {
    const of = r.runs.filter((x) => x.size === size);
    const mint = of.map((x) => x.mintRate);
    const base = of.map((x) => x.baseRate);
    rows.push({
      benchmark: 'mint',
      figure: `${size.toLocaleString('en')} serial units end to end (submit -> COMPLETED)${of.length === runs ? '' : `, ${of.length} measurements`}`,
      unit: 'units/s',
      value: spread(mint),
      baseline: { label: "fair limit: COPY into mint_units in the executor's chunk size over its writer connections", value: spread(base) },
      ratio: ratioOf(mint, base),
      target: { text: `ratio >= ${size <= 10_000 ? 0.9 : 0.95}`, met: ratioOf(mint, base).median >= (size <= 10_000 ? 0.9 : 0.95) },
    });
    rows.push({
      benchmark: 'mint',
      figure: `${size.toLocaleString('en')} units: submit -> first chunk committed`,
      unit: 'ms',
      value: spread(of.map((x) => x.firstChunkMs)),
      baseline: null,
      ratio: null,
    });
    rows.push({
      benchmark: 'mint',
      figure: `${size.toLocaleString('en')} units: executor RSS after the job`,
      unit: 'MB',
      value: spread(of.map((x) => x.rssMb)),
      baseline: null,
      ratio: null,
    });
  }
  rows.push({ benchmark: 'mint', figure: 'executor peak RSS over the benchmark', unit: 'MB', value: spread([r.executorPeakMb]), baseline: null, ratio: null });
  if (r.firstChunk) {
    for (const field of ['p50Ms', 'p99Ms'] as const) {
      rows.push({
        benchmark: 'mint',
        figure: `submit -> first chunk committed ${field.slice(0, 3)} (${r.firstChunk.jobs} one-chunk jobs)`,
        unit: 'ms',
        value: spread([r.firstChunk[field]]),
        baseline: null,
        ratio: null,
        ...(field === 'p50Ms' ? { target: { text: 'p50 <= 50 ms', met: r.firstChunk[field] <= 50 } } : {}),
      });
    }
  }
}

function addReads(r: ReadsBenchResult): void {
  const pick = (index: number, field: 'p50' | 'p99') => r.runs.map((run) => run[index]!.figures[field]);
  const depth = r.depth.toLocaleString('en');
  for (const [index, base, label] of [
    [0, 2, 'ListMintUnits, first page'],
    [1, 3, `ListMintUnits, page at depth ${depth}`],
  ] as const) {
    for (const field of ['p50', 'p99'] as const) {
      const value = pick(index, field);
      const baseline = pick(base, field);
      const med = spread(value).median;
      rows.push({
        benchmark: 'reads',
        figure: `${label} ${field} (in process, ${r.iterations} calls per run)`,
        unit: 'ms',
        value: spread(value),
        baseline: { label: `bare keyset SELECT over the same index${index === 1 ? ', same depth' : ''}`, value: spread(baseline) },
        ratio: ratioOf(value, baseline),
        ...(field === 'p99' ? { target: { text: 'p99 <= 10 ms', met: med <= 10 } } : {}),
      });
    }
  }
  for (const field of ['p50', 'p99'] as const) {
    const value = pick(4, field);
    const baseline = pick(5, field);
    rows.push({
      benchmark: 'reads',
      figure: `GetMintKpis ${field} (in process, ${r.iterations} calls per run)`,
      unit: 'ms',
      value: spread(value),
      baseline: { label: 'bare SELECT of the same sums, prepared on a plain pg client', value: spread(baseline) },
      ratio: ratioOf(value, baseline),
      ...(field === 'p99' ? { target: { text: 'p99 <= 1 ms', met: spread(value).median <= 1 } } : {}),
    });
  }
  notes.push(
    `reads: ${r.units.toLocaleString('en')} units in one brand; plan at depth: ${r.plan.node} on ${r.plan.index} (${r.plan.executionMs.toFixed(3)} ms).`,
  );
}

const resolverRowNames: Readonly<Record<ResolverScenario, string>> = {
  unit: 'GET /r/... unit scan',
  walkUp: 'GET /r/... walk-up scan (link on the GTIN)',
  linkset: 'GET /r/...?linkType=linkset',
  domain: 'GET /01/... on a brand domain',
  hotUnit: "GET /r/... unit scan over the passport rows' unit count",
  page: 'GET /r/... passport page',
  credential: 'GET /r/... passport credential (vc+jwt)',
};

/** How each pacing reads in a figure's name. */
const pacingNames: Readonly<Record<Pacing, string>> = { steady: 'steady', bursts: 'in per-second bursts (autocannon)' };

function addResolver(r: ResolverBenchResult): void {
  for (const [connections, pacing] of [...new Set(r.runs.map((x) => `${x.connections}/${x.pacing}`))].map((k) => k.split('/') as [string, Pacing])) {
    const runs = r.runs.filter((x) => x.connections === Number(connections) && x.pacing === pacing);
    const at = `${r.rate.toLocaleString('en')} req/s ${pacingNames[pacing]}, ${connections} connections`;
    const targets = resolverTargets(Number(connections), r.targetConnections);
    // The floor: what one indexed read of the unit per request costs on this machine, judged against the same targets for information.
    for (const field of ['p50', 'p99'] as const) {
      const floor = runs.map((x) => x.floor[field]);
      const limit = targets?.[field];
      rows.push({
        benchmark: 'resolver',
        figure: `floor: node:http + one indexed unit read, ${field} at ${at}`,
        unit: 'ms',
        value: spread(floor),
        baseline: { label: 'minimal node:http server answering a fixed 307', value: spread(runs.map((x) => x.baseline[field])) },
        ratio: ratioOf(
          floor,
          runs.map((x) => x.baseline[field]),
        ),
        ...(limit === undefined ? {} : { target: { text: `${field} <= ${limit} ms (the machine's, for information)`, met: spread(floor).median <= limit } }),
      });
      const api = runs.map((x) => x.api[field]);
      rows.push({
        benchmark: 'resolver',
        figure: `${resolverRowNames.unit} ${field} against the floor at ${at}`,
        unit: 'ms',
        value: spread(api),
        baseline: { label: 'floor: node:http + one indexed unit read per request', value: spread(floor) },
        ratio: ratioOf(api, floor),
      });
    }
    const perScan = (f: Figures) => f.cpuUs + f.dbCpuUs;
    if (runs.every((x) => Number.isFinite(perScan(x.api)) && Number.isFinite(perScan(x.floor)))) {
      rows.push({
        benchmark: 'resolver',
        figure: `API + database CPU per unit scan at ${at}`,
        unit: 'us',
        value: spread(runs.map((x) => perScan(x.api))),
        baseline: {
          label: 'floor: node:http + one indexed unit read, its process + database CPU per request',
          value: spread(runs.map((x) => perScan(x.floor))),
        },
        ratio: ratioOf(
          runs.map((x) => perScan(x.api)),
          runs.map((x) => perScan(x.floor)),
        ),
      });
    }
    // The hosted passport's rows against the unit redirect (the unit scan) of the same round; judged at the judged count, steady.
    const judged = Number(connections) === r.targetConnections && pacing === 'steady';
    for (const scenario of passportScenarios) {
      if (runs.some((x) => x.scenarios[scenario] === undefined)) continue;
      const unit = runs.map((x) => x.scenarios[passportBaseline]!);
      const rowOf = runs.map((x) => x.scenarios[scenario]!);
      for (const [what, unitName, pick, limit] of [
        ['p50', 'ms', (f: Figures) => f.p50, passportTargets.p50],
        ['API CPU per answer', 'us', (f: Figures) => f.cpuUs, passportTargets.cpu],
      ] as const) {
        const ratio = ratioOf(rowOf.map(pick), unit.map(pick));
        rows.push({
          benchmark: 'resolver',
          figure: `${resolverRowNames[scenario]} ${what} at ${at}`,
          unit: unitName,
          value: spread(rowOf.map(pick)),
          baseline: { label: `${resolverRowNames[passportBaseline]} (the unit redirect), same round`, value: spread(unit.map(pick)) },
          ratio,
          ...(judged ? { target: { text: `<= ${limit}x the unit redirect`, met: ratio.median <= limit } } : {}),
        });
      }
    }
    for (const scenario of resolverScenarios) {
      if (passportScenarios.includes(scenario)) continue;
      if (runs.some((x) => x.scenarios[scenario] === undefined)) continue;
      for (const field of ['p50', 'p99'] as const) {
        const api = runs.map((x) => x.scenarios[scenario]![field]);
        const base = runs.map((x) => x.baseline[field]);
        const limit = targets?.[field];
        rows.push({
          benchmark: 'resolver',
          figure: `${resolverRowNames[scenario]} ${field} at ${at}`,
          unit: 'ms',
          value: spread(api),
          baseline: { label: 'minimal node:http server answering a fixed 307', value: spread(base) },
          ratio: ratioOf(api, base),
          ...(limit === undefined ? {} : { target: { text: `${field} <= ${limit} ms`, met: spread(api).median <= limit } }),
        });
        // A missed tail: was the API's event loop held (its own work or collector), or were the answers late elsewhere?
        if (field === 'p99' && limit !== undefined && spread(api).median > limit) {
          const per = (f: (x: Figures) => number) => runs.map((x) => f(x.scenarios[scenario]!).toFixed(1)).join(', ');
          notes.push(
            `resolver ${resolverRowNames[scenario]} at ${at} missed p99 <= ${limit} ms; per run: p99 ${per((x) => x.p99)} ms, ` +
              `longest API event-loop hold ${per((x) => x.loopMaxMs)} ms, longest GC pause ${per((x) => x.gcMaxMs)} ms; the baseline's p99 ${runs.map((x) => x.baseline.p99.toFixed(1)).join(', ')} ms, ` +
              `the floor's ${runs.map((x) => x.floor.p99.toFixed(1)).join(', ')} ms.`,
          );
        }
      }
    }
    // CPU per answer: the API process and the database's processes serving it, against the baseline process.
    const unitCpu = runs.map((x) => x.api.cpuUs).filter((x) => Number.isFinite(x));
    const baseCpu = runs.map((x) => x.baseline.cpuUs).filter((x) => Number.isFinite(x));
    if (unitCpu.length > 0 && baseCpu.length === unitCpu.length) {
      rows.push({
        benchmark: 'resolver',
        figure: `API CPU per unit scan at ${at}`,
        unit: 'us',
        value: spread(unitCpu),
        baseline: { label: 'minimal node:http server answering a fixed 307', value: spread(baseCpu) },
        ratio: ratioOf(unitCpu, baseCpu),
      });
    }
    // Garbage collection pauses of the API during the unit scan load, against the baseline process's.
    const gc = runs.map((x) => x.api.gcMsPerSecond);
    const baseGc = runs.map((x) => x.baseline.gcMsPerSecond);
    rows.push({
      benchmark: 'resolver',
      figure: `API garbage collection pauses per second, unit scan at ${at}`,
      unit: 'ms',
      value: spread(gc),
      baseline: { label: 'minimal node:http server answering a fixed 307', value: spread(baseGc) },
      ratio: baseGc.every((v) => v > 0) ? ratioOf(gc, baseGc) : null,
    });
    rows.push({
      benchmark: 'resolver',
      figure: `longest API garbage collection pause, unit scan at ${at}`,
      unit: 'ms',
      value: spread(runs.map((x) => x.api.gcMaxMs)),
      baseline: { label: 'minimal node:http server answering a fixed 307', value: spread(runs.map((x) => x.baseline.gcMaxMs)) },
      ratio: null,
    });
    rows.push({
      benchmark: 'resolver',
      figure: `longest API event-loop hold, unit scan at ${at}`,
      unit: 'ms',
      value: spread(runs.map((x) => x.api.loopMaxMs)),
      baseline: { label: 'minimal node:http server answering a fixed 307', value: spread(runs.map((x) => x.baseline.loopMaxMs)) },
      ratio: null,
    });
    const dbCpu = runs.map((x) => x.api.dbCpuUs).filter((x) => Number.isFinite(x));
    if (dbCpu.length > 0)
      rows.push({ benchmark: 'resolver', figure: `database CPU per unit scan at ${at}`, unit: 'us', value: spread(dbCpu), baseline: null, ratio: null });
    const statuses = runs.map((x) => `${JSON.stringify(x.api.statuses)} at ${x.api.rate.toFixed(0)}/s${x.api.errors ? ` errors ${x.api.errors}` : ''}`);
    notes.push(`resolver at ${at}: API answers per run ${statuses.join(', ')}.`);
  }
  const sign = r.signing;
  rows.push({
    benchmark: 'resolver',
    figure: `item credential signing (signer over distinct ${sign.payloadBytes}-byte credentials, none kept)`,
    unit: 'per s',
    value: spread([sign.signerPerSecond]),
    baseline: { label: 'bare Ed25519 sign loop (node:crypto) of payloads of the same size, back to back per round', value: spread([sign.barePerSecond]) },
    ratio: spread(sign.ratios),
    target: { text: `>= ${passportTargets.signing}x`, met: sign.ratio >= passportTargets.signing },
  });
  notes.push(
    `resolver: ${r.units.toLocaleString('en')} units, ${r.links.toLocaleString('en')} link rows, ${r.durationSeconds} s per load; targets p50 <= 1 ms and p99 <= 5 ms at ${r.targetConnections} connections (requests in flight at ${r.rate.toLocaleString('en')}/s when each takes 2 ms), p99 <= 10 ms at 50; scan events recorded ${r.scanEvents.toLocaleString('en')}.`,
  );
}

/** bench:passport: the passport page and credential against the unit redirect, on their own API child; one run. */
function addPassport(r: PassportBenchResult): void {
  const [redirect, ...others] = r.rows;
  const at = `${r.rate.toLocaleString('en')} req/s (autocannon), ${r.connections} connections, ${r.units} units a product`;
  for (const row of others) {
    for (const [what, unit, pick, limit] of [
      ['p50', 'ms', (x: PassportBenchResult['rows'][number]) => x.p50, passportTargets.p50],
      ['API CPU per answer', 'ms', (x: PassportBenchResult['rows'][number]) => x.cpuMsPerAnswer, passportTargets.cpu],
    ] as const) {
      const ratio = pick(row) / pick(redirect!);
      rows.push({
        benchmark: 'passport',
        figure: `${row.name} ${what} at ${at}`,
        unit,
        value: spread([pick(row)]),
        baseline: { label: "unit redirect to the product's external passport URL, same API, same run", value: spread([pick(redirect!)]) },
        ratio: spread([ratio]),
        target: { text: `<= ${limit}x the unit redirect`, met: ratio <= limit },
      });
    }
  }
  rows.push({
    benchmark: 'passport',
    figure: `item credential signing (${r.signing.payloadBytes}-byte credentials, none kept)`,
    unit: 'per s',
    value: spread([r.signing.signerPerSecond]),
    baseline: { label: 'bare Ed25519 sign loop (node:crypto), same payload size, back to back per round', value: spread([r.signing.barePerSecond]) },
    ratio: spread(r.signing.ratios),
    target: { text: `>= ${passportTargets.signing}x`, met: r.signing.ratio >= passportTargets.signing },
  });
}

function addPacks(r: PacksBenchResult): void {
  const base = r.runs.map((x) => x.baselineSeconds);
  const baseRate = base.map((s) => r.units / s);
  // The default pack into a filesystem store and into a NATS Object Store bucket (the executor's default store),
  // then the pack of units.csv and units.jsonl only (the default pack's figure before EPCIS joined it).
  const names = { defaultPack: 'default payload pack', natsPack: 'default payload pack into NATS', tabularPack: 'payload pack' } as const;
  for (const which of ['defaultPack', 'natsPack', 'tabularPack'] as const) {
    const packs = r.runs.map((x) => x[which]);
    const pack = packs.map((p) => p.seconds);
    const name = names[which];
    rows.push({
      benchmark: 'pack export',
      figure: `${r.units.toLocaleString('en')}-unit ${name} (${packs[0]!.label})`,
      unit: 's',
      value: spread(pack),
      baseline: { label: 'bare COPY ... TO STDOUT (csv) into a file', value: spread(base) },
      ratio: ratioOf(pack, base),
      target: { text: `<= ${r.targetSeconds} s`, met: spread(pack).median <= r.targetSeconds },
    });
    const unitsPerSecond = pack.map((s) => r.units / s);
    rows.push({
      benchmark: 'pack export',
      figure: `${name} export rate`,
      unit: 'units/s',
      value: spread(unitsPerSecond),
      baseline: { label: 'bare COPY TO STDOUT', value: spread(baseRate) },
      ratio: ratioOf(unitsPerSecond, baseRate),
    });
    const peak = packs.map((p) => p.peakRssMb);
    rows.push({
      benchmark: 'pack export',
      figure: `${name} peak RSS (a process of its own, executor NODE_OPTIONS)`,
      unit: 'MB',
      value: spread(peak),
      baseline: null,
      ratio: null,
      target: { text: `<= ${r.targetRssMb} MB`, met: spread(peak).median <= r.targetRssMb },
    });
  }
  for (const format of [...new Set((r.formats ?? []).map((f) => f.format))]) {
    const of = r.formats.filter((f) => f.format === format);
    const rate = of.map((f) => f.units / f.packSeconds);
    const baseRate = of.map((f) => (f.baselineUnits ?? f.units) / f.baselineSeconds);
    rows.push({
      benchmark: 'pack export',
      figure: `${format} pack of ${of[0]!.units.toLocaleString('en')} units`,
      unit: 'units/s',
      value: spread(rate),
      baseline: { label: of[0]!.baselineLabel, value: spread(baseRate) },
      ratio: ratioOf(rate, baseRate),
    });
    const formatPeak = of.map((f) => f.peakRssMb);
    const baselinePeak = of.flatMap((f) => (f.baselinePeakRssMb === null || f.baselinePeakRssMb === undefined ? [] : [f.baselinePeakRssMb]));
    rows.push({
      benchmark: 'pack export',
      figure: `${format} pack peak RSS (child process started as the executor)`,
      unit: 'MB',
      value: spread(formatPeak),
      baseline: baselinePeak.length === 0 ? null : { label: "the baseline's child process", value: spread(baselinePeak) },
      ratio: null,
      target: { text: `<= ${r.targetRssMb} MB`, met: spread(formatPeak).median <= r.targetRssMb },
    });
  }
  const label = (r.formats ?? []).find((f) => f.format === 'pdf' || f.format === 'svg');
  if (label !== undefined && label.units < 100_000) {
    notes.push(
      `pack export: the svg and pdf rows hold ${label.units.toLocaleString('en')} labels (BENCH_LABEL_UNITS) to keep the run short; ` +
        'their full size is `BENCH_FORMATS=svg,pdf npm run bench:packs` (100,000 labels each).',
    );
  }
  const mb = (b: number) => (b / 1024 / 1024).toFixed(0);
  notes.push(
    `pack export: ${mb(r.runs[0]!.defaultPack.bytes)} MB of data files written by the default pack, ${mb(r.runs[0]!.tabularPack.bytes)} MB by the csv + jsonl pack, against ${mb(r.runs[0]!.baselineBytes)} MB by the baseline (units.csv's rows).`,
  );
}

function addSubmit(r: SubmitBenchResult): void {
  const api = r.runs.map((x) => x.api.rps);
  const base = r.runs.map((x) => x.baseline.rps);
  rows.push({
    benchmark: 'submit',
    figure: `SubmitMintRequest over Connect JSON, ${r.connections} connections, ${r.durationSeconds} s`,
    unit: 'req/s',
    value: spread(api),
    baseline: { label: 'minimal node:http server parsing the same JSON', value: spread(base) },
    ratio: ratioOf(api, base),
  });
  const withPgbench = r.runs.filter((x) => x.pgbench !== null);
  if (withPgbench.length > 0) {
    const a = withPgbench.map((x) => x.api.rps);
    const extended = withPgbench.map((x) => x.pgbench!.extended.tps);
    const prepared = withPgbench.map((x) => x.pgbench!.prepared.tps);
    rows.push({
      benchmark: 'submit',
      figure: `SubmitMintRequest, ${r.connections} connections, against the database's limit`,
      unit: 'req/s',
      value: spread(a),
      baseline: {
        label: `pgbench of the submit's own statements, ${r.connections} clients, each parsed and planned per run (extended protocol)`,
        value: spread(extended),
      },
      ratio: ratioOf(a, extended),
      target: { text: 'ratio >= 0.7', met: ratioOf(a, extended).median >= 0.7 },
    });
    rows.push({
      benchmark: 'submit',
      figure: `SubmitMintRequest, ${r.connections} connections, against the database's limit with plans kept`,
      unit: 'req/s',
      value: spread(a),
      baseline: {
        label: `pgbench of the submit's own statements, ${r.connections} clients, prepared once per connection (as the API sends them)`,
        value: spread(prepared),
      },
      ratio: ratioOf(a, prepared),
    });
    // The floor against the same pgbench: how much of the database's limit any Node.js service sending these statements reaches here.
    const floor = withPgbench.map((x) => x.floor.rps);
    rows.push({
      benchmark: 'submit',
      figure: `floor: node:http running the submit's statements prepared, ${r.connections} connections, against the database's limit with plans kept`,
      unit: 'req/s',
      value: spread(floor),
      baseline: { label: `pgbench of the submit's own statements, ${r.connections} clients, prepared once per connection`, value: spread(prepared) },
      ratio: ratioOf(floor, prepared),
    });
  }
  const floor = r.runs.map((x) => x.floor.rps);
  rows.push({
    benchmark: 'submit',
    figure: `SubmitMintRequest, ${r.connections} connections, against the floor`,
    unit: 'req/s',
    value: spread(api),
    baseline: {
      label: "floor: minimal node:http parsing the JSON and running the submit's statements prepared (no Connect, validation, auth or bus)",
      value: spread(floor),
    },
    ratio: ratioOf(api, floor),
  });
  const cpu = r.runs.map((x) => x.api.cpuUsPerRequest).filter((x): x is number => typeof x === 'number');
  if (cpu.length > 0) rows.push({ benchmark: 'submit', figure: 'API CPU per submit', unit: 'us', value: spread(cpu), baseline: null, ratio: null });
  for (const field of ['p50', 'p99'] as const) {
    const a = r.runs.map((x) => x.api[field]);
    const b = r.runs.map((x) => x.baseline[field]);
    rows.push({
      benchmark: 'submit',
      figure: `SubmitMintRequest latency ${field}`,
      unit: 'ms',
      value: spread(a),
      baseline: { label: 'minimal node:http server', value: spread(b) },
      ratio: ratioOf(a, b),
    });
  }
  const statuses = r.runs.map((x) => JSON.stringify(x.api.statuses) + (x.api.errors ? ` errors ${x.api.errors}` : ''));
  notes.push(
    `submit: 10 serial units per request, a new idempotency key each, no executor running; API answers per run ${statuses.join(', ')}; ` +
      `${r.jobs.toLocaleString('en')} jobs in the database for ${r.apiOks.toLocaleString('en')} answered 200s (requests in flight when a load stops are committed but not counted).`,
  );
}

function addWebhooks(r: WebhooksBenchResult): void {
  const rate = r.runs.map((x) => x.workerPerSecond);
  const baseRate = r.runs.map((x) => x.baselinePerSecond);
  rows.push({
    benchmark: 'webhooks',
    figure: `${r.events.toLocaleString('en')} events to ${r.endpoints} endpoints, concurrency ${r.concurrency}`,
    unit: 'deliveries/s',
    value: spread(rate),
    baseline: { label: 'bare POST loop to the same receivers', value: spread(baseRate) },
    ratio: ratioOf(rate, baseRate),
  });
  for (const q of ['p50', 'p99'] as const) {
    const worker = r.runs.map((x) => x.commitToDelivery[q]);
    const base = r.runs.map((x) => x.baselineCommitToDelivery[q]);
    rows.push({
      benchmark: 'webhooks',
      figure: `${q} commit -> delivery at ${r.latencyRate} events/s, poll ${r.pollMs} ms`,
      unit: 'ms',
      value: spread(worker),
      baseline: { label: 'POST straight after the commit', value: spread(base) },
      ratio: ratioOf(worker, base),
    });
  }
  notes.push(
    `webhooks: commit -> delivery is dominated by the worker's idle poll (WEBHOOK_POLL_MS, ${r.pollMs} ms): an event committed while the worker waits is claimed at its next look.`,
  );
}

function addScans(r: ScansBenchResult): void {
  const one = (x: number) => spread([x]);
  const at = `${r.scans.toLocaleString('en')} scans over ${r.units.toLocaleString('en')} units`;
  rows.push({
    benchmark: 'scans',
    figure: `recall of ${r.clones} cloned serials and ${r.withdrawnScans} voided-unit scans, ${at}`,
    unit: '%',
    value: one(r.recall * 100),
    baseline: null,
    ratio: null,
    target: { text: '>= 99 %', met: r.recall >= 0.99 },
  });
  rows.push({
    benchmark: 'scans',
    figure: `false positives among ${r.genuineUnitsScanned.toLocaleString('en')} genuine units scanned`,
    unit: '%',
    value: one(r.falsePositiveRate * 100),
    baseline: null,
    ratio: null,
    target: { text: '<= 0.1 %', met: r.falsePositiveRate <= 0.001 },
  });
  rows.push({
    benchmark: 'scans',
    figure: 'alert latency p99 (ingest call started -> alert committed)',
    unit: 'ms',
    value: one(r.latencyP99Ms),
    baseline: null,
    ratio: null,
    target: { text: '<= 60 s', met: r.latencyP99Ms <= 60_000 },
  });
  rows.push({
    benchmark: 'scans',
    figure: 'edge ingest with the rules (until they saw the last batch), batches of 10,000',
    unit: 'rows/s',
    value: one(r.ingestRowsPerSecond),
    baseline: { label: 'bare COPY of the same rows into a copy of scan_events partitioned the same way', value: one(r.copyRowsPerSecond) },
    ratio: one(r.ingestToCopy),
    target: { text: '>= 0.5x COPY', met: r.ingestToCopy >= 0.5 },
  });
  rows.push({
    benchmark: 'scans',
    figure: 'raw scans per million (day partitions with their indexes)',
    unit: 'MiB',
    value: one(r.rawBytesPerMillion / 1048576),
    baseline: null,
    ratio: null,
  });
  rows.push({
    benchmark: 'scans',
    figure: 'daily rollups per million scans (kept for good)',
    unit: 'MiB',
    value: one(r.rollupBytesPerMillion / 1048576),
    baseline: null,
    ratio: null,
  });
  if (Number.isFinite(r.resolverOnToOff)) {
    rows.push({
      benchmark: 'scans',
      figure: `resolver unit-scan p99 with the scan rules on (median of ${r.loadRuns} interleaved rounds)`,
      unit: 'ms',
      value: one(r.resolverP99OnMs),
      baseline: { label: `the same load on an API with the rules off, interleaved`, value: one(r.resolverP99OffMs) },
      ratio: { median: r.resolverOnToOff, min: r.resolverRatioMin, max: r.resolverRatioMax, runs: [r.resolverOnToOff] },
      target: { text: '<= 1.1x off', met: r.resolverOnToOff <= 1.1 },
    });
    rows.push({
      benchmark: 'scans',
      figure: 'API CPU per resolver unit scan with the scan rules on (median of the rounds)',
      unit: 'us',
      value: one(r.apiCpuUsPerScanOn),
      baseline: { label: 'the same with the rules off, interleaved', value: one(r.apiCpuUsPerScanOff) },
      ratio: one(r.apiCpuUsPerScanOn / r.apiCpuUsPerScanOff),
    });
  }
  notes.push("scans: one replay (the rows above are single values); the use cases run on the replay's clock and the brand's alerts_per_minute is 1,000.");
}

function addGrowth(r: GrowthBenchResult): void {
  const one = (x: number) => spread([x]);
  const first = r.jobs[0]!;
  const last = r.jobs[r.jobs.length - 1]!;
  const at = (n: number) => `${n.toLocaleString('en')} units in the table`;
  rows.push({
    benchmark: 'growth',
    figure: `job ${last.job} of ${r.unitsPerJob.toLocaleString('en')} units, ${at(last.unitsInTable)}`,
    unit: 'units/s',
    value: one(last.rate),
    baseline: { label: `job 1 of the same run (${at(first.unitsInTable)})`, value: one(first.rate) },
    ratio: one(last.rate / first.rate),
    target: { text: '>= 0.8x job 1', met: last.rate / first.rate >= 0.8 },
  });
  const stored = Math.max(...r.jobs.map((j) => j.storedBytesPerUnit));
  rows.push({
    benchmark: 'growth',
    figure: 'mint_units heap + indexes per unit (largest over the jobs)',
    unit: 'bytes',
    value: one(stored),
    baseline: null,
    ratio: null,
    target: { text: '<= 200', met: stored <= 200 },
  });
  rows.push({
    benchmark: 'growth',
    figure: `WAL per unit of job ${last.job} (the cluster's WAL: an upper bound)`,
    unit: 'bytes',
    value: one(last.walBytesPerUnit),
    baseline: { label: 'job 1', value: one(first.walBytesPerUnit) },
    ratio: one(last.walBytesPerUnit / first.walBytesPerUnit),
  });
  const small = r.reads[0]!;
  const large = r.reads[r.reads.length - 1]!;
  for (const [name, pick] of [
    ['resolver unit scan (findUnit)', (x: GrowthBenchResult['reads'][number]) => x.scan.p99],
    ['ListMintUnits page at a random cursor', (x: GrowthBenchResult['reads'][number]) => x.list.p99],
  ] as const) {
    rows.push({
      benchmark: 'growth',
      figure: `${name} p99, ${at(large.unitsInTable)}`,
      unit: 'ms',
      value: one(pick(large)),
      baseline: { label: `the same at ${at(small.unitsInTable)}`, value: one(pick(small)) },
      ratio: one(pick(large) / pick(small)),
      target: { text: '<= 1.2x', met: pick(large) / pick(small) <= 1.2 },
    });
  }
  notes.push(
    `growth: ${r.jobs.length} jobs of ${r.unitsPerJob.toLocaleString('en')} units into one database (BENCH_GROWTH_JOBS, BENCH_GROWTH_UNITS); indexes after the run: ` +
      r.indexes.map((i) => `${i.name} ${(i.bytes / last.unitsInTable).toFixed(1)} B/unit`).join(', ') +
      '.',
  );
}

function addSerials(r: SerialMovesBenchResult): void {
  const ms = (pick: (x: SerialMovesBenchResult['runs'][number]) => number) => r.runs.map(pick);
  const ratios = r.runs.map((x) => x.baselineMs / x.moveMs);
  rows.push({
    benchmark: 'serials',
    figure: `MoveSerials decommissioning a batch of ${r.units.toLocaleString('en')} units (chunks of 10,000, executor's step in process)`,
    unit: 's',
    value: spread(ms((x) => x.moveMs / 1000)),
    baseline: { label: "bare UPDATE of the same rows' status", value: spread(ms((x) => x.baselineMs / 1000)) },
    ratio: spread(ratios.map((x) => 1 / x)),
    target: { text: ">= 0.5x the bare UPDATE's speed", met: spread(ratios).median >= 0.5 },
  });
  for (const [what, runs] of [
    [`MoveSerials decommissioning ${r.units.toLocaleString('en')} units by serial lists of 10,000, one request a list`, r.listRuns],
    [`a partner's MoveSerials encoding its allocation of ${r.units.toLocaleString('en')} units by seq range`, r.partnerRuns],
  ] as const) {
    if (runs === undefined || runs.length === 0) continue;
    const kindRatios = runs.map((x) => x.baselineMs / x.moveMs);
    rows.push({
      benchmark: 'serials',
      figure: what,
      unit: 's',
      value: spread(runs.map((x) => x.moveMs / 1000)),
      baseline: { label: 'bare UPDATE of the same rows', value: spread(runs.map((x) => x.baselineMs / 1000)) },
      ratio: spread(kindRatios.map((x) => 1 / x)),
      target: { text: ">= 0.5x the bare UPDATE's speed", met: spread(kindRatios).median >= 0.5 },
    });
  }
}

function addAggregation(r: AggregationBenchResult): void {
  for (const [op, baseline, pick, pickBase] of [
    [
      'PackContainer',
      'bare INSERT of the same unit_containers rows, per container',
      (x: AggregationBenchResult['runs'][number]) => x.packMs,
      (x: AggregationBenchResult['runs'][number]) => x.packBaselineMs,
    ],
    [
      'UnpackContainer (everything)',
      'bare DELETE of the same rows, per container',
      (x: AggregationBenchResult['runs'][number]) => x.unpackMs,
      (x: AggregationBenchResult['runs'][number]) => x.unpackBaselineMs,
    ],
  ] as const) {
    rows.push({
      benchmark: 'aggregation',
      figure: `${op} of ${r.units.toLocaleString('en')} units, ${r.perContainer.toLocaleString('en')} per request`,
      unit: 's',
      value: spread(r.runs.map((x) => pick(x) / 1000)),
      baseline: { label: baseline, value: spread(r.runs.map((x) => pickBase(x) / 1000)) },
      ratio: spread(r.runs.map((x) => pick(x) / pickBase(x))),
    });
  }
  const capture = r.capture;
  if (capture !== undefined && capture.runs.length > 0) {
    rows.push({
      benchmark: 'aggregation',
      figure: `capture document of ${capture.cases.toLocaleString('en')} packing events (cases of ${capture.caseUnits} units)`,
      unit: 'cases/s',
      value: spread(capture.runs.map((x) => x.captureCasesPerS)),
      baseline: { label: 'bare INSERT of the same unit_containers rows, one statement', value: spread(capture.runs.map((x) => x.bareCasesPerS)) },
      ratio: spread(capture.runs.map((x) => x.captureCasesPerS / x.bareCasesPerS)),
    });
  }
}

function addAllocation(r: AllocationBenchResult): void {
  const n = r.runs[0]?.requestMs.length ?? 0;
  rows.push({
    benchmark: 'allocation',
    figure: `AllocateSerials of ${r.perRequest.toLocaleString('en')}: request ${n} over one batch, after ${(r.perRequest * (n - 1)).toLocaleString('en')} allocated`,
    unit: 'ms',
    value: spread(r.runs.map((x) => x.requestMs.at(-1)!)),
    baseline: { label: 'request 1 of the same run', value: spread(r.runs.map((x) => x.requestMs[0]!)) },
    ratio: spread(r.runs.map((x) => x.requestMs.at(-1)! / x.requestMs[0]!)),
    target: { text: 'about 1x (flat in what was allocated before)', met: spread(r.runs.map((x) => x.requestMs.at(-1)! / x.requestMs[0]!)).median <= 1.5 },
  });
}

function addWatch(r: WatchBenchResult): void {
  const { watchers, units } = r.options;
  const of = (mode: WatchMode, pick: (f: WatchFigures) => number) => r.runs.map((run) => pick(run.find((f) => f.mode === mode)!));
  const figures: [string, string, (f: WatchFigures) => number, { text: string; ok: (ratio: number) => boolean } | null][] = [
    // The target of the design: the database load does not grow with the streams. The pushed
    // design's streams may add at most a tenth of what the polled ones add (in practice nothing
    // measurable: the executor's own transactions are in both windows).
    [
      `database transactions/s that ${watchers.toLocaleString('en')} open streams add`,
      'tx/s',
      (f) => f.watcherQps,
      { text: 'pushed <= 0.1x polled', ok: (ratio) => ratio <= 0.1 },
    ],
    ["database transactions/s with the streams open (the executor's own included)", 'tx/s', (f) => f.watchedQps, null],
    ['API CPU with the streams open', '% of a core', (f) => f.apiCpuPercent, null],
    ['API RSS with the streams open', 'MB', (f) => f.apiRssMb, null],
  ];
  for (const [figure, unit, pick, target] of figures) {
    const pushed = of('pushed', pick);
    const polled = of('polled', pick);
    const ratio = ratioOf(pushed, polled);
    rows.push({
      benchmark: 'watch',
      figure: `${figure}, progress pushed`,
      unit,
      value: spread(pushed),
      baseline: { label: 'the same with each stream polling PostgreSQL every 250 ms (WATCH_PROGRESS=polled)', value: spread(polled) },
      ratio,
      ...(target === null ? {} : { target: { text: target.text, met: target.ok(spread(pushed).median / spread(polled).median) } }),
    });
  }
  notes.push(
    `watch: ${watchers.toLocaleString('en')} WatchMintJob streams over one HTTP/2 connection to one API process during a ${units.toLocaleString('en')}-unit mint ` +
      `(100-unit chunks), ${r.options.windowSeconds} s windows; the streams' share is the window with them open minus the window right after they closed.`,
  );
}

const fmt = (n: number, unit: string) => {
  if (unit === 'units/s' || unit === 'req/s' || unit === 'deliveries/s' || unit === 'rows/s') return Math.round(n).toLocaleString('en');
  if (unit === 'MB') return n.toFixed(0);
  return n < 10 ? n.toFixed(2) : n.toFixed(1);
};
const cell = (s: Spread, unit: string) => `${fmt(s.median, unit)} (${fmt(s.min, unit)}-${fmt(s.max, unit)})`;
const ratioNumber = (n: number) => (n < 0.1 ? n.toPrecision(2) : n.toFixed(2));
const ratioCell = (s: Spread) => `${ratioNumber(s.median)} (${ratioNumber(s.min)}-${ratioNumber(s.max)})`;

function markdown(
  info: Record<string, string | number>,
  versions: Record<string, string>,
  settings: Record<string, string | number>,
  failures: string[],
  seconds: number,
  writtenAt: string,
): string {
  const lines = [
    '# Benchmark report',
    '',
    `Written by \`npm run bench\` (bench/run.ts) on ${writtenAt} in ${Math.floor(seconds / 60)} min ${Math.round(seconds % 60)} s.`,
    '',
    '> The machine is shared and noisy: other work (test suites, other builds) ran on its 2 cores during this run,',
    "> so absolute figures vary from run to run. The yardstick is each figure's ratio to its baseline,",
    '> measured in the same run moments apart, and the spread (min-max) over the runs.',
    '',
    '## Machine',
    '',
    '| | |',
    '|---|---|',
    ...Object.entries(info).map(([k, v]) => `| ${k} | ${v} |`),
    '',
    '## Versions',
    '',
    '| package | version |',
    '|---|---|',
    ...Object.entries(versions).map(([k, v]) => `| ${k} | ${v} |`),
    '',
    '## Settings of this run',
    '',
    ...Object.entries(settings).map(([k, v]) => `- ${k}: ${v}`),
    '',
    '## Figures',
    '',
    'Each cell: median (min-max) over the runs. The ratio is figure / baseline per run (median, min-max): for speeds (units/s, req/s) the share',
    "of the baseline's speed reached, for times (ms, s) how many times the baseline's time it takes.",
    '',
    '| benchmark | figure | unit | median (min-max) | baseline (same run) | baseline median (min-max) | ratio | target |',
    '|---|---|---|---|---|---|---|---|',
    ...rows.map(
      (r) =>
        `| ${r.benchmark} | ${r.figure} | ${r.unit} | ${cell(r.value, r.unit)} | ${r.baseline?.label ?? ''} | ` +
        `${r.baseline ? cell(r.baseline.value, r.unit) : ''} | ${r.ratio ? ratioCell(r.ratio) : ''} | ${r.target ? `${r.target.text}: ${r.target.met ? 'met' : 'missed'}` : ''} |`,
    ),
    '',
    '## Notes',
    '',
    ...notes.map((n) => `- ${n}`),
    ...failures.map((f) => `- FAILED: ${f}`),
    '',
    '## How each figure is measured',
    '',
    '- mint (bench/mint.ts): a job submitted through the use case, relayed through the outbox to NATS JetStream and minted by an executor child',
    "  process (`node services/executor/src/main.ts`, one job at a time, the image's node flags and NODE_OPTIONS) until COMPLETED, unit count checked; the",
    "  baseline (the fair limit) COPYs the same number of prepared rows into the same table (all indexes) in the executor's chunk size",
    '  (MINT_CHUNK_SIZE), one transaction per chunk, over as many connections as the executor writes with (EXECUTOR_JOB_WRITERS). Each',
    '  measurement starts from an empty mint_units after a checkpoint. Submits publish their job right after commit, as the API does.',
    '  Submit -> first chunk committed: one-chunk jobs one after another, the job polled every 2 ms until minted_quantity > 0.',
    '- growth (bench/growth.ts): BENCH_GROWTH_JOBS serial jobs of BENCH_GROWTH_UNITS units minted one after another into one database',
    '  (nothing truncated) by the executor child, as mint does; per job its rate, mint_units heap + indexes over its rows, and the WAL',
    "  written during the job per unit (pg_current_wal_lsn, the cluster's). After the first and the last job, in process: the resolver's",
    '  unit lookup (findUnit) of random minted serials and a ListMintUnits page at a random cursor, p99 over BENCH_ITERATIONS calls each.',
    '- reads (bench/reads.ts): the use cases in process (no transport) against one brand of seeded units; the baseline is the bare keyset',
    '  SELECT with the same predicate over the same index; GetMintKpis against the bare SELECT of the same sums, prepared on a plain pg',
    '  client (one round trip, nothing else).',
    '- resolver (bench/resolver.ts): 5,000 requests/s against the API in a child process and against a minimal node:http',
    '  child answering a fixed 307 without a lookup, with 100,000 link rows stored: random unit scans (browser Accept, 307), walk-up scans of',
    '  units whose link sits on the GTIN level (307), linkset answers (200) and scans on a brand domain (Host header, root path, 307).',
    '  Two pacings: steady (bench/steady-load.ts, in a process of its own: request n due at n / rate, round robin over the connections, open loop; latency from when',
    "  a request was due when its connection was still busy then, as wrk2 counts it) and autocannon's per-second bursts (each connection",
    '  sends its share of a second back to back and then waits: a closed loop at full speed, latency = connections / throughput, a stress',
    '  figure of the whole 2-core machine). Targets: p50 <= 1 ms and p99 <= 5 ms at rate x 2 ms = 10 connections (the requests in flight',
    "  when every answer takes 2 ms, by Little's law), p99 <= 10 ms at 50 connections. The floor: a minimal node:http child that reads",
    "  each request's unit with one prepared indexed query (a pooled connection per load connection) and answers a fixed 307, loaded",
    "  with the unit scan row's requests: what any resolver that reads every scanned unit from PostgreSQL pays on this machine; it is",
    '  judged against the same targets for information (a floor that misses them says the machine does). At 50 connections its 50',
    "  busy backends contend for the cores where the API's coalesced lookups do not: there it is a naive server rather than a floor.",
    '  Its passport rows: browser scans of units of a product with a published hosted passport (200, the page) and their',
    '  `Accept: application/vc+jwt` (200, the signed UNTP credential), each as a ratio to unit redirects drawn from as many distinct units, same round;',
    '  targets p50 and API CPU per answer <= 1.5x at 10 connections, steady. Item credential signing: the signer over distinct credentials',
    '  against a bare node:crypto Ed25519 loop of payloads of the same size (target >= 0.5x).',
    '- passport (bench/passport.ts): the same three answers on an API child of their own at 5,000 req/s (autocannon) over 10',
    "  connections: a unit redirecting to its product's external passport URL (the baseline), the passport page and the credential; one run.",
    '- pack export (bench/packs.ts): the default pack (and a csv + jsonl pack) of one batch into a filesystem store, each in a process of its own started as',
    '  the image starts the executor, against a bare COPY of the same rows to a file; the default pack also into a NATS Object Store',
    "  bucket of its own (PACK_STORE=nats, the executor's default store).",
    '  Per format: a pack of only that format in a child process started as the image starts the executor (its node flags and NODE_OPTIONS,',
    "  nothing else run before, so the peak RSS is the pack's own), against COPY ... TO of the text the format carries (csv, jsonl, epcis),",
    '  the GS1 encoder alone in a tight loop (svg, pdf; 2,000 units, a rate) or the bare zplLabel loop (zpl), the last two in a child too.',
    "- webhooks (bench/webhooks.ts): a backlog of events with their deliveries drained by the executor's webhook worker (claim under a lease,",
    '  sign, POST, record) against a bare POST loop to the same 10 loopback receivers; then events committed one per transaction at a steady',
    "  rate while the worker runs at its default poll interval, each latency from the commit's return to the receiver having the body, against",
    '  POSTing each body straight after its commit.',
    '- scans (bench/scans.ts): a replay of synthetic scans (Zipf units, a daily rhythm, 30 countries, 1,000 cloned serials and 500 scans of',
    '  voided units injected) through the edge ingest (RecordScanEvents with the scan rules) in batches of 10,000, against a bare COPY.',
    '- watch (bench/watch.ts): for each progress design in turn (WATCH_PROGRESS=polled: every stream reads PostgreSQL every 250 ms;',
    '  pushed: the executor publishes progress on NATS and each API process fans it out), a fresh stack mints a 1,000,000-unit job while',
    "  2,000 WatchMintJob streams are open on one API process; the database's transactions per second (pg_stat_database) and the API's",
    '  CPU and RSS are measured with the streams open and right after they closed.',
    "- serials (bench/serial-moves.ts): MoveSerials' use case decommissioning a whole seeded batch of commissioned units as recalled, chunk by",
    "  chunk as the executor runs it, against one bare UPDATE of the same rows' status; the batch restored and vacuumed between (not timed).",
    "- allocation (bench/allocation.ts): AllocateSerials' use case allocating a seeded batch of BENCH_ALLOCATION_REQUESTS x 10,000 issued units",
    '  to one partner key, 10,000 a request, the last request timed against the first of the same run; allocations emptied between runs.',
    "- aggregation (bench/aggregation.ts): PackContainer's use case packing a seeded batch of commissioned units, BENCH_PACK_ITEMS (10,000) per",
    '  request into one container each, then UnpackContainer emptying each, against a bare INSERT of the same unit_containers rows per',
    '  container and a bare DELETE per container; the tables emptied and vacuumed between (not timed). Then one EPCIS capture document of',
    '  1,000 packing events (cases of 10 units) against a bare INSERT of its 10,000 unit_containers rows, in cases/s.',
    '- submit (bench/submit.ts): autocannon POSTing SubmitMintRequest JSON with a bearer token and a fresh idempotency key per request',
    '  to the API child process (`node services/api/src/main.ts`), against a minimal node:http child that parses the same JSON and answers 200,',
    '  and against pgbench (same number of clients) running the statements one submit sends, recorded from the driver while the use',
    '  cases the API calls serve one submit (the membership read and the one write), fresh ids per transaction: once over the extended',
    '  protocol with every statement parsed and planned on each run (the baseline of the submit target), once prepared (parsed once per',
    '  connection, plans kept, as the API sends its hot statements on a direct connection). The floor: a minimal node:http child that',
    '  parses the same JSON and runs the same statements prepared on a pool of its own (no Connect, validation, authentication, use',
    "  case or bus), against which the API's own cost shows, and whose share of the prepared pgbench is the most any Node.js service",
    '  sending these statements reaches on this machine. The API runs without its per-credential rate limit (one token sends every request).',
    '',
  ];
  return lines.join('\n');
}

if (process.argv[2] === '--render') {
  // Rewrites REPORT.md from report.json (after a change to the write-up, without measuring again).
  const saved = JSON.parse(readFileSync(join(reportDir, 'report.json'), 'utf8')) as {
    machine: Record<string, string | number>;
    versions: Record<string, string>;
    settings: Record<string, string | number>;
    rows: Row[];
    notes: string[];
    failures: string[];
    durationSeconds: number;
    writtenAt: string;
  };
  rows.push(...saved.rows);
  notes.push(...saved.notes);
  writeFileSync(join(reportDir, 'REPORT.md'), markdown(saved.machine, saved.versions, saved.settings, saved.failures, saved.durationSeconds, saved.writtenAt));
  console.log(`rewrote ${join(reportDir, 'REPORT.md')} from report.json`);
  process.exit(0);
}

const logDir = await mkdtemp(join(tmpdir(), 'bench-run-'));
const failures: string[] = [];
const results: Record<string, unknown> = {};
try {
  progress(
    `bench: runs ${runs}, units ${units.toLocaleString('en')}, mint sizes ${mintSizes}, load ${loadSeconds} s, read iterations ${iterations}; logs in ${logDir}`,
  );
  const info = await machine();
  const versions = packageVersions();
  progress(
    `machine: ${info['cpuModel']}, ${info['cores']} cores, ${info['memoryGb']} GB, ${info['node']}, ${info['postgres']}, nats-server ${info['natsServer']}`,
  );
  const steps: [string, () => Promise<void>][] = [
    [
      'mint',
      async () => {
        const r = await step<MintBenchResult>('mint', 'mint.ts', ['--sizes', mintSizes, '--runs', String(runs)], {}, logDir);
        results['mint'] = r;
        addMint(r);
      },
    ],
    [
      'reads',
      async () => {
        const r = await step<ReadsBenchResult>(
          'reads',
          'reads.ts',
          [],
          { BENCH_UNITS: String(units), BENCH_ITERATIONS: String(iterations), BENCH_RUNS: String(runs) },
          logDir,
        );
        results['reads'] = r;
        addReads(r);
      },
    ],
    [
      'resolver',
      async () => {
        const r = await step<ResolverBenchResult>(
          'resolver',
          'resolver.ts',
          [],
          { BENCH_UNITS: String(units), BENCH_DURATION: String(loadSeconds), BENCH_RUNS: String(runs) },
          logDir,
        );
        results['resolver'] = r;
        addResolver(r);
      },
    ],
    [
      'passport',
      async () => {
        const r = await step<PassportBenchResult>('passport', 'passport.ts', [], { BENCH_RATE: '5000', BENCH_DURATION: String(loadSeconds) }, logDir);
        results['passport'] = r;
        addPassport(r);
      },
    ],
    [
      'packs',
      async () => {
        const r = await step<PacksBenchResult>(
          'packs',
          'packs.ts',
          [],
          {
            BENCH_UNITS: String(units),
            BENCH_RUNS: String(runs),
            BENCH_FORMAT_RUNS: '1',
            BENCH_LABEL_UNITS: env['BENCH_LABEL_UNITS'] ?? '10000',
            BENCH_BASELINE_LABELS: '2000',
          },
          logDir,
        );
        results['packs'] = r;
        addPacks(r);
      },
    ],
    [
      'submit',
      async () => {
        const r = await step<SubmitBenchResult>('submit', 'submit.ts', [], { BENCH_DURATION: String(loadSeconds), BENCH_RUNS: String(runs) }, logDir);
        results['submit'] = r;
        addSubmit(r);
      },
    ],
    [
      'webhooks',
      async () => {
        const r = await step<WebhooksBenchResult>(
          'webhooks',
          'webhooks.ts',
          [],
          { BENCH_EVENTS: env['BENCH_WEBHOOK_EVENTS'] ?? '10000', BENCH_RUNS: String(runs) },
          logDir,
        );
        results['webhooks'] = r;
        addWebhooks(r);
      },
    ],
    [
      'scans',
      async () => {
        const r = await step<ScansBenchResult>('scans', 'scans.ts', [], { BENCH_SCANS: env['BENCH_SCANS'] ?? '1000000' }, logDir);
        results['scans'] = r;
        addScans(r);
      },
    ],
    [
      'growth',
      async () => {
        const r = await step<GrowthBenchResult>(
          'growth',
          'growth.ts',
          [],
          {
            BENCH_GROWTH_JOBS: env['BENCH_GROWTH_JOBS'] ?? '4',
            BENCH_GROWTH_UNITS: env['BENCH_GROWTH_UNITS'] ?? '100000',
            BENCH_ITERATIONS: String(Math.min(iterations, 2000)),
          },
          logDir,
        );
        results['growth'] = r;
        addGrowth(r);
      },
    ],
    [
      'serials',
      async () => {
        const r = await step<SerialMovesBenchResult>(
          'serials',
          'serial-moves.ts',
          [],
          { BENCH_SERIAL_UNITS: env['BENCH_SERIAL_UNITS'] ?? '1000000', BENCH_RUNS: String(runs) },
          logDir,
        );
        results['serials'] = r;
        addSerials(r);
      },
    ],
    [
      'aggregation',
      async () => {
        const r = await step<AggregationBenchResult>(
          'aggregation',
          'aggregation.ts',
          [],
          {
            BENCH_AGGREGATION_UNITS: env['BENCH_AGGREGATION_UNITS'] ?? '1000000',
            BENCH_RUNS: String(runs),
          },
          logDir,
        );
        results['aggregation'] = r;
        addAggregation(r);
      },
    ],
    [
      'allocation',
      async () => {
        const r = await step<AllocationBenchResult>(
          'allocation',
          'allocation.ts',
          [],
          { BENCH_ALLOCATION_REQUESTS: env['BENCH_ALLOCATION_REQUESTS'] ?? '40', BENCH_RUNS: String(runs) },
          logDir,
        );
        results['allocation'] = r;
        addAllocation(r);
      },
    ],
    [
      'watch',
      async () => {
        const r = await step<WatchBenchResult>(
          'watch',
          'watch.ts',
          [],
          { BENCH_RUNS: env['BENCH_WATCH_RUNS'] ?? '2', BENCH_WATCHERS: env['BENCH_WATCHERS'] ?? '2000' },
          logDir,
        );
        results['watch'] = r;
        addWatch(r);
      },
    ],
  ];
  for (const [name, run] of steps) {
    if (only !== null && !only.has(name)) continue;
    try {
      await run();
    } catch (error) {
      failures.push(`${name}: ${error instanceof Error ? error.message.split('\n')[0] : String(error)}`);
      progress(`${name}: FAILED: ${error instanceof Error ? error.message : String(error)}`);
    }
  }
  const seconds = (performance.now() - started) / 1000;
  const settings = { runs, units, mintSizes, loadSeconds, readIterations: iterations, only: only ? [...only].join(',') : 'all' };
  const report = {
    writtenAt: new Date().toISOString(),
    durationSeconds: Math.round(seconds),
    machine: info,
    versions,
    settings,
    rows,
    notes,
    failures,
    raw: results,
  };
  writeFileSync(join(reportDir, 'report.json'), `${JSON.stringify(report, null, 2)}\n`);
  writeFileSync(join(reportDir, 'REPORT.md'), markdown(info, versions, settings, failures, report.durationSeconds, report.writtenAt));
  progress(`wrote ${join(reportDir, 'REPORT.md')} and report.json${failures.length ? `; ${failures.length} step(s) failed` : ''}`);
  for (const r of rows) {
    console.log(
      `  ${r.benchmark.padEnd(12)} ${r.figure.slice(0, 70).padEnd(70)} ${cell(r.value, r.unit).padStart(24)} ${r.unit.padEnd(7)}` +
        `${r.ratio ? ` ratio ${ratioCell(r.ratio)}` : ''}${r.target ? ` [${r.target.text}: ${r.target.met ? 'met' : 'missed'}]` : ''}`,
    );
  }
  process.exitCode = failures.length > 0 ? 1 : 0;
} finally {
  killChildren();
  await rm(logDir, { recursive: true, force: true });
}
