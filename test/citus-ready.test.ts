// Citus-ready schema and queries, checked on plain PostgreSQL (Citus does not install here):
// every table of the migrated schema is classified for the distribution step of `mintctl migrate`,
// and the SQL a representative run sends keeps the rules a distributed database needs: no row lock
// without an equality on brand_id (the distribution column), and no ctid.

import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMemoryBus } from '@mint/bus';
import { distributeForCitus, distributedTables, localTables, referenceTables } from '@mint/db';
import { createFsPackStore } from '@mint/store';
import { createWebhookEndpoint, getJobProgress, setBrandResolverDomain, setMintBatchStatus, submitMintRequest } from '@mint/usecases';
import { startExecutor } from '../services/executor/src/executor.ts';
import { query } from './support/sql.ts';
import { setupUseCases, type SeededBrand, type UseCaseBundle } from './support/usecases.ts';

let app: UseCaseBundle;
let brand: SeededBrand;
beforeAll(async () => {
  app = await setupUseCases();
  brand = await app.seedBrand();
});
afterAll(async () => {
  await app?.close();
});

describe('the Citus layout', () => {
  // A partition (scan_events' day partitions) is laid out with its parent.
  it('classifies every table of the migrated schema exactly once (a new table must be named in packages/db/src/distribution.ts)', async () => {
    const tables = (
      await query<{ name: string }>(
        app.db.em.fork(),
        `select c.relname as name from pg_class c join pg_namespace n on n.oid = c.relnamespace
       where n.nspname = 'public' and c.relkind in ('r', 'p') and not c.relispartition order by 1`,
      )
    ).map((r) => r.name);
    const classified = [...distributedTables, ...referenceTables, ...localTables];
    expect(new Set(classified).size).toBe(classified.length);
    expect([...classified].sort()).toEqual(tables);
  });

  it('distributes only tables whose primary key and unique indexes lead with brand_id', async () => {
    const keys = await query<{ table: string; columns: string }>(
      app.db.em.fork(),
      `select c.relname as table, (select a.attname from pg_attribute a where a.attrelid = c.oid and a.attnum = i.indkey[0]) as columns
       from pg_index i join pg_class c on c.oid = i.indrelid join pg_namespace n on n.oid = c.relnamespace
       where n.nspname = 'public' and i.indisunique`,
    );
    for (const table of distributedTables) {
      const leading = keys.filter((k) => k.table === table).map((k) => k.columns);
      expect(leading.length, table).toBeGreaterThan(0);
      expect(
        leading.every((c) => c === 'brand_id'),
        table,
      ).toBe(true);
    }
  });

  it('has no triggers (Citus refuses to distribute a table with triggers; the writes notify and move links themselves)', async () => {
    const triggers = await query<{ name: string }>(
      app.db.em.fork(),
      `select t.tgrelid::regclass::text || '.' || t.tgname as name from pg_trigger t join pg_class c on c.oid = t.tgrelid
       join pg_namespace n on n.oid = c.relnamespace where n.nspname = 'public' and not t.tgisinternal`,
    );
    expect(triggers).toEqual([]);
  });

  it('runs the distribution step only where the citus extension is installed', async () => {
    expect(await distributeForCitus(app.db)).toEqual({ citus: false });
  });
});

/** Every statement text sent through `pg` while `work` runs, in this process. */
async function statementsOf(work: () => Promise<void>): Promise<string[]> {
  const seen: string[] = [];
  const original = pg.Client.prototype.query;
  pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
    const first = args[0] as string | { text?: string } | undefined;
    const text = typeof first === 'string' ? first : first?.text;
    if (typeof text === 'string') seen.push(text);
    return (original as (...a: unknown[]) => unknown).apply(this, args);
  } as typeof original;
  try {
    await work();
  } finally {
    pg.Client.prototype.query = original;
  }
  return seen;
}

const locking = /\bfor\s+(update|share|no\s+key\s+update|key\s+share)\b/i;
const brandEquality = /"?brand_id"?\s*=\s*(\$\d+|'[0-9a-f-]{36}')/i;
/** `brands` is keyed by the brand's id itself. */
const brandRowEquality = /from\s+"?brands"?\b[\s\S]*\bwhere\s+"?id"?\s*=\s*\$\d+/i;

