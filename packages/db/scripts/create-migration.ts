/**
 * Writes a migration for the difference between the entities and the migrated schema:
 * migrates a scratch database to the latest migration, diffs it against the entities, and
 * writes `src/migrations/Migration<timestamp>.ts`. List the new class in src/migrations/index.ts.
 *
 * Usage: npm run db:migration -w @mint/db  (needs ADMIN_DATABASE_URL or a local PostgreSQL)
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { openDatabase, migrate } from '../src/orm.ts';

const adminUrl = process.env.ADMIN_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const name = `migration_scratch_${randomBytes(4).toString('hex')}`;
const admin = new pg.Client({ connectionString: adminUrl });
await admin.connect();
await admin.query(`CREATE DATABASE ${name}`);
try {
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  const db = await openDatabase({ url: url.toString() });
  try {
    await migrate(db);
    db.config.get('migrations').path = new URL('../src/migrations', import.meta.url).pathname;
    const result = await db.migrator.create(undefined, false, process.argv.includes('--initial'));
    console.log(result.diff.up.length === 0 ? 'No schema changes.' : `Wrote ${result.fileName}`);
  } finally {
    await db.close(true);
  }
} finally {
  await admin.query(`DROP DATABASE IF EXISTS ${name}`);
  await admin.end();
}
