// Start-up checks of both processes, run as an operator would (`node services/<name>/src/main.ts`):
// each refuses to start on a missing or malformed variable, an unreachable database or NATS, or an
// unmigrated database, printing one line that names the problem and exiting non-zero. Once
// running, `/readyz` follows the dependencies.

import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testInfra } from './support/context.ts';
import { freshDatabase, type FreshDatabase } from './support/database.ts';
import { freshStreamNames, startNatsServer, type NatsServer } from './support/nats.ts';
import { cloneName, createDatabase, databaseUrlFor, dropDatabase } from './support/pg-admin.ts';
import { freePort } from './support/ports.ts';
import { scrape, sampleValue } from './support/prometheus.ts';

const repoRoot = fileURLToPath(new URL('../', import.meta.url));
const processes = { api: 'services/api/src/main.ts', executor: 'services/executor/src/main.ts' } as const;
type Name = keyof typeof processes;
const children = new Set<ChildProcess>();

let migrated: FreshDatabase;
let emptyName: string;
let emptyUrl: string;
beforeAll(async () => {
  migrated = await freshDatabase();
  const { databaseUrl, runId } = testInfra();
  emptyName = cloneName(runId);
  await createDatabase(databaseUrl, emptyName);
  emptyUrl = databaseUrlFor(databaseUrl, emptyName);
});

afterAll(async () => {
  for (const child of children) child.kill('SIGKILL');
  await migrated?.drop();
  if (emptyName !== undefined) await dropDatabase(testInfra().databaseUrl, emptyName);
});

/** A complete production environment on the migrated database and the shared NATS server; `env` overrides or (with '') removes. */
async function environment(env: Record<string, string> = {}): Promise<Record<string, string>> {
  const names = freshStreamNames();
  const full: Record<string, string> = {
    PATH: process.env['PATH'] ?? '',
    DATABASE_URL: migrated.url,
    NATS_URL: testInfra().natsUrl,
    NATS_STREAM: names.stream,
    NATS_SUBJECT_PREFIX: names.subjectPrefix,
    AUTH_JWT_SECRET: 'startup-secret-startup-secret-0123456789',
    HOST: '127.0.0.1',
    PORT: String(await freePort()),
    LOG_LEVEL: 'info',
    SHUTDOWN_TIMEOUT_MS: '5000',
    DOWNLOAD_SIGNING_KEYS: `k1:${Buffer.alloc(32, 9).toString('base64')}`,
    WEBHOOK_SECRET_KEYS: `w1:${Buffer.alloc(32, 8).toString('base64')}`,
    ...env,
  };
  return Object.fromEntries(Object.entries(full).filter(([, value]) => value !== ''));
}

/** A spawned process with its stdout and stderr. */
interface Spawned {
  readonly stdout: string[];
  readonly stderr: string[];
  readonly exited: Promise<number | string>;
  kill(signal: NodeJS.Signals): void;
}

