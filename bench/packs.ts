// `npm run bench:packs`: payload pack generation at scale. Seeds a scratch database with one batch
// of 1,000,000 units (BENCH_UNITS overrides), then per run:
//   - baseline: a bare `COPY (select ... order by seq) TO STDOUT (format csv)` of the same rows
//     into a file (the database's and disk's floor for writing one of the data files),
//   - the default pack (the automatic pack at a job's completion: units.csv, units.jsonl,
//     epcis.json, manifest.json and SHA256SUMS), then a pack of units.csv and units.jsonl only (with
//     manifest.json and SHA256SUMS: the default pack before EPCIS joined it): each claim +
//     generatePayloadPack into a filesystem store in a process of its own (bench/pack-process.ts)
//     started with the chart's executor NODE_OPTIONS, with its RSS sampled every 20 ms, so the
//     peak is the pack's and not this process's seeding leftovers.
//   - one row per format this build writes (csv, jsonl, epcis; svg, pdf and zpl once label
//     rendering is in the build): a pack of only that format right after its baseline (COPY ... TO
//     of the text the format carries, or the label encoder alone in a tight loop), units/s and peak RSS.
// Prints seconds and peak RSS against the targets (<= 15 s, RSS <= 200 MB) and drops the database.
// Exits 1 when a target is missed. BENCH_RUNS repeats baseline and pack on the same data (the pack
// row and files removed in between), BENCH_JSON names a file for the figures as JSON (bench/run.ts
// reads it); BENCH_FORMATS (e.g. `epcis,zpl`) limits the per-format rows; `benchPacks` is the same as a function.

import { execFile } from 'node:child_process';
import { createWriteStream, readFileSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { pipeline } from 'node:stream/promises';
import { promisify } from 'node:util';
import pg from 'pg';
import { to as copyTo } from 'pg-copy-streams';
import { createPendingPack } from '@mint/db';
import { completionPackProfile, limitedFormats, maxLabelPackUnits, type PackFormat } from '@mint/domain';
import { run } from '../test/support/sql.ts';
import { createFsPackStore } from '@mint/store';
import type { LabelUnit } from '@mint/labels';
import { claimPayloadPack, generatePayloadPack, packFormatRegistry } from '@mint/usecases';
import { pdfSheets, svgLabel, zplLabel } from '@mint/labels';
import { packFormats } from '@mint/domain';
import { seedUnits } from './unit-seed.ts';
import type { PackProcessResult } from './pack-process.ts';

const targetSeconds = 15;
const targetRssMb = 200;
const mb = (bytes: number) => bytes / 1024 / 1024;

/** The executor's NODE_OPTIONS as the chart deploys them (executor.nodeOptions). */
const executorNodeOptions = /^\s*nodeOptions:\s*"([^"]*)"/m.exec(readFileSync(new URL('../deploy/helm/minting/values.yaml', import.meta.url), 'utf8'))![1]!;

/** One pack generated in a process of its own. */
export interface PackFigures {
  /** The files it holds, e.g. `csv + jsonl + epcis + manifest + SHA256SUMS`. */
  readonly label: string;
  readonly seconds: number;
  /** Bytes of its data files. */
  readonly bytes: number;
  /** RSS of its process when generation began (the modules loaded, as in the executor) and at the peak. */
  readonly rssBeforeMb: number;
  readonly peakRssMb: number;
}

/** One baseline and the packs of the same rows right after it. */
export interface PacksRun {
  readonly baselineSeconds: number;
  readonly baselineBytes: number;
  /** The default pack: what a job's completion generates. */
  readonly defaultPack: PackFigures;
  /** units.csv and units.jsonl only (with manifest and SHA256SUMS): the default pack's figure before EPCIS joined it. */
  readonly tabularPack: PackFigures;
}

/** One format's pack against its same-run baseline. */
export interface FormatRun {
  readonly format: PackFormat;
  /** What the baseline does: `COPY ... TO` of the text the format carries, or the encoder alone in a tight loop. */
  readonly baselineLabel: string;
  /** Units the baseline and the pack handled (label formats: their 100,000-unit cap for svg and pdf). */
  readonly units: number;
  readonly baselineSeconds: number;
  readonly packSeconds: number;
  /** RSS of this process when the pack started (earlier rows leave their heap behind). */
  readonly rssBeforeMb: number;
  readonly peakRssMb: number;
}

/** Everything `benchPacks` measured, with the targets the CLI checks. */
export interface PacksBenchResult {
  readonly units: number;
  readonly runs: readonly PacksRun[];
  /** One row per format this build writes, per run, each pack right after its baseline. */
  readonly formats: readonly FormatRun[];
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

