// `npm run bench:reads`: read-side latency at scale. Creates a scratch database
// (bench/scratch-database.ts), fills one
// brand with 1,000,000 units in SQL (generate_series; chunks of 2,000 share a created_at as the
// executor writes them), then times in-process, i.e. server side without transport:
//   - ListMintUnits first page and a page at depth 900,000 (use case, default page size 50),
//   - the bare keyset SELECT over the same index with the same predicate (baseline),
//   - GetMintKpis, and the bare SELECT of the same sums, prepared on a plain pg client (its baseline:
//     one round trip and nothing else).
// Prints p50/p99 per case against the targets (lists p99 <= 10 ms, KPIs p99 <= 1 ms) and drops
// the database at the end. Each case makes 5,000 timed calls by default: at 500, a p99 was the
// fifth-slowest call, and one stall of the host lasting a few milliseconds (seen alike in the use
// cases and their bare SELECTs, up to 12 ms) decided it; a KPI run's p99 then ranged 0.24-1.22 ms
// where 5,000 calls gave 0.22-0.28. Exits 1 when a target is missed. BENCH_UNITS / BENCH_ITERATIONS override;
// BENCH_RUNS repeats the timed cases on the same data, BENCH_JSON names a file for the figures as
// JSON (bench/run.ts reads it); `benchReads` is the same as a function.

import { randomUUID } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import pg from 'pg';
import { openDatabase, type Database } from '@mint/db';
import { query, run } from '../test/support/sql.ts';
import { createUseCaseContext, createUser, createWorkspace, getMintKpis, listMintUnits, upsertProduct } from '@mint/usecases';
import type { Cursor } from '@mint/domain';
import { percentile } from './child-server.ts';
import { createScratchDatabase } from './scratch-database.ts';

const warmup = 100;
const chunk = 2000;

/** Latency of one case over the timed calls, milliseconds. */
export interface Figures {
  readonly p50: number;
  readonly p99: number;
  readonly max: number;
}

/** What `benchReads` measures. */
export interface ReadsBenchOptions {
  /** Units seeded into the one brand. */
  readonly units: number;
  /** Timed calls per case and run (after 100 warm-up calls). */
  readonly iterations: number;
  /** Repetitions of the whole set of cases on the same data. */
  readonly runs: number;
}

/** One timed case of one run; `target` is its p99 target in ms (null for a baseline). */
export interface ReadsCase {
  readonly label: string;
  readonly figures: Figures;
  readonly target: number | null;
}

/** Everything `benchReads` measured: per run, the six cases in a fixed order (first page, depth, the two baselines, KPIs, the KPIs' baseline). */
export interface ReadsBenchResult {
  readonly units: number;
  readonly depth: number;
  readonly iterations: number;
  readonly runs: readonly (readonly ReadsCase[])[];
  /** The plan's node and index at depth, and its execution time (ms). */
  readonly plan: { readonly node: string; readonly index: string; readonly executionMs: number };
}

async function time(iterations: number, work: () => Promise<unknown>): Promise<Figures> {
  for (let i = 0; i < warmup; i++) await work();
  const samples: number[] = [];
  for (let i = 0; i < iterations; i++) {
    const start = performance.now();
    await work();
    samples.push(performance.now() - start);
  }
  samples.sort((a, b) => a - b);
  return { p50: percentile(samples, 50), p99: percentile(samples, 99), max: samples[samples.length - 1]! };
}

