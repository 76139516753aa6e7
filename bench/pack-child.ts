// One measurement of bench/packs.ts's per-format rows, alone in a child process so its peak RSS (the
// kernel's maxrss) is its own: bench/packs.ts starts it with the executor's NODE_OPTIONS
// (deploy/bin/mint) and reads one line of JSON from its stdout. Two tasks:
//   pack <database url> <store>: loads what the executor loads (@mint/runtime, the use cases),
//     opens the database, claims the one pending pack and generates it into a filesystem store (a
//     folder) or, for `nats:<bucket>`, a NATS JetStream Object Store bucket (NATS_URL; PACK_STORE=nats,
//     the executor's default), as the executor's pack worker does,
//   encode <format> <symbology> <units> <resolver base> <gtin>: the work of the format without the pack, over
//     units like the seeded ones (serial = 20 upper-case hex characters): the GS1 encoder alone
//     (bwip-js module matrices, for svg and pdf) or the bare zplLabel loop (zpl, whose symbols the
//     printer encodes).

import { createHash } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import bwipjs from 'bwip-js';
import { openDatabase } from '@mint/db';
import { zplLabel, type Symbology } from '@mint/labels';
// Loaded as the executor loads it (config, logger, NATS, stores), so the RSS before counts that code.
import '@mint/runtime';
import { connect } from '@nats-io/transport-node';
import { createFsPackStore, createNatsPackStore, type PackStore } from '@mint/store';
import { claimPayloadPack, createUseCaseContext, generatePayloadPack } from '@mint/usecases';

/** What one child measured. */
export interface ChildMeasure {
  readonly seconds: number;
  /** CPU time (user + system) the process spent on the work, in seconds: steadier than `seconds` on a busy machine. */
  readonly cpuSeconds: number;
  /** RSS once the modules were loaded and the database opened, before the work, in MB. */
  readonly rssBeforeMb: number;
  /** The process's peak RSS (getrusage maxrss), in MB. */
  readonly peakRssMb: number;
  /** Most V8 heap in use seen (sampled every 20 ms), in MB. */
  readonly peakHeapUsedMb: number;
  /** Units the pack or the loop handled. */
  readonly units: number;
  /** Where the pack went in the store (the pack task). */
  readonly storagePath?: string;
}

const mb = (bytes: number) => bytes / 1024 / 1024;

async function measure(work: () => Promise<number | { readonly units: number; readonly storagePath: string }>): Promise<ChildMeasure> {
  const rssBefore = process.memoryUsage().rss;
  let peakHeap = 0;
  const sampler = setInterval(() => {
    peakHeap = Math.max(peakHeap, process.memoryUsage().heapUsed);
  }, 20);
  const started = performance.now();
  const cpuBefore = process.cpuUsage();
  const done = await work();
  const seconds = (performance.now() - started) / 1000;
  const cpu = process.cpuUsage(cpuBefore);
  clearInterval(sampler);
  const { units, storagePath } = typeof done === 'number' ? { units: done, storagePath: undefined } : done;
  return {
    seconds,
    cpuSeconds: (cpu.user + cpu.system) / 1e6,
    rssBeforeMb: mb(rssBefore),
    peakRssMb: process.resourceUsage().maxRSS / 1024,
    peakHeapUsedMb: mb(peakHeap),
    units,
    ...(storagePath === undefined ? {} : { storagePath }),
  };
}

const [task, ...args] = process.argv.slice(2);
let result: ChildMeasure;
if (task === 'pack') {
  const [url, where] = args as [string, string];
  const db = await openDatabase({ url }, { poolSize: 4, applicationName: 'bench-pack-child' });
  const ctx = createUseCaseContext({ db, publicBaseUrl: 'http://127.0.0.1:8080' });
  const nc = where.startsWith('nats:') ? await connect({ servers: process.env['NATS_URL'] ?? 'nats://127.0.0.1:4222' }) : null;
  try {
    const store: PackStore = nc === null ? createFsPackStore(where) : await createNatsPackStore(nc, { bucket: where.slice('nats:'.length) });
    result = await measure(async () => {
      const claim = await claimPayloadPack(ctx);
      if (claim === null) throw new Error('no pack to claim');
      const generated = await generatePayloadPack(ctx, claim, { store });
      if (generated.kind !== 'ready') throw new Error(`unexpected result ${JSON.stringify(generated)}`);
      return { units: generated.unitCount, storagePath: generated.storagePath };
    });
  } finally {
    await nc?.close();
    await db.close(true);
  }
} else if (task === 'encode') {
  const [format, symbology, count, resolverBase, gtin] = args as [string, Symbology, string, string, string];
  const serial = (seq: number) => createHash('md5').update(String(seq)).digest('hex').slice(0, 20).toUpperCase();
  result = await measure(async () => {
    let work = 0;
    for (let seq = 1; seq <= Number(count); seq++) {
      const s = serial(seq);
      const unit = { digitalLink: `${resolverBase}/01/${gtin}/21/${s}`, gtin, serial: s };
      if (format === 'zpl') work += zplLabel(unit, symbology, 203).length;
      else if (symbology === 'qr') work += (bwipjs.raw('gs1dlqrcode', unit.digitalLink)[0] as { pixx: number }).pixx;
      else work += (bwipjs.raw('gs1datamatrix', `(01)${gtin}(21)${s}`, { parse: true })[0] as { pixx: number }).pixx;
    }
    if (work === 0) throw new Error('the loop produced nothing');
    return Number(count);
  });
} else {
  throw new Error(`unknown task ${String(task)}: pack or encode`);
}
process.stdout.write(`${JSON.stringify(result)}\n`);
