// One brand's long PDF pack must neither lose its claim nor hold up the others: two pack workers
// (two executors' worth of slots: 2 x PACK_CONCURRENCY 2, PACK_CONCURRENCY_PER_BRAND 1, the default
// 1 s poll) share one event loop while brand A's PDF of FAULT_PDF_UNITS labels (default 3,000; the
// issue's full size is FAULT_PDF_UNITS=100000, about 10 minutes on the 2-core machine) is drawn under
// a 3 s lease whose pages (5,000 units) take longer than the lease. Meanwhile brand B's completion
// pack and a requested PDF pack are measured from their creation to ready, and a 10-row link import
// runs on the same event loop. Prints one line `long-pack: ...` with every figure.
//
// Before labels were drawn on a worker thread with the lease renewed on a clock, a page drawn on the
// event loop outlived the lease, the other worker took the pack over (attempts 2, a "lost" line) and
// a 10-row link import waited for the page (16 s at the size); before the per-brand cap, B's
// packs queued behind A's.

import { monitorEventLoopDelay } from 'node:perf_hooks';
import { Writable } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import { createLogger } from '@mint/runtime';
import { createFsPackStore } from '@mint/store';
import { createPayloadPack, getLinkImport, runProductImport, startLinkImport } from '@mint/usecases';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startPackWorker, type PackWorker } from '../../services/executor/src/pack-worker.ts';
import { mintCompleted, tempStoreDir } from '../support/pack-fixtures.ts';
import { query } from '../support/sql.ts';
import { setupUseCases, type UseCaseBundle } from '../support/usecases.ts';
import { report, scenarioTimeoutMs } from './support.ts';

const pdfUnits = Number(process.env['FAULT_PDF_UNITS'] ?? 3_000);
const leaseMs = 3_000;
const pollMs = 1_000;
/**
 * The bound on another brand's packs while one brand's PDF is drawn, from queued to ready: each
 * starts at the next poll (1 s) since a slot is free, and B's PDF waits only for B's own completion
 * pack (one pack of a brand at a time); measured 4-9 s on the shared machine under load, 20 s allows
 * for it. Queued behind A's PDF instead, it would wait for the whole PDF (34 s at 3,000 labels).
 */
const otherBrandBoundMs = 20_000;

let app: UseCaseBundle;
let storeDir: { dir: string; remove(): Promise<void> };
const workers: PackWorker[] = [];
beforeAll(async () => {
  app = await setupUseCases();
  storeDir = await tempStoreDir();
});
afterAll(async () => {
  await Promise.all(workers.map((w) => w.stop()));
  await app?.close();
  await storeDir?.remove();
});

/** A logger whose lines are kept. */
function keptLogger() {
  const lines: Record<string, unknown>[] = [];
  return {
    lines,
    logger: createLogger(
      { logLevel: 'info' },
      {},
      new Writable({
        write: (chunk, _e, done) => {
          lines.push(JSON.parse(String(chunk)));
          done();
        },
      }),
    ),
  };
}

interface PackRow {
  id: string;
  status: string;
  attempts: number;
  purpose: string;
  created_at: string | Date;
  updated_at: string | Date;
}
async function packsOf(brandId: string): Promise<PackRow[]> {
  return query<PackRow>(
    app.db.em.fork(),
    'select id, status, attempts, purpose, created_at, updated_at from payload_packs where brand_id = ? order by created_at',
    [brandId],
  );
}
const waitedMs = (row: PackRow) => new Date(row.updated_at).getTime() - new Date(row.created_at).getTime();

async function until<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs: number): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(100);
  }
}

