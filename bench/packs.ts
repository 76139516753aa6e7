// `npm run bench:packs`: payload pack generation at scale. Seeds a scratch database with one batch
// of 1,000,000 units (BENCH_UNITS overrides), then in this process:
//   - baseline: a bare `COPY (select ... order by seq) TO STDOUT (format csv)` of the same rows
//     into a file (the database's and disk's floor for writing one of the two data files),
//   - the pack: claim + generatePayloadPack into a filesystem store (units.csv, units.jsonl,
//     manifest.json with SHA-256), with the process RSS sampled every 20 ms.
// Prints seconds and peak RSS against the targets (<= 15 s, RSS <= 200 MB) and drops the database.
// Exits 1 when a target is missed. BENCH_RUNS repeats baseline and pack on the same data (the pack
// row and files removed in between), BENCH_JSON names a file for the figures as JSON (bench/run.ts
// reads it); `benchPacks` is the same as a function.

import { createWriteStream, writeFileSync } from 'node:fs';
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { pipeline } from 'node:stream/promises';
import pg from 'pg';
import { to as copyTo } from 'pg-copy-streams';
import { createPendingPack } from '@mint/db';
import { run } from '../test/support/sql.ts';
import { createFsPackStore } from '@mint/store';
import { claimPayloadPack, generatePayloadPack } from '@mint/usecases';
import { seedUnits } from './unit-seed.ts';

const targetSeconds = 15;
const targetRssMb = 200;
const mb = (bytes: number) => bytes / 1024 / 1024;

/** One baseline and one pack of the same rows, with this process's RSS. */
export interface PacksRun {
  readonly baselineSeconds: number;
  readonly baselineBytes: number;
  readonly packSeconds: number;
  /** units.csv plus units.jsonl. */
  readonly packBytes: number;
  readonly rssBeforeMb: number;
  readonly peakRssMb: number;
}

/** Everything `benchPacks` measured, with the targets the CLI checks. */
export interface PacksBenchResult {
  readonly units: number;
  readonly runs: readonly PacksRun[];
  readonly targetSeconds: number;
  readonly targetRssMb: number;
}

/**
 * Seeds a scratch database with one batch of `units` units, then `runs` times: the bare COPY to a
 * file and the pack into a filesystem store (RSS sampled every 20 ms). Drops the database and the
 * files whatever happens.
 */
export async function benchPacks(options: { readonly units: number; readonly runs: number }, progress: (line: string) => void = console.log): Promise<PacksBenchResult> {
  const { units } = options;
  let started = performance.now();
  const seeded = await seedUnits('bench_packs', units);
  progress(`seeded ${units.toLocaleString('en')} units in ${((performance.now() - started) / 1000).toFixed(1)} s`);
  const dir = await mkdtemp(join(tmpdir(), 'bench-packs-'));
  const runs: PacksRun[] = [];
  try {
    for (let attempt = 0; attempt < options.runs; attempt++) {
      // Baseline: the database streams the same rows as CSV straight to a file.
      const client = new pg.Client({ connectionString: seeded.url });
      await client.connect();
      started = performance.now();
      await pipeline(
        client.query(copyTo(`copy (select serial, resolver_url, serial, '', status from mint_units
          where brand_id = '${seeded.brandId}' and mint_batch_id = '${seeded.batchId}' order by seq) to stdout (format csv)`)),
        createWriteStream(join(dir, 'baseline.csv')),
      );
      const baselineSeconds = (performance.now() - started) / 1000;
      await client.end();
      const baselineBytes = (await stat(join(dir, 'baseline.csv'))).size;

      // A fresh pending pack (and empty store) for every run.
      await run(seeded.db.em.fork(), 'delete from payload_packs where brand_id = ? and mint_batch_id = ?', [seeded.brandId, seeded.batchId]);
      await rm(join(dir, 'store'), { recursive: true, force: true });
      await createPendingPack(seeded.db.em.fork(), seeded.brandId, seeded.batchId, new Date(), { purpose: 'request', profile: { formats: ['csv', 'jsonl'], seqFrom: null, seqTo: null, symbology: 'qr', layout: null } });
      const store = createFsPackStore(join(dir, 'store'));
      global.gc?.();
      const rssBefore = process.memoryUsage().rss;
      let peakRss = rssBefore;
      const sampler = setInterval(() => {
        peakRss = Math.max(peakRss, process.memoryUsage().rss);
      }, 20);
      started = performance.now();
      const claim = await claimPayloadPack(seeded.ctx);
      if (claim === null) throw new Error('no pack to claim');
      const result = await generatePayloadPack(seeded.ctx, claim, { store });
      const packSeconds = (performance.now() - started) / 1000;
      clearInterval(sampler);
      peakRss = Math.max(peakRss, process.memoryUsage().rss);
      if (result.kind !== 'ready' || result.unitCount !== units) throw new Error(`unexpected result ${JSON.stringify(result)}`);
      const folder = join(dir, 'store', result.storagePath);
      const csvBytes = (await stat(join(folder, 'units.csv'))).size;
      const jsonlBytes = (await stat(join(folder, 'units.jsonl'))).size;
      runs.push({ baselineSeconds, baselineBytes, packSeconds, packBytes: csvBytes + jsonlBytes, rssBeforeMb: mb(rssBefore), peakRssMb: mb(peakRss) });
      if (options.runs > 1) progress(`run ${attempt + 1}/${options.runs}: pack ${packSeconds.toFixed(2)} s, baseline ${baselineSeconds.toFixed(2)} s, peak RSS ${mb(peakRss).toFixed(0)} MB`);
    }
    return { units, runs, targetSeconds, targetRssMb };
  } finally {
    await seeded.drop();
    await rm(dir, { recursive: true, force: true });
  }
}

if (import.meta.main) {
  let failed = false;
  try {
    const result = await benchPacks({ units: Number(process.env.BENCH_UNITS ?? 1_000_000), runs: Number(process.env.BENCH_RUNS ?? 1) });
    for (const r of result.runs) {
      const timeOk = r.packSeconds <= targetSeconds;
      const rssOk = r.peakRssMb <= targetRssMb;
      if (!timeOk || !rssOk) failed = true;
      console.log(`\n${result.units.toLocaleString('en')} units, one batch, same run:`);
      console.log(`baseline: COPY ... TO STDOUT (csv) into a file   ${r.baselineSeconds.toFixed(2).padStart(6)} s  ${mb(r.baselineBytes).toFixed(0)} MB`);
      console.log(`payload pack: csv + jsonl + manifest (sha-256)   ${r.packSeconds.toFixed(2).padStart(6)} s  ${mb(r.packBytes).toFixed(0)} MB` +
        `  target <= ${targetSeconds} s ${timeOk ? 'ok' : 'MISSED'}`);
      console.log(`pack / baseline: ${(r.packSeconds / r.baselineSeconds).toFixed(2)}x the time for ${(r.packBytes / r.baselineBytes).toFixed(2)}x the bytes` +
        ` (${Math.round(result.units / r.packSeconds).toLocaleString('en')} units/s)`);
      console.log(`RSS: ${r.rssBeforeMb.toFixed(0)} MB before, peak ${r.peakRssMb.toFixed(0)} MB during generation  target <= ${targetRssMb} MB ${rssOk ? 'ok' : 'MISSED'}`);
    }
    if (process.env.BENCH_JSON) writeFileSync(process.env.BENCH_JSON, JSON.stringify(result));
  } catch (error) {
    failed = true;
    console.error(error);
  }
  process.exitCode = failed ? 1 : 0;
}
