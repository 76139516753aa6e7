// A large pack downloaded through the API process from the NATS Object Store, by a client that
// reads slowly: the API's resident memory must stay far below the pack's size (it streams chunk by
// chunk as the client takes them, never buffering the pack), and a resumed download (Range) of the
// last bytes answers at once with exactly those bytes. PACK_MEMORY_MIB sets the pack size
// (default 384; FAULT_TRIALS=20, the full size, makes it 1024). The API's garbage collector
// lets its RSS grow by some 80-100 MiB whatever the size (measured: +77 MiB at 192 MiB, +99 MiB at
// 512 MiB); an API holding the pack would grow by the pack's size.

import { once } from 'node:events';
import { readFile } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createFsPackStore, createNatsPackStore, type PackStore } from '@mint/store';
import { claimPayloadPack, createPayloadPackDownloadUrl, generatePayloadPack } from '@mint/usecases';
import { mintCompleted } from '../support/pack-fixtures.ts';
import { freshStreamNames, startNatsServer, type NatsServer } from '../support/nats.ts';
import { setupUseCases, type SeededBrand, type UseCaseBundle } from '../support/usecases.ts';
import { faultTrials, killAllApis, report, scratchDir, spawnApi, type ApiProcess } from './support.ts';

const mib = 1024 * 1024;
const packMiB = Number(process.env['PACK_MEMORY_MIB'] ?? (faultTrials >= 20 ? 1024 : 384));
const names = freshStreamNames();
const downloadKey = { id: 'k1', secret: new Uint8Array(Buffer.alloc(32, 7)) };
let app: UseCaseBundle;
let brand: SeededBrand;
let nats: NatsServer;
let nc: NatsConnection;
let store: PackStore;
let api: ApiProcess;
let packId: string;

/** Resident set size of a process, in bytes. */
async function rss(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+) kB/.exec(status)?.[1] ?? 0) * 1024;
}

beforeAll(async () => {
  app = await setupUseCases();
  brand = await app.seedBrand();
  nats = await startNatsServer();
  nc = await connect({ servers: nats.url });
  store = await createNatsPackStore(nc, { bucket: `${names.stream}_PACKS` });
  const minted = await mintCompleted(app.ctx, brand, 10);
  const claim = await claimPayloadPack(app.ctx);
  if (claim === null) throw new Error('no pack to generate');
  expect(await generatePayloadPack(app.ctx, claim, { store })).toMatchObject({ kind: 'ready' });
  packId = claim.id;
  expect(minted.mintBatchId).toBeTruthy();
  // Replace the pack's data file by a large one, written in 1 MiB pieces (as the executor streams rows).
  const storagePath = `${brand.brandId}/${packId}`;
  const writer = await store.begin(storagePath);
  // The download lists the files its manifest names: here the one large file.
  writer.file('manifest.json').end(`${JSON.stringify({ files: [{ name: 'units.csv' }] })}\n`);
  const csv = writer.file('units.csv');
  const piece = Buffer.alloc(mib, 'serial,https://id.example.com/01/09506000134352/21/ABC,token,lot,ACTIVE\n');
  for (let i = 0; i < packMiB; i++) if (!csv.write(piece)) await once(csv, 'drain');
  csv.end();
  await writer.commit();
  api = await spawnApi({ databaseUrl: app.database.url, natsUrl: nats.url, ...names, env: { PACK_STORE: 'nats' } });
}, 300_000);

afterAll(async () => {
  await killAllApis();
  await nc?.close();
  await nats?.stop();
  await app?.close();
});

describe('a large pack download through the API', () => {
  it(`streams a ${packMiB} MiB pack to a slow client without holding it in memory, and resumes from any byte`, async () => {
    const issued = await createPayloadPackDownloadUrl(
      app.ctx,
      { keys: [downloadKey], store: createFsPackStore(scratchDir) },
      { brandId: brand.brandId, packId, ttlSeconds: 900 },
    );
    const target = new URL(issued.url);
    const url = `${api.baseUrl}${target.pathname}${target.search}`;
    const pid = api.child.pid!;
    // Warm the API's code paths first, so the baseline includes them.
    expect((await fetch(url, { headers: { range: 'bytes=0-1023' } })).status).toBe(206);
    const before = await rss(pid);

    let peak = before;
    let sampling = true;
    const sampler = (async () => {
      while (sampling) {
        peak = Math.max(peak, await rss(pid).catch(() => 0));
        await sleep(25);
      }
    })();
    const started = Date.now();
    const response = await fetch(url);
    expect(response.status).toBe(200);
    const size = Number(response.headers.get('content-length'));
    expect(size).toBeGreaterThan(packMiB * mib);
    let received = 0;
    let sinceNap = 0;
    const reader = response.body!.getReader();
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      received += value.byteLength;
      sinceNap += value.byteLength;
      // A slow client: a pause after every 8 MiB lets the API run ahead if it were to read the store eagerly.
      if (sinceNap >= 8 * mib) {
        sinceNap = 0;
        await sleep(40);
      }
    }
    const fullMs = Date.now() - started;
    sampling = false;
    await sampler;

    const rangeStarted = Date.now();
    const tail = await fetch(url, { headers: { range: `bytes=${size - mib}-` } });
    const tailBytes = Buffer.from(await tail.arrayBuffer());
    const rangeMs = Date.now() - rangeStarted;

    const growth = peak - before;
    report('pack-download-memory', {
      packMiB,
      downloadedMiB: (received / mib).toFixed(1),
      apiRssBeforeMiB: (before / mib).toFixed(1),
      apiRssPeakMiB: (peak / mib).toFixed(1),
      growthMiB: (growth / mib).toFixed(1),
      growthPerPack: (growth / size).toFixed(3),
      fullMs,
      lastMiBRangeMs: rangeMs,
    });
    expect(received).toBe(size);
    expect(growth).toBeLessThan(Math.min(128 * mib, size / 3));
    expect(tail.status).toBe(206);
    expect(tail.headers.get('content-range')).toBe(`bytes ${size - mib}-${size - 1}/${size}`);
    expect(tailBytes.length).toBe(mib);
    // The end of a tar archive: two zero blocks after the last file's padding.
    expect(tailBytes.subarray(mib - 1024).every((b) => b === 0)).toBe(true);
  }, 300_000);
});
