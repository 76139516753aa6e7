// Finds the PostgreSQL server and NATS JetStream server a test run uses. Runs in the
// global setup (vitest's main process); test files read the result through context.ts.

import { connect } from 'node:net';
import pg from 'pg';

/** Resolved servers plus how they were found; `stop()` ends what the run itself started. */
export interface ResolvedServers {
  readonly databaseUrl: string;
  readonly natsUrl: string;
  /** Per server: `env` (variable set), `local` (answered on 127.0.0.1) or `container`. */
  readonly sources: { readonly database: ServerSource; readonly nats: ServerSource };
  stop(): Promise<void>;
}

/** Where a server came from. */
export type ServerSource = 'env' | 'local' | 'container';

/** The PostgreSQL server tried when `DATABASE_URL` is unset. */
export const localDatabaseUrl = 'postgres://postgres@127.0.0.1:5432/postgres';
/** The NATS server tried when `NATS_URL` is unset. */
export const localNatsUrl = 'nats://127.0.0.1:4222';

/**
 * Resolves each server independently, first match wins: the `DATABASE_URL` / `NATS_URL`
 * variable when set (an error if it does not answer); else the local default when it answers;
 * else a container started with testcontainers (needs a Docker engine).
 */
export async function resolveServers(env: NodeJS.ProcessEnv = process.env): Promise<ResolvedServers> {
  const stops: (() => Promise<unknown>)[] = [];
  try {
    const database = await resolveOne('DATABASE_URL', env, localDatabaseUrl, probePostgres, startPostgresContainer, stops);
    const nats = await resolveOne('NATS_URL', env, localNatsUrl, probeNats, startNatsContainer, stops);
    return {
      databaseUrl: database.url,
      natsUrl: nats.url,
      sources: { database: database.source, nats: nats.source },
      stop: () => stopAll(stops),
    };
  } catch (error) {
    await stopAll(stops);
    throw error;
  }
}

async function resolveOne(
  variable: string,
  env: NodeJS.ProcessEnv,
  local: string,
  probe: (url: string, timeoutMs?: number) => Promise<boolean>,
  start: () => Promise<{ url: string; stop(): Promise<unknown> }>,
  stops: (() => Promise<unknown>)[],
): Promise<{ url: string; source: ServerSource }> {
  const fromEnv = env[variable];
  if (fromEnv !== undefined && fromEnv !== '') {
    if (!(await probe(fromEnv, 5000))) throw new Error(`${variable} is set, but nothing usable answers at ${withoutPassword(fromEnv)}`);
    return { url: fromEnv, source: 'env' };
  }
  if (await probe(local)) return { url: local, source: 'local' };
  const started = await start();
  stops.push(() => started.stop());
  return { url: started.url, source: 'container' };
}

function withoutPassword(url: string): string {
  const parsed = URL.parse(url);
  if (parsed === null) return '(an unparsable URL)';
  if (parsed.password !== '') parsed.password = '***';
  return parsed.toString();
}

async function stopAll(stops: (() => Promise<unknown>)[]): Promise<void> {
  await Promise.allSettled(stops.map((stop) => stop()));
}

/** True when a `SELECT 1` succeeds at `url` within `timeoutMs`. */
export async function probePostgres(url: string, timeoutMs = 2000): Promise<boolean> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: timeoutMs });
  client.on('error', () => {});
  try {
    await client.connect();
    await client.query('SELECT 1');
    return true;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => {});
  }
}

/** True when a server at `url` (nats://host:port) accepts a TCP connection and greets with `INFO`. */
export function probeNats(url: string, timeoutMs = 2000): Promise<boolean> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve) => {
    const socket = connect({ host: hostname, port: Number(port || 4222) });
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(timeoutMs, () => done(false));
    socket.once('error', () => done(false));
    socket.once('data', (chunk: Buffer) => done(chunk.toString('latin1').startsWith('INFO ')));
  });
}

async function startPostgresContainer() {
  const { GenericContainer, Wait } = await import('testcontainers');
  const container = await new GenericContainer('postgres:15')
    .withEnvironment({ POSTGRES_HOST_AUTH_METHOD: 'trust' })
    .withExposedPorts(5432)
    // The image's init script starts the server once, stops it, then starts it for real.
    .withWaitStrategy(Wait.forLogMessage(/database system is ready to accept connections/, 2))
    .start();
  return {
    url: `postgres://postgres@${container.getHost()}:${container.getMappedPort(5432)}/postgres`,
    stop: () => container.stop(),
  };
}

async function startNatsContainer() {
  const { GenericContainer, Wait } = await import('testcontainers');
  const container = await new GenericContainer('nats:2.10')
    .withCommand(['-js'])
    .withExposedPorts(4222)
    .withWaitStrategy(Wait.forLogMessage(/Server is ready/))
    .start();
  return {
    url: `nats://${container.getHost()}:${container.getMappedPort(4222)}`,
    stop: () => container.stop(),
  };
}
