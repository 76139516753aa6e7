// The resolver on a real streaming replica (RESOLVER_READ_URL): a PostgreSQL 15 primary and a
// replica made by pg_basebackup, started by this file in a temporary folder on free loopback ports,
// the replica applying WAL 3 seconds late (recovery_min_apply_delay). The API runs with
// DATABASE_URL at the primary and RESOLVER_READ_URL at the replica: a unit minted a moment ago
// answers as minted, not as unknown, a brand, product and lot created a moment ago answer, and a
// changed link answers at once, while the replica still has none of them; a unit the replica has
// answers from the replica (pg_stat_statements on both servers).

import { execFile } from 'node:child_process';
import { chown, mkdtemp, rm, writeFile, appendFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { migrateDatabase, type Database } from '@mint/db';
import { loadConfig, openConfiguredDatabase } from '@mint/runtime';
import {
  createUseCaseContext,
  createUser,
  createWorkspace,
  grantRole,
  issueAccessToken,
  setMintBatchStatus,
  upsertLink,
  upsertProduct,
  type UseCaseContext,
} from '@mint/usecases';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApi, type TestApi } from '../services/api/test/support.ts';
import { mintCompleted } from './support/pack-fixtures.ts';
import { freePort } from './support/ports.ts';
import { nextGtin, testJwtSecret, type SeededBrand, type UseCaseBundle } from './support/usecases.ts';

const run = promisify(execFile);
const bin = '/usr/lib/postgresql/15/bin';
/** How late the replica applies each commit. */
const applyDelayMs = 3_000;

/** Runs a PostgreSQL binary, as the `postgres` user when the test runs as root (initdb and postgres refuse root). */
async function pgBin(name: string, args: readonly string[]): Promise<void> {
  const root = process.getuid?.() === 0;
  await run(root ? 'runuser' : join(bin, name), root ? ['-u', 'postgres', '--', join(bin, name), ...args] : [...args], { timeout: 30_000 });
}

let dir: string;
let primaryPort: number;
let replicaPort: number;
const started: string[] = [];
let db: Database;
let ctx: UseCaseContext;
let api: TestApi;
let brand: SeededBrand;
let slug: string;
let primary: pg.Client;
let replica: pg.Client;
/** Serials minted before the test (replayed by the replica). */
let oldSerials: string[];

const url = (port: number) => `postgres://postgres@127.0.0.1:${port}/postgres`;

async function startCluster(name: string, port: number, settings: string): Promise<void> {
  const data = join(dir, name);
  await appendFile(join(data, 'postgresql.conf'), `\nport = ${port}\nlisten_addresses = '127.0.0.1'\nunix_socket_directories = '${dir}'\n${settings}`);
  await pgBin('pg_ctl', ['-D', data, '-l', join(dir, `${name}.log`), '-w', '-t', '30', 'start']);
  started.push(data);
}

/** True when the replica has replayed everything the primary has written so far. */
async function replicaCaughtUp(): Promise<boolean> {
  const {
    rows: [{ lsn }],
  } = await primary.query<{ lsn: string }>('select pg_current_wal_lsn()::text as lsn');
  const {
    rows: [{ behind }],
  } = await replica.query<{ behind: boolean }>('select pg_last_wal_replay_lsn() < $1::pg_lsn as behind', [lsn]);
  return !behind;
}

