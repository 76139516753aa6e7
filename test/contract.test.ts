// The Protobuf contract: lint-clean, and the committed generated code is what `npm run generate` produces.

import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

const root = join(import.meta.dirname, '..');
const buf = join(root, 'node_modules', '.bin', 'buf');
const scratch = mkdtempSync(join(tmpdir(), 'contract-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

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

describe('the mint.v1 contract', () => {
  it('passes buf lint (STANDARD)', () => {
    expect(() => execFileSync(buf, ['lint'], { cwd: root, stdio: 'pipe' })).not.toThrow();
  });

  it('has generated code in sync with proto/', () => {
    execFileSync(buf, ['generate', '--output', scratch], { cwd: root, stdio: 'pipe' });
    const fresh = files(join(scratch, 'packages/contract/src/gen'));
    const committed = files(join(root, 'packages/contract/src/gen'));
    expect([...committed.keys()].sort()).toEqual([...fresh.keys()].sort());
    for (const [path, text] of fresh) expect(committed.get(path), `${path} is stale: run npm run generate`).toBe(text);
  });

  it('vendors buf/validate/validate.proto exactly as @bufbuild/protovalidate ships it', () => {
    expect(() => execFileSync(process.execPath, ['scripts/vendor-validate-proto.ts', '--check'], { cwd: root, stdio: 'pipe' })).not.toThrow();
  });
});
