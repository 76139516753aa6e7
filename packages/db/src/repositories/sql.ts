import type { Em } from '../orm.ts';

/**
 * A PostgreSQL array literal for any list of strings (null as NULL), so a whole column travels as
 * one bind parameter (`?::text[]`) instead of one parameter per row.
 */
export function pgArray(values: readonly (string | number | null)[]): string {
  return `{${values.map((v) => (v === null ? 'NULL' : typeof v === 'number' ? String(v) : `"${v.replace(/["\\]/g, '\\$&')}"`)).join(',')}}`;
}

/** Runs one SQL statement with `?` placeholders inside the entity manager's transaction and returns its rows. */
export async function query<T>(em: Em, sql: string, params: readonly unknown[] = []): Promise<T[]> {
  return (await em.execute(sql, [...params], 'all')) as T[];
}

/** Runs one SQL statement inside the entity manager's transaction and returns the rows it changed. */
export async function run(em: Em, sql: string, params: readonly unknown[] = []): Promise<number> {
  const result = (await em.execute(sql, [...params], 'run')) as { affectedRows?: number; rowCount?: number };
  return result.affectedRows ?? result.rowCount ?? 0;
}
