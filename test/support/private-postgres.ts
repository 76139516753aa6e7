// A PostgreSQL 15 server of a test's own: initdb in a temporary folder, listening on a free
// loopback port, stopped and started again at will. For tests that take the database away (the
// machine's shared server at 5432 is never stopped).

import { execFile } from 'node:child_process';
import { appendFile, chown, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { freePort } from './ports.ts';

const run = promisify(execFile);
const bin = '/usr/lib/postgresql/15/bin';

/** Runs a PostgreSQL binary, as the `postgres` user when the test runs as root (initdb and postgres refuse root). */
async function pgBin(name: string, args: readonly string[]): Promise<void> {
  const root = process.getuid?.() === 0;
  await run(root ? 'runuser' : join(bin, name), root ? ['-u', 'postgres', '--', join(bin, name), ...args] : [...args], { timeout: 60_000 });
}

/** A running private server. */
export interface PrivatePostgres {
  readonly port: number;
  /** `postgres://postgres@127.0.0.1:{port}/{database}` (default database `postgres`). */
  url(database?: string): string;
  /** Stops the server (`pg_ctl stop -m fast`: sessions are ended, new connections refused) and waits until it is down. */
  stop(): Promise<void>;
  /** Starts it again on the same port and waits until it accepts connections. */
  start(): Promise<void>;
  /** Stops it (if running) and removes its folder. */
  remove(): Promise<void>;
}

/**
 * Creates and starts a server in a new temporary folder on a free port, with `settings` appended
 * to its postgresql.conf (fsync off: a test's data need not survive a crash of the machine).
 */
export async function startPrivatePostgres(settings = ''): Promise<PrivatePostgres> {
  const dir = await mkdtemp(join(tmpdir(), 'mint-pg-'));
  if (process.getuid?.() === 0) await chown(dir, Number((await run('id', ['-u', 'postgres'])).stdout), Number((await run('id', ['-g', 'postgres'])).stdout));
  const port = await freePort();
  const data = join(dir, 'data');
  await pgBin('initdb', ['-D', data, '-U', 'postgres', '--auth=trust', '--no-locale', '-E', 'UTF8', '--no-sync']);
  await appendFile(
    join(data, 'postgresql.conf'),
    `\nport = ${port}\nlisten_addresses = '127.0.0.1'\nunix_socket_directories = '${dir}'\nfsync = off\nmax_connections = 200\n${settings}`,
  );
  let running = false;
  const start = async () => {
    await pgBin('pg_ctl', ['-D', data, '-l', join(dir, 'server.log'), '-w', '-t', '60', 'start']);
    running = true;
  };
  const stop = async () => {
    await pgBin('pg_ctl', ['-D', data, '-w', '-t', '60', '-m', 'fast', 'stop']);
    running = false;
  };
  await start();
  return {
    port,
    url: (database = 'postgres') => `postgres://postgres@127.0.0.1:${port}/${database}`,
    stop,
    start,
    async remove() {
      if (running) await stop().catch(() => undefined);
      await rm(dir, { recursive: true, force: true });
    },
  };
}
