// `npm run bench:labels`: label rendering at scale, each measurement in its own child process so
// its peak RSS (the kernel's maxrss) is its own. Per format, alternating in one run:
//   - baseline: the GS1 encoder alone (bwip-js `gs1dlqrcode` / `gs1datamatrix` module matrices) in a
//     tight loop over BENCH_BASELINE_LABELS units, the floor any renderer that encodes pays,
//   - the format: BENCH_LABELS units (default 100,000) streamed from an async generator into a
//     file in a temporary folder: one SVG document per unit appended to a file, one PDF of A4 3 x 8
//     sheets (pdfSheets), one ZPL label per unit at 203 dpi, each write waiting for drain.
// Prints labels/s, the ratio to the baseline measured just before it, and peak RSS against the
// 200 MB target; exits 1 when a format's peak RSS misses it. Environment:
//   BENCH_LABELS           labels per format run (default 100000)
//   BENCH_BASELINE_LABELS  labels per baseline run (default 10000; a rate, so fewer suffice)
//   BENCH_SYMBOLOGY        qr (default) or datamatrix
//   BENCH_FORMATS          comma-separated subset of svg,pdf,zpl
//   BENCH_RUNS             baseline + format pairs per format (default 1)
//   BENCH_NODE_FLAGS       node flags of every child (default: the executor's, deploy/bin/mint's
//                          executor_node_flags and executor_node_options; with V8's defaults the
//                          young generation grows to ~130 MB of garbage before collecting and Maglev
//                          keeps 20-40 MB after compiling the encoder; heap in use stays ~30 MB)

import { execFile } from 'node:child_process';
import { once } from 'node:events';
import { createWriteStream } from 'node:fs';
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Writable } from 'node:stream';
import bwipjs from 'bwip-js';
import { gtinCheckDigit } from '@mint/domain';
import { defaultSheetLayout, elementString, pdfSheets, svgLabel, zplLabel, type LabelUnit, type Symbology } from '@mint/labels';
import { executorNodeFlags, executorNodeOptions, withExecutorEnv } from './child-server.ts';

const targetRssMb = 200;
type Format = 'svg' | 'pdf' | 'zpl';
type Task = Format | 'baseline';

/** What one child measured. */
interface Measured {
  readonly task: Task;
  readonly labels: number;
  readonly seconds: number;
  readonly bytes: number;
  readonly peakRssMb: number;
  /** RSS after each tenth of the labels, in MB: flat when memory does not grow with the count. */
  readonly rssTrailMb: readonly number[];
  /** V8 heap in use after each tenth of the labels, in MB (live objects plus garbage not yet collected). */
  readonly heapTrailMb: readonly number[];
}

/** RSS samples taken as units are pulled, after each tenth of `count`. */
const rssTrail: number[] = [];
const heapTrail: number[] = [];

/** Units like a minted serial batch: one GTIN, 20-character serials, Digital Links under a brand's resolver. */
async function* units(count: number): AsyncGenerator<LabelUnit> {
  const first13 = '0950600013435';
  const gtin = first13 + gtinCheckDigit(first13);
  const alphabet = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';
  for (let i = 0; i < count; i++) {
    if (i > 0 && i % Math.max(1, Math.floor(count / 10)) === 0) {
      const memory = process.memoryUsage();
      rssTrail.push(Math.round(memory.rss / 1024 / 1024));
      heapTrail.push(Math.round(memory.heapUsed / 1024 / 1024));
    }
    let serial = '';
    for (let n = i * 2654435761 + 12345, k = 0; k < 20; k++, n = Math.floor(n / 32) + k * 7919) serial += alphabet[n % 32];
    yield { digitalLink: `https://mint.example.com/r/acme/01/${gtin}/21/${serial}`, gtin, serial };
  }
}

async function write(out: Writable, text: string): Promise<void> {
  if (!out.write(text)) await once(out, 'drain');
}

