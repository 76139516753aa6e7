// `npm run bench:submit` (part of `npm run bench`): SubmitMintRequest throughput over Connect JSON. Starts the API as an
// operator runs it (`node services/api/src/main.ts`, child process) against a fresh database and
// stream, and in turn with it the baseline: a minimal node:http server (child process) that reads
// and parses the same JSON body and answers 200 with a small JSON. autocannon (BENCH_CONNECTIONS,
// default 16, loopback, as fast as answers come) POSTs to each for BENCH_DURATION seconds (default
// 10, after 2 s of warm-up) a SubmitMintRequest of 10 serial units with a bearer token and a distinct
// idempotency key per request. No executor runs: every accepted request is one QUEUED job and its
// outbox row. Prints requests/s, p50/p99, the API process's CPU per submit (from /proc: it barely moves with
// the machine's other load) and the ratio API / baseline; checks that every answer was
// a 200 and that the database holds one job per 200 (plus at most one per connection and load:
// requests in flight when a load stops are committed but their answers never counted). BENCH_API_NODE_ARGS (e.g.
// `--cpu-prof --cpu-prof-dir=/tmp/prof`) go to the API child's node; the API runs without its per-credential rate limit (one
// token sends every request). Each run also measures the database's limit for this work: pgbench (PGBENCH, default
// /usr/lib/postgresql/15/bin/pgbench; skipped when missing) with the same number of clients running the statements one submit
// sends (recorded from the driver while the use cases the API calls serve one submit), twice: over the extended protocol with
// every statement parsed and planned on each run, and prepared (parsed once per connection, as the API sends them on a direct
// connection); it prints API / pgbench for both. And the floor: a minimal node:http server (child process) that parses the same
// JSON and runs those statements prepared on a pool of its own, without Connect, validation, authentication, use case or bus:
// API / floor is the API's own cost, floor / pgbench the most of the database's limit a Node.js service sending them reaches here. BENCH_RUNS repeats the loads,
// BENCH_JSON names a file for the figures as JSON (bench/run.ts reads it). Exits 1 on a failed answer.

import { execFile, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import autocannon from 'autocannon';
import { query } from '../test/support/sql.ts';
import { authenticate, authorizeAuthenticated, seedDemo, submitMintRequest, type DemoSeed } from '@mint/usecases';
import type { Stack } from './services.ts';
import { percentile, spawnServer, stopServer } from './child-server.ts';
import { cpuMsOf, createStack } from './services.ts';

/** Throughput and latency of one load. */
export interface LoadFigures {
  /** Answers per second over the timed load. */
  readonly rps: number;
  readonly p50: number;
  readonly p99: number;
  /** Answers by status, and transport errors plus timeouts. */
  readonly statuses: Record<string, number>;
  readonly errors: number;
  /** CPU the server process used per answer, in microseconds (null for the baseline or off Linux). */
  readonly cpuUsPerRequest?: number | null;
}

/** What `benchSubmit` measures. */
export interface SubmitBenchOptions {
  readonly durationSeconds: number;
  readonly connections: number;
  /** Pairs of loads (baseline, then API). */
  readonly runs: number;
}

/** One pgbench load of the submit's own statements. */
export interface PgbenchFigures {
  /** Transactions (one submit's statements) per second. */
  readonly tps: number;
  /** pgbench's average latency per transaction, ms. */
  readonly latencyAvgMs: number;
}

/** The two pgbench loads of one run (see PgbenchProtocol). */
export interface PgbenchRun {
  readonly extended: PgbenchFigures;
  readonly prepared: PgbenchFigures;
}

/** Everything `benchSubmit` measured. */
export interface SubmitBenchResult {
  readonly durationSeconds: number;
  readonly connections: number;
  readonly runs: readonly { readonly baseline: LoadFigures; readonly pgbench: PgbenchRun | null; readonly floor: LoadFigures; readonly api: LoadFigures }[];
  /** Jobs in the database against 200 answers of the API (warm-up included), and the most a stopped load may leave unanswered. */
  readonly jobs: number;
  readonly apiOks: number;
  readonly inFlightAllowance: number;
}

const path = '/mint.v1.MintService/SubmitMintRequest';

/** Child mode: the baseline server on a free port, printing `PORT n`. */
function serveBaseline(): void {
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      let status = 200;
      let body = '';
      try {
        const message = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { brand_id?: unknown; idempotency_key?: unknown };
        body = JSON.stringify({ ok: true, mint_job_id: message.idempotency_key, mint_batch_id: message.brand_id, status: 'MINT_JOB_STATUS_QUEUED' });
      } catch {
        status = 400;
        body = '{"code":"invalid_argument"}';
      }
      res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
      res.end(body);
    });
  });
  server.listen(0, '127.0.0.1', () => process.stdout.write(`PORT ${(server.address() as { port: number }).port}\n`));
  process.once('SIGTERM', () => server.close(() => process.exit(0)));
}

