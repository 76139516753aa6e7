// `npm run bench:citus-statements`: what each statement of a submit and of a resolver scan costs on
// Citus against plain PostgreSQL, from the client (round trip included). Both databases are made
// fresh and migrated (`mintctl migrate`'s two steps); one brand submits SUBMITS 10-unit requests
// and scans SCANS minted units (each a unit lookup, never cached) on each, and an executor mints a
// job of MINT_UNITS; every statement is timed from the `pg` client. Prints one row per statement: count and median/p95 ms on each.
//
//   CITUS_URL=postgres://postgres@127.0.0.1:6601/citus [DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres] \
//     npm run bench:citus-statements
//
// Start the Citus with `bash ../shared/citus/start.sh 6601` (and stop it with stop.sh 6601).

import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import pino from 'pino';
import { createMemoryBus } from '@mint/bus';
import { distributeForCitus, migrate, openDatabase } from '@mint/db';
import { parseResolverRequest } from '@mint/domain';
import { createFsPackStore } from '@mint/store';
import {
  createResolver,
  createScanRecorder,
  createUseCaseContext,
  createUser,
  createWorkspace,
  getJobProgress,
  grantRole,
  submitMintRequest,
  upsertProduct,
} from '@mint/usecases';
import { startExecutor } from '../services/executor/src/executor.ts';
import { freshCitusDatabase } from '../test/citus/support.ts';
import { createDatabase, databaseUrlFor, dropDatabase } from '../test/support/pg-admin.ts';
import { query } from '../test/support/sql.ts';
import { nextGtin } from '../test/support/usecases.ts';

const citusUrl = process.env['CITUS_URL'];
if (citusUrl === undefined || citusUrl === '') {
  console.error('CITUS_URL is not set: start a Citus with `bash ../shared/citus/start.sh 6601` and set CITUS_URL=postgres://postgres@127.0.0.1:6601/citus');
  process.exit(2);
}
const plainUrl = process.env['DATABASE_URL'] ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const submits = Number(process.env['SUBMITS'] ?? 50);
const scans = Number(process.env['SCANS'] ?? 300);
const mintUnits = Number(process.env['MINT_UNITS'] ?? 20_000);

/** Durations (ms) per statement label, while `capture` is on. */
let capture: Map<string, number[]> | null = null;
function labelOf(text: string, name: string | undefined): string {
  if (name !== undefined) return `prepared ${name}`;
  return text.replace(/\s+/g, ' ').trim().slice(0, 90);
}
const original = pg.Client.prototype.query;
pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
  const first = args[0] as string | { text?: string; name?: string } | undefined;
  const text = typeof first === 'string' ? first : first?.text;
  const name = typeof first === 'object' ? first?.name : undefined;
  const into = capture;
  if (into === null || typeof text !== 'string') return (original as (...a: unknown[]) => unknown).apply(this, args);
  const started = performance.now();
  const done = () => {
    const label = labelOf(text, name);
    const list = into.get(label) ?? [];
    list.push(performance.now() - started);
    into.set(label, list);
  };
  // pg.Pool#query passes a callback; Kysely awaits the returned promise.
  const last = args.length - 1;
  if (typeof args[last] === 'function') {
    const callback = args[last] as (...a: unknown[]) => unknown;
    args[last] = (...a: unknown[]) => (done(), callback(...a));
  }
  const result = (original as (...a: unknown[]) => unknown).apply(this, args);
  if (result instanceof Promise) void result.then(done, () => undefined);
  return result;
} as typeof original;