/** Runs one task in this process and prints its figures as JSON. */
async function child(task: Task, symbology: Symbology, count: number, file: string): Promise<void> {
  const started = performance.now();
  let bytes = 0;
  if (task === 'baseline') {
    const { raw: encodeMatrix } = bwipjs;
    for await (const unit of units(count)) {
      if (symbology === 'qr') encodeMatrix('gs1dlqrcode', unit.digitalLink);
      else encodeMatrix('gs1datamatrix', `(01)${unit.gtin}(21)${unit.serial}`);
    }
  } else {
    const out = createWriteStream(file);
    if (task === 'pdf') await pdfSheets(defaultSheetLayout, symbology, units(count), out);
    else for await (const unit of units(count)) await write(out, task === 'svg' ? svgLabel(unit, symbology) : zplLabel(unit, symbology, 203));
    out.end();
    await once(out, 'finish');
    bytes = (await stat(file)).size;
  }
  const measured: Measured = {
    task,
    labels: count,
    seconds: (performance.now() - started) / 1000,
    bytes,
    peakRssMb: process.resourceUsage().maxRSS / 1024,
    rssTrailMb: rssTrail,
    heapTrailMb: heapTrail,
  };
  process.stdout.write(JSON.stringify(measured));
}

const nodeFlags =
  process.env.BENCH_NODE_FLAGS === undefined
    ? [...executorNodeFlags, ...executorNodeOptions.split(' ').filter((flag) => flag !== '')]
    : process.env.BENCH_NODE_FLAGS.split(' ').filter((flag) => flag !== '');

function runChild(task: Task, symbology: Symbology, count: number, file: string): Promise<Measured> {
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      [...nodeFlags, fileURLToPath(import.meta.url), '--child', task, symbology, String(count), file],
      { env: withExecutorEnv(process.env), maxBuffer: 1 << 20 },
      (error, stdout, stderr) => {
        if (error) reject(new Error(`${task} failed: ${stderr || error.message}`));
        else resolve(JSON.parse(stdout) as Measured);
      },
    );
  });
}

async function main(): Promise<void> {
  const env = process.env;
  const labels = Number(env.BENCH_LABELS ?? 100_000);
  const baselineLabels = Number(env.BENCH_BASELINE_LABELS ?? 10_000);
  const symbology = (env.BENCH_SYMBOLOGY ?? 'qr') as Symbology;
  const formats = (env.BENCH_FORMATS ?? 'svg,pdf,zpl').split(',') as Format[];
  const runs = Number(env.BENCH_RUNS ?? 1);
  const dir = await mkdtemp(join(tmpdir(), 'bench-labels-'));
  const rate = (m: Measured) => m.labels / m.seconds;
  let missed = false;
  console.log(
    `${labels.toLocaleString('en')} ${symbology} labels per format, baseline ${baselineLabels.toLocaleString('en')} (encoder alone); node flags ${JSON.stringify(nodeFlags.join(' '))}; element string e.g. ${JSON.stringify(elementString((await units(1).next()).value as LabelUnit))}`,
  );
  try {
    for (let run = 1; run <= runs; run++) {
      for (const format of formats) {
        const baseline = await runChild('baseline', symbology, baselineLabels, join(dir, 'none'));
        const measured = await runChild(format, symbology, labels, join(dir, `labels.${format}`));
        await rm(join(dir, `labels.${format}`), { force: true });
        const ok = measured.peakRssMb <= targetRssMb;
        missed ||= !ok;
        console.log(
          `run ${run} ${format.padEnd(3)}: ${rate(measured).toFixed(0).padStart(6)} labels/s (${measured.seconds.toFixed(1)} s, ${(measured.bytes / 1024 / 1024).toFixed(1)} MB), ` +
            `${(rate(measured) / rate(baseline)).toFixed(2)}x the encoder's ${rate(baseline).toFixed(0)} labels/s; ` +
            `peak RSS ${measured.peakRssMb.toFixed(0)} MB (encoder alone ${baseline.peakRssMb.toFixed(0)} MB, target <= ${targetRssMb} MB) ${ok ? 'ok' : 'MISSED'}; ` +
            `RSS by tenths ${measured.rssTrailMb.join(' ')} MB, heap used ${measured.heapTrailMb.join(' ')} MB`,
        );
      }
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
  if (missed) process.exitCode = 1;
}

if (process.argv[2] === '--child') {
  const [, , , task, symbology, count, file] = process.argv;
  await child(task as Task, symbology as Symbology, Number(count), file!);
} else {
  await main();
}