describe("fault: one brand's long PDF pack", () => {
  it(
    `keeps its one claim (${pdfUnits.toLocaleString('en-US')} labels, 3 s lease, two workers) while another brand's packs and a link import go through`,
    async () => {
      const a = await app.seedBrand();
      const b = await app.seedBrand();
      const batchA = await mintCompleted(app.ctx, a, pdfUnits);
      const pdf = (
        await createPayloadPack(app.ctx, {
          brandId: a.brandId,
          mintBatchId: batchA.mintBatchId,
          formats: ['pdf'],
          seqFrom: null,
          seqTo: null,
          symbology: null,
          layout: null,
        })
      ).id;
      const store = createFsPackStore(storeDir.dir);
      const logs = [keptLogger(), keptLogger()];
      for (const { logger } of logs)
        workers.push(startPackWorker({ ctx: app.ctx, store, logger, pollIntervalMs: pollMs, leaseMs, concurrency: 2, perBrand: 1 }));
      // A's completion pack goes first (one of A's at a time), then its PDF.
      await until(
        "brand A's PDF generating",
        async () => ((await packsOf(a.brandId)).find((p) => p.id === pdf)?.status === 'generating' ? true : undefined),
        120_000,
      );
      const loop = monitorEventLoopDelay({ resolution: 10 });
      loop.enable();

      // Brand B while A's PDF is drawn: a completed job's automatic pack, a requested PDF, a 10-row link import.
      const batchB = await mintCompleted(app.ctx, b, 10);
      await createPayloadPack(app.ctx, {
        brandId: b.brandId,
        mintBatchId: batchB.mintBatchId,
        formats: ['pdf'],
        seqFrom: null,
        seqTo: null,
        symbology: null,
        layout: null,
      });
      const csv = ['gtin,link_type,href,title', ...Array.from({ length: 10 }, (_, i) => `${b.gtin},gs1:pip,https://b.example/p/${i},Passport ${i}`)].join('\n');
      const started = await startLinkImport(app.ctx, { id: b.userId }, b.brandId, Buffer.from(csv));
      const importStarted = performance.now();
      const outcome = await runProductImport(app.ctx, b.brandId, started.id);
      const importMs = performance.now() - importStarted;
      expect(outcome.kind).toBe('finished');
      expect((await getLinkImport(app.ctx, b.brandId, started.id)).importedRows).toBe(10);

      const bPacks = await until(
        "brand B's packs ready",
        async () => {
          const rows = await packsOf(b.brandId);
          return rows.length === 2 && rows.every((r) => r.status === 'ready') ? rows : undefined;
        },
        120_000,
      );
      const aWhenBReady = (await packsOf(a.brandId)).find((p) => p.id === pdf)!.status;

      const aPdf = await until(
        "brand A's PDF ready",
        async () => {
          const row = (await packsOf(a.brandId)).find((p) => p.id === pdf)!;
          // A second claim ends the wait at once: the pack was taken over.
          return (row.status === 'generating' || row.status === 'pending') && row.attempts === 1 ? undefined : row;
        },
        scenarioTimeoutMs(120_000 + pdfUnits * 20, 0),
      );
      loop.disable();
      await Promise.all(workers.splice(0).map((w) => w.stop()));

      const ended = logs.flatMap(({ lines }) => lines.filter((line) => line.packId === pdf).map((line) => String(line.result)));
      const [completionWait, pdfWait] = ['completion', 'request'].map((purpose) => waitedMs(bPacks.find((p) => p.purpose === purpose)!));
      report('long-pack', {
        labels: pdfUnits,
        status: aPdf.status,
        attempts: aPdf.attempts,
        generations: ended.join('+'),
        renderSeconds: (waitedMs(aPdf) / 1000).toFixed(1),
        otherBrandCompletionPackMs: completionWait!,
        otherBrandPdfPackMs: pdfWait!,
        otherBrandPacksReadyWhileA: aWhenBReady,
        linkImport10RowsMs: Math.round(importMs),
        loopDelayP99Ms: Math.round(loop.percentile(99) / 1e6),
        loopDelayMaxMs: Math.round(loop.max / 1e6),
      });
      // One claim, one generation.
      expect([aPdf.status, aPdf.attempts]).toEqual(['ready', 1]);
      expect(ended).toEqual(['ready']);
      // B never queued behind A: both its packs were ready while A's PDF was still being drawn, within the bound.
      expect(aWhenBReady).toBe('generating');
      expect(Math.max(completionWait!, pdfWait!)).toBeLessThanOrEqual(otherBrandBoundMs);
      // The event loop stayed free for the rest of the executor's work.
      expect(importMs).toBeLessThan(5_000);
      expect(loop.max / 1e6).toBeLessThan(leaseMs);
    },
    scenarioTimeoutMs(240_000 + pdfUnits * 25, 0),
  );
});