async function measure(url: string): Promise<{ submit: Map<string, number[]>; scan: Map<string, number[]>; mint: Map<string, number[]> }> {
  const db = await openDatabase({ url }, { poolSize: 8 });
  await migrate(db);
  await distributeForCitus(db);
  const ctx = createUseCaseContext({ db, publicBaseUrl: 'http://127.0.0.1:8080', jwtSecret: 'bench-secret-bench-secret-bench-secret-01' });
  const brand = await createWorkspace(ctx, { name: 'Bench', apiAccessEnabled: true });
  const user = await createUser(ctx, { email: `owner-${brand.slug}@bench.example`, name: 'Owner' });
  await grantRole(ctx, brand.id, user.id, 'owner');
  const gtin = nextGtin();
  const { product } = await upsertProduct(
    ctx,
    { id: user.id },
    {
      brandId: brand.id,
      sku: 'SKU-1',
      name: 'Product',
      gtin,
      commercialStatus: 'ACTIVE',
      mintReadinessStatus: 'READY',
      passportUrl: 'https://bench.example/p',
    },
  );
  const request = (requestedQuantity: number) =>
    submitMintRequest(
      ctx,
      { id: user.id },
      {
        brandId: brand.id,
        productId: product.id,
        productBatchId: null,
        requestedQuantity,
        identityMode: 'serial',
        activationMode: 'active_at_mint',
        lots: [],
        idempotencyKey: null,
      },
    );
  // Units to scan: one job minted by an executor.
  const dir = await mkdtemp(join(tmpdir(), 'citus-bench-'));
  const bus = createMemoryBus();
  const executor = startExecutor({
    ctx,
    bus,
    logger: pino({ level: 'silent' }),
    concurrency: 1,
    chunkSize: 5_000,
    writers: 2,
    relayIntervalMs: 20,
    packStore: createFsPackStore(dir),
  });
  const minted = await request(scans);
  if (!minted.ok) throw new Error('blocked');
  while ((await getJobProgress(ctx, brand.id, minted.mintJobId)).status !== 'COMPLETED') await new Promise((r) => setTimeout(r, 50));
  // A job of MINT_UNITS, every statement of the executor (relay, lease, chunks, pack) timed.
  const mint = new Map<string, number[]>();
  capture = mint;
  const mintStarted = performance.now();
  const job = await request(mintUnits);
  if (!job.ok) throw new Error('blocked');
  while ((await getJobProgress(ctx, brand.id, job.mintJobId)).status !== 'COMPLETED') await new Promise((r) => setTimeout(r, 20));
  mint.set(`(the whole job of ${mintUnits} units, submit to COMPLETED)`, [performance.now() - mintStarted]);
  capture = null;
  await executor.stop();
  await bus.close();
  await rm(dir, { recursive: true, force: true });
  const serials = (
    await query<{ serial: string }>(db.em.fork(), 'select serial from mint_units where brand_id = ? and mint_batch_id = ?', [brand.id, minted.mintBatchId])
  ).map((r) => r.serial);

  for (let i = 0; i < 5; i++) await request(10);
  const submit = new Map<string, number[]>();
  const whole: number[] = [];
  capture = submit;
  for (let i = 0; i < submits; i++) {
    const started = performance.now();
    await request(10);
    whole.push(performance.now() - started);
  }
  capture = null;
  submit.set('(the whole SubmitMintRequest use case)', whole);

  const recorder = createScanRecorder(ctx, { flushIntervalMs: 50 });
  const resolver = createResolver(ctx, { recorder });
  await resolver.listening;
  const pathOf = (serial: string) => {
    const parsed = parseResolverRequest(`/r/${brand.slug}/01/${gtin}/21/${serial}`);
    if (parsed.kind !== 'identity') throw new Error('not an identity');
    return parsed.path;
  };
  for (const serial of serials.slice(0, 20)) await resolver.resolve(pathOf(serial), 'redirect');
  const scan = new Map<string, number[]>();
  capture = scan;
  const scanned: number[] = [];
  for (const serial of serials) {
    const started = performance.now();
    await resolver.resolve(pathOf(serial), 'redirect');
    scanned.push(performance.now() - started);
  }
  await recorder.close();
  scan.set('(the whole resolution of a unit scan)', scanned);
  capture = null;
  await resolver.close();
  await db.close(true);
  return { submit, scan, mint };
}

function stat(values: readonly number[] | undefined): string {
  if (values === undefined || values.length === 0) return '-';
  const sorted = [...values].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
  return `${at(0.5).toFixed(2)} / ${at(0.95).toFixed(2)}`;
}

function table(title: string, plain: Map<string, number[]>, citus: Map<string, number[]>): void {
  console.log(`\n${title}: ms median / p95, per statement (count on plain PostgreSQL; on Citus)`);
  console.log('| statement | n | PostgreSQL 15 | Citus 13.2 (2 workers) |');
  console.log('|---|---|---|---|');
  for (const label of new Set([...plain.keys(), ...citus.keys()])) {
    console.log(
      `| \`${label}\` | ${plain.get(label)?.length ?? 0}; ${citus.get(label)?.length ?? 0} | ${stat(plain.get(label))} | ${stat(citus.get(label))} |`,
    );
  }
}

const name = `mint_bench_${randomBytes(4).toString('hex')}`;
await createDatabase(plainUrl, name);
const citus = await freshCitusDatabase(citusUrl);
try {
  const onPlain = await measure(databaseUrlFor(plainUrl, name));
  const onCitus = await measure(citus.url);
  table(`submit (${submits} SubmitMintRequest of 10 units)`, onPlain.submit, onCitus.submit);
  table(`resolver (${scans} unit scans, one at a time, and the scan writer)`, onPlain.scan, onCitus.scan);
  table(`executor (one job of ${mintUnits} units)`, onPlain.mint, onCitus.mint);
} finally {
  pg.Client.prototype.query = original;
  await dropDatabase(plainUrl, name);
  await citus.drop();
}
