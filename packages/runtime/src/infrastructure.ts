import { randomBytes } from 'node:crypto';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { connectJetStreamBus, connectScanSpill, createMemoryBus, type JobBus, type ScanSpill } from '@mint/bus';
import type { Readiness } from '@mint/http';
import { openDatabase, pendingMigrations, pingDatabase, pingResolverReplica, type Database } from '@mint/db';
import type { Config } from './config.ts';
import { runningDevServer, startDevPostgres, type DevPostgres } from './dev-postgres.ts';
import { busPullRetry, retryDelayMs, type SigningKey } from '@mint/domain';
import { createFsPackStore, createNatsPackStore, type PackStore } from '@mint/store';
import { connect } from '@nats-io/transport-node';

/** A dependency the process cannot start without; the message is the one line an operator reads. */
export class StartupError extends Error {
  override readonly name = 'StartupError';
}

/** True for {@link StartupError}. */
export const isStartupError = (e: unknown): e is StartupError => e instanceof StartupError;

/**
 * Opens the database the configuration names: PostgreSQL at DATABASE_URL (with DATABASE_DIRECT_URL
 * for the session-level connections, when it differs, and, with `resolver`, RESOLVER_READ_URL for
 * the resolver's lookups, when set), or in dev mode (no DATABASE_URL) the embedded
 * PostgreSQL under DATA_DIR: the one a running dev server started (DATA_DIR/dev-server.json), else
 * one started now and stopped when the database is closed. An unreachable server (or replica) is a StartupError.
 */
export async function openConfiguredDatabase(config: Config, options: { applicationName: string; poolSize?: number; resolver?: boolean }): Promise<Database> {
  const { resolver, ...opening } = options;
  if (!config.databaseUrl) {
    const running = await runningDevServer(config.dataDir);
    if (running !== null) return openDevDatabase(running.databaseUrl, opening, async () => {});
    const server = await startEmbeddedPostgres(config);
    return openDevDatabase(server.url, opening, () => server.stop());
  }
  let db: Database | undefined;
  try {
    const direct = config.databaseDirectUrl !== undefined && config.databaseDirectUrl !== config.databaseUrl ? { directUrl: config.databaseDirectUrl } : {};
    const replica = resolver === true && config.resolverReadUrl !== undefined ? { resolverReadUrl: config.resolverReadUrl } : {};
    db = await openDatabase({ url: config.databaseUrl }, { ...opening, ...direct, ...replica });
    await pingDatabase(db);
  } catch (cause) {
    throw new StartupError(`database unreachable (DATABASE_URL): ${cause instanceof Error ? cause.message : String(cause)}`, { cause });
  }
  try {
    await pingResolverReplica(db);
  } catch (cause) {
    await db.close(true);
    throw new StartupError(`resolver replica unreachable (RESOLVER_READ_URL): ${cause instanceof Error ? cause.message : String(cause)}`, { cause });
  }
  return db;
}

/** Starts dev mode's embedded PostgreSQL under DATA_DIR (see {@link startDevPostgres}); a failure is a StartupError. */
export async function startEmbeddedPostgres(config: Pick<Config, 'dataDir'>): Promise<DevPostgres> {
  try {
    return await startDevPostgres(config.dataDir);
  } catch (cause) {
    throw new StartupError(`embedded database (DATA_DIR ${config.dataDir}): ${cause instanceof Error ? cause.message : String(cause)}`, { cause });
  }
}

/** Opens the embedded database at `url`; closing it also runs `stop` (stopping a server this process started). */
async function openDevDatabase(url: string, options: { applicationName: string; poolSize?: number }, stop: () => Promise<void>): Promise<Database> {
  let db: Database;
  try {
    db = await openDatabase({ url }, options);
    await pingDatabase(db);
  } catch (cause) {
    await stop();
    throw new StartupError(`embedded database unreachable: ${cause instanceof Error ? cause.message : String(cause)}`, { cause });
  }
  const close = db.close.bind(db);
  db.close = async (force?: boolean) => {
    try {
      await close(force);
    } finally {
      await stop();
    }
  };
  return db;
}

/** Refuses to run against a database that lacks migrations this code needs. */
export async function assertMigrated(db: Database): Promise<void> {
  const pending = await pendingMigrations(db);
  if (pending.length > 0) {
    throw new StartupError(`database is not migrated: ${pending.length} pending migration(s) (${pending.join(', ')}); run \`mintctl migrate\``);
  }
}