function start(name: Name, env: Record<string, string>): Spawned {
  const child = spawn(process.execPath, [processes[name]], { cwd: repoRoot, env, stdio: ['ignore', 'pipe', 'pipe'] });
  children.add(child);
  const stdout: string[] = [];
  const stderr: string[] = [];
  child.stdout?.on('data', (chunk: Buffer) => stdout.push(chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => stderr.push(chunk.toString()));
  const exited = once(child, 'exit').then(([code, signal]) => {
    children.delete(child);
    return (code as number | null) ?? (signal as string);
  });
  return { stdout, stderr, exited, kill: (signal) => void child.kill(signal) };
}

/** Runs `name` expecting it to refuse to start; returns its exit code and the lines it wrote to stderr. */
async function refusal(name: Name, env: Record<string, string>): Promise<{ code: number | string; lines: string[]; all: string }> {
  const spawned = start(name, env);
  const code = await spawned.exited;
  const lines = spawned.stderr
    .join('')
    .split('\n')
    .filter((line) => line.trim() !== '');
  return { code, lines, all: spawned.stdout.join('') + spawned.stderr.join('') };
}

describe.each(['api', 'executor'] as const)('%s start-up checks', (name) => {
  it('refuses to start without DATABASE_URL, naming it', async () => {
    const { code, lines } = await refusal(name, await environment({ DATABASE_URL: '' }));
    expect(code).toBe(1);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(new RegExp(`^${name}: DATABASE_URL must be set`));
  });

  it('refuses a malformed variable, naming it and its rule', async () => {
    const { code, lines } = await refusal(name, await environment({ LOG_LEVEL: 'loud' }));
    expect(code).toBe(1);
    expect(lines).toEqual([`${name}: LOG_LEVEL must be one of trace, debug, info, warn, error, fatal, silent, got "loud"`]);
  });

  it('refuses an unreachable database, naming DATABASE_URL without echoing its password', async () => {
    const { code, lines, all } = await refusal(name, await environment({ DATABASE_URL: `postgres://postgres:hunter2-pw@127.0.0.1:${await freePort()}/mint` }));
    expect(code).toBe(1);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(new RegExp(`^${name}: database unreachable \\(DATABASE_URL\\)`));
    expect(all).not.toContain('hunter2-pw');
  });

  it('refuses an unmigrated database, saying how to migrate', async () => {
    const { code, lines } = await refusal(name, await environment({ DATABASE_URL: emptyUrl }));
    expect(code).toBe(1);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(new RegExp(`^${name}: database is not migrated: \\d+ pending migration\\(s\\) .*mintctl migrate`));
  });

  it('refuses an unreachable NATS server, naming NATS_URL', async () => {
    const { code, lines } = await refusal(name, await environment({ NATS_URL: `nats://127.0.0.1:${await freePort()}` }));
    expect(code).toBe(1);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(new RegExp(`^${name}: NATS unreachable \\(NATS_URL\\)`));
  });
});

describe('api start-up secrets', () => {
  it('refuses to start without AUTH_JWT_SECRET, naming it', async () => {
    const { code, lines } = await refusal('api', await environment({ AUTH_JWT_SECRET: '' }));
    expect(code).toBe(1);
    expect(lines).toEqual(['api: AUTH_JWT_SECRET is required when DATABASE_URL is set']);
  });

  it('refuses to start without WEBHOOK_SECRET_KEYS (api and executor), naming it', async () => {
    for (const name of ['api', 'executor'] as const) {
      const { code, lines } = await refusal(name, await environment({ WEBHOOK_SECRET_KEYS: '' }));
      expect(code).toBe(1);
      expect(lines).toEqual([`${name}: WEBHOOK_SECRET_KEYS is required when DATABASE_URL is set`]);
    }
  });
});

describe('/readyz of the running processes', () => {
  let nats: NatsServer;
  beforeAll(async () => {
    nats = await startNatsServer();
  });
  afterAll(async () => {
    await nats?.stop();
  });

  /** GET /readyz: status and body, or 0 while nothing answers. */
  const readyz = (port: number) =>
    fetch(`http://127.0.0.1:${port}/readyz`).then(
      async (r) => ({ status: r.status, body: (await r.json()) as { ok: boolean; checks: Record<string, string> } }),
      () => ({ status: 0, body: undefined }),
    );
  const until = async (what: string, probe: () => Promise<boolean>) => {
    for (const deadline = Date.now() + 30_000; !(await probe()); await sleep(50)) if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
  };

  it('reports ready while the database and NATS answer, not ready naming NATS while it is down, and ready again after', async () => {
    const apiEnv = await environment({ NATS_URL: nats.url });
    const executorPort = await freePort();
    const api = start('api', apiEnv);
    const executor = start('executor', await environment({ NATS_URL: nats.url, EXECUTOR_HTTP_PORT: String(executorPort) }));
    const apiPort = Number(apiEnv['PORT']);
    for (const [port, spawned] of [
      [apiPort, api],
      [executorPort, executor],
    ] as const) {
      await until(`readiness on ${port}:\n${spawned.stderr.join('')}`, async () => (await readyz(port)).status === 200);
      expect((await readyz(port)).body).toEqual({ ok: true, checks: { database: 'ok', bus: 'ok' } });
    }
    const executorMetrics = await scrape(`http://127.0.0.1:${executorPort}/metrics`);
    expect(sampleValue(executorMetrics, 'minting_units_minted_total')).toBe(0);
    expect(sampleValue(executorMetrics, 'minting_jobs', { status: 'QUEUED' })).toBe(0);

    await nats.kill('SIGKILL');
    for (const port of [apiPort, executorPort]) {
      const down = await readyz(port);
      expect(down.status).toBe(503);
      expect(down.body?.checks['database']).toBe('ok');
      expect(down.body?.checks['bus']).toMatch(/^unavailable/);
    }
    await nats.restart();
    for (const port of [apiPort, executorPort]) await until('readiness after NATS is back', async () => (await readyz(port)).status === 200);

    api.kill('SIGTERM');
    executor.kill('SIGTERM');
    expect(await api.exited).toBe(0);
    expect(await executor.exited).toBe(0);
  }, 60_000);
});

describe('api start-up with a resolver replica', () => {
  it('refuses an unreachable RESOLVER_READ_URL, naming it without echoing its password', async () => {
    const { code, lines, all } = await refusal(
      'api',
      await environment({ RESOLVER_READ_URL: `postgres://postgres:hunter3-pw@127.0.0.1:${await freePort()}/mint` }),
    );
    expect(code).toBe(1);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^api: resolver replica unreachable \(RESOLVER_READ_URL\)/);
    expect(all).not.toContain('hunter3-pw');
  });
});
