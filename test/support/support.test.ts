// The test harness itself: integration tests rely on these guarantees.

import { existsSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { loadConfig } from '@mint/runtime';
import { jetstreamManager } from '@nats-io/jetstream';
import { Objm } from '@nats-io/obj';
import { connect } from '@nats-io/transport-node';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testInfra } from './context.ts';
import { freshDatabase, type FreshDatabase } from './database.ts';
import { probeNats, probePostgres } from './infra.ts';
import { freshStreamNames, startNatsServer } from './nats.ts';
import { dropTestStreams } from './nats-admin.ts';
import { newRunId } from './pg-admin.ts';

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
    const [row] = await query<{ tables: number }>(first.url, "SELECT count(*)::int AS tables FROM information_schema.tables WHERE table_schema = 'public'");
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

describe('dropTestStreams', () => {
  it("deletes a run's streams and their Object Store buckets, stale test streams, and nothing else", async () => {
    // A server of its own: deleting by run or by age must not touch other files' streams.
    const server = await startNatsServer();
    const nc = await connect({ servers: server.url });
    try {
      const jsm = await jetstreamManager(nc);
      const [runId, otherRun] = [newRunId(), newRunId()];
      const [ours, other, older] = [freshStreamNames(runId), freshStreamNames(otherRun), freshStreamNames(otherRun)];
      const addStream = (name: string, prefix: string) => jsm.streams.add({ name, subjects: [`${prefix}.>`] });
      await addStream(older.stream, older.subjectPrefix);
      await addStream('MINT_JOBS', 'mint');
      await sleep(1_500);
      await addStream(ours.stream, ours.subjectPrefix);
      await addStream(other.stream, other.subjectPrefix);
      await new Objm(nc).create(`${ours.stream}_PACKS`);
      const streams = async () => {
        const names: string[] = [];
        for await (const name of jsm.streams.names()) names.push(name);
        return names.sort();
      };

      const dropped = await dropTestStreams(server.url, runId, 1_000);
      expect(dropped.sort()).toEqual([older.stream, `OBJ_${ours.stream}_PACKS`, ours.stream].sort());
      expect(await streams()).toEqual(['MINT_JOBS', other.stream].sort());
      // Nothing left of the run: a second cleanup finds nothing.
      expect(await dropTestStreams(server.url, runId, 60_000)).toEqual([]);
    } finally {
      await nc.close();
      await server.stop();
    }
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
