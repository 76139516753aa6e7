// The resolver of one API process with what serves it, and what a change sets off: its scan
// recorder (batches off the request path, the flood gate, the spill while the database is away)
// and the replay of spilled scans, the scan rules on every written batch, the published passports
// and their signer. Each link or brand domain change forgets the brand's cached passports, purges
// the edge cache's answers of its GTIN or brand and signs the GTIN's credentials at once.

import { allResolverAnswersKey, purgeKeyOf, type RuleScan, type ScanFloodLimits } from '@mint/domain';
import type { UseCaseContext } from '../context.ts';
import { createPassportReads, createPassportSigner, presignPassportCredentials, type PassportReads, type PassportSigner } from '../passports/index.ts';
import { createScanAlerts, ruleScanOf, type ScanAlerts } from '../scans/index.ts';
import { createResolver, createScanRecorder, replaySpilledScans, type Resolver, type ScanRecorderOptions, type ScanSpillPort } from './resolver.ts';

/** Options of {@link createResolverStack}. */
export interface ResolverStackOptions {
  /** Limits of the scan recorder's flood gate (`SCAN_FLOOD_*`). */
  readonly flood: ScanFloodLimits;
  /** Units kept for answers while the database is away (`RESOLVER_LAST_KNOWN_UNITS`). */
  readonly lastKnownUnits: number;
  /** Tuning of the scan recorder (tests inject a writer); overrides the rest. */
  readonly recorder?: ScanRecorderOptions | undefined;
  /** Where scans go while the database cannot take them, and whence they are written once it is back; without it such scans are lost. */
  readonly spill?: ScanSpillPort | undefined;
  /** Signs passport credentials; default one of the process. */
  readonly signer?: PassportSigner | undefined;
  /** Purges the edge cache's answers carrying a key (`CACHE_PURGE_URL`); none: no edge cache. */
  readonly purge?: ((key: string) => void) | undefined;
  /** Counts scans by what became of them (written, spilled, dropped, failed; `replayed` for spilled ones written later). */
  readonly onScans: (result: 'written' | 'spilled' | 'dropped' | 'failed' | 'replayed', count: number) => void;
  /** Told of a failure that loses nothing for good or is counted (a warning for the log). */
  readonly warn: (fields: Record<string, unknown>, message: string) => void;
}

/** A process's resolver and what serves it; see {@link createResolverStack}. */
export interface ResolverStack {
  readonly resolver: Resolver;
  readonly scanAlerts: ScanAlerts;
  readonly passportReads: PassportReads;
  readonly passportSigner: PassportSigner;
  /** Writes the queued scans and stops. */
  closeScans(): Promise<void>;
  /** Stops replaying spilled scans. */
  stopReplay(): Promise<void>;
}

/** The resolver of a process on `ctx`, with its scan recorder, scan rules, passports and the effects of a change. */
export function createResolverStack(ctx: UseCaseContext, options: ResolverStackOptions): ResolverStack {
  const { warn } = options;
  // The scan rules of the process, on each written batch of the resolver and each ingested one.
  const scanAlerts = createScanAlerts(ctx, undefined, { onError: (err) => warn({ err }, 'scan alerts not raised') });
  const raiseAlerts = (batch: readonly RuleScan[]) => {
    scanAlerts.observe(batch).catch((err: unknown) => warn({ err }, 'scan alerts not raised'));
  };
  const scans = createScanRecorder(ctx, {
    onError: (err, lost) => warn({ err, lost }, 'scan events not recorded'),
    onOutcome: options.onScans,
    onWritten: (batch) => raiseAlerts(batch.map(ruleScanOf)),
    ...(options.spill === undefined ? {} : { spill: options.spill }),
    flood: options.flood,
    ...options.recorder,
  });
  // The scans spilled while the database was away (by any API process), written once it is back.
  const replay =
    options.spill === undefined
      ? undefined
      : replaySpilledScans(ctx, options.spill, {
          onWritten: (batch) => {
            options.onScans(
              'replayed',
              batch.reduce((sum, scan) => sum + (scan.count ?? 1), 0),
            );
            raiseAlerts(batch.map(ruleScanOf));
          },
          onError: (err) => warn({ err }, 'spilled scans not written yet'),
        });
  // Published passports, cached a second at most; a publish anywhere arrives on the link-change
  // feed (its brand and GTIN), and the brand's cached passports are forgotten at once.
  const passportReads = createPassportReads(ctx);
  // Signs passport credentials and status lists; keys sealed with WEBHOOK_SECRET_KEYS. A GTIN's
  // change on the feed (a publish among them) signs its model and lot credentials at once, on
  // every replica, so their requests serve a kept signature.
  const passportSigner = options.signer ?? createPassportSigner(ctx);
  const presign = (brandId: string, gtin: string) => {
    presignPassportCredentials(ctx, passportSigner, brandId, gtin).catch((err: unknown) =>
      warn({ err, brandId, gtin }, 'passport credentials not signed at publish; they are signed on first request'),
    );
  };
  // A lost change feed purges every cached answer, but not the first listen at start.
  let listenedBefore = false;
  const purge = options.purge;
  const resolver = createResolver(ctx, {
    recorder: scans,
    lastKnown: { maxUnits: options.lastKnownUnits },
    onLinkChange: (brandId: string, gtin: string | null) => {
      passportReads.invalidateBrand(brandId);
      purge?.(purgeKeyOf(brandId, gtin));
      if (gtin !== null) presign(brandId, gtin);
    },
    ...(purge === undefined
      ? {}
      : {
          onLinkReset: () => {
            if (listenedBefore) purge(allResolverAnswersKey);
            listenedBefore = true;
          },
        }),
  });
  return {
    resolver,
    scanAlerts,
    passportReads,
    passportSigner,
    closeScans: () => scans.close(),
    stopReplay: () => replay?.stop() ?? Promise.resolve(),
  };
}
