// Abuse against a real API process (seconds, not minutes): gzip bombs from anonymous callers are
// answered from the headers, within a small memory bound. (Stalled HTTP/2 bodies are covered on
// the listener itself, services/api/test/listener.test.ts.)

import { readFileSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testInfra } from '../support/context.ts';
import { freshStreamNames } from '../support/nats.ts';
import { setupUseCases, type UseCaseBundle } from '../support/usecases.ts';
import { killAllApis, spawnApi, type ApiProcess } from './support.ts';

let app: UseCaseBundle;
let api: ApiProcess;
const submitPath = '/mint.v1.MintService/SubmitMintRequest';

/** Peak resident memory of a process so far (VmHWM), in bytes. */
function peakRss(pid: number): number {
  const match = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return Number(match![1]) * 1024;
}

beforeAll(async () => {
  app = await setupUseCases();
  api = await spawnApi({
    databaseUrl: app.database.url, natsUrl: testInfra().natsUrl, ...freshStreamNames(),
  });
});
afterAll(async () => {
  await killAllApis();
  await app?.close();
});

describe('abuse against the API process', () => {
  it('answers 20 anonymous gzip bombs (40 KB inflating to 39 MiB each) unauthenticated, and its peak memory barely moves', async () => {
    const bomb = gzipSync(Buffer.concat([Buffer.from('{'), Buffer.alloc(39 * 1024 * 1024, 0x20), Buffer.from('}')]), { level: 9 });
    const before = peakRss(api.child.pid!);
    const answers = await Promise.all(Array.from({ length: 20 }, () => fetch(`${api.baseUrl}${submitPath}`, {
      method: 'POST', body: bomb, headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' },
    }).then(async (res) => [res.status, ((await res.json()) as { code: string }).code])));
    expect(new Set(answers.map((a) => a.join(' ')))).toEqual(new Set(['401 unauthenticated']));
    // Inflating even one of them would hold 39 MiB (and parse it).
    expect(peakRss(api.child.pid!) - before).toBeLessThan(32 * 1024 * 1024);
  });
});