/**
 * Connects the job bus the configuration names: NATS JetStream at NATS_URL (its failed pulls backed
 * off by the domain's {@link busPullRetry}), or the in-process bus in dev mode. An unreachable
 * server is a StartupError.
 */
export async function openConfiguredBus(config: Config, name: string): Promise<JobBus> {
  if (!config.natsUrl) return createMemoryBus();
  try {
    return await connectJetStreamBus({
      url: config.natsUrl,
      stream: config.natsStream,
      subjectPrefix: config.natsSubjectPrefix,
      ackWaitMs: config.natsAckWaitMs,
      name,
      replicas: config.natsReplicas,
      pullRetryDelayMs: (failures) => retryDelayMs(busPullRetry, failures, Math.random()),
    });
  } catch (cause) {
    throw new StartupError(`NATS unreachable (NATS_URL): ${cause instanceof Error ? cause.message : String(cause)}`, { cause });
  }
}

/**
 * The JetStream stream that holds the resolver's scans while the database cannot take them
 * (`{NATS_STREAM}_SCANS`), over a connection of its own; undefined without NATS_URL (dev mode's
 * in-process bus: scans are then lost with a database outage, as before). An unreachable server
 * is a StartupError.
 */
export async function openConfiguredScanSpill(config: Config, name: string): Promise<ScanSpill | undefined> {
  if (!config.natsUrl) return undefined;
  try {
    return await connectScanSpill({
      url: config.natsUrl,
      stream: config.natsStream,
      subjectPrefix: config.natsSubjectPrefix,
      replicas: config.natsReplicas,
      name,
    });
  } catch (cause) {
    throw new StartupError(`NATS unreachable (NATS_URL): ${cause instanceof Error ? cause.message : String(cause)}`, { cause });
  }
}

/** The pack store a process writes and reads, and how to let go of its connection. */
export interface ConfiguredPackStore {
  readonly store: PackStore;
  /** Closes the store's NATS connection (nothing for the filesystem store). */
  close(): Promise<void>;
}

/** Name of the Object Store bucket holding the packs: `${NATS_STREAM}_PACKS`. */
export const packBucketName = (config: Pick<Config, 'natsStream'>): string => `${config.natsStream}_PACKS`;

/**
 * Opens the pack store the configuration names: with `PACK_STORE=nats` (the default) and NATS_URL
 * set, the JetStream Object Store bucket {@link packBucketName} with NATS_REPLICAS replicas, over a
 * connection of its own; otherwise the folder PACK_STORE_DIR. Dev mode passes `dev: true` and
 * always gets the folder. An unreachable server or a bucket that cannot be created is a StartupError.
 */
export async function openConfiguredPackStore(config: Config, options: { name: string; dev?: boolean }): Promise<ConfiguredPackStore> {
  if (options.dev === true || config.packStore === 'fs' || !config.natsUrl) {
    return { store: createFsPackStore(config.packStoreDir), close: async () => {} };
  }
  try {
    const nc = await connect({
      servers: config.natsUrl.split(',').map((url) => url.trim()),
      name: `${options.name}-packs`,
      maxReconnectAttempts: -1,
      reconnectTimeWait: 1_000,
      pingInterval: 10_000,
      maxPingOut: 3,
    });
    try {
      const store = await createNatsPackStore(nc, { bucket: packBucketName(config), replicas: config.natsReplicas });
      return { store, close: () => nc.drain() };
    } catch (error) {
      await nc.close();
      throw error;
    }
  } catch (cause) {
    throw new StartupError(
      `pack store unavailable (PACK_STORE=nats, bucket ${packBucketName(config)}): ${cause instanceof Error ? cause.message : String(cause)}`,
      { cause },
    );
  }
}

/**
 * What a process that verifies session tokens (the API, dev mode) gives `createUseCaseContext` from
 * `config`: the public base URL, the token checks, the keys sealing secrets at rest (in dev mode the
 * generated ones, see {@link resolveJwtSecret}) and the serial move chunk.
 */
export async function useCaseSettings(config: Config) {
  return {
    publicBaseUrl: config.publicBaseUrl,
    jwtSecret: await resolveJwtSecret(config),
    jwtIssuer: config.authJwtIssuer,
    jwtAudience: config.authJwtAudience,
    jwksUrl: config.authJwksUrl,
    jwtMaxLifetimeSeconds: config.authJwtMaxLifetimeSeconds,
    webhookSecretKeys: await resolveWebhookSecretKeys(config),
    serialMoveChunk: config.serialMoveChunkSize,
  };
}

