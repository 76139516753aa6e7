// `npm run bench:packs`: payload pack generation at scale. Seeds a scratch database with one batch
// of 1,000,000 units (BENCH_UNITS overrides), then per run:
//   - baseline: a bare `COPY (select ... order by seq) TO STDOUT (format csv)` of the same rows
//     into a file (the database's and disk's floor for writing one of the data files),
//   - the default pack (the automatic pack at a job's completion: units.csv, units.jsonl,
//     epcis.json, manifest.json and SHA256SUMS), then a pack of units.csv and units.jsonl only (with
//     manifest.json and SHA256SUMS: the default pack before EPCIS joined it): each claim +
//     generatePayloadPack into a filesystem store in a process of its own (bench/pack-child.ts)
//     started as the image starts the executor (deploy/bin/mint: its node flags and NODE_OPTIONS),
//     so its peak RSS (the kernel's maxrss) is the pack's and not this process's seeding leftovers;
//     then the default pack again into a NATS JetStream Object Store bucket (PACK_STORE=nats, the
//     executor's default store; BENCH_NATS_URL), a bucket of its own per run, deleted after it.
//   - one row per format (csv, jsonl, svg, pdf, zpl, epcis): a pack of only that format generated in
//     a child process started as the image starts the executor (bench/pack-child.ts) that runs
//     nothing else, so its peak RSS is the pack's own, right after its baseline: COPY ... TO of the
//     text the format carries (csv, jsonl, epcis), the GS1 encoder alone in a tight loop (svg, pdf)
//     or the bare zplLabel loop (zpl: the printer encodes its symbols), both in a child too; units/s
//     and peak RSS. svg and pdf packs hold BENCH_LABEL_UNITS units (default and most: their 100,000
//     cap), the others every seeded unit.
// Prints seconds and peak RSS against the targets (<= 15 s, RSS <= 200 MB) and drops the database.
// Exits 1 when a target is missed. BENCH_RUNS repeats baseline and pack on the same data (the pack
// row and files removed in between), BENCH_JSON names a file for the figures as JSON (bench/run.ts
// reads it); `benchPacks` is the same as a function. The per-format rows:
//   BENCH_FORMATS          comma-separated subset (e.g. `epcis,zpl`)
//   BENCH_FORMAT_RUNS      how often each runs (default BENCH_RUNS)
//   BENCH_LABEL_UNITS      units of the svg and pdf packs (default and most: 100,000)
//   BENCH_BASELINE_LABELS  units of the svg and pdf encoder baselines (default 10,000; a rate)
//   BENCH_SYMBOLOGY        qr (default) or datamatrix, of the label packs and their baselines
//   BENCH_NODE_OPTIONS     NODE_OPTIONS of the children (default the executor's; '' for V8's defaults)

import { execFile } from 'node:child_process';
import { createWriteStream, writeFileSync } from 'node:fs';
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { pipeline } from 'node:stream/promises';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { to as copyTo } from 'pg-copy-streams';
import { createPendingPack } from '@mint/db';
import { objectStoreStream } from '@mint/store';
import { completionPackProfile, limitedFormats, maxLabelPackUnits, type PackFormat, type Symbology } from '@mint/domain';
import { query, run, unitsWithUrls } from '../test/support/sql.ts';
import { packFormatRegistry } from '@mint/usecases';
import { packFormats } from '@mint/domain';
import { executorNodeFlags, executorNodeOptions, withExecutorEnv } from './child-server.ts';
import type { ChildMeasure } from './pack-child.ts';
import { dropNatsStreams, natsUrl } from './services.ts';
import { seedUnits } from './unit-seed.ts';

const targetSeconds = 15;
const targetRssMb = 200;
const mb = (bytes: number) => bytes / 1024 / 1024;

/** One pack generated in a process of its own. */
export interface PackFigures {
  /** The files it holds, e.g. `csv + jsonl + epcis + manifest + SHA256SUMS`. */
  readonly label: string;
  readonly seconds: number;
  /** CPU time of its process while it generated the pack (user + system), seconds. */
  readonly cpuSeconds: number;
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
  /** The default pack into a NATS JetStream Object Store bucket (the executor's default store). */
  readonly natsPack: PackFigures;
  /** units.csv and units.jsonl only (with manifest and SHA256SUMS): the default pack's figure before EPCIS joined it. */
  readonly tabularPack: PackFigures;
}