      const defaultPack = await packInProcess(seeded, dir, units, completionPackProfile.formats);
      const tabularPack = await packInProcess(seeded, dir, units, ['csv', 'jsonl']);
      runs.push({ baselineSeconds, baselineBytes, defaultPack, tabularPack });
      if (options.runs > 1) {
        progress(`run ${attempt + 1}/${options.runs}: baseline ${baselineSeconds.toFixed(2)} s, ` +
          [defaultPack, tabularPack].map((p) => `${p.label} ${p.seconds.toFixed(2)} s (peak RSS ${p.peakRssMb.toFixed(0)} MB)`).join(', '));
      }
    }
    const formats: FormatRun[] = [];
    const formatFilter = process.env['BENCH_FORMATS']?.split(',') ?? null;
    for (let attempt = 0; attempt < options.runs; attempt++) {
      for (const format of packFormats.filter((f) => formatFilter === null || formatFilter.includes(f))) {
        const row = await benchFormat(seeded, units, dir, format);
        formats.push(row);
        progress(`${format}: pack ${row.packSeconds.toFixed(2)} s, baseline ${row.baselineSeconds.toFixed(2)} s (${row.baselineLabel}), peak RSS ${row.peakRssMb.toFixed(0)} MB`);
      }
    }
    return { units, runs, formats, targetSeconds, targetRssMb };
  } finally {
    await seeded.drop();
    await rm(dir, { recursive: true, force: true });
  }
}

/**
 * A fresh pending completion pack of `formats` (earlier packs deleted, empty store), generated by
 * bench/pack-process.ts in a child process with the executor's NODE_OPTIONS.
 */
async function packInProcess(seeded: Awaited<ReturnType<typeof seedUnits>>, dir: string, units: number, formats: readonly PackFormat[]): Promise<PackFigures> {
  await run(seeded.db.em.fork(), 'delete from payload_packs where brand_id = ? and mint_batch_id = ?', [seeded.brandId, seeded.batchId]);
  await rm(join(dir, 'store'), { recursive: true, force: true });
  await createPendingPack(seeded.db.em.fork(), seeded.brandId, seeded.batchId, new Date(), {
    purpose: 'completion', profile: { formats: [...formats], seqFrom: null, seqTo: null, symbology: 'qr', layout: null },
  });
  const { stdout } = await promisify(execFile)(process.execPath, [new URL('./pack-process.ts', import.meta.url).pathname], {
    env: { ...process.env, NODE_OPTIONS: executorNodeOptions, PACK_DATABASE_URL: seeded.url, PACK_STORE_DIR: join(dir, 'store') },
  });
  const result = JSON.parse(stdout.trim().split('\n').pop()!) as PackProcessResult;
  if (result.unitCount !== units) throw new Error(`unexpected pack ${stdout}`);
  const folder = join(dir, 'store', result.storagePath);
  let bytes = 0;
  for (const f of formats) bytes += (await stat(join(folder, packFormatRegistry[f].file('completion')))).size;
  return { label: `${formats.join(' + ')} + manifest + SHA256SUMS`, seconds: result.seconds, bytes, rssBeforeMb: result.rssBeforeMb, peakRssMb: result.peakRssMb };
}

/** What each text format's baseline copies: the rendered text of its rows straight from the database. */
const copyBaselines: Partial<Record<PackFormat, string>> = {
  csv: `serial || ',' || resolver_url || ',' || serial || ',,' || status`,
  jsonl: `json_build_object('serial', serial, 'digital_link', resolver_url, 'token', serial, 'lot', null, 'status', status)::text`,
  epcis: 'to_json(resolver_url)::text',
};

/**
 * One format: its baseline (COPY ... TO of the text it carries into a file, or the label encoder
 * alone over the same units in a tight loop), then a pack of only that format (range capped at
 * 100,000 units for svg and pdf) with the process RSS sampled every 20 ms.
 */