function startBaseline(): Promise<{ child: ChildProcess; port: number }> {
  return spawnServer([import.meta.filename, 'serve-baseline'], 'baseline server');
}

/**
 * Child mode: the floor of a submit, on a free port, printing `PORT n`: a minimal node:http server
 * that parses each POST's JSON body and runs the submit's captured statements (the membership read
 * and the one write; `file` holds them, see {@link captureSubmitStatements}) as named prepared
 * statements on a pool of its own (a connection per load connection), with fresh ids and the body's
 * idempotency key, then answers 200 with a small JSON. No Connect, validation, authentication,
 * use case or bus: what any Node.js service that sends these statements as the API does pays on
 * this machine, against which the API's own cost per submit shows.
 */
async function serveFloor(file: string, dbUrl: string): Promise<void> {
  const { default: pg } = await import('pg');
  const captured = JSON.parse(readFileSync(file, 'utf8')) as { statements: SentStatement[]; fresh: [string, string][] };
  const fresh = new Map(captured.fresh);
  const pool = new pg.Pool({ connectionString: dbUrl, max: 50, idleTimeoutMillis: 0, application_name: 'bench-submit-floor' });
  const run = async (key: string) => {
    const ids = new Map<string, string>([['k', key]]);
    const id = (tag: string) => ids.get(tag) ?? ids.set(tag, randomUUID()).get(tag)!;
    const value = (v: unknown): unknown => {
      const tags = freshTags(fresh, v);
      return tags === null ? v : typeof tags === 'string' ? id(tags) : tags.map(id);
    };
    const client = await pool.connect();
    try {
      for (const [n, st] of captured.statements.entries()) await client.query({ name: `floor_${n}`, text: st.text, values: st.values.map(value) });
    } finally {
      client.release();
    }
    return id('j');
  };
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      let key: string;
      try {
        key = String((JSON.parse(Buffer.concat(chunks).toString('utf8')) as { idempotency_key?: unknown }).idempotency_key);
      } catch {
        res.writeHead(400).end();
        return;
      }
      run(key).then(
        (jobId) => {
          const body = JSON.stringify({ ok: true, mint_job_id: jobId, status: 'MINT_JOB_STATUS_QUEUED' });
          res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
          res.end(body);
        },
        (error: unknown) => {
          process.stderr.write(`floor: ${String(error)}\n`);
          res.writeHead(503).end();
        },
      );
    });
  });
  server.listen(0, '127.0.0.1', () => process.stdout.write(`PORT ${(server.address() as { port: number }).port}\n`));
  process.once('SIGTERM', () => server.close(() => void pool.end().then(() => process.exit(0))));
}

function startFloor(file: string, dbUrl: string): Promise<{ child: ChildProcess; port: number }> {
  return spawnServer([import.meta.filename, 'serve-floor', file, dbUrl], 'floor server');
}

