// Builds the web console (services/console, Vite) into services/console/dist, which the API
// serves at /console/. `npm ci` runs it (the root `prepare` script); `npm start` runs it with
// --if-stale, rebuilding only when a source is newer than the build (or there is none), so an
// edited console shows on the next start without an extra step.
//
//   node scripts/build-console.ts [--if-stale]

import { spawnSync } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const consoleDir = join(root, 'services/console');
const built = join(consoleDir, 'dist/index.html');
/** What the build reads: the console's sources and config, and the contract's generated code. */
const inputs = [
  join(consoleDir, 'src'),
  join(consoleDir, 'index.html'),
  join(consoleDir, 'vite.config.ts'),
  join(consoleDir, 'package.json'),
  join(root, 'packages/contract/src'),
];

/** The newest modification time under `path` (a file or a folder), 0 when it does not exist. */
function newest(path: string): number {
  let stat;
  try {
    stat = statSync(path);
  } catch {
    return 0;
  }
  if (!stat.isDirectory()) return stat.mtimeMs;
  return Math.max(stat.mtimeMs, ...readdirSync(path).map((entry) => newest(join(path, entry))));
}

/** True when there is no build, or a source changed after it was made. */
export function consoleBuildIsStale(): boolean {
  const builtAt = newest(built);
  return builtAt === 0 || inputs.some((input) => newest(input) > builtAt);
}

/** Runs `vite build` in services/console with this Node; throws when it fails. */
export function buildConsole(): void {
  const vite = join(dirname(createRequire(join(consoleDir, 'package.json')).resolve('vite/package.json')), 'bin/vite.js');
  const result = spawnSync(process.execPath, [vite, 'build', '--logLevel', 'warn'], { cwd: consoleDir, stdio: 'inherit' });
  if (result.status !== 0) throw new Error(`the console build failed (vite exited with ${result.status ?? result.signal})`);
}

if (process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  if (!process.argv.includes('--if-stale') || consoleBuildIsStale()) {
    buildConsole();
    process.stdout.write('console built into services/console/dist\n');
  }
}
