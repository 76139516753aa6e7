// Raw SQL for tests and benchmarks only: they inspect and arrange rows directly, with `?`
// placeholders, inside or outside an entity manager's transaction. The application never does.

import type { Em } from '@mint/db';

/** Runs one SQL statement with `?` placeholders on `em` (its transaction, if any) and returns its rows. */
export async function query<T>(em: Em, sql: string, params: readonly unknown[] = []): Promise<T[]> {
  return (await em.execute(sql, [...params], 'all')) as T[];
}

/** Runs one SQL statement with `?` placeholders on `em` and returns the number of rows it changed. */
export async function run(em: Em, sql: string, params: readonly unknown[] = []): Promise<number> {
  const result = (await em.execute(sql, [...params], 'run')) as { affectedRows?: number; rowCount?: number };
  return result.affectedRows ?? result.rowCount ?? 0;
}
