// `npm run bench:import`: a 100,000-row product CSV end to end, in process. Creates a scratch
// database (bench/scratch-database.ts), then times:
//   - the upload: startProductImport streaming the file through csv-parse (header, syntax and
//     row count checks) and storing it with its outbox row, i.e. what POST /v1/imports/products does,
//   - the processing: runProductImport (the executor's import worker) validating every row and
//     upserting by SKU in multi-row statements of 1,000 (fresh products),
//   - the same file again (every row an update of an existing SKU).
// Each file has 1% bad rows (kept as per-row errors). Prints rows/s per phase, and the process's
// peak resident memory during the processing above what it held before it (sampled every 20 ms),
// and drops the database at the end. BENCH_ROWS overrides the row count.
//
// BENCH_KIND=links runs a link CSV instead (a GTIN-level link per row, each row a new GTIN, every
// 100th row refused as a repeat of the row before): the same two passes through the same import
// worker, with the same peak RSS figure. `BENCH_ROWS=10000` and `BENCH_ROWS=1000000` of each kind
// show the worker's memory flat in the file's size (bench/REPORT.md, Imports).

import { performance } from 'node:perf_hooks';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { openDatabase } from '@mint/db';
import { gtinCheckDigit } from '@mint/domain';
import { createUseCaseContext, createUser, createWorkspace, getProductImport, runProductImport, startLinkImport, startProductImport } from '@mint/usecases';
import { createScratchDatabase } from './scratch-database.ts';

const rows = Number(process.env.BENCH_ROWS ?? 100_000);
const kind = process.env.BENCH_KIND === 'links' ? 'links' : 'products';
/** BENCH_PASSES=1 runs the insert pass alone. */
const passes = process.env.BENCH_PASSES === '1' ? 1 : 2;

// A full collection before the base is read, so the garbage of building the file in memory is not
// counted in the base (it would hide the worker's growth as the collector frees it).
setFlagsFromString('--expose-gc');
const collect = runInNewContext('gc') as () => void;

/**
 * Short rows (no GTIN, no URL; every 100th with an unknown status) fit a million rows under the
 * 32 MiB upload limit: used past 300,000 rows, or with BENCH_SHORT=1 to compare sizes alike.
 */
const short = rows > 300_000 || process.env.BENCH_SHORT === '1';

/** A CSV of `count` products, every 100th row invalid (bad GTIN check digit). */
function csvFile(count: number, nameSuffix: string): Buffer {
  const lines = ['sku,name,gtin,commercial_status,mint_readiness_status,passport_url'];
  if (short) {
    for (let i = 0; i < count; i++) lines.push(`B${i},${nameSuffix[0]}${i},,${i % 100 === 99 ? 'GONE' : 'ACTIVE'},READY,`);
    return Buffer.from(`${lines.join('\n')}\n`);
  }
  for (let i = 0; i < count; i++) {
    const body = `0${String(4_000_000_000 + i).padStart(12, '0')}`.slice(-13);
    const gtin = body + String(i % 100 === 99 ? (gtinCheckDigit(body) + 1) % 10 : gtinCheckDigit(body));
    lines.push(`BENCH-${i},"Product ${i}, ${nameSuffix}",${gtin},ACTIVE,${i % 3 ? 'READY' : 'NOT_READY'},https://example.com/p/${i}`);
  }
  return Buffer.from(`${lines.join('\n')}\n`);
}

/**
 * A link CSV of `count` rows, one GTIN-level link each on GTIN-8s in turn (32 bytes a row, so a
 * million rows fit the 32 MiB limit); every 100th row repeats the row before's link (refused).
 */
function linkFile(count: number, nameSuffix: string): Buffer {
  const lines = ['gtin,link_type,href,title'];
  for (let i = 0; i < count; i++) {
    const n = i % 100 === 99 ? i - 1 : i;
    const body = String(1_000_000 + n).padStart(7, '0');
    lines.push(`${body}${gtinCheckDigit(body.padStart(13, '0'))},gs1:pip,https://a.io,${nameSuffix[0]}`);
  }
  return Buffer.from(`${lines.join('\n')}\n`);
}