async function seed(db: Database, units: number, brandId: string, batchId: string, productId: string): Promise<void> {
  const em = db.em.fork();
  const jobId = randomUUID();
  const base = new Date('2026-01-01T00:00:00.000Z');
  await run(
    em,
    `insert into mint_jobs (brand_id, id, status, scope_type, requested_quantity, product_id, lease_token, attempts, created_at, updated_at, finished_at)
     values (?, ?, 'COMPLETED', 'serial', ?, ?, 1, 0, ?, ?, ?)`,
    [brandId, jobId, units, productId, base, base, base],
  );
  await run(
    em,
    `insert into mint_batches (brand_id, id, mint_job_id, product_id, status, identity_mode, activation_mode, requested_quantity, minted_quantity,
       resolver_base_url, gtin, created_at, updated_at)
     values (?, ?, ?, ?, 'minted', 'serial', 'active_at_mint', ?, ?, 'http://127.0.0.1:8080/r/bench', null, ?, ?)`,
    [brandId, batchId, jobId, productId, units, units, base, base],
  );
  // Serial: 20 characters from md5 of the seq (unique per batch), like the executor's unguessable serials.
  await run(
    em,
    `insert into mint_units (brand_id, id, mint_batch_id, seq, serial, status, created_at, activated_at)
     select ?::uuid, gen_random_uuid(), ?::uuid, g, s.serial, 'active', t.at, t.at
     from generate_series(1, ?::int) g
     cross join lateral (select upper(substr(md5(g::text), 1, 20)) as serial) s
     cross join lateral (select ?::timestamptz + ((g - 1) / ?::int) * interval '40 ms' as at) t`,
    [brandId, batchId, units, base, chunk],
  );
  await run(
    em,
    `insert into mint_kpis (brand_id, shard, total_tokens_minted, active_tokens, batches_created, exported_printed) values (?, 0, ?, ?, 1, 0)
     on conflict (brand_id, shard) do update set total_tokens_minted = excluded.total_tokens_minted, active_tokens = excluded.active_tokens,
       batches_created = excluded.batches_created`,
    [brandId, units, units],
  );
}

/**
 * Seeds a scratch database with `units` units, then times every case `runs` times (each run: the
 * two use-case pages, the two bare SELECTs, GetMintKpis). `progress` gets one line per step. Drops
 * the database whatever happens.
 */
export async function benchReads(options: ReadsBenchOptions, progress: (line: string) => void = console.log): Promise<ReadsBenchResult> {
  const { units, iterations } = options;
  const depth = Math.min(900_000, units - 100);
  const scratch = await createScratchDatabase('bench_reads');
  let db: Database | undefined;
  try {
    db = await openDatabase({ url: scratch.url }, { poolSize: 4, applicationName: 'bench-reads' });
    const ctx = createUseCaseContext({ db, publicBaseUrl: 'http://127.0.0.1:8080' });
    const brand = await createWorkspace(ctx, { name: 'Bench Brand' });
    const user = await createUser(ctx, { email: `bench-${brand.slug}@bench.example`, name: 'Bench' });
    const { product } = await upsertProduct(
      ctx,
      { id: user.id },
      {
        brandId: brand.id,
        sku: 'BENCH-SKU',
        name: 'Bench product',
        gtin: null,
        commercialStatus: 'ACTIVE',
        mintReadinessStatus: 'READY',
        passportUrl: null,
      },
    );
    const batchId = randomUUID();

    let started = performance.now();
    await seed(db, units, brand.id, batchId, product.id);
    progress(`seeded ${units.toLocaleString('en')} units in ${((performance.now() - started) / 1000).toFixed(1)} s`);
    started = performance.now();
    const client = new pg.Client({ connectionString: scratch.url });
    await client.connect();
    await client.query('VACUUM ANALYZE');
    await client.end();
    progress(`vacuum analyze in ${((performance.now() - started) / 1000).toFixed(1)} s`);

    const em = () => db!.em.fork();
    const [row] = await query<{ created_at: Date; id: string }>(
      em(),
      `select created_at, id from mint_units where brand_id = ? order by created_at desc, id desc offset ? limit 1`,
      [brand.id, depth - 1],
    );
    const deep: Cursor = { at: new Date(row!.created_at), id: row!.id };

    const page = await listMintUnits(ctx, brand.id, { limit: null, cursor: deep, mintBatchId: null });
    if (page.items.length !== 50 || page.items[0]!.productSku !== 'BENCH-SKU') throw new Error('unexpected page at depth');
    const kpis = await getMintKpis(ctx, brand.id);
    if (kpis.totalTokensMinted !== units) throw new Error('unexpected KPIs');

    const bare = (cursor: Cursor | null) => () =>
      cursor === null
        ? query(em(), `select * from mint_units where brand_id = ? order by created_at desc, id desc limit 51`, [brand.id])
        : query(
            em(),
            `select * from mint_units where brand_id = ? and (created_at, id) < (?::timestamptz, ?::uuid) order by created_at desc, id desc limit 51`,
            [brand.id, cursor.at, cursor.id],
          );

    // The KPIs' baseline: the same sums, prepared once on a plain client of its own.
    const plain = new pg.Client({ connectionString: scratch.url });
    await plain.connect();
    const bareKpis = () =>
      plain.query({
        name: 'bare_kpis',
        values: [brand.id],
        text: 'select sum(total_tokens_minted), sum(active_tokens), sum(batches_created), sum(exported_printed) from mint_kpis where brand_id = $1',
      });

    const runs: ReadsCase[][] = [];
    for (let run = 0; run < options.runs; run++) {
      runs.push([
        {
          label: 'ListMintUnits first page',
          figures: await time(iterations, () => listMintUnits(ctx, brand.id, { limit: null, cursor: null, mintBatchId: null })),
          target: 10,
        },
        {
          label: `ListMintUnits page at depth ${depth.toLocaleString('en')}`,
          figures: await time(iterations, () => listMintUnits(ctx, brand.id, { limit: null, cursor: deep, mintBatchId: null })),
          target: 10,
        },
        { label: 'baseline: bare SELECT, first page', figures: await time(iterations, bare(null)), target: null },
        { label: `baseline: bare SELECT, depth ${depth.toLocaleString('en')}`, figures: await time(iterations, bare(deep)), target: null },
        { label: 'GetMintKpis', figures: await time(iterations, () => getMintKpis(ctx, brand.id)), target: 1 },
        { label: 'baseline: bare SELECT of the KPI sums', figures: await time(iterations, bareKpis), target: null },
      ]);
      if (options.runs > 1) progress(`run ${run + 1}/${options.runs} timed`);
    }
    await plain.end();
    const [plan] = await query<{ 'QUERY PLAN': unknown }>(
      em(),
      `explain (analyze, format json) select * from mint_units where brand_id = ? and (created_at, id) < (?::timestamptz, ?::uuid) order by created_at desc, id desc limit 51`,
      [brand.id, deep.at, deep.id],
    );
    const top = (plan!['QUERY PLAN'] as [{ Plan: { Plans?: [{ 'Node Type': string; 'Index Name'?: string }] }; 'Execution Time': number }])[0];
    const scan = top.Plan.Plans?.[0];
    return {
      units,
      depth,
      iterations,
      runs,
      plan: { node: scan?.['Node Type'] ?? '?', index: scan?.['Index Name'] ?? '?', executionMs: top['Execution Time'] },
    };
  } finally {
    await db?.close(true);
    await scratch.drop();
    progress(`dropped ${scratch.name}`);
  }
}