/** One format's pack against its same-run baseline. */
export interface FormatRun {
  readonly format: PackFormat;
  /** What the baseline does: `COPY ... TO` of the text the format carries, the encoder alone in a tight loop, or the bare zplLabel loop. */
  readonly baselineLabel: string;
  /** Units the pack handled (svg and pdf: BENCH_LABEL_UNITS, at most their 100,000-unit cap). */
  readonly units: number;
  /** Units the baseline handled (fewer for the svg and pdf encoder: a rate). */
  readonly baselineUnits: number;
  readonly baselineSeconds: number;
  readonly packSeconds: number;
  /** RSS of the pack's child process once it had loaded the executor's modules and opened the database. */
  readonly rssBeforeMb: number;
  /** Peak RSS of the pack's child process (getrusage maxrss). */
  readonly peakRssMb: number;
  /** Most V8 heap in use the child saw during the pack. */
  readonly peakHeapUsedMb: number;
  /** Peak RSS of the baseline's child process (svg, pdf, zpl), else null. */
  readonly baselinePeakRssMb: number | null;
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
 * file and the packs into a filesystem store, each in a child process (peak RSS its own). Drops the database and the
 * files whatever happens.
 */
export async function benchPacks(
  options: { readonly units: number; readonly runs: number; readonly formatRuns?: number } & Partial<LabelOptions>,
  progress: (line: string) => void = console.log,
): Promise<PacksBenchResult> {
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
        client.query(
          copyTo(`copy (select serial, resolver_url, serial, '', status from ${unitsWithUrls}
          where brand_id = '${seeded.brandId}' and mint_batch_id = '${seeded.batchId}' order by seq) to stdout (format csv)`),
        ),
        createWriteStream(join(dir, 'baseline.csv')),
      );
      const baselineSeconds = (performance.now() - started) / 1000;
      await client.end();
      const baselineBytes = (await stat(join(dir, 'baseline.csv'))).size;

      const defaultPack = await packInProcess(seeded, dir, units, completionPackProfile.formats);
      const natsPack = {
        ...(await packInProcess(seeded, dir, units, completionPackProfile.formats, `bench_packs_${process.pid}_${attempt}`)),
        bytes: defaultPack.bytes,
      };
      const tabularPack = await packInProcess(seeded, dir, units, ['csv', 'jsonl']);
      runs.push({ baselineSeconds, baselineBytes, defaultPack, natsPack, tabularPack });
      if (options.runs > 1) {
        progress(
          `run ${attempt + 1}/${options.runs}: baseline ${baselineSeconds.toFixed(2)} s, ` +
            [defaultPack, natsPack, tabularPack].map((p) => `${p.label} ${p.seconds.toFixed(2)} s (peak RSS ${p.peakRssMb.toFixed(0)} MB)`).join(', '),
        );
      }
    }
    const formats: FormatRun[] = [];
    const formatFilter = process.env['BENCH_FORMATS']?.split(',') ?? null;
    for (let attempt = 0; attempt < (options.formatRuns ?? options.runs); attempt++) {
      for (const format of packFormats.filter((f) => formatFilter === null || formatFilter.includes(f))) {
        const row = await benchFormat(seeded, units, dir, format, {
          labelUnits: options.labelUnits ?? maxLabelPackUnits,
          baselineLabels: options.baselineLabels ?? 10_000,
          symbology: options.symbology ?? 'qr',
        });
        formats.push(row);
        progress(
          `${format}: pack of ${row.units.toLocaleString('en')} in ${row.packSeconds.toFixed(2)} s, baseline ${row.baselineSeconds.toFixed(2)} s for ${row.baselineUnits.toLocaleString('en')} (${row.baselineLabel}), ` +
            `RSS ${row.rssBeforeMb.toFixed(0)} -> peak ${row.peakRssMb.toFixed(0)} MB, heap in use at most ${row.peakHeapUsedMb.toFixed(0)} MB` +
            `${row.baselinePeakRssMb === null ? '' : ` (baseline child peak ${row.baselinePeakRssMb.toFixed(0)} MB)`}`,
        );
      }
    }
    return { units, runs, formats, targetSeconds, targetRssMb };
  } finally {
    await seeded.drop();
    await rm(dir, { recursive: true, force: true });
  }
}

