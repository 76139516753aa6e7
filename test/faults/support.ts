// Shared pieces of the fault-injection scenarios: trial counts, fresh-connection SQL probes that
// survive pg_terminate_backend, the API as a child process, the per-job checks and the report line.

import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { startPgBouncer, type PgBouncer } from '../support/pgbouncer.ts';
import { freePort } from '../support/ports.ts';
import { testJwtSecret, testWebhookSecretKeys } from '../support/usecases.ts';

const repoRoot = fileURLToPath(new URL('../../', import.meta.url));

/** A positive integer from the environment, or `fallback` when unset. */
function envInteger(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isSafeInteger(value) || value < 1) throw new Error(`${name} must be a positive integer, got ${JSON.stringify(raw)}`);
  return value;
}

/** Trials per scenario: FAULT_TRIALS, default 4 (CI); 20 is the issue's full size. */
export const faultTrials = envInteger('FAULT_TRIALS', 4);

/** Units per job of the executor-kill scenario: FAULT_UNITS, else min(1,000,000, 50,000 x trials), at least 100,000. */
export const faultUnits = envInteger('FAULT_UNITS', Math.min(1_000_000, Math.max(100_000, 50_000 * faultTrials)));

/**
 * How much longer than usual scenarios and their waits may take: FAULT_TIMEOUT_FACTOR, default 1. A
 * full-size run on a machine busy with other work needs more time per trial; the scenarios' checks
 * do not change.
 */
const timeoutFactor = envInteger('FAULT_TIMEOUT_FACTOR', 1);

/** A scenario's time limit: a fixed part plus a part per trial (and per 100k units where they matter), times FAULT_TIMEOUT_FACTOR. */
export function scenarioTimeoutMs(fixedMs: number, perTrialMs: number): number {
  return (fixedMs + perTrialMs * faultTrials) * timeoutFactor;
}

/** A uniformly random integer in [min, max]. */
export function randomInt(min: number, max: number): number {
  return min + Math.floor(Math.random() * (max - min + 1));
}

/** Where the scenario processes keep files (pack store): one temporary folder per test process, removed on exit. */
export const scratchDir = mkdtempSync(join(tmpdir(), 'mint-faults-'));
process.once('exit', () => rmSync(scratchDir, { recursive: true, force: true }));

/**
 * Runs one statement over a connection of its own, so that probes keep working while the scenario
 * terminates every backend of the database. Retries a few times when the connection itself fails.
 */
export async function sql<T extends object>(url: string, text: string, params: unknown[] = []): Promise<T[]> {
  for (let attempt = 1; ; attempt++) {
    const client = new pg.Client({ connectionString: url, application_name: 'fault-probe' });
    client.on('error', () => {});
    try {
      await client.connect();
      return (await client.query(text, params)).rows as T[];
    } catch (error) {
      const code = (error as { code?: string }).code;
      // Only connection-level failures are retried; a wrong query fails at once.
      // 53300 (too many clients) is the shared server being full for a moment.
      if (attempt >= 5 || (code !== undefined && !code.startsWith('57') && !code.startsWith('08') && code !== '53300')) throw error;
      await sleep(100 * attempt);
    } finally {
      await client.end().catch(() => {});
    }
  }
}

