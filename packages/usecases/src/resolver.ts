import { createResolverReader, createScanWriter, deleteScanEventsBefore, type ResolverBrand, type ResolverProduct, type ResolverReader, type ScanRecord } from '@mint/db';
import {
  decideResolution, lotResolverUrl, unitResolverUrl, type Representation, type ResolutionOutcome, type ResolverPath,
} from '@mint/domain';
import type { UseCaseContext } from './context.ts';

/** What the resolver found and decided for one request. */
export interface Resolution {
  readonly outcome: ResolutionOutcome;
  /** The brand of the slug; null when the slug is unknown. */
  readonly brand: ResolverBrand | null;
  /** Canonical URI of the identity (the linkset anchor); null when not found. */
  readonly anchor: string | null;
  /** What `Accept: application/json` shows; null when not found. */
  readonly data: Record<string, unknown> | null;
  /** Product name, for link titles. */
  readonly title: string | null;
  /** The level the identity was found at: the requested one, or `gtin` when an unknown lot walked up to its product; null when not found. */
  readonly level: ResolverPath['key']['kind'] | null;
}

/** Options of {@link createResolver}. */
export interface ResolverOptions {
  /** How long a brand found by slug (or a miss) is cached; default 10 s. */
  readonly brandCacheMs?: number;
  /** How long a product found by GTIN (or a miss) is cached for `/01/{gtin}`; default 1 s. Units and lots are never cached. */
  readonly productCacheMs?: number;
  /** Records each resolution; see {@link createScanRecorder}. */
  readonly recorder?: ScanRecorder;
  /** The lookups; default {@link createResolverReader} on the context's database (closed by `close`). */
  readonly reader?: ResolverReader;
}

/** The public resolver's lookups. */
export interface Resolver {
  /** Finds and decides the answer for a parsed path; records the scan off the request path. */
  resolve(path: ResolverPath, representation: Representation): Promise<Resolution>;
  /** Releases the reader's connections (when the resolver created the reader). */
  close(): Promise<void>;
}

const notFound = (brand: ResolverBrand | null): Resolution => ({ outcome: { kind: 'not_found' }, brand, anchor: null, data: null, title: null, level: null });

function productView(p: ResolverProduct): Record<string, unknown> {
  return { name: p.name, sku: p.sku, gtin: p.gtin, passport_url: p.passportUrl };
}

/** A found identity's resolution whose `data` is built only when read (only JSON answers show it). */
function found(level: Resolution['level'], outcome: ResolutionOutcome, brand: ResolverBrand, anchor: string | null, title: string, data: () => Record<string, unknown>): Resolution {
  let built: Record<string, unknown> | undefined;
  return {
    level, outcome, brand, anchor, title,
    get data() {
      return (built ??= data());
    },
  };
}

/**
 * Lookups by key remembered for `ttlMs` (misses too) in at most `max` entries (beyond that the
 * cache starts over); `get` answers a fresh entry synchronously, and concurrent misses of one key
 * share one lookup.
 */
function cachedLookup<T>(ttlMs: number, max: number, load: (key: string) => Promise<T>): (key: string) => T | Promise<T> {
  const entries = new Map<string, { readonly value: T; readonly until: number }>();
  const loading = new Map<string, Promise<T>>();
  return (key) => {
    const hit = entries.get(key);
    if (hit !== undefined && hit.until > Date.now()) return hit.value;
    let pending = loading.get(key);
    if (pending === undefined) {
      pending = load(key).then(
        (value) => {
          loading.delete(key);
          if (entries.size >= max) entries.clear();
          entries.set(key, { value, until: Date.now() + ttlMs });
          return value;
        },
        (error: unknown) => {
          loading.delete(key);
          throw error;
        },
      );
      loading.set(key, pending);
    }
    return pending;
  };
}

/**
 * Creates the resolver. Brands are looked up by slug and products by GTIN through small caches
 * (including misses); each unit or lot is one indexed query scoped to that brand and the path's
 * GTIN, never cached (its state can change at any time), so an identity of another brand or
 * product is not found. Lots and units walk up to their product's passport page, then the brand's
 * default; an unknown lot resolves as its product (a lot is an attribute of the product), while an
 * unknown serial, token, GTIN or brand is not found (404): a serial is an identity the brand
 * minted, and one it did not mint must not pass for its product.
 */