async function waitFor(what: string, check: () => Promise<boolean>, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

const serialsOf = async (batchId: string) =>
  (await primary.query<{ serial: string }>('select serial from mint_units where mint_batch_id = $1 order by seq', [batchId])).rows.map((r) => r.serial);
const onReplica = async (sql: string, params: unknown[]) => Number((await replica.query<{ n: string }>(sql, params)).rows[0]!.n);

/** Calls of the resolver's unit lookups (`mint_units as u`) counted by pg_stat_statements on a server. */
async function unitLookups(client: pg.Client): Promise<number> {
  const {
    rows: [row],
  } = await client.query<{ calls: string | null }>(`select sum(calls)::text as calls from pg_stat_statements where query like '%"mint_units" as "u"%'`);
  return Number(row?.calls ?? 0);
}

/** A scan asking for JSON: its status and body. */
async function scanJson(path: string): Promise<{ status: number; body: Record<string, unknown> }> {
  const response = await fetch(`${api.baseUrl}${path}`, { headers: { accept: 'application/json' } });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

/** A scan as a phone's camera makes it: its status and redirect target. */
async function scan(path: string): Promise<{ status: number; location: string | null }> {
  const response = await fetch(`${api.baseUrl}${path}`, { redirect: 'manual' });
  await response.arrayBuffer();
  return { status: response.status, location: response.headers.get('location') };
}

/** A brand (on the primary) with an owner and a mintable product whose passport page is `passportUrl`. */
async function seedBrand(name: string, passportUrl: string): Promise<{ brand: SeededBrand; slug: string }> {
  const workspace = await createWorkspace(ctx, { name, apiAccessEnabled: true });
  const user = await createUser(ctx, { email: `owner-${workspace.slug}@test.example`, name: 'Owner' });
  await grantRole(ctx, workspace.id, user.id, 'owner');
  const gtin = nextGtin();
  const { product } = await upsertProduct(
    ctx,
    { id: user.id },
    {
      brandId: workspace.id,
      sku: 'SKU-1',
      name: 'Product One',
      gtin,
      commercialStatus: 'ACTIVE',
      mintReadinessStatus: 'READY',
      passportUrl,
    },
  );
  return { brand: { brandId: workspace.id, userId: user.id, productId: product.id, gtin, token: await issueAccessToken(ctx, user.id) }, slug: workspace.slug };
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'mint-replica-'));
  if (process.getuid?.() === 0) await chown(dir, Number((await run('id', ['-u', 'postgres'])).stdout), Number((await run('id', ['-g', 'postgres'])).stdout));
  [primaryPort, replicaPort] = [await freePort(), await freePort()];
  await pgBin('initdb', ['-D', join(dir, 'primary'), '-U', 'postgres', '--auth=trust', '--no-locale', '-E', 'UTF8', '--no-sync']);
  await startCluster('primary', primaryPort, `wal_level = replica\nmax_wal_senders = 4\nfsync = off\nshared_preload_libraries = 'pg_stat_statements'\n`);
  primary = new pg.Client({ connectionString: url(primaryPort) });
  await primary.connect();
  await primary.query('create extension pg_stat_statements');
  await migrateDatabase(url(primaryPort));

  await pgBin('pg_basebackup', ['-h', '127.0.0.1', '-p', String(primaryPort), '-U', 'postgres', '-D', join(dir, 'replica'), '-R', '-X', 'stream', '--no-sync']);
  await writeFile(join(dir, 'replica', 'standby.signal'), '');
  await startCluster('replica', replicaPort, `recovery_min_apply_delay = '${applyDelayMs}ms'\n`);
  replica = new pg.Client({ connectionString: url(replicaPort) });
  await replica.connect();

  // The API's database as its start-up opens it: DATABASE_URL at the primary, RESOLVER_READ_URL at the replica.
  const config = loadConfig({ DATABASE_URL: url(primaryPort), RESOLVER_READ_URL: url(replicaPort) });
  db = await openConfiguredDatabase(config, { applicationName: 'minting-api', resolver: true });
  ctx = createUseCaseContext({
    db,
    publicBaseUrl: 'http://127.0.0.1:8080',
    jwtSecret: testJwtSecret,
    webhookSecretKeys: [{ id: 'w1', secret: new Uint8Array(Buffer.alloc(32, 8)) }],
  });
  ({ brand, slug } = await seedBrand('Replica Brand', 'https://acme.example/passport'));
  oldSerials = await serialsOf((await mintCompleted(ctx, brand, 3)).mintBatchId);
  await waitFor('the replica to replay the seed', replicaCaughtUp, 20_000);
  api = await startTestApi({ db } as UseCaseBundle, { ctx, readiness: async () => ({ ok: true, checks: {} }), shutdownTimeoutMs: 2_000 });
  // The replica really lags: a write is not there within a second.
  await primary.query('create table lag_probe (id int)');
  await new Promise((resolve) => setTimeout(resolve, 1_000));
  expect(await onReplica(`select count(*) as n from pg_class where relname = 'lag_probe'`, [])).toBe(0);
}, 60_000);

afterAll(async () => {
  await api?.close();
  await db?.close(true);
  await primary?.end().catch(() => undefined);
  await replica?.end().catch(() => undefined);
  for (const data of started.reverse()) await pgBin('pg_ctl', ['-D', data, '-m', 'immediate', '-w', 'stop']).catch(() => undefined);
  if (dir !== undefined) await rm(dir, { recursive: true, force: true });
});