/** The label rows' settings. */
export interface LabelOptions {
  /** Units of the svg and pdf packs (at most their 100,000-unit cap). */
  readonly labelUnits: number;
  /** Units of the svg and pdf encoder baselines (a rate, so fewer suffice). */
  readonly baselineLabels: number;
  /** Symbology of the label packs and their baselines. */
  readonly symbology: Symbology;
}

/**
 * A fresh pending completion pack of `formats` (earlier packs deleted, empty store), generated by
 * bench/pack-child.ts in a child process started as the image starts the executor (its node flags
 * and NODE_OPTIONS), so its peak RSS is the pack's own: into a filesystem store, or into the NATS
 * Object Store bucket `natsBucket` (deleted after; its figures then count no bytes).
 */
async function packInProcess(
  seeded: Awaited<ReturnType<typeof seedUnits>>,
  dir: string,
  units: number,
  formats: readonly PackFormat[],
  natsBucket?: string,
): Promise<PackFigures> {
  await run(seeded.db.em.fork(), 'delete from payload_packs where brand_id = ? and mint_batch_id = ?', [seeded.brandId, seeded.batchId]);
  await rm(join(dir, 'store'), { recursive: true, force: true });
  await createPendingPack(seeded.db.em.fork(), seeded.brandId, seeded.batchId, new Date(), {
    purpose: 'completion',
    profile: { formats: [...formats], seqFrom: null, seqTo: null, symbology: 'qr', layout: null },
  });
  let result: ChildMeasure;
  try {
    result = await packChild(['pack', seeded.url, natsBucket === undefined ? join(dir, 'store') : `nats:${natsBucket}`]);
  } finally {
    if (natsBucket !== undefined) await dropNatsStreams(natsUrl, [objectStoreStream(natsBucket)]);
  }
  if (result.units !== units || result.storagePath === undefined) throw new Error(`unexpected pack ${JSON.stringify(result)}`);
  let bytes = 0;
  if (natsBucket === undefined) {
    const folder = join(dir, 'store', result.storagePath);
    for (const f of formats) bytes += (await stat(join(folder, packFormatRegistry[f].file('completion')))).size;
  }
  return {
    label: `${formats.join(' + ')} + manifest + SHA256SUMS${natsBucket === undefined ? '' : ', into a NATS Object Store bucket'}`,
    seconds: result.seconds,
    cpuSeconds: result.cpuSeconds,
    bytes,
    rssBeforeMb: result.rssBeforeMb,
    peakRssMb: result.peakRssMb,
  };
}

/** What each text format's baseline copies: the rendered text of its rows straight from the database. */
const copyBaselines: Partial<Record<PackFormat, string>> = {
  csv: `serial || ',' || resolver_url || ',' || serial || ',,' || status`,
  jsonl: `json_build_object('serial', serial, 'digital_link', resolver_url, 'token', serial, 'lot', null, 'status', status)::text`,
  epcis: 'to_json(resolver_url)::text',
};

/** NODE_OPTIONS of the per-format children: the executor's, unless BENCH_NODE_OPTIONS says otherwise ('' for V8's defaults). */
const childNodeOptions = process.env['BENCH_NODE_OPTIONS'] ?? executorNodeOptions;

/** Runs one bench/pack-child.ts task with the executor's node flags and `childNodeOptions`; its figures. */
function packChild(args: readonly string[]): Promise<ChildMeasure> {
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      [...executorNodeFlags, fileURLToPath(new URL('./pack-child.ts', import.meta.url)), ...args],
      { env: withExecutorEnv({ ...process.env, NATS_URL: natsUrl, NODE_OPTIONS: childNodeOptions }), maxBuffer: 1 << 20 },
      (error, stdout, stderr) => {
        if (error) reject(new Error(`pack child ${args[0]} failed: ${stderr || error.message}`));
        else resolve(JSON.parse(stdout.trim().split('\n').at(-1)!) as ChildMeasure);
      },
    );
  });
}

