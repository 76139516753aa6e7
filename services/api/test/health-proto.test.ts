// The API's own protos (the gRPC health protocol): the committed generated code is what
// `npx buf generate` in services/api produces.

import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { afterAll, expect, it } from 'vitest';

const service = join(import.meta.dirname, '..');
const buf = join(service, '..', '..', 'node_modules', '.bin', 'buf');
const scratch = mkdtempSync(join(tmpdir(), 'api-proto-'));
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

it('has src/gen in sync with proto/', () => {
  execFileSync(buf, ['generate', '--output', scratch], { cwd: service, stdio: 'pipe' });
  const fresh = files(join(scratch, 'src/gen'));
  const committed = files(join(service, 'src/gen'));
  expect([...committed.keys()].sort()).toEqual([...fresh.keys()].sort());
  for (const [path, text] of fresh) expect(committed.get(path), `${path} is stale: run npx buf generate in services/api`).toBe(text);
});