export function createResolver(ctx: UseCaseContext, options: ResolverOptions = {}): Resolver {
  const reader = options.reader ?? createResolverReader(ctx.db);
  const brandOf = cachedLookup(options.brandCacheMs ?? 10_000, 10_000, (slug) => reader.findBrandBySlug(slug));
  const productOf = cachedLookup(options.productCacheMs ?? 1_000, 10_000, (key) => reader.findProduct(key.slice(0, key.indexOf(' ')), key.slice(key.indexOf(' ') + 1)));
  const brandView = (brand: ResolverBrand) => ({ slug: brand.slug, name: brand.name });
  const decide = (brand: ResolverBrand, unitStatus: string | null, batchStatus: string | null, productPassportUrl: string | null) =>
    decideResolution({ kind: 'found', ownTarget: null, brandDefaultPassportUrl: brand.defaultPassportUrl, unitStatus, batchStatus, productPassportUrl });

  async function lookup(path: ResolverPath): Promise<Resolution> {
    const cached = brandOf(path.slug);
    const brand = cached instanceof Promise ? await cached : cached;
    if (brand === null) return notFound(null);
    const base = `${ctx.publicBaseUrl}/r/${brand.slug}`;
    const key = path.key;
    if (key.kind === 'serial' || key.kind === 'token') {
      const unit = await reader.findUnit(brand.id, key.kind === 'serial' ? key.serial : key.token, key.kind === 'serial' ? key.gtin : null);
      if (unit === null) return notFound(brand);
      return found(key.kind, decide(brand, unit.status, unit.batchStatus, unit.product.passportUrl), brand, unitResolverUrl(base, unit.gtin, unit.serial), unit.product.name, () => ({
        ok: true,
        unit: { serial: unit.serial, gtin: unit.gtin, status: unit.status, activated_at: unit.activatedAt?.toISOString() ?? null, digital_link: unit.resolverUrl },
        product: productView(unit.product),
        brand: brandView(brand),
      }));
    }
    if (key.kind === 'lot') {
      const lot = await reader.findLot(brand.id, key.gtin, key.lot);
      if (lot !== null) return found('lot', decide(brand, null, lot.allVoided ? 'voided' : 'minted', lot.product.passportUrl), brand, lotResolverUrl(base, key.gtin, key.lot), lot.product.name, () => ({
        ok: true, lot: { lot_code: lot.lotCode, qty: lot.qty, gtin: key.gtin }, product: productView(lot.product), brand: brandView(brand),
      }));
    }
    const cachedProduct = productOf(`${brand.id} ${key.gtin}`);
    const product = cachedProduct instanceof Promise ? await cachedProduct : cachedProduct;
    if (product === null) return notFound(brand);
    return found('gtin', decide(brand, null, null, product.passportUrl), brand, `${base}/01/${key.gtin}`, product.name, () => ({
      ok: true, product: productView(product), brand: brandView(brand),
    }));
  }

  return {
    async resolve(path, representation) {
      const resolution = await lookup(path);
      if (resolution.brand !== null && options.recorder !== undefined) {
        const key = path.key;
        options.recorder.record({
          brandId: resolution.brand.id, scannedAt: ctx.clock(), kind: key.kind,
          gtin: key.kind === 'token' ? null : key.gtin,
          identifier: key.kind === 'serial' ? key.serial : key.kind === 'lot' ? key.lot : key.kind === 'token' ? key.token : null,
          outcome: resolution.outcome.kind, representation,
        });
      }
      return resolution;
    },
    async close() {
      if (options.reader === undefined) await reader.close();
    },
  };
}

/** Counters of a {@link ScanRecorder}. */
export interface ScanRecorderStats {
  /** Scans written. */
  readonly written: number;
  /** Scans dropped because the queue was full. */
  readonly dropped: number;
  /** Scans lost because a write failed. */
  readonly failed: number;
  /** Scans waiting in the queue. */
  readonly queued: number;
}