/** Streams a buffer in 64 KiB chunks, as a request body arrives. */
async function* chunks(file: Buffer): AsyncGenerator<Uint8Array> {
  for (let at = 0; at < file.length; at += 65_536) yield file.subarray(at, at + 65_536);
}

const mib = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(0)} MiB`;
const fmt = (ms: number) => `${(ms / 1000).toFixed(2)} s`;
const rate = (ms: number) => `${Math.round(rows / (ms / 1000)).toLocaleString('en-US')} rows/s`;

const scratch = await createScratchDatabase('bench_import');
try {
  const db = await openDatabase({ url: scratch.url }, { poolSize: 4, applicationName: 'bench-import' });
  try {
    const ctx = createUseCaseContext({ db, publicBaseUrl: 'http://127.0.0.1:8080' });
    const brand = await createWorkspace(ctx, { name: 'Bench Brand' });
    const user = await createUser(ctx, { email: 'bench@bench.example', name: 'Bench' });
    console.log(
      kind === 'links'
        ? `bench:import: ${rows.toLocaleString('en-US')} link rows per file (one GTIN-level link each), 1% repeated, transactions of 500`
        : `bench:import: ${rows.toLocaleString('en-US')} ${short ? 'short rows (no GTIN, no URL)' : 'rows'} per file, 1% invalid, batches of 1,000`,
    );
    for (const [label, suffix] of (
      [
        ['insert', 'first'],
        ['update', 'second'],
      ] as const
    ).slice(0, passes)) {
      const file = kind === 'links' ? linkFile(rows, suffix) : csvFile(rows, suffix);
      let t0 = performance.now();
      const started =
        kind === 'links' ? await startLinkImport(ctx, { id: user.id }, brand.id, file) : await startProductImport(ctx, { id: user.id }, brand.id, chunks(file));
      const uploadMs = performance.now() - t0;
      collect();
      collect();
      const rssBefore = process.memoryUsage.rss();
      let rssPeak = rssBefore;
      const sampler = setInterval(() => {
        rssPeak = Math.max(rssPeak, process.memoryUsage.rss());
      }, 20);
      // A long run says where it is every 30 s, with the RSS then: flat memory shows as the rows go by.
      const progress = setInterval(() => {
        getProductImport(ctx, brand.id, started.id).then(
          (v) => {
            console.log(
              `  ${label}: ${(v.importedRows + v.failedRows).toLocaleString('en-US')} rows done, RSS ${mib(process.memoryUsage.rss())} (peak +${mib(rssPeak - rssBefore)})`,
            );
          },
          () => undefined,
        );
      }, 30_000);
      t0 = performance.now();
      const outcome = await runProductImport(ctx, brand.id, started.id);
      const processMs = performance.now() - t0;
      clearInterval(sampler);
      clearInterval(progress);
      rssPeak = Math.max(rssPeak, process.memoryUsage.rss());
      collect();
      const rssAfter = process.memoryUsage.rss();
      const view = await getProductImport(ctx, brand.id, started.id);
      if (outcome.kind !== 'finished' || view.status !== 'COMPLETED' || view.importedRows + view.failedRows !== rows) {
        throw new Error(`unexpected outcome ${JSON.stringify({ outcome, view: { ...view, errors: view.errors.length } })}`);
      }
      console.log(
        `${label}: file ${(file.length / 1024 / 1024).toFixed(1)} MiB; upload (parse + store) ${fmt(uploadMs)} (${rate(uploadMs)}); ` +
          `processing ${fmt(processMs)} (${rate(processMs)}), peak RSS +${mib(rssPeak - rssBefore)} over ${mib(rssBefore)} (+${mib(rssAfter - rssBefore)} after a collection); imported ${view.importedRows}, failed ${view.failedRows}; total ${fmt(uploadMs + processMs)}`,
      );
    }
  } finally {
    await db.close(true);
  }
} finally {
  await scratch.drop();
}