/** Drives `port` with submits for `seconds`; every request a new idempotency key. */
async function load(port: number, seconds: number, connections: number, token: string, body: (key: string) => string): Promise<LoadFigures> {
  const samples: number[] = [];
  const statuses: Record<string, number> = {};
  const result = await new Promise<autocannon.Result>((resolve, reject) => {
    const instance = autocannon(
      {
        url: `http://127.0.0.1:${port}`,
        connections,
        duration: seconds,
        requests: [
          {
            method: 'POST',
            path,
            headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
            setupRequest: (req) => ({ ...req, body: body(randomUUID()) }),
          },
        ],
      },
      (error, res) => (error ? reject(error) : resolve(res)),
    );
    instance.on('response', (_client: unknown, statusCode: number, _bytes: number, responseTime: number) => {
      samples.push(responseTime);
      statuses[statusCode] = (statuses[statusCode] ?? 0) + 1;
    });
  });
  samples.sort((a, b) => a - b);
  return { rps: samples.length / seconds, p50: percentile(samples, 50), p99: percentile(samples, 99), statuses, errors: result.errors + result.timeouts };
}

/** pgbench of the PostgreSQL the benchmarks run against (PGBENCH to override). */
const pgbenchBin = process.env['PGBENCH'] ?? '/usr/lib/postgresql/15/bin/pgbench';

/**
 * The tags of a captured parameter that must be new in every submit (`fresh` maps each captured id
 * to its tag): one tag for an id, one per element for an array of ids; null for any other value.
 */
function freshTags(fresh: ReadonlyMap<string, string>, value: unknown): string | string[] | null {
  if (typeof value === 'string') return fresh.get(value) ?? null;
  if (Array.isArray(value) && value.length > 0 && value.every((v) => typeof v === 'string' && fresh.has(v))) return value.map((v: string) => fresh.get(v)!);
  return null;
}

/** One statement as the driver sent it: its text and its parameters. */
interface SentStatement {
  readonly text: string;
  readonly values: readonly unknown[];
}

/**
 * The statements one SubmitMintRequest runs under a steady load, recorded from the driver while the
 * same use cases the API's handler and auth interceptor call (authenticate, authorizeAuthenticated
 * with mint:write, submitMintRequest) serve a second request in this process (the first read the
 * product, as the API's first submit does): the membership read and the one write, which compares
 * the product it decided on. Also returns the ids the submit created, so the script can make them fresh.
 */
async function captureSubmitStatements(stack: Stack, seed: DemoSeed): Promise<{ statements: SentStatement[]; fresh: Map<string, string> }> {
  const submitOne = async (key: string) => {
    const authenticated = await authenticate(stack.ctx, { bearer: seed.access_token, apiKey: null });
    const caller = await authorizeAuthenticated(stack.ctx, authenticated, seed.brand_id, 'mint:write');
    return submitMintRequest(
      stack.ctx,
      { id: caller.actorId },
      {
        brandId: seed.brand_id,
        productId: seed.product_id,
        productBatchId: null,
        requestedQuantity: 10,
        identityMode: 'serial',
        activationMode: 'active_at_mint',
        lots: [],
        idempotencyKey: key,
      },
    );
  };
  await submitOne(randomUUID());
  const pg = createRequire(import.meta.resolve('@mint/db'))('pg') as { Client: { prototype: { query: (...args: unknown[]) => unknown } } };
  const statements: SentStatement[] = [];
  const original = pg.Client.prototype.query;
  pg.Client.prototype.query = function (this: unknown, ...args: unknown[]) {
    const [first, second] = args as [unknown, unknown];
    if (typeof first === 'string') statements.push({ text: first, values: Array.isArray(second) ? second : [] });
    else if (first && typeof first === 'object' && typeof (first as { text?: unknown }).text === 'string') {
      statements.push({ text: (first as { text: string }).text, values: (first as { values?: unknown[] }).values ?? (Array.isArray(second) ? second : []) });
    }
    return original.apply(this, args);
  };
  const key = randomUUID();
  let result;
  try {
    result = await submitOne(key);
  } finally {
    pg.Client.prototype.query = original;
  }
  if (!result.ok) throw new Error('the captured submit was blocked');
  const events = await query<{ id: string }>(stack.db.em.fork(), 'select id from mint_events where brand_id = ? and entity_id in (?, ?)', [
    seed.brand_id,
    result.mintJobId,
    result.mintBatchId,
  ]);
  const fresh = new Map<string, string>([
    [result.mintJobId, 'j'],
    [result.mintBatchId, 'b'],
    [key, 'k'],
  ]);
  for (const [i, e] of events.entries()) fresh.set(e.id, `e${i}`);
  return { statements: statements.filter((st) => !/^(begin|commit|rollback|set )/i.test(st.text)), fresh };
}