/**
 * One format: its baseline, then a pack of only that format (range capped at `labelUnits` for svg
 * and pdf) generated by a child process with the executor's NODE_OPTIONS that runs nothing else, so
 * the peak RSS is the pack's own. Baselines: COPY ... TO of the text the format carries into a file
 * (csv, jsonl, epcis), the GS1 encoder alone over `baselineLabels` units (svg, pdf: a rate, so fewer
 * suffice) or the bare zplLabel loop over the pack's units (zpl), the last two in a child too.
 */
async function benchFormat(
  seeded: Awaited<ReturnType<typeof seedUnits>>,
  seededUnits: number,
  dir: string,
  format: PackFormat,
  labels: LabelOptions,
): Promise<FormatRun> {
  const { labelUnits, baselineLabels, symbology } = labels;
  const units = limitedFormats.includes(format) ? Math.min(maxLabelPackUnits, labelUnits, seededUnits) : seededUnits;
  const copied = copyBaselines[format];
  let baselineLabel: string;
  let baselineUnits = units;
  let baselineSeconds: number;
  let baselinePeakRssMb: number | null = null;
  if (copied !== undefined) {
    baselineLabel = `COPY (select ${format} text) TO STDOUT into a file`;
    const client = new pg.Client({ connectionString: seeded.url });
    await client.connect();
    const started = performance.now();
    await pipeline(
      client.query(
        copyTo(
          `copy (select ${copied} from ${unitsWithUrls} where brand_id = '${seeded.brandId}' and mint_batch_id = '${seeded.batchId}' and seq <= ${units} order by seq) to stdout`,
        ),
      ),
      createWriteStream(join(dir, `baseline.${format}`)),
    );
    baselineSeconds = (performance.now() - started) / 1000;
    await client.end();
  } else {
    const [first] = await query<{ resolver_url: string; serial: string }>(
      seeded.db.em.fork(),
      `select resolver_url, serial from ${unitsWithUrls} where brand_id = ? and mint_batch_id = ? and seq = 1`,
      [seeded.brandId, seeded.batchId],
    );
    const resolverBase = first!.resolver_url.slice(0, -`/01/${seeded.gtin}/21/${first!.serial}`.length);
    if (format === 'zpl') {
      baselineLabel = `the bare zplLabel loop (${symbology}, 203 dpi) over the same units, in a child process`;
    } else {
      baselineUnits = Math.min(units, baselineLabels);
      baselineLabel = `the GS1 encoder alone (bwip-js ${symbology === 'qr' ? 'gs1dlqrcode' : 'gs1datamatrix'}) over ${baselineUnits.toLocaleString('en')} units, in a child process`;
    }
    const encoded = await packChild(['encode', format, symbology, String(baselineUnits), resolverBase, seeded.gtin]);
    baselineSeconds = encoded.seconds;
    baselinePeakRssMb = encoded.peakRssMb;
  }

  await run(seeded.db.em.fork(), 'delete from payload_packs where brand_id = ? and mint_batch_id = ?', [seeded.brandId, seeded.batchId]);
  await rm(join(dir, 'store'), { recursive: true, force: true });
  await createPendingPack(seeded.db.em.fork(), seeded.brandId, seeded.batchId, new Date(), {
    purpose: 'request',
    profile: { formats: [format], seqFrom: null, seqTo: units < seededUnits ? units : null, symbology, layout: null },
  });
  const pack = await packChild(['pack', seeded.url, join(dir, 'store')]);
  if (pack.units !== units) throw new Error(`the ${format} pack holds ${pack.units} units, expected ${units}`);
  return {
    format,
    baselineLabel,
    units,
    baselineUnits,
    baselineSeconds,
    packSeconds: pack.seconds,
    rssBeforeMb: pack.rssBeforeMb,
    peakRssMb: pack.peakRssMb,
    peakHeapUsedMb: pack.peakHeapUsedMb,
    baselinePeakRssMb,
  };
}