/** A bounded, batching scan event writer that never blocks its callers. */
export interface ScanRecorder {
  /** Queues a scan; when the queue is full the scan is dropped and counted. Never throws, never waits. */
  record(scan: ScanRecord): void;
  stats(): ScanRecorderStats;
  /** Flushes what is queued (waiting at most `timeoutMs` for a stuck writer) and stops. */
  close(timeoutMs?: number): Promise<void>;
}

/** Options of {@link createScanRecorder}. */
export interface ScanRecorderOptions {
  /** Writes one batch; the default inserts into scan_events through the context's database ({@link createScanWriter}). */
  readonly write?: (scans: readonly ScanRecord[]) => Promise<unknown>;
  /** Largest queue; default 50,000. */
  readonly capacity?: number;
  /** Largest batch per write; default 1,000. */
  readonly batchSize?: number;
  /** Longest wait before a partial batch is written; default 250 ms. */
  readonly flushIntervalMs?: number;
  /** Told about failed writes (the scans are counted as failed and not retried). */
  readonly onError?: (error: unknown, lost: number) => void;
  /** Told how many scans were written, dropped (queue full) or failed, as it happens (for metrics). */
  readonly onOutcome?: (outcome: 'written' | 'dropped' | 'failed', count: number) => void;
}

/**
 * Records scan events off the request path: `record` appends to a bounded in-memory queue, one
 * writer at a time drains it in batches (one multi-row insert each). A slow or failing database
 * only fills the queue; beyond its capacity scans are dropped and counted, never awaited.
 */
export function createScanRecorder(ctx: UseCaseContext, options: ScanRecorderOptions = {}): ScanRecorder {
  const capacity = options.capacity ?? 50_000;
  const batchSize = options.batchSize ?? 1_000;
  const intervalMs = options.flushIntervalMs ?? 250;
  const writer = options.write === undefined ? createScanWriter(ctx.db) : null;
  const write = options.write ?? ((scans: readonly ScanRecord[]) => writer!.write(scans));
  let queue: ScanRecord[] = [];
  let written = 0;
  let dropped = 0;
  let failed = 0;
  let flushing: Promise<void> | null = null;
  let timer: NodeJS.Timeout | null = null;
  let closed = false;

  const flush = (): Promise<void> => {
    if (flushing !== null) return flushing;
    flushing = (async () => {
      while (queue.length > 0) {
        const batch = queue.length <= batchSize ? queue : queue.slice(0, batchSize);
        queue = queue.length <= batchSize ? [] : queue.slice(batchSize);
        try {
          await write(batch);
          written += batch.length;
          options.onOutcome?.('written', batch.length);
        } catch (error) {
          failed += batch.length;
          options.onOutcome?.('failed', batch.length);
          options.onError?.(error, batch.length);
        }
      }
    })().finally(() => {
      flushing = null;
    });
    return flushing;
  };
  const schedule = () => {
    if (timer !== null || closed) return;
    timer = setTimeout(() => {
      timer = null;
      void flush().then(() => {
        if (queue.length > 0) schedule();
      });
    }, intervalMs);
    timer.unref();
  };

  return {
    record(scan) {
      if (closed || queue.length >= capacity) {
        dropped++;
        options.onOutcome?.('dropped', 1);
        return;
      }
      queue.push(scan);
      if (queue.length >= batchSize && flushing === null) void flush();
      else schedule();
    },
    stats: () => ({ written, dropped, failed, queued: queue.length }),
    async close(timeoutMs = 5_000) {
      closed = true;
      if (timer !== null) clearTimeout(timer);
      timer = null;
      const deadline = new Promise((resolve) => setTimeout(resolve, timeoutMs).unref());
      await Promise.race([
        (async () => {
          await flushing;
          await flush();
        })(),
        deadline,
      ]);
      // A write still stuck keeps its connection; the pool is not waited for past the deadline.
      if (writer !== null) await Promise.race([writer.close(), deadline]);
    },
  };
}

/**
 * Deletes up to `limit` scan events older than `retentionDays` days (for the executor's sweeper,
 * which repeats it while a full batch went); returns how many.
 */
export async function purgeOldScanEvents(ctx: UseCaseContext, retentionDays: number, limit = 10_000): Promise<number> {
  const before = new Date(ctx.clock().getTime() - retentionDays * 86_400_000);
  return deleteScanEventsBefore(ctx.db.em.fork(), before, limit);
}