/**
 * A pgbench script of the captured statements, sent as the API sends them (extended protocol, one
 * parameter per value, each statement its own transaction). The values go in as pgbench variables
 * (-D); the ids that must be new in every submit (job, batch, idempotency key, event ids) become
 * md5-derived uuids of a random number drawn per transaction.
 */
function pgbenchScript(captured: { statements: SentStatement[]; fresh: Map<string, string> }): { script: string; defines: string[] } {
  const defines: string[] = [];
  const prepare = (value: unknown): string => {
    if (value instanceof Date) return value.toISOString();
    if (Array.isArray(value))
      return `{${value.map((v) => (v === null ? 'NULL' : `"${String(prepare(v)).replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`)).join(',')}}`;
    if (typeof value === 'object' && value !== null) return JSON.stringify(value);
    return String(value);
  };
  const freshId = (tag: string) => `md5(:r || '${tag}')::uuid`;
  const lines = ['\\set r random(1, 4611686018427387903)'];
  captured.statements.forEach((st, n) => {
    const text = st.text.replace(/\$(\d+)/g, (_, d: string) => {
      const value = st.values[Number(d) - 1];
      if (value === null || value === undefined) return 'NULL';
      const tags = freshTags(captured.fresh, value);
      if (typeof tags === 'string') return `(${freshId(tags)})`;
      if (tags !== null) return `array[${tags.map(freshId).join(', ')}]`;
      const name = `s${n}p${d}`;
      defines.push('-D', `${name}=${prepare(value)}`);
      return `:${name}`;
    });
    lines.push(`${text.replace(/\s*\n\s*/g, ' ')};`);
  });
  return { script: `${lines.join('\n')}\n`, defines };
}

/**
 * How pgbench sends the statements: `extended`, each parsed and planned by PostgreSQL on every run
 * (how the API sent them before its hot statements were prepared by name); `prepared`, each parsed
 * once per connection and its plan kept, as the API sends them on a direct database connection.
 */
type PgbenchProtocol = 'extended' | 'prepared';

