// Executors for the executor's integration tests: daemons as child processes (`node
// services/executor/src/main.ts`) for crash, pause and shutdown tests, an executor in this process
// over a JetStream bus, and the checks those tests share.

import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import pino from 'pino';
import { connectJetStreamBus, type JobBus } from '@mint/bus';
import type { Database } from '@mint/db';
import { query } from '../../../test/support/sql.ts';
import { startExecutor, type Executor, type ExecutorOptions } from '@mint/executor';
import { testInfra } from '../../../test/support/context.ts';
import { freshStreamNames, type StreamNames } from '../../../test/support/nats.ts';
import { freePort } from '../../../test/support/ports.ts';
import { setupUseCases, testWebhookSecretKeys, type SeededBrand, type UseCaseBundle } from '../../../test/support/usecases.ts';

const repoRoot = fileURLToPath(new URL('../../../', import.meta.url));
const children = new Set<ChildProcess>();
process.once('exit', () => {
  for (const child of children) child.kill('SIGKILL');
});

/** A running executor child process. */
export interface ExecutorProcess {
  readonly child: ChildProcess;
  /** Its log lines so far (pino JSON). */
  readonly lines: string[];
  /** Resolves with the exit code (or signal) once it exited. */
  readonly exited: Promise<number | string>;
  signal(signal: NodeJS.Signals): void;
}

/** Starts an executor daemon on `databaseUrl` and a NATS stream of the test's own; `env` overrides the defaults. */
export async function spawnExecutor(env: Record<string, string>): Promise<ExecutorProcess> {
  const child = spawn(process.execPath, ['services/executor/src/main.ts'], {
    cwd: repoRoot,
    env: {
      PATH: process.env['PATH'] ?? '',
      LOG_LEVEL: 'info',
      PORT: String(await freePort()),
      AUTH_JWT_SECRET: 'test-secret-test-secret-test-secret-0123',
      WEBHOOK_SECRET_KEYS: testWebhookSecretKeys,
      EXECUTOR_CONCURRENCY: '1',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.add(child);
  const lines: string[] = [];
  const keep = (chunk: Buffer) => lines.push(...chunk.toString().split('\n').filter(Boolean));
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  const exited = once(child, 'exit').then(([code, signal]) => {
    children.delete(child);
    return (code as number | null) ?? (signal as string);
  });
  return { child, lines, exited, signal: (s) => void child.kill(s) };
}

/**
 * The environment of executors sharing `databaseUrl` and a NATS stream of their own on the test
 * broker, with short leases and ack waits (so takeovers happen within a test) and small chunks.
 */
export function executorTestEnv(databaseUrl: string): Record<string, string> {
  const names = freshStreamNames();
  return {
    DATABASE_URL: databaseUrl,
    NATS_URL: testInfra().natsUrl,
    NATS_STREAM: names.stream,
    NATS_SUBJECT_PREFIX: names.subjectPrefix,
    EXECUTOR_LEASE_MS: '1500',
    NATS_ACK_WAIT_MS: '3000',
    MINT_CHUNK_SIZE: '500',
    PACK_STORE: 'fs',
  };
}

/** A test file's executor daemons: a fresh database with a seeded brand, and the processes started on it. */
export interface ExecutorProcesses {
  readonly app: UseCaseBundle;
  readonly brand: SeededBrand;
  /** Every executor started so far, in order. */
  readonly running: ExecutorProcess[];
  /** Starts an executor on the file's database and stream; `overrides` change {@link executorTestEnv}'s values. */
  start(overrides?: Record<string, string>): Promise<ExecutorProcess>;
  /** Kills every executor (resuming a stopped one first), waits for their exits, drops the database. */
  close(): Promise<void>;
}

/** Opens a fresh database with a seeded brand for executor daemons. Call in beforeAll; close() in afterAll. */
export async function setupExecutorProcesses(): Promise<ExecutorProcesses> {
  const app = await setupUseCases();
  const brand = await app.seedBrand();
  const env = executorTestEnv(app.database.url);
  const running: ExecutorProcess[] = [];
  return {
    app,
    brand,
    running,
    async start(overrides = {}) {
      const p = await spawnExecutor({ ...env, ...overrides });
      running.push(p);
      return p;
    },
    async close() {
      for (const p of running) {
        p.signal('SIGCONT');
        p.signal('SIGKILL');
      }
      await Promise.all(running.map((p) => p.exited));
      await app.close();
    },
  };
}

/** An executor running in this process over a JetStream bus on stream names of its own. */
export interface InProcessExecutor {
  readonly bus: JobBus;
  readonly executor: Executor;
  readonly names: StreamNames;
  /** Stops the executor, then closes the bus. */
  stop(): Promise<void>;
}

/**
 * Starts an executor on `app`'s context over the JetStream server at `natsUrl` (ack wait 5 s),
 * with a silent logger, one job at a time, 2000-unit chunks and a 50 ms outbox relay unless
 * `options` say otherwise.
 */
export async function startInProcessExecutor(
  app: UseCaseBundle,
  natsUrl: string,
  options: Partial<Omit<ExecutorOptions, 'ctx' | 'bus'>> = {},
): Promise<InProcessExecutor> {
  const names = freshStreamNames();
  const bus = await connectJetStreamBus({ url: natsUrl, ...names, ackWaitMs: 5000 });
  const executor = startExecutor({ ctx: app.ctx, bus, logger: pino({ level: 'silent' }), concurrency: 1, chunkSize: 2000, relayIntervalMs: 50, ...options });
  return {
    bus,
    executor,
    names,
    async stop() {
      await executor.stop();
      await bus.close();
    },
  };
}

/** Polls `probe` every 20 ms until it returns true; throws after `timeoutMs`. */
export async function waitUntil(what: string, probe: () => Promise<boolean>, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await probe())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(20);
  }
}

/** The job's status, minted quantity and lease holder. */
export async function jobState(db: Database, jobId: string): Promise<{ status: string; minted: number; owner: string | null; token: number }> {
  const [row] = await query<{ status: string; minted: number; lease_owner: string | null; lease_token: number }>(
    db.em.fork(),
    `select j.status, b.minted_quantity as minted, j.lease_owner, j.lease_token
     from mint_jobs j join mint_batches b on b.brand_id = j.brand_id and b.mint_job_id = j.id where j.id = ?`,
    [jobId],
  );
  return { status: row!.status, minted: row!.minted, owner: row!.lease_owner, token: row!.lease_token };
}

/** What a user would check on a finished serial batch: count, distinct serials, seq range and the chunk events' total. */
export async function unitFacts(
  db: Database,
  batchId: string,
): Promise<{ units: number; serials: number; minSeq: number; maxSeq: number; minted: number; evented: number }> {
  const [row] = await query<{ n: string; s: string; min: number; max: number; minted: number; evented: string }>(
    db.em.fork(),
    `select count(*) as n, count(distinct serial) as s, min(seq) as min, max(seq) as max,
            (select minted_quantity from mint_batches where id = ?) as minted,
            (select coalesce(sum((payload->>'count')::int), 0) from mint_events where entity_id = ?::text and event_type = 'mint_units_created') as evented
     from mint_units where mint_batch_id = ?`,
    [batchId, batchId, batchId],
  );
  return { units: Number(row!.n), serials: Number(row!.s), minSeq: row!.min, maxSeq: row!.max, minted: row!.minted, evented: Number(row!.evented) };
}
