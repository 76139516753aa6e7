// Checks that committed generated code is what `buf generate` produces now.

import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { expect } from 'vitest';

/** The repository's buf binary. */
export const buf = join(import.meta.dirname, '..', '..', 'node_modules', '.bin', 'buf');

/** Every file below `dir` by its relative path, with its text. */
function files(dir: string): Map<string, string> {
  const out = new Map<string, string>();
  const walk = (d: string) => {
    for (const entry of readdirSync(d)) {
      const path = join(d, entry);
      if (statSync(path).isDirectory()) walk(path);
      else out.set(relative(dir, path), readFileSync(path, 'utf8'));
    }
  };
  walk(dir);
  return out;
}

/**
 * Runs `buf generate` of the module in `moduleDir` into a scratch folder and expects its `genDir`
 * (relative to the module) to hold exactly those files, byte for byte; `regenerate` names the
 * command that fixes a stale file.
 */
export function expectGeneratedInSync(moduleDir: string, genDir: string, regenerate: string): void {
  const scratch = mkdtempSync(join(tmpdir(), 'buf-generate-'));
  try {
    execFileSync(buf, ['generate', '--output', scratch], { cwd: moduleDir, stdio: 'pipe' });
    const fresh = files(join(scratch, genDir));
    const committed = files(join(moduleDir, genDir));
    expect([...committed.keys()].sort()).toEqual([...fresh.keys()].sort());
    for (const [path, text] of fresh) expect(committed.get(path), `${path} is stale: run ${regenerate}`).toBe(text);
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}