async function until(what: string, check: () => Promise<boolean>, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe('the query rules', () => {
  it('holds on what mints, claims packs and deliveries, relays, purges and changes batches and domains', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'citus-rules-'));
    const bus = createMemoryBus();
    const em = app.db.em.fork();
    await createWebhookEndpoint(
      app.ctx,
      { id: brand.userId },
      { allowLoopback: true },
      {
        brandId: brand.brandId,
        url: 'http://127.0.0.1:9/hook',
        eventTypes: [],
        description: '',
      },
    );
    await query(
      em,
      `insert into idempotency_records (brand_id, key, route, request_hash, state, response_status, response_body, created_at, expires_at)
      select ?, 'key-' || n, 'POST /v1/mint/jobs', 'hash', 'completed', 201, '{}'::jsonb, now() - interval '2 days', now() - interval '1 hour'
      from generate_series(1, 5) as n`,
      [brand.brandId],
    );
    await query(
      em,
      `insert into scan_events (brand_id, scanned_at, kind, gtin, identifier, outcome, representation)
      select ?, now() - interval '40 days', 'serial', '09506000134352', 'OLD' || n, 'resolved', 'redirect' from generate_series(1, 5) as n`,
      [brand.brandId],
    );
    let attempts = 0;
    const statements = await statementsOf(async () => {
      const executor = startExecutor({
        ctx: app.ctx,
        bus,
        logger: pino({ level: 'silent' }),
        concurrency: 1,
        chunkSize: 20,
        writers: 2,
        relayIntervalMs: 20,
        sweepIntervalMs: 100,
        scanEventRetentionDays: 30,
        packStore: createFsPackStore(dir),
        packPollIntervalMs: 50,
        webhooks: {
          send: async () => {
            attempts++;
            return { status: 503, durationMs: 1 } as never;
          },
          concurrency: 2,
          perEndpoint: 1,
          pollIntervalMs: 50,
        },
      });
      try {
        const submitted = await submitMintRequest(
          app.ctx,
          { id: brand.userId },
          {
            brandId: brand.brandId,
            productId: brand.productId,
            productBatchId: null,
            requestedQuantity: 100,
            identityMode: 'serial',
            activationMode: 'active_at_mint',
            lots: [],
            idempotencyKey: null,
          },
        );
        if (!submitted.ok) throw new Error('blocked');
        await until('the job', async () => (await getJobProgress(app.ctx, brand.brandId, submitted.mintJobId)).status === 'COMPLETED');
        await until(
          'the pack',
          async () =>
            (
              await query<{ status: string }>(app.db.em.fork(), 'select status from payload_packs where brand_id = ? and mint_batch_id = ?', [
                brand.brandId,
                submitted.mintBatchId,
              ])
            )[0]?.status === 'ready',
        );
        await until('a delivery attempt', async () => attempts > 0);
        await until(
          'the purges',
          async () =>
            (
              await query<{ n: string }>(
                app.db.em.fork(),
                `select (select count(*) from idempotency_records where brand_id = ?) + (select count(*) from scan_events where brand_id = ?) as n`,
                [brand.brandId, brand.brandId],
              )
            )[0]?.n === '0',
        );
        await setMintBatchStatus(
          app.ctx,
          { id: brand.userId },
          { brandId: brand.brandId, mintBatchId: submitted.mintBatchId, status: 'voided', reason: 'recall' },
        );
        await setBrandResolverDomain(app.ctx, { id: brand.userId }, { brandId: brand.brandId, domain: 'id.citus-rules.example' });
      } finally {
        await executor.stop();
        await bus.close();
        await rm(dir, { recursive: true, force: true });
      }
    });
    // The run went through the claims this rule is about.
    expect(statements.some((s) => /update "payload_packs"/i.test(s))).toBe(true);
    expect(statements.some((s) => /update "webhook_deliveries"/i.test(s))).toBe(true);
    expect(statements.some((s) => /delete from "outbox"/i.test(s))).toBe(true);
    expect(statements.filter((s) => /\bctid\b/i.test(s))).toEqual([]);
    const lockingStatements = statements.filter((s) => locking.test(s));
    expect(lockingStatements.length).toBeGreaterThan(0);
    expect(lockingStatements.filter((s) => !brandEquality.test(s) && !brandRowEquality.test(s))).toEqual([]);
  }, 60_000);
});