/** Polls `probe` every `intervalMs` until it returns true; throws naming `what` after `timeoutMs` (times FAULT_TIMEOUT_FACTOR). */
export async function waitFor(what: string, probe: () => Promise<boolean>, timeoutMs: number, intervalMs = 100): Promise<void> {
  const limitMs = timeoutMs * timeoutFactor;
  const deadline = Date.now() + limitMs;
  while (!(await probe())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${limitMs} ms waiting for ${what}`);
    await sleep(intervalMs);
  }
}

/** What a user would check on a finished serial job. */
export interface JobFacts {
  readonly jobId: string;
  readonly batchId: string;
  readonly status: string;
  readonly requested: number;
  /** The batch's minted_quantity. */
  readonly minted: number;
  /** Rows in mint_units. */
  readonly units: number;
  readonly distinctSerials: number;
  /** Distinct seqs within 1..requested. */
  readonly seqsInRange: number;
  /** Sum of the `mint_units_created` events' counts. */
  readonly evented: number;
  /** Leases claimed on the job (its fencing token): 1 when one executor ran it throughout, more after takeovers. */
  readonly leaseClaims: number;
}

/** Facts of the given jobs (all when `jobIds` is omitted), one query. */
export async function jobFacts(url: string, jobIds?: readonly string[]): Promise<JobFacts[]> {
  const rows = await sql<{
    job_id: string;
    batch_id: string;
    status: string;
    requested: number;
    minted: number;
    units: string;
    serials: string;
    seqs: string;
    evented: string;
    lease_claims: number;
  }>(
    url,
    `
    select j.id as job_id, b.id as batch_id, j.status, j.requested_quantity as requested, b.minted_quantity as minted, j.lease_token as lease_claims,
           u.units, u.serials, u.seqs,
           (select coalesce(sum((e.payload->>'count')::int), 0) from mint_events e where e.entity_id = b.id::text and e.event_type = 'mint_units_created') as evented
    from mint_jobs j
    join mint_batches b on b.brand_id = j.brand_id and b.mint_job_id = j.id
    cross join lateral (
      select count(*) as units, count(distinct serial) as serials, count(distinct seq) filter (where seq between 1 and j.requested_quantity) as seqs
      from mint_units where brand_id = b.brand_id and mint_batch_id = b.id
    ) u
    ${jobIds === undefined ? '' : 'where j.id = any($1::uuid[])'}
    order by j.created_at`,
    jobIds === undefined ? [] : [jobIds],
  );
  return rows.map((r) => ({
    jobId: r.job_id,
    batchId: r.batch_id,
    status: r.status,
    requested: r.requested,
    minted: r.minted,
    units: Number(r.units),
    distinctSerials: Number(r.serials),
    seqsInRange: Number(r.seqs),
    evented: Number(r.evented),
    leaseClaims: r.lease_claims,
  }));
}

/** Units missing from finished jobs (seqs of 1..N without a row) and rows beyond one per seq or serial. */
export function tally(facts: readonly JobFacts[]): { lost: number; duplicates: number; notCompleted: number; inexact: number } {
  let lost = 0;
  let duplicates = 0;
  let notCompleted = 0;
  let inexact = 0;
  for (const f of facts) {
    lost += f.requested - f.seqsInRange;
    duplicates += Math.max(f.units - f.distinctSerials, f.units - f.seqsInRange);
    if (f.status !== 'COMPLETED') notCompleted++;
    if (f.units !== f.requested || f.minted !== f.requested || f.evented !== f.requested) inexact++;
  }
  return { lost, duplicates, notCompleted, inexact };
}

/** Prints the scenario's one line, `<scenario>: trials=N lost=0 duplicates=0 ...`, and returns it. */
export function report(scenario: string, fields: Record<string, number | string>): string {
  const line = `${scenario}: ${Object.entries(fields)
    .map(([k, v]) => `${k}=${v}`)
    .join(' ')}`;
  console.log(line);
  return line;
}

/** True when `FAULT_PGBOUNCER=1` (`npm run test:faults:pgbouncer`): the processes under test reach PostgreSQL through PgBouncer. */
export const throughPgBouncer = process.env['FAULT_PGBOUNCER'] === '1';
let bouncer: Promise<PgBouncer> | undefined;

/**
 * The database settings of a process under test: DATABASE_URL itself, or with `FAULT_PGBOUNCER=1`
 * a transaction-pooling PgBouncer in front of it (started once per file) as DATABASE_URL and the
 * server itself as DATABASE_DIRECT_URL. The scenarios' own checks always read the server directly.
 */
export async function databaseEnv(databaseUrl: string): Promise<Record<string, string>> {
  if (!throughPgBouncer) return { DATABASE_URL: databaseUrl };
  bouncer ??= startPgBouncer(databaseUrl, { poolSize: 40 });
  return { DATABASE_URL: (await bouncer).pooled(databaseUrl), DATABASE_DIRECT_URL: databaseUrl };
}

/** Stops the PgBouncer of {@link databaseEnv}, if one was started; for afterAll. */
export async function stopPgBouncer(): Promise<void> {
  await (await bouncer)?.stop();
}

/** A running API child process (`node services/api/src/main.ts`). */
export interface ApiProcess {
  readonly child: ChildProcess;
  /** `http://127.0.0.1:<port>`. */
  readonly baseUrl: string;
  readonly port: number;
  readonly lines: string[];
  /** Resolves with the exit code or signal once the process exited. */
  readonly exited: Promise<number | string>;
  /** SIGKILL, resolved once it exited. */
  kill(): Promise<void>;
}

const apiChildren = new Set<ChildProcess>();
process.once('exit', () => {
  for (const child of apiChildren) child.kill('SIGKILL');
});

/** SIGKILLs every API process this test process started and still runs; for afterAll. */
export async function killAllApis(): Promise<void> {
  const running = [...apiChildren];
  for (const child of running) child.kill('SIGKILL');
  await Promise.all(running.map((child) => (child.exitCode !== null || child.signalCode !== null ? undefined : once(child, 'exit'))));
}

/** Settings of the API under test: its database and NATS stream, on the given (or a free) port. */
export interface ApiSettings {
  readonly databaseUrl: string;
  readonly natsUrl: string;
  readonly stream: string;
  readonly subjectPrefix: string;
  readonly port?: number;
  /** More environment for the API (limits, timeouts). */
  readonly env?: Readonly<Record<string, string>>;
}

/** Starts the API process and resolves once /readyz answers 200 (throws with its output after 20 s). */
export async function spawnApi(settings: ApiSettings): Promise<ApiProcess> {
  const port = settings.port ?? (await freePort());
  const child = spawn(process.execPath, ['services/api/src/main.ts'], {
    cwd: repoRoot,
    env: {
      PATH: process.env['PATH'] ?? '',
      ...(await databaseEnv(settings.databaseUrl)),
      NATS_URL: settings.natsUrl,
      NATS_STREAM: settings.stream,
      NATS_SUBJECT_PREFIX: settings.subjectPrefix,
      AUTH_JWT_SECRET: testJwtSecret,
      PORT: String(port),
      HOST: '127.0.0.1',
      LOG_LEVEL: 'warn',
      DOWNLOAD_SIGNING_KEYS: `k1:${Buffer.alloc(32, 7).toString('base64')}`,
      WEBHOOK_SECRET_KEYS: testWebhookSecretKeys,
      PACK_STORE: 'fs',
      PACK_STORE_DIR: join(scratchDir, 'packs'),
      ...settings.env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  apiChildren.add(child);
  const lines: string[] = [];
  const keep = (chunk: Buffer) => lines.push(...chunk.toString().split('\n').filter(Boolean));
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  const exited = once(child, 'exit').then(([code, signal]) => {
    apiChildren.delete(child);
    return (code as number | null) ?? (signal as string);
  });
  const baseUrl = `http://127.0.0.1:${port}`;
  const api: ApiProcess = {
    child,
    baseUrl,
    port,
    lines,
    exited,
    async kill() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await exited;
    },
  };
  const deadline = Date.now() + 20_000;
  for (;;) {
    if (child.exitCode !== null || child.signalCode !== null) throw new Error(`api exited at start:\n${lines.join('\n')}`);
    if (
      await fetch(`${baseUrl}/readyz`).then(
        (r) => r.status === 200,
        () => false,
      )
    )
      return api;
    if (Date.now() > deadline) {
      await api.kill();
      throw new Error(`api not ready after 20 s:\n${lines.join('\n')}`);
    }
    await sleep(50);
  }
}

/**
 * The executor child-process environment shared by the scenarios (short leases so takeovers are
 * quick). Packs go to the scratch folder (`PACK_STORE=fs`) unless `overrides` say `PACK_STORE=nats`,
 * so scenarios on the shared nats-server leave no pack buckets behind.
 */
export function executorEnv(settings: Omit<ApiSettings, 'port'>, overrides: Record<string, string> = {}): Record<string, string> {
  return {
    DATABASE_URL: settings.databaseUrl,
    NATS_URL: settings.natsUrl,
    NATS_STREAM: settings.stream,
    NATS_SUBJECT_PREFIX: settings.subjectPrefix,
    EXECUTOR_LEASE_MS: '1500',
    NATS_ACK_WAIT_MS: '2000',
    MINT_CHUNK_SIZE: '2000',
    EXECUTOR_JOB_WRITERS: '2',
    LOG_LEVEL: 'warn',
    PACK_STORE: 'fs',
    PACK_STORE_DIR: join(scratchDir, 'packs'),
    ...overrides,
  };
}
