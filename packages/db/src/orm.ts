import { Migrator } from '@mikro-orm/migrations';
import { MikroORM as PostgresMikroORM } from '@mikro-orm/postgresql';
import type { SqlEntityManager, SqlMikroORM } from '@mikro-orm/sql';
import type { Pool } from 'pg';
import { entities } from './entities/index.ts';
import { migrations } from './migrations/index.ts';
import { releaseDeadClients } from './pool.ts';

/** An open database: the ORM with its connection pool. */
export type Database = SqlMikroORM;
/** The entity manager of one request or job (always a fork). */
export type Em = SqlEntityManager;

/** Where the database is: a PostgreSQL URL (dev mode's embedded server is one too). */
export type DatabaseLocation = { readonly url: string };

/** Options of {@link openDatabase}. */
export interface OpenDatabaseOptions {
  /** Connections in the pool; default 10. */
  readonly poolSize?: number;
  /** Name shown in pg_stat_activity. */
  readonly applicationName?: string;
  /**
   * A direct (not pooled) URL of the same database, for what needs a session of its own: named
   * prepared statements (the resolver's lookups and scan writer) and LISTEN (link changes). Default
   * the location's URL; give it when that URL is a transaction-pooling PgBouncer.
   */
  readonly directUrl?: string;
  /**
   * A `postgres://` URL of a streaming replica of the same database, for the resolver's hot-path
   * lookups (see `createResolverReader`, which reads through to the primary what the replica has
   * not replayed yet). Default none: the resolver reads the primary.
   */
  readonly resolverReadUrl?: string;
}

/** The direct URLs given to {@link openDatabase}, per database. */
const directUrls = new WeakMap<object, string>();

/** The direct URL `db` was opened with, when one was given. */
export function directUrlOf(db: Database): string | undefined {
  return directUrls.get(db);
}

/** The resolver read URLs given to {@link openDatabase}, per database. */
const resolverReadUrls = new WeakMap<object, string>();

/** The replica URL `db` was opened with for the resolver's reads, when one was given. */
export function resolverReadUrlOf(db: Database): string | undefined {
  return resolverReadUrls.get(db);
}

/**
 * The `pg` pool under a database's entity managers (keyed by their shared connection), for the
 * databases whose pool holds sessions of their own: opened at the database itself, not at a
 * transaction pooler (no separate direct URL given). Statements prepared once run there by name
 * (see repositories/kysely.ts).
 */
const sessionPools = new WeakMap<object, Pool>();

/** The pool of `em`'s database when its connections are sessions of their own (see sessionPools). */
export function sessionPoolOf(em: Em): Pool | undefined {
  return sessionPools.get(em.getConnection());
}

function sharedOptions() {
  return {
    entities,
    extensions: [Migrator],
    migrations: { migrationsList: migrations, transactional: true, allOrNothing: true, snapshot: false, silent: true },
    // Entities are plain objects from defineEntity; the app never relies on lazy discovery.
    discovery: { warnWhenNoEntities: true },
    allowGlobalContext: false,
    debug: false,
  };
}

/** Opens the database at `location` with a pool of connections (not migrated: see {@link migrate}). */
export async function openDatabase(location: DatabaseLocation, options: OpenDatabaseOptions = {}): Promise<Database> {
  const db = (await PostgresMikroORM.init({
    ...sharedOptions(),
    clientUrl: location.url,
    pool: { min: 0, max: options.poolSize ?? 10 },
    // A connection the server ends mid-transaction must not keep its pool slot (see releaseDeadClients).
    driverOptions: { application_name: options.applicationName ?? 'minting', onPoolCreated: releaseDeadClients },
  })) as unknown as Database;
  if (options.resolverReadUrl !== undefined) resolverReadUrls.set(db, options.resolverReadUrl);
  if (options.directUrl !== undefined) directUrls.set(db, options.directUrl);
  else sessionPools.set(db.em.getConnection(), await (db.em.getConnection() as unknown as { getNativeClient(): Promise<Pool> }).getNativeClient());
  return db;
}

/** Applies every pending migration; safe to run repeatedly (applied ones are recorded in mikro_orm_migrations). */
export async function migrate(db: Database): Promise<void> {
  await db.migrator.up();
}

/** Names of migrations the code has but the database has not applied yet. */
export async function pendingMigrations(db: Database): Promise<string[]> {
  return (await db.migrator.getPending()).map((m) => m.name);
}

/** Opens the PostgreSQL database at `url`, applies all migrations and closes it. */
export async function migrateDatabase(url: string): Promise<void> {
  const db = await openDatabase({ url }, { poolSize: 1, applicationName: 'minting-migrate' });
  try {
    await migrate(db);
  } finally {
    await db.close(true);
  }
}
