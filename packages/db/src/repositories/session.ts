import { sql, type RawBuilder } from 'kysely';
import type { Database, Em } from '../orm.ts';
import { rows } from './kysely.ts';

/** Sets a run-time parameter for the rest of the entity manager's transaction (set_config(..., true) is `SET LOCAL`). */
async function setLocal(em: Em, name: string, value: string): Promise<void> {
  await rows(em, (db) => db.selectNoFrom((eb) => eb.fn<string>('set_config', [eb.val(name), eb.val(value), eb.val(true)]).as('value')));
}

/**
 * Until the transaction ends, a statement waiting longer than `ms` for a lock fails with SQLSTATE
 * 55P03 instead of waiting on. Call inside a transaction.
 */
export async function setLockTimeout(em: Em, ms: number): Promise<void> {
  await setLocal(em, 'lock_timeout', String(Math.max(1, Math.round(ms))));
}

/**
 * Until the transaction ends, PostgreSQL ends the session when the transaction sits idle (between
 * statements) for longer than `ms`, releasing its locks. Call inside a transaction.
 */
export async function setIdleInTransactionTimeout(em: Em, ms: number): Promise<void> {
  await rows(em, (db) => db.selectNoFrom(idleInTransactionTimeout(ms).as('value')));
}

/**
 * The SQL of {@link setIdleInTransactionTimeout}, for a statement that sets it on its way (a
 * transaction that waits for PostgreSQL once less): `set_config(..., true)`, evaluated once.
 */
export function idleInTransactionTimeout(ms: number): RawBuilder<string> {
  return sql<string>`set_config('idle_in_transaction_session_timeout', ${String(Math.max(1, Math.round(ms)))}, true)`;
}

/** Runs a trivial query on a connection of the pool; rejects when the database cannot answer. */
export async function pingDatabase(db: Database): Promise<void> {
  await rows(db.em.fork(), (k) => k.selectNoFrom((eb) => eb.lit(1).as('one')));
}
