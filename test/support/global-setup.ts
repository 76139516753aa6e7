// vitest global setup: resolves PostgreSQL and NATS once per run, builds the template
// database that `freshDatabase()` clones, and tears both down at the end of the run, with the
// databases and NATS streams the run made.

import type { TestProject } from 'vitest/node';
import type { TestInfra } from './context.ts';
import { resolveServers } from './infra.ts';
import { dropTestStreams } from './nats-admin.ts';
import { createDatabase, databaseUrlFor, disconnectAll, dropDatabase, listDatabases, newRunId, runStartOf, templatePrefix } from './pg-admin.ts';

/** Databases and NATS streams left by runs that started longer ago than this are dropped (crashed runs). */
const staleAfterMs = 6 * 60 * 60 * 1000;

/** The module that will export `migrateDatabase(url)`; imported by name so it may not exist yet. */
const migrationsModule = '@mint/db';

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const servers = await resolveServers();
  const runId = newRunId();
  const templateDatabase = `${templatePrefix}${runId}`;
  const ownedByRun = (name: string) => name.endsWith(`_${runId}`) || name.includes(`_${runId}_`);

  try {
    await dropStale(servers.databaseUrl);
    await createDatabase(servers.databaseUrl, templateDatabase);
    const migrated = await migrateTemplate(databaseUrlFor(servers.databaseUrl, templateDatabase));
    // A pool the migration left open would make every clone fail with "being accessed by other users".
    await disconnectAll(servers.databaseUrl, templateDatabase);
    const infra: TestInfra = {
      databaseUrl: servers.databaseUrl,
      natsUrl: servers.natsUrl,
      templateDatabase,
      migrated,
      runId,
    };
    project.provide('mintInfra', infra);
  } catch (error) {
    await cleanUp();
    throw error;
  }

  async function cleanUp(): Promise<void> {
    try {
      const mine = await listDatabases(servers.databaseUrl, ownedByRun);
      await Promise.all([
        ...mine.map((name) => dropDatabase(servers.databaseUrl, name)),
        // Leftover streams cost the shared server storage, not this run its result.
        dropTestStreams(servers.natsUrl, runId, staleAfterMs).catch((error: unknown) => {
          console.warn(`[test setup] the run's NATS streams were not deleted: ${String(error)}`);
        }),
      ]);
    } finally {
      await servers.stop();
    }
  }
  return cleanUp;
}

/**
 * Applies the migrations to the template through `@mint/db`'s `migrateDatabase`. While that
 * package cannot be imported (not written yet) the template stays empty and a warning is
 * printed; a migration that fails is an error.
 */
async function migrateTemplate(url: string): Promise<boolean> {
  let migrateDatabase: unknown;
  try {
    const module = (await import(migrationsModule)) as { migrateDatabase?: unknown };
    migrateDatabase = module.migrateDatabase;
  } catch (error) {
    console.warn(`[test setup] ${migrationsModule} could not be imported, test databases are NOT migrated: ${String(error)}`);
    return false;
  }
  if (typeof migrateDatabase !== 'function') {
    console.warn(`[test setup] ${migrationsModule} does not export migrateDatabase(), test databases are NOT migrated`);
    return false;
  }
  await (migrateDatabase as (url: string) => Promise<void>)(url);
  return true;
}

/** Drops test databases whose run started more than `staleAfterMs` ago (left by a killed run). */
async function dropStale(adminUrl: string): Promise<void> {
  const now = Date.now();
  const stale = await listDatabases(adminUrl, (name) => {
    const started = runStartOf(name);
    return started !== undefined && now - started > staleAfterMs;
  });
  await Promise.all(stale.map((name) => dropDatabase(adminUrl, name)));
}
