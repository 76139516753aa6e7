// `npm test [-- <vitest args>]`: runs `vitest run` with the default reporter (unless a
// --reporter is given) plus the summary reporter, then prints as its very last line
// "N passed, N failed" (", N skipped" when any were). Exits non-zero when a test failed,
// a file or hook failed outside a test, an error went unhandled, vitest itself failed,
// or no test ran at all.

import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { summaryFileVariable, type TestSummary } from '../test/support/summary-reporter.ts';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const vitestBin = join(dirname(createRequire(import.meta.url).resolve('vitest/package.json')), 'vitest.mjs');
const reporter = join(root, 'test/support/summary-reporter.ts');

const userArgs = process.argv.slice(2);
const hasReporter = userArgs.some((arg) => arg === '--reporter' || arg.startsWith('--reporter='));
const args = [vitestBin, 'run', ...(hasReporter ? [] : ['--reporter=default']), `--reporter=${reporter}`, ...userArgs];

const workDir = mkdtempSync(join(tmpdir(), 'mint-test-'));
const summaryFile = join(workDir, 'summary.json');

const exit = await new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((done, fail) => {
  const child = spawn(process.execPath, args, {
    cwd: root,
    stdio: 'inherit',
    env: { ...process.env, [summaryFileVariable]: summaryFile },
  });
  // Ctrl-C reaches vitest through the process group; let it shut down and report.
  const ignore = () => {};
  process.on('SIGINT', ignore);
  process.on('SIGTERM', () => child.kill('SIGTERM'));
  child.once('error', fail);
  child.once('exit', (code, signal) => {
    process.off('SIGINT', ignore);
    done({ code, signal });
  });
});

let summary: TestSummary | undefined;
try {
  summary = JSON.parse(readFileSync(summaryFile, 'utf8')) as TestSummary;
} catch {
  summary = undefined;
} finally {
  rmSync(workDir, { recursive: true, force: true });
}

const passed = summary?.passed ?? 0;
const skipped = summary?.skipped ?? 0;
let failed = summary?.failed ?? 0;
const notes: string[] = [...(summary?.problems ?? [])];

if (summary === undefined) {
  failed += 1;
  notes.push(`vitest ended (${exit.signal ?? `exit code ${exit.code}`}) without reporting a summary`);
} else if (summary.files === 0 && summary.queued > 0) {
  failed += 1;
  notes.push(`vitest failed before running any of ${summary.queued} test files (global setup? see the error above)`);
} else if (passed + failed === 0) {
  notes.push(summary.queued === 0 ? 'no test files matched' : 'no tests ran');
} else if (exit.code !== 0 && failed === 0) {
  // vitest failed for a reason the counts do not show (interrupted, timeout closing, ...).
  failed += 1;
  notes.push(`vitest failed (${exit.signal ?? `exit code ${exit.code}`}, run ${summary.reason}) although no test failed`);
}

for (const note of notes) console.log(`FAIL ${note}`);
console.log(`${passed} passed, ${failed} failed${skipped > 0 ? `, ${skipped} skipped` : ''}`);
process.exitCode = failed > 0 || passed + failed === 0 || exit.code !== 0 ? 1 : 0;
