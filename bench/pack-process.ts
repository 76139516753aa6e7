// One payload pack generated in a process of its own, the way the executor runs it (bench/packs.ts
// starts it with the chart's executor NODE_OPTIONS), so its RSS is the pack's and the modules', not
// the seeding's. Claims the one pending pack of the database named by PACK_DATABASE_URL, generates it
// into a filesystem store at PACK_STORE_DIR with the RSS sampled every 20 ms, and prints one JSON line
// ({@link PackProcessResult}). Exits 1 when the pack is not ready.

import { performance } from 'node:perf_hooks';
import { openDatabase } from '@mint/db';
import { createFsPackStore } from '@mint/store';
import { claimPayloadPack, createUseCaseContext, generatePayloadPack } from '@mint/usecases';

/** What the process prints: seconds of claim + generation, RSS when it began and at its peak. */
export interface PackProcessResult {
  readonly seconds: number;
  readonly unitCount: number;
  readonly storagePath: string;
  readonly rssBeforeMb: number;
  readonly peakRssMb: number;
}

if (import.meta.main) {
  const url = process.env['PACK_DATABASE_URL'];
  const dir = process.env['PACK_STORE_DIR'];
  if (url === undefined || dir === undefined) throw new Error('PACK_DATABASE_URL and PACK_STORE_DIR are required');
  const mb = (bytes: number) => bytes / 1024 / 1024;
  const db = await openDatabase({ url }, { poolSize: 4, applicationName: 'bench_pack_process' });
  try {
    const ctx = createUseCaseContext({ db, publicBaseUrl: 'http://127.0.0.1:8080' });
    const store = createFsPackStore(dir);
    const rssBefore = process.memoryUsage().rss;
    let peakRss = rssBefore;
    const sampler = setInterval(() => {
      peakRss = Math.max(peakRss, process.memoryUsage().rss);
    }, 20);
    const started = performance.now();
    const claim = await claimPayloadPack(ctx);
    if (claim === null) throw new Error('no pack to claim');
    const result = await generatePayloadPack(ctx, claim, { store });
    const seconds = (performance.now() - started) / 1000;
    clearInterval(sampler);
    peakRss = Math.max(peakRss, process.memoryUsage().rss);
    if (result.kind !== 'ready') throw new Error(`unexpected result ${JSON.stringify(result)}`);
    const out: PackProcessResult = { seconds, unitCount: result.unitCount, storagePath: result.storagePath, rssBeforeMb: mb(rssBefore), peakRssMb: mb(peakRss) };
    console.log(JSON.stringify(out));
  } finally {
    await db.close(true);
  }
}
