// The image's entry point (deploy/bin/mint) as a container runs it: the executor starts with the node
// flags and the default NODE_OPTIONS stated there, an environment's NODE_OPTIONS (the chart's
// executor.nodeOptions) replaces that default, and the API gets neither. A `node` first on PATH
// prints what it was started with instead of running anything.

import { execFileSync } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';

const entrypoint = fileURLToPath(new URL('../deploy/bin/mint', import.meta.url));
const bin = mkdtempSync(join(tmpdir(), 'entrypoint-'));
writeFileSync(join(bin, 'node'), '#!/bin/sh\nprintf \'%s\\n\' "NODE_OPTIONS=${NODE_OPTIONS-(unset)}" "$@"\n');
chmodSync(join(bin, 'node'), 0o755);
afterAll(() => rmSync(bin, { recursive: true, force: true }));

/** What `mint <args>` starts node with: NODE_OPTIONS, then each argument, one a line. */
function started(args: string[], nodeOptions?: string): string[] {
  const env: Record<string, string> = { PATH: `${bin}:/usr/bin:/bin` };
  if (nodeOptions !== undefined) env['NODE_OPTIONS'] = nodeOptions;
  return execFileSync('sh', [entrypoint, ...args], { env }).toString().trim().split('\n');
}

describe('deploy/bin/mint', () => {
  it('starts the executor without Maglev and with a small young generation and old space', () => {
    expect(started(['executor'])).toEqual([
      'NODE_OPTIONS=--max-semi-space-size=4 --max-old-space-size=128', '--no-maglev', 'services/executor/src/main.ts',
    ]);
  });

  it('keeps the NODE_OPTIONS the environment sets, even empty ones', () => {
    expect(started(['executor', '--flag'], '--max-old-space-size=256')).toEqual([
      'NODE_OPTIONS=--max-old-space-size=256', '--no-maglev', 'services/executor/src/main.ts', '--flag',
    ]);
    expect(started(['executor'], '')[0]).toBe('NODE_OPTIONS=');
  });

  it('starts the API with V8 defaults', () => {
    expect(started(['api'])).toEqual(['NODE_OPTIONS=(unset)', 'services/api/src/main.ts']);
  });
});