/**
 * The HS256 secret for session tokens: AUTH_JWT_SECRET, or in dev mode (no DATABASE_URL) a random
 * one generated once and kept in DATA_DIR so tokens survive restarts. Production needs the variable.
 */
export async function resolveJwtSecret(config: Config): Promise<string> {
  if (config.authJwtSecret) return config.authJwtSecret;
  if (config.databaseUrl) throw new StartupError('AUTH_JWT_SECRET is required when DATABASE_URL is set');
  const file = join(config.dataDir, 'jwt-secret');
  try {
    return (await readFile(file, 'utf8')).trim();
  } catch {
    await mkdir(config.dataDir, { recursive: true });
    const secret = randomBytes(32).toString('base64url');
    await writeFile(file, secret, { mode: 0o600, flag: 'wx' }).catch(() => undefined);
    return (await readFile(file, 'utf8')).trim();
  }
}

/**
 * One random 32-byte key, id `dev`, generated once and kept in `DATA_DIR/<file>` so what it signs
 * or seals survives restarts: the dev-mode stand-in for a key variable (`variable`), which
 * production (DATABASE_URL set) must set.
 */
async function devKey(config: Config, file: string, variable: string): Promise<readonly SigningKey[]> {
  if (config.databaseUrl) throw new StartupError(`${variable} is required when DATABASE_URL is set`);
  const path = join(config.dataDir, file);
  const read = async () => new Uint8Array(Buffer.from((await readFile(path, 'utf8')).trim(), 'base64url'));
  try {
    return [{ id: 'dev', secret: await read() }];
  } catch {
    await mkdir(config.dataDir, { recursive: true });
    await writeFile(path, randomBytes(32).toString('base64url'), { mode: 0o600, flag: 'wx' }).catch(() => undefined);
    return [{ id: 'dev', secret: await read() }];
  }
}

/**
 * The download signing keys: DOWNLOAD_SIGNING_KEYS, or in dev mode (no DATABASE_URL) one random
 * key generated once and kept in DATA_DIR/download-signing-key so URLs survive restarts.
 * Production needs the variable.
 */
export async function resolveDownloadSigningKeys(config: Config): Promise<readonly SigningKey[]> {
  return config.downloadSigningKeys ?? devKey(config, 'download-signing-key', 'DOWNLOAD_SIGNING_KEYS');
}

/**
 * The keys sealing webhook secrets at rest: WEBHOOK_SECRET_KEYS, or in dev mode (no DATABASE_URL)
 * one random key generated once and kept in DATA_DIR/webhook-secret-key so sealed secrets open
 * after a restart. Production needs the variable (the API seals, the executor opens: both need it).
 */
export async function resolveWebhookSecretKeys(config: Config): Promise<readonly SigningKey[]> {
  return config.webhookSecretKeys ?? devKey(config, 'webhook-secret-key', 'WEBHOOK_SECRET_KEYS');
}

/** What /readyz reports (the shape @mint/http's probes serve): ok when every dependency answered, with one line per dependency. */
export type { Readiness };

/**
 * A readiness probe over the database and the bus: each must answer within `timeoutMs`. With
 * `databaseOptional` (the API: its resolver answers from what it knows and spills scans to the bus
 * while the database is away, and its writes answer 503 with Retry-After) an unreachable database
 * is reported in `checks` but leaves the process ready, so a load balancer keeps sending it scans.
 */
export function readinessProbe(deps: { db: Database; bus: JobBus }, timeoutMs = 2000, options: { databaseOptional?: boolean } = {}): () => Promise<Readiness> {
  const check = async (probe: () => Promise<unknown>): Promise<string> => {
    try {
      await Promise.race([probe(), new Promise((_, reject) => setTimeout(() => reject(new Error('timed out')), timeoutMs).unref())]);
      return 'ok';
    } catch (error) {
      return `unavailable: ${error instanceof Error ? error.message : String(error)}`;
    }
  };
  return async () => {
    const [database, bus] = await Promise.all([check(() => pingDatabase(deps.db)), check(() => deps.bus.ping())]);
    return { ok: (database === 'ok' || options.databaseOptional === true) && bus === 'ok', checks: { database, bus } };
  };
}