if (import.meta.main) {
  let failed = false;
  try {
    const result = await benchReads({
      units: Number(process.env.BENCH_UNITS ?? 1_000_000),
      iterations: Number(process.env.BENCH_ITERATIONS ?? 5_000),
      runs: Number(process.env.BENCH_RUNS ?? 1),
    });
    for (const results of result.runs) {
      console.log(`\n${result.iterations} timed calls per case after ${warmup} warm-up calls, in process (no transport), milliseconds:`);
      console.log(`${'case'.padEnd(44)} ${'p50'.padStart(7)} ${'p99'.padStart(7)} ${'max'.padStart(7)}  target p99`);
      for (const { label, figures: f, target } of results) {
        const verdict = target === null ? '' : `<= ${target} ms ${f.p99 <= target ? 'ok' : 'MISSED'}`;
        if (target !== null && f.p99 > target) failed = true;
        console.log(`${label.padEnd(44)} ${f.p50.toFixed(2).padStart(7)} ${f.p99.toFixed(2).padStart(7)} ${f.max.toFixed(2).padStart(7)}  ${verdict}`);
      }
      const ratio = (a: Figures, b: Figures) => `p50 ${(a.p50 / b.p50).toFixed(2)}x, p99 ${(a.p99 / b.p99).toFixed(2)}x`;
      console.log(
        `\nuse case / bare SELECT: first page ${ratio(results[0]!.figures, results[2]!.figures)}; depth ${ratio(results[1]!.figures, results[3]!.figures)}; ` +
          `KPIs ${ratio(results[4]!.figures, results[5]!.figures)}`,
      );
    }
    console.log(`plan at depth: ${result.plan.node} on ${result.plan.index}, execution ${result.plan.executionMs.toFixed(3)} ms`);
    if (process.env.BENCH_JSON) writeFileSync(process.env.BENCH_JSON, JSON.stringify(result));
  } catch (error) {
    failed = true;
    console.error(error);
  }
  process.exitCode = failed ? 1 : 0;
}
