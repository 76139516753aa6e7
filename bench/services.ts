// The production processes as an operator runs them (`node services/<name>/src/main.ts`), for
// bench/submit.ts and bench/soak.ts: a scratch database and JetStream stream of their own, a
// complete environment on loopback, readiness waits, RSS from /proc, and a cleanup that kills
// every child it started and drops the database and the stream.

import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { createWriteStream, readFileSync, type WriteStream } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { openDatabase, type Database } from '@mint/db';
import { packBucketName } from '@mint/runtime';
import { objectStoreStream } from '@mint/store';
import { createUseCaseContext, type UseCaseContext } from '@mint/usecases';
import { apiNodeFlags } from './child-server.ts';
import { createScratchDatabase } from './scratch-database.ts';

/** The local NATS server (BENCH_NATS_URL); each stack gets a stream and subject prefix of its own on it. */
export const natsUrl = process.env['BENCH_NATS_URL'] ?? 'nats://127.0.0.1:4222';
const repoRoot = fileURLToPath(new URL('../', import.meta.url));
const jwtSecret = `bench-${randomBytes(24).toString('hex')}`;

/** A TCP port on 127.0.0.1 that was free a moment ago. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address !== null ? address.port : 0;
      server.close(() => (port > 0 ? resolve(port) : reject(new Error('no port assigned'))));
    });
  });
}

/** Current and peak resident set of a process in MB (from /proc), or null once it is gone. */
export function rssOf(pid: number): { rssMb: number; peakMb: number } | null {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = (field: string) => Number(new RegExp(`${field}:\\s+(\\d+) kB`).exec(status)?.[1] ?? 0);
    return { rssMb: kb('VmRSS') / 1024, peakMb: kb('VmHWM') / 1024 };
  } catch {
    return null;
  }
}

/**
 * CPU time (user + system, milliseconds) a process has used so far, from `/proc/{pid}/stat`; null
 * where that file cannot be read. Unlike wall-clock throughput it barely moves with the machine's
 * other load, so a before/after comparison of CPU per request holds on a shared machine.
 */
export function cpuMsOf(pid: number): number | null {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    // Fields 14 and 15 of stat (utime, stime), counted after the command name: in clock ticks of 10 ms.
    return (Number(fields[11]) + Number(fields[12])) * 10;
  } catch {
    return null;
  }
}

/** A running service child: its pid, the port it serves on and a way to stop it. */
export interface Service {
  readonly name: string;
  readonly child: ChildProcess;
  /** HTTP port: the API's PORT, the executor's EXECUTOR_HTTP_PORT. */
  readonly port: number;
  /** Where its stdout and stderr go. */
  readonly logFile: string;
}

/**
 * A scratch stack: a migrated database, a stream name, a use-case context on the database (its
 * JWT secret is the API's, so `ctx` can issue bearer tokens), and starters for the API and the
 * executor. `close()` kills the children (SIGTERM, then SIGKILL after 10 s) and drops everything.
 */
export interface Stack {
  readonly dbName: string;
  readonly dbUrl: string;
  readonly stream: string;
  readonly db: Database;
  /** Use cases on the stack's database, with the API's JWT secret and public base URL. */
  readonly ctx: UseCaseContext;
  /** Folder of the children's logs and the pack store. */
  readonly dir: string;
  /**
   * Starts `node services/api/src/main.ts` (or the executor) and waits until its /readyz answers 200;
   * `nodeArgs` go to node before the script (e.g. `--cpu-prof`); the API's come after the node
   * flags the image starts it with (api_node_flags in deploy/bin/mint).
   */
  start(name: 'api' | 'executor', env?: Record<string, string>, nodeArgs?: readonly string[]): Promise<Service>;
  close(): Promise<void>;
}

/** Deletes the streams `names` in NATS (at `url`), each when it exists. */
export async function dropNatsStreams(url: string, names: readonly string[]): Promise<void> {
  const nc = await connect({ servers: url }).catch(() => undefined);
  if (nc === undefined) return;
  try {
    const jsm = await jetstreamManager(nc);
    for (const name of names) await jsm.streams.delete(name).catch(() => false);
  } finally {
    await nc.close();
  }
}

