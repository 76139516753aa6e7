// Scratch databases of the benchmarks on the local PostgreSQL: created and migrated per run,
// dropped at its end.

import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { migrateDatabase } from '@mint/db';

/** The admin connection: ADMIN_DATABASE_URL, else DATABASE_URL, else the local server. */
export const adminUrl = process.env['ADMIN_DATABASE_URL'] ?? process.env['DATABASE_URL'] ?? 'postgres://postgres@127.0.0.1:5432/postgres';

/** Runs one statement on the admin connection. */
export async function admin(sql: string): Promise<void> {
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

/** A created, migrated scratch database. */
export interface ScratchDatabase {
  readonly name: string;
  /** Its connection URL (the admin URL with its name). */
  readonly url: string;
  /** Drops it, cutting any connection still open. */
  drop(): Promise<void>;
}

/** Creates the database `${prefix}_${id}` (id: 8 random hex characters unless given) and applies every migration. */
export async function createScratchDatabase(prefix: string, id = randomBytes(4).toString('hex')): Promise<ScratchDatabase> {
  const name = `${prefix}_${id}`;
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  const drop = () => admin(`drop database if exists "${name}" with (force)`);
  await admin(`create database "${name}"`);
  try {
    await migrateDatabase(url.toString());
  } catch (error) {
    await drop();
    throw error;
  }
  return { name, url: url.toString(), drop };
}