async function benchFormat(seeded: Awaited<ReturnType<typeof seedUnits>>, seededUnits: number, dir: string, format: PackFormat): Promise<FormatRun> {
  const units = limitedFormats.includes(format) ? Math.min(maxLabelPackUnits, seededUnits) : seededUnits;
  const copied = copyBaselines[format];
  let baselineLabel: string;
  let started = performance.now();
  if (copied !== undefined) {
    baselineLabel = `COPY (select ${format} text) TO STDOUT into a file`;
    const client = new pg.Client({ connectionString: seeded.url });
    await client.connect();
    started = performance.now();
    await pipeline(
      client.query(copyTo(`copy (select ${copied} from mint_units where brand_id = '${seeded.brandId}' and mint_batch_id = '${seeded.batchId}' and seq <= ${units} order by seq) to stdout`)),
      createWriteStream(join(dir, `baseline.${format}`)),
    );
    await client.end();
  } else {
    const r = { pdfSheets, svgLabel, zplLabel };
    baselineLabel = `the ${format} encoder alone in a loop`;
    const unit = (seq: number): LabelUnit => ({ digitalLink: `${seeded.publicBaseUrl}/01/${seeded.gtin}/21/${seq.toString(16).toUpperCase().padStart(20, '0')}`, gtin: seeded.gtin, serial: seq.toString(16).toUpperCase().padStart(20, '0') });
    started = performance.now();
    if (format === 'pdf') {
      async function* all() {
        for (let i = 1; i <= units; i++) yield unit(i);
      }
      await r.pdfSheets({ paper: 'a4', columns: 3, rows: 8, labelWidthMm: 70, labelHeightMm: 37, marginTopMm: 0, marginLeftMm: 0, gapXMm: 0, gapYMm: 0 }, 'qr', all(), createWriteStream(join(dir, 'baseline.pdf')));
    } else {
      let bytes = 0;
      for (let i = 1; i <= units; i++) bytes += (format === 'svg' ? r.svgLabel(unit(i), 'qr') : r.zplLabel(unit(i), 'qr', 203)).length;
      if (bytes === 0) throw new Error('the encoder wrote nothing');
    }
  }
  const baselineSeconds = (performance.now() - started) / 1000;

  await run(seeded.db.em.fork(), 'delete from payload_packs where brand_id = ? and mint_batch_id = ?', [seeded.brandId, seeded.batchId]);
  await rm(join(dir, 'store'), { recursive: true, force: true });
  await createPendingPack(seeded.db.em.fork(), seeded.brandId, seeded.batchId, new Date(), {
    purpose: 'request', profile: { formats: [format], seqFrom: null, seqTo: units < seededUnits ? units : null, symbology: 'qr', layout: null },
  });
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
  if (result.kind !== 'ready') throw new Error(`unexpected result ${JSON.stringify(result)}`);
  return { format, baselineLabel, units, baselineSeconds, packSeconds, rssBeforeMb: mb(rssBefore), peakRssMb: mb(peakRss) };
}

if (import.meta.main) {
  let failed = false;
  try {
    const result = await benchPacks({ units: Number(process.env.BENCH_UNITS ?? 1_000_000), runs: Number(process.env.BENCH_RUNS ?? 1) });
    for (const r of result.runs) {
      console.log(`\n${result.units.toLocaleString('en')} units, one batch, same run, each pack in a process of its own (NODE_OPTIONS "${executorNodeOptions}"):`);
      console.log(`baseline: COPY ... TO STDOUT (csv) into a file   ${r.baselineSeconds.toFixed(2).padStart(6)} s  ${mb(r.baselineBytes).toFixed(0)} MB` +
        `  ${Math.round(result.units / r.baselineSeconds).toLocaleString('en')} units/s`);
      for (const [name, p] of [['default pack', r.defaultPack], ['tabular pack', r.tabularPack]] as const) {
        const timeOk = p.seconds <= targetSeconds;
        const rssOk = p.peakRssMb <= targetRssMb;
        if (!timeOk || !rssOk) failed = true;
        console.log(`${name}: ${p.label}   ${p.seconds.toFixed(2).padStart(6)} s  ${mb(p.bytes).toFixed(0)} MB  ${Math.round(result.units / p.seconds).toLocaleString('en')} units/s` +
          `  target <= ${targetSeconds} s ${timeOk ? 'ok' : 'MISSED'}`);
        console.log(`  against the baseline: ${(r.baselineSeconds / p.seconds).toFixed(2)}x its speed, for ${(p.bytes / r.baselineBytes).toFixed(2)}x the bytes;` +
          ` RSS ${p.rssBeforeMb.toFixed(0)} MB before, peak ${p.peakRssMb.toFixed(0)} MB  target <= ${targetRssMb} MB ${rssOk ? 'ok' : 'MISSED'}`);
      }
    }
    console.log('\nper format, each pack right after its baseline in the same run:');
    console.log(`${'format'.padEnd(7)}${'units'.padStart(10)}${'pack units/s'.padStart(14)}${'baseline units/s'.padStart(18)}${'pack/baseline'.padStart(15)}${'RSS before -> peak'.padStart(20)}  baseline`);
    for (const f of result.formats) {
      const rssOk = f.peakRssMb <= targetRssMb;
      if (!rssOk) failed = true;
      console.log(`${f.format.padEnd(7)}${f.units.toLocaleString('en').padStart(10)}${Math.round(f.units / f.packSeconds).toLocaleString('en').padStart(14)}` +
        `${Math.round(f.units / f.baselineSeconds).toLocaleString('en').padStart(18)}${`${(f.packSeconds / f.baselineSeconds).toFixed(2)}x time`.padStart(15)}` +
        `${`${f.rssBeforeMb.toFixed(0)} -> ${f.peakRssMb.toFixed(0)} MB`.padStart(16)}${rssOk ? '' : ' MISSED'}  ${f.baselineLabel}`);
    }
    if (process.env.BENCH_JSON) writeFileSync(process.env.BENCH_JSON, JSON.stringify(result));
  } catch (error) {
    failed = true;
    console.error(error);
  }
  process.exitCode = failed ? 1 : 0;
}
