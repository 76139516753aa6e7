// `npm run bench:console`: the web console's size and first load. Builds it, reports the gzip size
// of what the first load fetches (index.html's script, style sheet and preloaded modules) and of
// each chunk loaded on demand (the label encoder), then starts dev mode (`npm start`'s server, a
// fresh temporary DATA_DIR) and opens the printed sign-in link in headless chromium BENCH_RUNS
// times (default 5), each in a fresh profile (nothing cached), timing DOMContentLoaded and the
// moment the Overview shows its first KPI figure (the console interactive, with data the API
// answered). The same-run baseline is the same browser context fetching /console/ (index.html alone).
// Targets (issue 41): at most 250 KB gzip on first load, interactive within 1 s. BENCH_JSON names
// a file for the figures as JSON. Exits 1 when a target is missed.

import { readFileSync, writeFileSync } from 'node:fs';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { gzipSync } from 'node:zlib';
import { chromium } from 'playwright-core';
import { buildConsole } from '../scripts/build-console.ts';
import { startDevMode } from '../test/support/dev-mode.ts';

const runs = Number(process.env['BENCH_RUNS'] ?? 5);
const dist = join(import.meta.dirname, '../services/console/dist');
const sizeTargetKb = 250;
const interactiveTargetMs = 1000;

/** The median of `values`. */
function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

const kb = (bytes: number) => Math.round(bytes / 102.4) / 10;

buildConsole();
const html = readFileSync(join(dist, 'index.html'), 'utf8');
const initial = new Set([...html.matchAll(/(?:src|href)="\/console\/(assets\/[^"]+)"/g)].map((m) => m[1]!));
const files = (await readdir(join(dist, 'assets'))).map((name) => {
  const bytes = readFileSync(join(dist, 'assets', name));
  return { name: `assets/${name}`, bytes: bytes.byteLength, gzip: gzipSync(bytes).byteLength, initial: initial.has(`assets/${name}`) };
});
const htmlGzip = gzipSync(Buffer.from(html)).byteLength;
const firstLoadGzip = htmlGzip + files.filter((f) => f.initial).reduce((a, f) => a + f.gzip, 0);
console.log('console build (gzip, zlib default level):');
console.log(`  index.html                          ${kb(htmlGzip)} KB`);
for (const f of files) console.log(`  ${f.name.padEnd(36)}${kb(f.gzip)} KB gzip (${kb(f.bytes)} KB)${f.initial ? '' : '  on demand'}`);
console.log(`  first load                          ${kb(firstLoadGzip)} KB gzip (target <= ${sizeTargetKb} KB)`);

const dataDir = await mkdtemp(join(tmpdir(), 'bench-console-'));
const dev = await startDevMode(dataDir);
const link = `${dev.baseUrl}/console/#token=${dev.seed.access_token}&brand=${dev.seed.brand_id}`;
const timings: { dcl: number; interactive: number; indexOnly: number }[] = [];
try {
  for (let i = 0; i < runs + 1; i++) {
    const profile = await mkdtemp(join(tmpdir(), 'bench-console-profile-'));
    const browser = await chromium.launchPersistentContext(profile, {
      executablePath: '/usr/bin/chromium',
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking'],
    });
    try {
      // The baseline in a tab of its own (a tab's sessionStorage is its own: the next starts signed out).
      const first = await browser.newPage();
      let at = performance.now();
      await first.request.get(`${dev.baseUrl}/console/`);
      const indexOnly = performance.now() - at;
      await first.close();
      const page = await browser.newPage();
      at = performance.now();
      await page.goto(link, { waitUntil: 'domcontentloaded' });
      const dcl = performance.now() - at;
      await page.locator('[data-kpi="Tokens minted"]').filter({ hasText: /^\d/ }).waitFor({ timeout: 30_000 });
      const interactive = performance.now() - at;
      // The first run warms the server (its first reads of the embedded database); it is not counted.
      if (i > 0) timings.push({ dcl, interactive, indexOnly });
    } finally {
      await browser.close();
      await rm(profile, { recursive: true, force: true });
    }
  }
} finally {
  await dev.stop();
  await rm(dataDir, { recursive: true, force: true });
}
const result = {
  firstLoadGzipKb: kb(firstLoadGzip),
  files,
  runs,
  indexOnlyMs: Math.round(median(timings.map((t) => t.indexOnly))),
  domContentLoadedMs: Math.round(median(timings.map((t) => t.dcl))),
  interactiveMs: Math.round(median(timings.map((t) => t.interactive))),
};
console.log(`first load in chromium, fresh profile, median of ${runs}:`);
console.log(`  /console/ alone (baseline)          ${result.indexOnlyMs} ms`);
console.log(
  `  DOMContentLoaded                    ${result.domContentLoadedMs} ms (${(result.domContentLoadedMs / Math.max(1, result.indexOnlyMs)).toFixed(1)}x the baseline)`,
);
console.log(
  `  interactive (first KPI shown)       ${result.interactiveMs} ms (${(result.interactiveMs / Math.max(1, result.indexOnlyMs)).toFixed(1)}x the baseline; target <= ${interactiveTargetMs} ms)`,
);
if (process.env['BENCH_JSON'] !== undefined) writeFileSync(process.env['BENCH_JSON'], `${JSON.stringify(result, null, 2)}\n`);
const met = kb(firstLoadGzip) <= sizeTargetKb && result.interactiveMs <= interactiveTargetMs;
console.log(met ? 'targets met' : 'a target is missed');
process.exitCode = met ? 0 : 1;
