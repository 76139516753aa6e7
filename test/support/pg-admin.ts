// Administrative statements against the test PostgreSQL server (create, clone, drop
// databases). Free of vitest imports so that both the global setup and test files use it.

import { randomBytes } from 'node:crypto';
import pg from 'pg';

/** Prefix of the per-file databases; the template is `tpl_<runId>`, clones `t_<runId>_<random>`. */
export const clonePrefix = 't_';
/** Prefix of a run's template database. */
export const templatePrefix = 'tpl_';

/** A new run id: base-36 start time (lets a later run find stale leftovers) plus randomness. */
export function newRunId(now: number = Date.now()): string {
  return `${now.toString(36)}_${randomBytes(3).toString('hex')}`;
}

/**
 * The run start time encoded in a database name made by this module, or undefined for any
 * other name (the shape and a plausible time are both required, so user databases are safe).
 */
export function runStartOf(databaseName: string): number | undefined {
  const match = /^(?:tpl|t)_([0-9a-z]{8,9})_[0-9a-f]{6}(?:_[0-9a-f]{8})?$/.exec(databaseName);
  if (match?.[1] === undefined) return undefined;
  const started = Number.parseInt(match[1], 36);
  return started > Date.UTC(2024, 0, 1) && started <= Date.now() ? started : undefined;
}

/** A fresh, unique clone name for `runId`. */
export function cloneName(runId: string): string {
  return `${clonePrefix}${runId}_${randomBytes(4).toString('hex')}`;
}

/** `url` pointing at database `name` on the same server, same credentials and options. */
export function databaseUrlFor(url: string, name: string): string {
  const parsed = new URL(url);
  parsed.pathname = `/${encodeURIComponent(name)}`;
  return parsed.toString();
}

/** Double-quotes an identifier for SQL. */
export function quoteIdent(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}

/** Runs `work` with a short-lived connection to `adminUrl`, always closing it. */
export async function withAdmin<T>(adminUrl: string, work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: adminUrl, connectionTimeoutMillis: 10_000 });
  client.on('error', () => {});
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end().catch(() => {});
  }
}

/** Creates database `name`, optionally as a copy of `template` (which must have no open connections). */
export async function createDatabase(adminUrl: string, name: string, template?: string): Promise<void> {
  const from = template === undefined ? '' : ` TEMPLATE ${quoteIdent(template)}`;
  await withAdmin(adminUrl, (client) => client.query(`CREATE DATABASE ${quoteIdent(name)}${from}`));
}

/** Drops database `name` if it exists, terminating its open connections first. */
export async function dropDatabase(adminUrl: string, name: string): Promise<void> {
  await withAdmin(adminUrl, (client) => client.query(`DROP DATABASE IF EXISTS ${quoteIdent(name)} WITH (FORCE)`));
}

/** Closes every other connection to database `name` (a template must have none to be cloned). */
export async function disconnectAll(adminUrl: string, name: string): Promise<void> {
  await withAdmin(adminUrl, (client) =>
    client.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()', [name]),
  );
}

/** Names of the databases on the server for which `keep(name)` is true. */
export async function listDatabases(adminUrl: string, keep: (name: string) => boolean): Promise<string[]> {
  const { rows } = await withAdmin(adminUrl, (client) => client.query<{ datname: string }>('SELECT datname FROM pg_database WHERE NOT datistemplate'));
  return rows.map((row) => row.datname).filter(keep);
}