describe('the resolver on a lagging streaming replica', () => {
  it('answers a unit the replica has from the replica, not the primary', async () => {
    await primary.query('select pg_stat_statements_reset()');
    await replica.query('select pg_stat_statements_reset()');
    for (const serial of oldSerials) {
      const answer = await scanJson(`/r/${slug}/01/${brand.gtin}/21/${serial}`);
      expect([answer.status, answer.body['unit']]).toMatchObject([200, { serial, status: 'active' }]);
    }
    expect(await unitLookups(replica)).toBeGreaterThanOrEqual(1);
    expect(await unitLookups(primary)).toBe(0);
    const { rows } = await replica.query<{ n: string }>(`select count(*) as n from pg_stat_activity where application_name = 'minting-resolver-replica'`);
    expect(Number(rows[0]!.n)).toBeGreaterThanOrEqual(1);
    // What a scan costs each way (one at a time, loopback, the machine shared): read on the replica,
    // and a serial nobody minted, missed on the replica and read again on the primary.
    const median = async (path: (i: number) => string) => {
      const times: number[] = [];
      for (let i = 0; i < 100; i++) {
        const began = performance.now();
        await scan(path(i));
        times.push(performance.now() - began);
      }
      return times.sort((a, b) => a - b)[50]!.toFixed(2);
    };
    const known = await median((i) => `/r/${slug}/01/${brand.gtin}/21/${oldSerials[i % oldSerials.length]}`);
    const unknown = await median((i) => `/r/${slug}/01/${brand.gtin}/21/NEVER${i}`);
    console.log(`scan medians: ${known} ms a unit on the replica, ${unknown} ms a never-minted serial (replica, then primary)`);
  });

  it('answers a unit minted a moment ago as minted (read through to the primary), while the replica does not have it yet', async () => {
    const mintedAt = Date.now();
    const [serial] = (await serialsOf((await mintCompleted(ctx, brand, 1)).mintBatchId)) as [string];
    expect(await onReplica('select count(*) as n from mint_units where serial = $1', [serial])).toBe(0);
    const json = await scanJson(`/r/${slug}/01/${brand.gtin}/21/${serial}`);
    expect([json.status, json.body['unit']]).toEqual([200, expect.objectContaining({ serial, status: 'active', digital_link: expect.any(String) })]);
    expect(json.body['unit']).not.toHaveProperty('known', false);
    const redirect = await scan(`/r/${slug}/01/${brand.gtin}/21/${serial}`);
    expect([redirect.status, redirect.location]).toEqual([307, 'https://acme.example/passport']);
    // Both answers came before the replica had the unit.
    expect(await onReplica('select count(*) as n from mint_units where serial = $1', [serial])).toBe(0);
    console.log(`fresh unit answered ${Date.now() - mintedAt} ms after its mint began; replica apply delay ${applyDelayMs} ms`);
  });

  it('answers a brand, a product and a lot created a moment ago (read through to the primary), while the replica has none of them', async () => {
    const gtin = nextGtin();
    const { product } = await upsertProduct(
      ctx,
      { id: brand.userId },
      {
        brandId: brand.brandId,
        sku: 'SKU-2',
        name: 'Product Two',
        gtin,
        commercialStatus: 'ACTIVE',
        mintReadinessStatus: 'READY',
        passportUrl: 'https://acme.example/two',
      },
    );
    await mintCompleted(ctx, { ...brand, productId: product.id, gtin }, 2, { identityMode: 'batch', lots: [{ lotCode: 'L1', qty: 2 }] });
    const other = await seedBrand('Brand Two', 'https://globex.example/passport');
    const missing = async () =>
      (await onReplica('select count(*) as n from products where gtin = $1', [gtin])) +
      (await onReplica('select count(*) as n from brands where slug = $1', [other.slug]));
    expect(await missing()).toBe(0);
    expect(await scan(`/r/${slug}/01/${gtin}`)).toEqual({ status: 307, location: 'https://acme.example/two' });
    const lot = await scanJson(`/r/${slug}/01/${gtin}/10/L1`);
    expect([lot.status, lot.body['lot']]).toEqual([200, { lot_code: 'L1', qty: 2, gtin }]);
    expect(await scan(`/r/${other.slug}/01/${other.brand.gtin}`)).toEqual({ status: 307, location: 'https://globex.example/passport' });
    expect(await missing()).toBe(0);
  });

  it('answers a changed unit link and a changed GTIN link at once, while the replica still has the old ones', async () => {
    const link = (fields: { serial: string | null; href: string }) => ({
      brandId: brand.brandId,
      gtin: brand.gtin,
      lot: null,
      linkType: 'gs1:pip',
      title: 'Passport',
      hreflang: [],
      mediaType: null,
      context: [],
      fwqs: null,
      isDefault: true,
      ...fields,
    });
    const changes = [
      { serial: oldSerials[0]!, scanned: oldSerials[0]!, href: 'https://acme.example/unit-own' },
      { serial: null, scanned: oldSerials[1]!, href: 'https://acme.example/gtin-new' },
    ];
    for (const change of changes) {
      await upsertLink(ctx, { id: brand.userId }, link({ serial: change.serial, href: change.href }));
      const changedAt = Date.now();
      let location: string | null = null;
      while (Date.now() - changedAt < 1_000) {
        location = (await scan(`/r/${slug}/01/${brand.gtin}/21/${change.scanned}`)).location;
        if (location === change.href) break;
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      const seenAfterMs = Date.now() - changedAt;
      expect.soft(location, change.serial === null ? 'GTIN link' : 'unit link').toBe(change.href);
      expect(await onReplica('select count(*) as n from resolver_links where href = $1', [change.href])).toBe(0);
      console.log(`${change.serial === null ? 'GTIN' : 'unit'} link change answered after ${seenAfterMs} ms, replica not yet replayed`);
    }
  });
  it('answers a renamed product and a voided lot at once after the change is heard, while the replica still has them as they were', async () => {
    const gtin = nextGtin();
    const { product } = await upsertProduct(
      ctx,
      { id: brand.userId },
      {
        brandId: brand.brandId,
        sku: 'SKU-3',
        name: 'Product Three',
        gtin,
        commercialStatus: 'ACTIVE',
        mintReadinessStatus: 'READY',
        passportUrl: 'https://acme.example/three',
      },
    );
    const { mintBatchId } = await mintCompleted(ctx, { ...brand, productId: product.id, gtin }, 2, {
      identityMode: 'batch',
      lots: [{ lotCode: 'L3', qty: 2 }],
    });
    await waitFor(
      'the replica to replay the product',
      async () => (await onReplica('select count(*) as n from mint_batches where id = $1', [mintBatchId])) === 1,
      20_000,
    );
    expect((await scanJson(`/r/${slug}/01/${gtin}`)).body['product']).toMatchObject({ name: 'Product Three' });
    expect((await scanJson(`/r/${slug}/01/${gtin}/10/L3`)).status).toBe(200);

    /** Scans `path` until `done` holds (1 s at most): the time it took. */
    const seenAfter = async (path: string, done: (answer: { status: number; body: Record<string, unknown> }) => boolean) => {
      const changedAt = Date.now();
      let answer = await scanJson(path);
      while (!done(answer) && Date.now() - changedAt < 1_000) {
        await new Promise((resolve) => setTimeout(resolve, 20));
        answer = await scanJson(path);
      }
      expect(done(answer), JSON.stringify(answer.body)).toBe(true);
      return Date.now() - changedAt;
    };
    await upsertProduct(
      ctx,
      { id: brand.userId },
      {
        brandId: brand.brandId,
        sku: 'SKU-3',
        name: 'Product Three, renamed',
        gtin,
        commercialStatus: 'ACTIVE',
        mintReadinessStatus: 'READY',
        passportUrl: 'https://acme.example/three',
      },
    );
    const renamed = await seenAfter(`/r/${slug}/01/${gtin}`, (a) => (a.body['product'] as { name?: string } | undefined)?.name === 'Product Three, renamed');
    expect(await onReplica('select count(*) as n from products where name = $1', ['Product Three, renamed'])).toBe(0);
    await setMintBatchStatus(ctx, { id: brand.userId }, { brandId: brand.brandId, mintBatchId, status: 'voided', reason: 'labels misprinted' });
    const voided = await seenAfter(`/r/${slug}/01/${gtin}/10/L3`, (a) => a.status === 410);
    expect(await onReplica(`select count(*) as n from mint_batches where id = $1 and status = 'voided'`, [mintBatchId])).toBe(0);
    console.log(`product rename answered after ${renamed} ms, lot void after ${voided} ms, replica not yet replayed`);
  });
});
