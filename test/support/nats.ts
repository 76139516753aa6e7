// NATS helpers: unique stream names on the shared server, and a private nats-server
// child process that fault tests may stop, kill and restart.

import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { testInfra } from './context.ts';
import { probeNats } from './infra.ts';
import { runStreamPrefix } from './nats-admin.ts';
import { freePort } from './ports.ts';

/** Stream and subject prefix that no other test (file, worker or run) uses. */
export interface StreamNames {
  /** A JetStream stream name, e.g. `T_MIHX2K3L_A1B2C3_1A2B3C4D5E`. */
  readonly stream: string;
  /** A subject prefix, e.g. `t_mihx2k3l_a1b2c3_1a2b3c4d5e`: subjects are `<prefix>.<rest>`. */
  readonly subjectPrefix: string;
}

/**
 * Fresh names for a test that creates its own stream on the shared NATS server, so tests
 * running in parallel never see each other's messages. The names carry the run's id (see
 * `runStreamPrefix`): the global setup deletes the run's streams when it ends.
 */
export function freshStreamNames(runId: string = testInfra().runId): StreamNames {
  const stream = `${runStreamPrefix(runId)}${randomBytes(5).toString('hex').toUpperCase()}`;
  return { stream, subjectPrefix: stream.toLowerCase() };
}

/** Path of the nats-server binary used by `startNatsServer`. */
export const natsServerBinary = '/usr/sbin/nats-server';

/** A nats-server child process owned by one test. */
export interface NatsServer {
  /** `nats://127.0.0.1:<port>`; stays the same across `restart()`. */
  readonly url: string;
  readonly port: number;
  /** JetStream store directory; kept across `kill()` and `restart()`, removed by `stop()`. */
  readonly storeDir: string;
  /** True while the process runs (also while it is stopped with SIGSTOP). */
  readonly running: boolean;
  /** Terminates the server (SIGTERM, SIGKILL after 5 s) and removes its store. Idempotent. */
  stop(): Promise<void>;
  /**
   * Sends `signal` (default SIGKILL) to simulate a crash or a pause. For SIGKILL, SIGTERM,
   * SIGINT and SIGQUIT it resolves once the process has exited; for others (SIGSTOP,
   * SIGCONT) at once. The store is kept, so `restart()` recovers persisted streams.
   */
  kill(signal?: NodeJS.Signals): Promise<void>;
  /** Ends the server gracefully if it runs, then starts it again on the same port and store. */
  restart(): Promise<void>;
}

const terminatingSignals: ReadonlySet<NodeJS.Signals> = new Set(['SIGKILL', 'SIGTERM', 'SIGINT', 'SIGQUIT']);
const children = new Set<ChildProcess>();
process.once('exit', () => {
  for (const child of children) child.kill('SIGKILL');
});

/**
 * Starts `nats-server -js` on 127.0.0.1 with a free port and a temporary store, and
 * resolves once it accepts clients (rejecting with its last output after `startTimeoutMs`).
 * Always `stop()` it in `afterAll`/`afterEach`; a worker that exits kills leftovers.
 */
export async function startNatsServer(options: { startTimeoutMs?: number } = {}): Promise<NatsServer> {
  const startTimeoutMs = options.startTimeoutMs ?? 10_000;
  const port = await freePort();
  const storeDir = await mkdtemp(join(tmpdir(), 'mint-nats-'));
  const url = `nats://127.0.0.1:${port}`;
  let child: ChildProcess | undefined;
  let output: string[] = [];

  const exited = (proc: ChildProcess) => (proc.exitCode !== null || proc.signalCode !== null ? Promise.resolve() : once(proc, 'exit').then(() => {}));

  async function launch(): Promise<void> {
    output = [];
    const proc = spawn(natsServerBinary, ['-js', '-a', '127.0.0.1', '-p', String(port), '-sd', storeDir], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child = proc;
    children.add(proc);
    proc.once('exit', () => children.delete(proc));
    const keep = (chunk: Buffer) => {
      output.push(...chunk.toString().split('\n').filter(Boolean));
      if (output.length > 40) output = output.slice(-40);
    };
    proc.stdout?.on('data', keep);
    proc.stderr?.on('data', keep);
    const spawnError = once(proc, 'error').then(([error]) => {
      throw error;
    });
    spawnError.catch(() => {});
    const deadline = Date.now() + startTimeoutMs;
    while (Date.now() < deadline) {
      if (proc.exitCode !== null || proc.signalCode !== null) break;
      if (await Promise.race([probeNats(url, 500), spawnError])) return;
      await sleep(50);
    }
    proc.kill('SIGKILL');
    await exited(proc);
    throw new Error(`nats-server on port ${port} did not become ready:\n${output.join('\n')}`);
  }

  async function terminate(proc: ChildProcess): Promise<void> {
    if (proc.exitCode !== null || proc.signalCode !== null) return;
    proc.kill('SIGCONT'); // a paused (SIGSTOP) server would never act on SIGTERM
    proc.kill('SIGTERM');
    const timer = setTimeout(() => proc.kill('SIGKILL'), 5000);
    await exited(proc);
    clearTimeout(timer);
  }

  await launch().catch(async (error: unknown) => {
    await rm(storeDir, { recursive: true, force: true });
    throw error;
  });

  let stopped: Promise<void> | undefined;
  return {
    url,
    port,
    storeDir,
    get running() {
      return child !== undefined && child.exitCode === null && child.signalCode === null;
    },
    stop: () =>
      (stopped ??= (async () => {
        if (child !== undefined) await terminate(child);
        await rm(storeDir, { recursive: true, force: true });
      })()),
    async kill(signal: NodeJS.Signals = 'SIGKILL') {
      if (child === undefined) return;
      child.kill(signal);
      if (terminatingSignals.has(signal)) await exited(child);
      if (signal === 'SIGSTOP') await stoppedState(child.pid!);
    },
    async restart() {
      if (stopped !== undefined) throw new Error('restart() after stop()');
      if (child !== undefined) await terminate(child);
      await launch();
    },
  };
}

/** Resolves once the kernel reports the process as stopped (state T), so a paused server really is paused. */
async function stoppedState(pid: number): Promise<void> {
  for (let i = 0; i < 200; i++) {
    const stat = await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => '');
    if (/^\d+ \(.*\) [Tt] /.test(stat)) return;
    await sleep(10);
  }
}
