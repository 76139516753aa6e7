// PgBouncer in transaction pooling mode in front of the test PostgreSQL: a child process on a free
// loopback port with a temporary configuration (auth_type trust, an auth_file naming the URL's user).
// Debian's `pgbouncer` package provides the binary; .ci/run installs it when it is missing.

import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { existsSync } from 'node:fs';
import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { probePostgres } from './infra.ts';
import { freePort } from './ports.ts';

/** Where Debian's package puts the binary. */
export const pgbouncerBinary = '/usr/sbin/pgbouncer';

/** A running pgbouncer owned by one test file. */
export interface PgBouncer {
  readonly port: number;
  /** `upstreamUrl` with host and port replaced by the pooler's: the same database and user, pooled. */
  pooled(upstreamUrl: string): string;
  /** Its log lines so far. */
  readonly output: readonly string[];
  /** Ends it (SIGTERM, SIGKILL after 5 s) and removes its configuration. Idempotent. */
  stop(): Promise<void>;
}

const children = new Set<ChildProcess>();
process.once('exit', () => {
  for (const child of children) child.kill('SIGKILL');
});

/**
 * Starts pgbouncer (`pool_mode = transaction`) in front of the server of `upstreamUrl` for any
 * database on it, and resolves once it answers a query. As root it drops to the `postgres` user
 * (pgbouncer refuses to run as root).
 */
export async function startPgBouncer(upstreamUrl: string, options: { poolSize?: number } = {}): Promise<PgBouncer> {
  if (!existsSync(pgbouncerBinary)) {
    throw new Error(`${pgbouncerBinary} is missing: install Debian's pgbouncer package (apt-get install -y --no-install-recommends pgbouncer; .ci/run does)`);
  }
  const upstream = new URL(upstreamUrl);
  const user = decodeURIComponent(upstream.username || 'postgres');
  const port = await freePort();
  const dir = await mkdtemp(join(tmpdir(), 'mint-pgbouncer-'));
  await chmod(dir, 0o755);
  const authFile = join(dir, 'userlist.txt');
  const config = join(dir, 'pgbouncer.ini');
  await writeFile(authFile, `"${user}" ""\n`, { mode: 0o644 });
  await writeFile(
    config,
    [
      '[databases]',
      `* = host=${upstream.hostname} port=${upstream.port || '5432'}`,
      '[pgbouncer]',
      'listen_addr = 127.0.0.1',
      `listen_port = ${port}`,
      'unix_socket_dir =',
      'auth_type = trust',
      `auth_file = ${authFile}`,
      'pool_mode = transaction',
      'max_client_conn = 2000',
      `default_pool_size = ${options.poolSize ?? 20}`,
      'server_reset_query =',
      'ignore_startup_parameters = extra_float_digits',
      '',
    ].join('\n'),
    { mode: 0o644 },
  );
  const args = process.getuid?.() === 0 ? ['-u', 'postgres', config] : [config];
  const child = spawn(pgbouncerBinary, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  children.add(child);
  child.once('exit', () => children.delete(child));
  const output: string[] = [];
  const keep = (chunk: Buffer) => {
    output.push(...chunk.toString().split('\n').filter(Boolean));
    if (output.length > 200) output.splice(0, output.length - 200);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  const pooled = (url: string) => {
    const u = new URL(url);
    u.hostname = '127.0.0.1';
    u.port = String(port);
    return u.toString();
  };
  let stopped: Promise<void> | undefined;
  const stop = () =>
    (stopped ??= (async () => {
      if (child.exitCode === null && child.signalCode === null) {
        const exited = once(child, 'exit');
        child.kill('SIGTERM');
        const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
        await exited;
        clearTimeout(timer);
      }
      await rm(dir, { recursive: true, force: true });
    })());
  const deadline = Date.now() + 10_000;
  for (;;) {
    if (child.exitCode !== null || child.signalCode !== null || Date.now() > deadline) {
      await stop();
      throw new Error(`pgbouncer did not start on port ${port}:\n${output.join('\n')}`);
    }
    if (await probePostgres(pooled(upstreamUrl), 1_000)) break;
    await sleep(50);
  }
  return { port, pooled, output, stop };
}