/** Deletes a benchmark's job stream and the pack bucket its executors made in NATS (`packBucketName`). */
export function dropBenchStreams(url: string, stream: string): Promise<void> {
  return dropNatsStreams(url, [stream, objectStoreStream(packBucketName({ natsStream: stream }))]);
}

/** Creates the stack's database (named `${prefix}_<random>`) and migrates it; nothing is started yet. */
export async function createStack(prefix: string): Promise<Stack> {
  const id = randomBytes(4).toString('hex');
  const stream = `${prefix.toUpperCase()}_${id.toUpperCase()}`;
  const subjectPrefix = `${prefix}_${id}`;
  const dir = await mkdtemp(join(tmpdir(), `${prefix}-`));
  const scratch = await createScratchDatabase(prefix, id);
  const dbUrl = scratch.url;
  const db = await openDatabase({ url: dbUrl }, { poolSize: 4, applicationName: prefix });
  const services: Service[] = [];
  const logs: WriteStream[] = [];
  // The API's port is chosen now so that brands created through `ctx` get resolver URLs on it.
  const apiPort = await freePort();
  const publicBaseUrl = `http://127.0.0.1:${apiPort}`;
  const ctx = createUseCaseContext({ db, publicBaseUrl, jwtSecret });

  const start = async (name: 'api' | 'executor', env: Record<string, string> = {}, nodeArgs: readonly string[] = []): Promise<Service> => {
    const port = name === 'api' ? apiPort : await freePort();
    const logFile = join(dir, `${name}.log`);
    const log = createWriteStream(logFile, { flags: 'a' });
    logs.push(log);
    const child = spawn(process.execPath, [...(name === 'api' ? apiNodeFlags : []), ...nodeArgs, `services/${name}/src/main.ts`], {
      cwd: repoRoot,
      env: {
        PATH: process.env['PATH'] ?? '',
        DATABASE_URL: dbUrl,
        NATS_URL: natsUrl,
        NATS_STREAM: stream,
        NATS_SUBJECT_PREFIX: subjectPrefix,
        AUTH_JWT_SECRET: jwtSecret,
        DOWNLOAD_SIGNING_KEYS: `bench:${randomBytes(32).toString('base64')}`,
        WEBHOOK_SECRET_KEYS: `bench:${randomBytes(32).toString('base64')}`,
        PACK_STORE: 'fs',
        PACK_STORE_DIR: join(dir, 'packs'),
        HOST: '127.0.0.1',
        LOG_LEVEL: 'warn',
        SHUTDOWN_TIMEOUT_MS: '5000',
        PUBLIC_BASE_URL: publicBaseUrl,
        ...(name === 'api' ? { PORT: String(port) } : { EXECUTOR_HTTP_PORT: String(port) }),
        ...env,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stdout!.pipe(log, { end: false });
    child.stderr!.pipe(log, { end: false });
    const service: Service = { name, child, port, logFile };
    services.push(service);
    const deadline = Date.now() + 30_000;
    for (;;) {
      if (child.exitCode !== null || child.signalCode !== null) {
        throw new Error(
          `${name} exited (${child.exitCode ?? child.signalCode}) before it was ready; see ${logFile}:\n${readFileSync(logFile, 'utf8').slice(-2000)}`,
        );
      }
      const ready = await fetch(`http://127.0.0.1:${port}/readyz`).then(
        (r) => r.status === 200,
        () => false,
      );
      if (ready) return service;
      if (Date.now() > deadline) throw new Error(`${name} not ready within 30 s; see ${logFile}`);
      await sleep(100);
    }
  };

  const close = async (): Promise<void> => {
    await Promise.all(
      services.map(async ({ child }) => {
        if (child.exitCode !== null || child.signalCode !== null) return;
        const exited = once(child, 'exit');
        child.kill('SIGTERM');
        const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
        await exited;
        clearTimeout(timer);
      }),
    );
    for (const log of logs) log.end();
    await db.close(true);
    await dropBenchStreams(natsUrl, stream);
    await scratch.drop();
    await rm(dir, { recursive: true, force: true });
  };

  return { dbName: scratch.name, dbUrl, stream, db, ctx, dir, start, close };
}
