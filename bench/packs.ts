// `npm run bench:packs`: payload pack generation at scale. Seeds a scratch database with one batch
// of 1,000,000 units (BENCH_UNITS overrides), then in this process:
//   - baseline: a bare `COPY (select ... order by seq) TO STDOUT (format csv)` of the same rows
//     into a file (the database's and disk's floor for writing one of the two data files),
//   - the pack: claim + generatePayloadPack into a filesystem store (units.csv, units.jsonl,
//     manifest.json with SHA-256), with the process RSS sampled every 20 ms.
// Prints seconds and peak RSS against the targets (<= 15 s, RSS <= 200 MB) and drops the database.
// Exits 1 when a target is missed.

import { createWriteStream } from 'node:fs';
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { pipeline } from 'node:stream/promises';
import pg from 'pg';
import { to as copyTo } from 'pg-copy-streams';
import { createPendingPack } from '@mint/db';
import { createFsPackStore } from '@mint/store';
import { claimPayloadPack, generatePayloadPack } from '@mint/usecases';
import { seedUnits } from './unit-seed.ts';

const units = Number(process.env.BENCH_UNITS ?? 1_000_000);
const targetSeconds = 15;
const targetRssMb = 200;
const mb = (bytes: number) => bytes / 1024 / 1024;

let started = performance.now();
const seeded = await seedUnits('bench_packs', units);
console.log(`seeded ${units.toLocaleString('en')} units in ${((performance.now() - started) / 1000).toFixed(1)} s`);
const dir = await mkdtemp(join(tmpdir(), 'bench-packs-'));
let failed = false;
try {
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

  await createPendingPack(seeded.db.em.fork(), seeded.brandId, seeded.batchId, new Date());
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

  const timeOk = packSeconds <= targetSeconds;
  const rssOk = mb(peakRss) <= targetRssMb;
  failed = !timeOk || !rssOk;
  console.log(`\n${units.toLocaleString('en')} units, one batch, same run:`);
  console.log(`baseline: COPY ... TO STDOUT (csv) into a file   ${baselineSeconds.toFixed(2).padStart(6)} s  ${mb(baselineBytes).toFixed(0)} MB`);
  console.log(`payload pack: csv + jsonl + manifest (sha-256)   ${packSeconds.toFixed(2).padStart(6)} s  ${mb(csvBytes + jsonlBytes).toFixed(0)} MB` +
    `  target <= ${targetSeconds} s ${timeOk ? 'ok' : 'MISSED'}`);
  console.log(`pack / baseline: ${(packSeconds / baselineSeconds).toFixed(2)}x the time for ${((csvBytes + jsonlBytes) / baselineBytes).toFixed(2)}x the bytes` +
    ` (${Math.round(units / packSeconds).toLocaleString('en')} units/s)`);
  console.log(`RSS: ${mb(rssBefore).toFixed(0)} MB before, peak ${mb(peakRss).toFixed(0)} MB during generation  target <= ${targetRssMb} MB ${rssOk ? 'ok' : 'MISSED'}`);
} catch (error) {
  failed = true;
  console.error(error);
} finally {
  await seeded.drop();
  await rm(dir, { recursive: true, force: true });
}
process.exitCode = failed ? 1 : 0;
