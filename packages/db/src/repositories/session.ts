import { UniqueConstraintViolationException } from '@mikro-orm/core';
import { sql, type RawBuilder } from 'kysely';
import pg from 'pg';
import { resolverReadUrlOf, type Database, type Em } from '../orm.ts';
import { rows } from './kysely.ts';

/** The transaction-scoped settings the repositories set. */
type LocalSetting = 'lock_timeout' | 'idle_in_transaction_session_timeout';

/** A timeout in milliseconds as a setting's value: whole, and at least 1 (0 would turn the timeout off). */
export function timeoutSetting(ms: number): string {
  return String(Math.max(1, Math.round(ms)));
}

/**
 * `set_config(name, value, true)`, which is `SET LOCAL`, as an expression: for a statement that sets
 * the setting on its way, so its transaction waits for PostgreSQL once less. `value` may be a
 * prepared statement's parameter.
 */
export function setLocalSql(name: LocalSetting, value: unknown): RawBuilder<string> {
  return sql<string>`set_config(${sql.lit(name)}, ${value}, true)`;
}

/** Sets a run-time parameter for the rest of the entity manager's transaction. */
async function setLocal(em: Em, name: LocalSetting, value: string): Promise<void> {
  await rows(em, (db) => db.selectNoFrom(setLocalSql(name, value).as('value')));
}

/**
 * Until the transaction ends, PostgreSQL ends the session when the transaction sits idle (between
 * statements) for longer than `ms`, releasing its locks. Call inside a transaction.
 */
export async function setIdleInTransactionTimeout(em: Em, ms: number): Promise<void> {
  await setLocal(em, 'idle_in_transaction_session_timeout', timeoutSetting(ms));
}

/** Runs a trivial query on a connection of the pool; rejects when the database cannot answer. */
export async function pingDatabase(db: Database): Promise<void> {
  await rows(db.em.fork(), (k) => k.selectNoFrom((eb) => eb.lit(1).as('one')));
}

/** Runs a trivial query on the resolver's read replica, when the database was opened with one; rejects when it cannot answer. */
export async function pingResolverReplica(db: Database): Promise<void> {
  const url = resolverReadUrlOf(db);
  if (url === undefined) return;
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 5_000, application_name: 'minting-resolver-replica' });
  client.on('error', () => undefined);
  try {
    await client.connect();
    await client.query('select 1');
  } finally {
    await client.end().catch(() => undefined);
  }
}

/** The SQLSTATE of a database error (also when wrapped by the driver or the ORM), or undefined. */
export function sqlState(error: unknown): string | undefined {
  for (let e: unknown = error, depth = 0; e && typeof e === 'object' && depth < 4; e = (e as { cause?: unknown }).cause, depth++) {
    const code = (e as { code?: unknown; sqlState?: unknown }).code ?? (e as { sqlState?: unknown }).sqlState;
    if (typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code)) return code;
  }
  return undefined;
}

/**
 * A unit of work: an entity manager of its own, forked from the database's, for one use case's
 * statements and transactions (what it reads and writes is not seen by another's).
 */
export function unitOfWork(db: Database): Em {
  return db.em.fork();
}

/** Runs `work` in a transaction of a unit of work of its own; committed when `work` resolves, rolled back when it throws. */
export function transaction<T>(db: Database, work: (em: Em) => Promise<T>): Promise<T> {
  return db.em.fork().transactional(work);
}

/**
 * The database's shared entity manager, for statements that each stand alone (no transaction, no
 * entity): they skip a fork's cost, which shows on the hottest paths (a submit, the KPIs).
 */
export function standalone(db: Database): Em {
  return db.em;
}

/**
 * True when `error` is PostgreSQL refusing a row for a unique constraint (SQLSTATE 23505), as
 * MikroORM's exception or as the driver's error: how a use case learns that a racing writer
 * stored the same key first, without knowing the ORM.
 */
export function isUniqueViolation(error: unknown): boolean {
  return error instanceof UniqueConstraintViolationException || sqlState(error) === '23505';
}

/** True when `error` is a lock wait that ran past the transaction's `lock_timeout` (SQLSTATE 55P03): the row is held by another session. */
export function isLockNotAvailable(error: unknown): boolean {
  return sqlState(error) === '55P03';
}

/**
 * Runs `transaction` again when PostgreSQL chose it as a deadlock's victim (SQLSTATE 40P01: it was
 * rolled back whole, nothing written), at most `attempts` times in all. For transactions that lock
 * many rows whose order a plan decides (a batch's units by batch or by id), where two callers may
 * meet in opposite orders.
 */
export async function retryingDeadlocks<T>(transaction: () => Promise<T>, attempts = 5): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await transaction();
    } catch (error) {
      if (sqlState(error) !== '40P01' || attempt >= attempts) throw error;
    }
  }
}
