// The test harness itself: integration tests rely on these guarantees.

import { existsSync } from 'node:fs';
import { loadConfig } from '@mint/runtime';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testInfra } from './context.ts';
import { freshDatabase, type FreshDatabase } from './database.ts';
import { probeNats, probePostgres } from './infra.ts';
import { freshStreamNames, startNatsServer } from './nats.ts';

async function query<T extends pg.QueryResultRow>(url: string, sql: string): Promise<T[]> {
  const client = new pg.Client(url);
  await client.connect();
  try {
    return (await client.query<T>(sql)).rows;
  } finally {
    await client.end();
  }
}

describe('freshDatabase', () => {
  let first: FreshDatabase;
  let second: FreshDatabase;
  beforeAll(async () => {
    [first, second] = await Promise.all([freshDatabase(), freshDatabase()]);
  });
  afterAll(async () => {
    await Promise.all([first.drop(), second.drop()]);
  });

  it('gives each caller its own database', async () => {
    expect(first.name).not.toBe(second.name);
    await query(first.url, 'CREATE TABLE only_here (id int)');
    const [row] = await query<{ found: string | null }>(second.url, "SELECT to_regclass('only_here')::text AS found");
    expect(row?.found).toBeNull();
  });

  it.runIf(testInfra().migrated)('starts from the migrated schema', async () => {
    const [row] = await query<{ tables: number }>(
      first.url,
      "SELECT count(*)::int AS tables FROM information_schema.tables WHERE table_schema = 'public'",
    );
    expect(row?.tables).toBeGreaterThan(0);
  });

  it('drops the database, twice without error', async () => {
    const db = await freshDatabase();
    expect(await probePostgres(db.url)).toBe(true);
    await db.drop();
    await db.drop();
    expect(await probePostgres(db.url)).toBe(false);
  });
});

describe('freshStreamNames', () => {
  it('returns distinct names that the runtime configuration accepts', () => {
    const a = freshStreamNames();
    const b = freshStreamNames();
    expect(a.stream).not.toBe(b.stream);
    expect(a.subjectPrefix).not.toBe(b.subjectPrefix);
    expect(loadConfig({ NATS_STREAM: a.stream, NATS_SUBJECT_PREFIX: a.subjectPrefix })).toMatchObject({
      natsStream: a.stream,
      natsSubjectPrefix: a.subjectPrefix,
    });
  });
});

describe('startNatsServer', () => {
  it('can be killed, paused and restarted on the same URL, and stop() removes its store', async () => {
    const server = await startNatsServer();
    try {
      expect(await probeNats(server.url)).toBe(true);

      await server.kill();
      expect(server.running).toBe(false);
      expect(await probeNats(server.url, 300)).toBe(false);
      expect(existsSync(server.storeDir)).toBe(true);

      await server.restart();
      expect(await probeNats(server.url)).toBe(true);

      await server.kill('SIGSTOP');
      expect(await probeNats(server.url, 300)).toBe(false);
      await server.restart();
      expect(await probeNats(server.url)).toBe(true);
    } finally {
      await server.stop();
    }
    expect(server.running).toBe(false);
    expect(existsSync(server.storeDir)).toBe(false);
  });

  it('answers on the shared server too', async () => {
    expect(await probeNats(testInfra().natsUrl)).toBe(true);
  });
});
