// The image's entry point (deploy/bin/mint) as a container runs it: the executor starts with the node
// flags, the default NODE_OPTIONS and the malloc setting stated there, an environment's NODE_OPTIONS
// (the chart's executor.nodeOptions) or MALLOC_MMAP_THRESHOLD_ replaces that default, and the API
// gets its own node flags only. A `node` first on PATH prints what it was started with instead of running anything.

import { execFileSync } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';

const entrypoint = fileURLToPath(new URL('../deploy/bin/mint', import.meta.url));
const bin = mkdtempSync(join(tmpdir(), 'entrypoint-'));
writeFileSync(
  join(bin, 'node'),
  '#!/bin/sh\nprintf \'%s\\n\' "NODE_OPTIONS=${NODE_OPTIONS-(unset)}" "MALLOC_MMAP_THRESHOLD_=${MALLOC_MMAP_THRESHOLD_-(unset)}" "$@"\n',
);
chmodSync(join(bin, 'node'), 0o755);
afterAll(() => rmSync(bin, { recursive: true, force: true }));

/** What `mint <args>` starts node with: NODE_OPTIONS, MALLOC_MMAP_THRESHOLD_, then each argument, one a line. */
function started(args: string[], nodeOptions?: string, mmapThreshold?: string): string[] {
  const env: Record<string, string> = { PATH: `${bin}:/usr/bin:/bin` };
  if (nodeOptions !== undefined) env['NODE_OPTIONS'] = nodeOptions;
  if (mmapThreshold !== undefined) env['MALLOC_MMAP_THRESHOLD_'] = mmapThreshold;
  return execFileSync('sh', [entrypoint, ...args], { env })
    .toString()
    .trim()
    .split('\n');
}

describe('deploy/bin/mint', () => {
  it('starts the executor without Maglev, with a small young generation and old space, and a fixed malloc mmap threshold', () => {
    expect(started(['executor'])).toEqual([
      'NODE_OPTIONS=--max-semi-space-size=4 --max-old-space-size=128',
      'MALLOC_MMAP_THRESHOLD_=131072',
      '--no-maglev',
      'services/executor/src/main.ts',
    ]);
  });

  it('keeps the NODE_OPTIONS (even empty ones) and the MALLOC_MMAP_THRESHOLD_ the environment sets', () => {
    expect(started(['executor', '--flag'], '--max-old-space-size=256', '262144')).toEqual([
      'NODE_OPTIONS=--max-old-space-size=256',
      'MALLOC_MMAP_THRESHOLD_=262144',
      '--no-maglev',
      'services/executor/src/main.ts',
      '--flag',
    ]);
    // An empty MALLOC_MMAP_THRESHOLD_ would be 0 to glibc (every allocation mmapped): the default stands.
    expect(started(['executor'], '', '').slice(0, 2)).toEqual(['NODE_OPTIONS=', 'MALLOC_MMAP_THRESHOLD_=131072']);
  });

  it("starts the API without V8's memory reducer, with its heap sizes and glibc left at their defaults", () => {
    expect(started(['api'])).toEqual(['NODE_OPTIONS=(unset)', 'MALLOC_MMAP_THRESHOLD_=(unset)', '--no-memory-reducer', 'services/api/src/main.ts']);
    expect(started(['api', '--flag'], '--max-old-space-size=256')).toEqual([
      'NODE_OPTIONS=--max-old-space-size=256',
      'MALLOC_MMAP_THRESHOLD_=(unset)',
      '--no-memory-reducer',
      'services/api/src/main.ts',
      '--flag',
    ]);
  });
});
