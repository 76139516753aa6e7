import { createHash } from 'node:crypto';
import { decodeEdgeScan, type IngestScanInput } from '@mint/domain';
import type { UseCaseContext } from '../context.ts';
import { recordScanEvents, type ScanAlerts } from '../scans/index.ts';

/** Counters of an {@link EdgeLogShipper}. */
export interface EdgeLogStats {
  /** Log lines read. */
  readonly lines: number;
  /** Scans written through the ingest. */
  readonly shipped: number;
  /** Lines that were not a cache hit's scan (malformed), skipped. */
  readonly skipped: number;
}

/** Ships a caching proxy's log of cache hits into the scan ledger; see {@link createEdgeLogShipper}. */
export interface EdgeLogShipper {
  /** Takes one log line: `{request id} {epoch seconds} {X-Scan value}` (varnishncsa's `%{Varnish:vxid}x %{%s}t %{VCL_Log:scan}x`). */
  line(text: string): void;
  stats(): EdgeLogStats;
  /** Ships what is buffered (retrying while the database fails, at most `timeoutMs`) and stops. */
  close(timeoutMs?: number): Promise<void>;
}

/** Options of {@link createEdgeLogShipper}. */
export interface EdgeLogShipperOptions {
  /** Longest wait before a partial batch is shipped; default 1,000 ms. */
  readonly flushIntervalMs?: number;
  /** Largest batch per brand; default 5,000 (the ingest takes up to 10,000). */
  readonly batchSize?: number;
  /** The scan rules, run on each written batch like on the resolver's. */
  readonly alerts?: ScanAlerts;
  /** Told about a batch that could not be written yet (it is tried again after a second) and about skipped lines. */
  readonly onError?: (error: unknown) => void;
}

/**
 * The log shipper of a caching proxy in front of the resolver: each line is a cache hit the
 * resolver never saw (the proxy logs the `X-Scan` header the resolver put on each cacheable answer;
 * misses are recorded by the resolver itself), so with it the scan ledger counts every scan once
 * whether the cache answered or not. Lines are grouped per brand and written through the scan
 * ingest ({@link recordScanEvents}) in batches whose key is the hash of their lines: a batch
 * retried after a failure, or the same log shipped twice, is counted once. A batch that fails
 * (the database is away) is tried again every second, in order, until it is written.
 */
export function createEdgeLogShipper(ctx: UseCaseContext, options: EdgeLogShipperOptions = {}): EdgeLogShipper {
  const intervalMs = options.flushIntervalMs ?? 1_000;
  const batchSize = options.batchSize ?? 5_000;
  let lines = 0;
  let shipped = 0;
  let skipped = 0;
  /** Lines waiting per brand. */
  let buffered = new Map<string, { lines: string[]; scans: IngestScanInput[] }>();
  /** Batches cut and not yet written, oldest first. */
  const due: { brandId: string; key: string; scans: IngestScanInput[] }[] = [];
  let writing: Promise<void> | null = null;
  let timer: NodeJS.Timeout | null = null;

  const cut = () => {
    for (const [brandId, batch] of buffered) {
      const key = `edge:${createHash('sha256').update(batch.lines.join('\n')).digest('base64url')}`;
      due.push({ brandId, key, scans: batch.scans });
    }
    buffered = new Map();
  };
  const drain = (): Promise<void> => {
    writing ??= (async () => {
      while (due.length > 0) {
        const batch = due[0]!;
        try {
          const outcome = await recordScanEvents(ctx, { brandId: batch.brandId, batchKey: batch.key, scans: batch.scans }, options.alerts);
          shipped += outcome.replayed ? 0 : batch.scans.length - outcome.rejected.length;
          due.shift();
        } catch (error) {
          options.onError?.(error);
          await new Promise((resolve) => setTimeout(resolve, 1_000));
        }
      }
    })().finally(() => {
      writing = null;
    });
    return writing;
  };
  const schedule = () => {
    if (timer !== null) return;
    timer = setTimeout(() => {
      timer = null;
      cut();
      void drain();
    }, intervalMs);
  };

  return {
    line(text) {
      lines++;
      const [vxid, seconds, value] = text.trim().split(' ', 3);
      const scan = value === undefined ? null : decodeEdgeScan(value);
      const at = new Date(Number(seconds) * 1_000);
      if (vxid === undefined || scan === null || Number.isNaN(at.getTime())) {
        skipped++;
        options.onError?.(new Error(`not a cache hit's scan line: ${text.slice(0, 200)}`));
        return;
      }
      let batch = buffered.get(scan.brandId);
      if (batch === undefined) buffered.set(scan.brandId, (batch = { lines: [], scans: [] }));
      batch.lines.push(text.trim());
      batch.scans.push({
        scannedAt: at,
        kind: scan.kind,
        gtin: scan.gtin,
        identifier: scan.kind === 'lot' ? scan.lot : null,
        lot: scan.lot,
        outcome: scan.outcome,
        representation: scan.representation,
        linkType: scan.linkType,
        country: null,
        clientClass: null,
        visitor: null,
        count: 1,
      });
      if (batch.lines.length >= batchSize) {
        cut();
        void drain();
      } else schedule();
    },
    stats: () => ({ lines, shipped, skipped }),
    async close(timeoutMs = 10_000) {
      if (timer !== null) clearTimeout(timer);
      timer = null;
      cut();
      await Promise.race([drain(), new Promise((resolve) => setTimeout(resolve, timeoutMs).unref())]);
    },
  };
}
