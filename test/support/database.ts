// A fresh PostgreSQL database per test file, cloned from the run's template.

import { testInfra } from './context.ts';
import { cloneName, createDatabase, databaseUrlFor, dropDatabase } from './pg-admin.ts';

/** A database of one's own; `drop()` removes it (idempotent, closes leftover connections). */
export interface FreshDatabase {
  /** Connection URL of the new database. */
  readonly url: string;
  /** Its name, `t_<runId>_<random>`. */
  readonly name: string;
  drop(): Promise<void>;
}

/**
 * Creates a uniquely named database as a copy of the run's template, which holds all
 * migrations once `@mint/db` exports `migrateDatabase` (see `testInfra().migrated`).
 * Call it in `beforeAll` and `drop()` in `afterAll`; the global teardown drops any clone
 * a file forgot.
 */
export async function freshDatabase(): Promise<FreshDatabase> {
  const { databaseUrl, templateDatabase, runId } = testInfra();
  const name = cloneName(runId);
  await createDatabase(databaseUrl, name, templateDatabase);
  let dropped: Promise<void> | undefined;
  return {
    url: databaseUrlFor(databaseUrl, name),
    name,
    drop: () => (dropped ??= dropDatabase(databaseUrl, name)),
  };
}