/** Runs pgbench with `script` against the stack's database: `connections` clients for `seconds`. */
async function pgbenchLoad(
  stack: Stack,
  script: { script: string; defines: string[] },
  protocol: PgbenchProtocol,
  seconds: number,
  connections: number,
): Promise<PgbenchFigures> {
  const dir = mkdtempSync(join(tmpdir(), 'bench-submit-pgbench-'));
  try {
    const file = join(dir, 'submit.sql');
    writeFileSync(file, script.script);
    const url = new URL(stack.dbUrl);
    const { stdout } = await promisify(execFile)(
      pgbenchBin,
      [
        '-n',
        '-M',
        protocol,
        '-c',
        String(connections),
        '-j',
        '2',
        '-T',
        String(seconds),
        '-f',
        file,
        ...script.defines,
        '-h',
        url.hostname,
        '-p',
        url.port || '5432',
        '-U',
        decodeURIComponent(url.username || 'postgres'),
        url.pathname.slice(1),
      ],
      { env: { ...process.env, ...(url.password ? { PGPASSWORD: decodeURIComponent(url.password) } : {}) }, maxBuffer: 16 * 1024 * 1024 },
    );
    const tps = Number(/tps = ([\d.]+)/.exec(stdout)?.[1]);
    const latencyAvgMs = Number(/latency average = ([\d.]+) ms/.exec(stdout)?.[1]);
    if (!Number.isFinite(tps)) throw new Error(`pgbench printed no tps:\n${stdout}`);
    return { tps, latencyAvgMs };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * Starts the API (child) on a fresh stack and the baseline server (child), warms each up for 2 s,
 * then runs `runs` pairs of loads. Kills both and drops the database and stream whatever happens.
 */
export async function benchSubmit(options: SubmitBenchOptions, progress: (line: string) => void = console.log): Promise<SubmitBenchResult> {
  const stack = await createStack('bench_submit');
  const servers: ChildProcess[] = [];
  const dir = mkdtempSync(join(tmpdir(), 'bench-submit-'));
  try {
    const seed = await seedDemo(stack.ctx);
    // The database's limit for this work: the submit's own statements from pgbench (when it is installed).
    const captured = await captureSubmitStatements(stack, seed);
    const script = pgbenchScript(captured);
    const withPgbench = await promisify(execFile)(pgbenchBin, ['--version']).then(
      () => true,
      () => false,
    );
    const capturedFile = join(dir, 'statements.json');
    writeFileSync(capturedFile, JSON.stringify({ statements: captured.statements, fresh: [...captured.fresh] }));
    // Jobs of the seed, the captured submit, pgbench and the floor, left out of the check of jobs against answers.
    const jobCount = async () => Number((await query<{ n: string }>(stack.db.em.fork(), 'select count(*) as n from mint_jobs'))[0]!.n);
    let pgbenchJobs = await jobCount();
    if (!withPgbench) progress(`no pgbench at ${pgbenchBin}: the pgbench baseline is skipped`);
    // One bearer token sends every request: without its rate limit (2,000 requests/s per credential) the API is measured, not the limit.
    const api = await stack.start('api', { RATE_LIMIT_PER_CREDENTIAL: '0' }, process.env['BENCH_API_NODE_ARGS']?.split(' ').filter((a) => a !== '') ?? []);
    const baseline = await startBaseline();
    servers.push(baseline.child);
    const floor = await startFloor(capturedFile, stack.dbUrl);
    servers.push(floor.child);
    const body = (key: string) =>
      JSON.stringify({
        brand_id: seed.brand_id,
        product_id: seed.product_id,
        requested_quantity: 10,
        identity_mode: 'IDENTITY_MODE_SERIAL',
        activation_mode: 'ACTIVATION_MODE_ACTIVE_AT_MINT',
        idempotency_key: key,
      });
    progress(`database ${stack.dbName}, API on ${api.port}, baseline on ${baseline.port}, floor on ${floor.port}, ${options.connections} connections`);
    let apiOks = 0;
    const count = (f: LoadFigures) => f.statuses['200'] ?? 0;
    await load(baseline.port, 2, options.connections, seed.access_token, body);
    apiOks += count(await load(api.port, 2, options.connections, seed.access_token, body));
    const warmed = await jobCount();
    await load(floor.port, 2, options.connections, seed.access_token, body);
    if (withPgbench) for (const protocol of ['extended', 'prepared'] as const) await pgbenchLoad(stack, script, protocol, 2, options.connections);
    pgbenchJobs += (await jobCount()) - warmed;
    const runs: { baseline: LoadFigures; pgbench: PgbenchRun | null; floor: LoadFigures; api: LoadFigures }[] = [];
    for (let run = 0; run < options.runs; run++) {
      const b = await load(baseline.port, options.durationSeconds, options.connections, seed.access_token, body);
      const jobsBefore = await jobCount();
      const pgb = withPgbench
        ? {
            extended: await pgbenchLoad(stack, script, 'extended', options.durationSeconds, options.connections),
            prepared: await pgbenchLoad(stack, script, 'prepared', options.durationSeconds, options.connections),
          }
        : null;
      const f = await load(floor.port, options.durationSeconds, options.connections, seed.access_token, body);
      pgbenchJobs += (await jobCount()) - jobsBefore;
      const cpuBefore = cpuMsOf(api.child.pid!);
      const loaded = await load(api.port, options.durationSeconds, options.connections, seed.access_token, body);
      const cpuAfter = cpuMsOf(api.child.pid!);
      const answers = loaded.rps * options.durationSeconds;
      const a = {
        ...loaded,
        cpuUsPerRequest: cpuBefore === null || cpuAfter === null || answers === 0 ? null : Math.round(((cpuAfter - cpuBefore) * 1000) / answers),
      };
      apiOks += count(a);
      runs.push({ baseline: b, pgbench: pgb, floor: f, api: a });
      progress(
        `run ${run + 1}/${options.runs}: API ${Math.round(a.rps)} req/s (p50 ${a.p50.toFixed(1)} ms, p99 ${a.p99.toFixed(1)} ms, ` +
          `${a.cpuUsPerRequest ?? '?'} µs of API CPU per submit), baseline ${Math.round(b.rps)} req/s, ratio ${(a.rps / b.rps).toFixed(3)}; ` +
          `floor ${Math.round(f.rps)} req/s, API / floor ${(a.rps / f.rps).toFixed(3)}` +
          (pgb
            ? `; pgbench of the submit's statements ${Math.round(pgb.extended.tps)} tps extended, ${Math.round(pgb.prepared.tps)} tps prepared, ` +
              `API / pgbench ${(a.rps / pgb.extended.tps).toFixed(3)} extended, ${(a.rps / pgb.prepared.tps).toFixed(3)} prepared`
            : ''),
      );
    }
    const [jobs] = await query<{ n: string }>(stack.db.em.fork(), 'select count(*) as n from mint_jobs');
    return {
      durationSeconds: options.durationSeconds,
      connections: options.connections,
      runs,
      jobs: Number(jobs!.n) - pgbenchJobs,
      apiOks,
      inFlightAllowance: options.connections * (options.runs + 1),
    };
  } finally {
    for (const child of servers) await stopServer(child);
    rmSync(dir, { recursive: true, force: true });
    await stack.close();
  }
}

if (process.argv[2] === 'serve-baseline') {
  serveBaseline();
} else if (process.argv[2] === 'serve-floor') {
  await serveFloor(process.argv[3]!, process.argv[4]!);
} else if (import.meta.main) {
  let failed = false;
  try {
    const result = await benchSubmit({
      durationSeconds: Number(process.env['BENCH_DURATION'] ?? 10),
      connections: Number(process.env['BENCH_CONNECTIONS'] ?? 16),
      runs: Number(process.env['BENCH_RUNS'] ?? 1),
    });
    console.log(
      `\nSubmitMintRequest (Connect JSON, 10 serial units, new idempotency key each), ${result.connections} connections, ${result.durationSeconds} s per load:`,
    );
    console.log(`${'server'.padEnd(40)} ${'req/s'.padStart(8)} ${'p50'.padStart(7)} ${'p99'.padStart(7)}  statuses`);
    for (const { baseline, pgbench, floor, api } of result.runs) {
      for (const [label, f] of [
        ['baseline: node:http parsing the JSON', baseline],
        ['floor: node:http + the statements', floor],
        ['API: SubmitMintRequest', api],
      ] as const) {
        console.log(
          `${label.padEnd(40)} ${Math.round(f.rps).toString().padStart(8)} ${f.p50.toFixed(2).padStart(7)} ${f.p99.toFixed(2).padStart(7)}  ${JSON.stringify(f.statuses)}${f.errors ? ` errors ${f.errors}` : ''}`,
        );
      }
      if (pgbench) {
        for (const protocol of ['extended', 'prepared'] as const) {
          console.log(
            `${`pgbench: the submit's statements, ${protocol}`.padEnd(40)} ${Math.round(pgbench[protocol].tps).toString().padStart(8)} (avg ${pgbench[protocol].latencyAvgMs.toFixed(2)} ms)`,
          );
        }
      }
      console.log(
        `API / baseline: ${(api.rps / baseline.rps).toFixed(3)}, API / floor: ${(api.rps / floor.rps).toFixed(3)}` +
          (pgbench ? `, API / pgbench: ${(api.rps / pgbench.extended.tps).toFixed(3)} extended, ${(api.rps / pgbench.prepared.tps).toFixed(3)} prepared` : ''),
      );
      for (const f of [floor, api]) if (Object.keys(f.statuses).join() !== '200' || f.errors > 0) failed = true;
    }
    const consistent = result.jobs >= result.apiOks && result.jobs - result.apiOks <= result.inFlightAllowance;
    console.log(
      `jobs in the database ${result.jobs}, API 200 answers ${result.apiOks} (in flight at a stop: at most ${result.inFlightAllowance}): ${consistent ? 'ok' : 'MISMATCH'}`,
    );
    if (!consistent) failed = true;
    if (process.env['BENCH_JSON']) writeFileSync(process.env['BENCH_JSON'], JSON.stringify(result));
  } catch (error) {
    failed = true;
    console.error(error);
  }
  process.exitCode = failed ? 1 : 0;
}