if (import.meta.main) {
  let failed = false;
  try {
    const result = await benchPacks({
      units: Number(process.env.BENCH_UNITS ?? 1_000_000),
      runs: Number(process.env.BENCH_RUNS ?? 1),
      formatRuns: Number(process.env.BENCH_FORMAT_RUNS ?? process.env.BENCH_RUNS ?? 1),
      labelUnits: Number(process.env.BENCH_LABEL_UNITS ?? maxLabelPackUnits),
      baselineLabels: Number(process.env.BENCH_BASELINE_LABELS ?? 10_000),
      symbology: (process.env.BENCH_SYMBOLOGY ?? 'qr') as Symbology,
    });
    for (const r of result.runs) {
      console.log(
        `\n${result.units.toLocaleString('en')} units, one batch, same run, each pack in a process of its own (NODE_OPTIONS "${executorNodeOptions}"):`,
      );
      console.log(
        `baseline: COPY ... TO STDOUT (csv) into a file   ${r.baselineSeconds.toFixed(2).padStart(6)} s  ${mb(r.baselineBytes).toFixed(0)} MB` +
          `  ${Math.round(result.units / r.baselineSeconds).toLocaleString('en')} units/s`,
      );
      for (const [name, p] of [
        ['default pack', r.defaultPack],
        ['default pack into NATS', r.natsPack],
        ['tabular pack', r.tabularPack],
      ] as const) {
        const timeOk = p.seconds <= targetSeconds;
        const rssOk = p.peakRssMb <= targetRssMb;
        if (!timeOk || !rssOk) failed = true;
        console.log(
          `${name}: ${p.label}   ${p.seconds.toFixed(2).padStart(6)} s (process CPU ${p.cpuSeconds.toFixed(2)} s)  ${mb(p.bytes).toFixed(0)} MB  ${Math.round(result.units / p.seconds).toLocaleString('en')} units/s` +
            `  target <= ${targetSeconds} s ${timeOk ? 'ok' : 'MISSED'}`,
        );
        console.log(
          `  against the baseline: ${(r.baselineSeconds / p.seconds).toFixed(2)}x its speed, for ${(p.bytes / r.baselineBytes).toFixed(2)}x the bytes;` +
            ` RSS ${p.rssBeforeMb.toFixed(0)} MB before, peak ${p.peakRssMb.toFixed(0)} MB  target <= ${targetRssMb} MB ${rssOk ? 'ok' : 'MISSED'}`,
        );
      }
    }
    console.log(
      `\nper format, each pack in a child process with "${[...executorNodeFlags, `NODE_OPTIONS=${childNodeOptions}`].join(' ')}" right after its baseline:`,
    );
    console.log(
      `${'format'.padEnd(7)}${'units'.padStart(10)}${'pack units/s'.padStart(14)}${'baseline units/s'.padStart(18)}${'pack/baseline'.padStart(15)}${'RSS before -> peak'.padStart(20)}  baseline`,
    );
    for (const f of result.formats) {
      const rssOk = f.peakRssMb <= targetRssMb;
      if (!rssOk) failed = true;
      const packRate = f.units / f.packSeconds;
      const baselineRate = f.baselineUnits / f.baselineSeconds;
      console.log(
        `${f.format.padEnd(7)}${f.units.toLocaleString('en').padStart(10)}${Math.round(packRate).toLocaleString('en').padStart(14)}` +
          `${Math.round(baselineRate).toLocaleString('en').padStart(18)}${`${(baselineRate / packRate).toFixed(2)}x time`.padStart(15)}` +
          `${`${f.rssBeforeMb.toFixed(0)} -> ${f.peakRssMb.toFixed(0)} MB`.padStart(16)}${rssOk ? '' : ' MISSED'}  ${f.baselineLabel}`,
      );
    }
    if (process.env.BENCH_JSON) writeFileSync(process.env.BENCH_JSON, JSON.stringify(result));
  } catch (error) {
    failed = true;
    console.error(error);
  }
  process.exitCode = failed ? 1 : 0;
}
