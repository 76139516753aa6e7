import type { ResolverReader } from '@mint/db';
import { UnavailableError } from '@mint/domain';

/** Options of {@link createLastKnownReader}. */
export interface LastKnownOptions {
  /** Most units (with their own links) remembered; the least recently answered go first. Default 100,000. */
  readonly maxUnits?: number;
  /** Most of every other answer (brands, products, lots, links, domains) remembered; default 50,000. */
  readonly maxEntries?: number;
  /**
   * After a failed read, how long the reader answers from memory alone without trying the database
   * (a lookup it knows nothing of fails at once meanwhile); default 1,000 ms. The first read after
   * it tries the database again.
   */
  readonly retryAfterMs?: number;
  /** The clock, in milliseconds; default `Date.now`. */
  readonly now?: () => number;
}

/** A {@link ResolverReader} that answers from its last-known answers while the database fails. */
export interface LastKnownReader extends ResolverReader {
  /**
   * True from a failed read until the next read that succeeds: answers given meanwhile may be
   * stale (they come from memory, and a change made just before the outage may not be in it).
   */
  readonly degraded: boolean;
  /** How many answers of each store are remembered (for metrics and tests). */
  sizes(): { readonly units: number; readonly other: number };
}

/**
 * A map of at most `max` entries that forgets the least recently used one first (a Map keeps
 * insertion order; a hit moves its key to the end).
 */
class Recent<V> {
  readonly #entries = new Map<string, V>();
  readonly #max: number;
  constructor(max: number) {
    this.#max = max;
  }
  get size(): number {
    return this.#entries.size;
  }
  has(key: string): boolean {
    return this.#entries.has(key);
  }
  get(key: string): V | undefined {
    return this.#entries.get(key);
  }
  set(key: string, value: V): void {
    this.#entries.delete(key);
    this.#entries.set(key, value);
    if (this.#entries.size > this.#max) this.#entries.delete(this.#entries.keys().next().value!);
  }
}

/**
 * Wraps the resolver's reader so that the resolver outlives its database: every answer read is
 * remembered (units in a store of their own, bounded by `maxUnits`, the rest by `maxEntries`,
 * least recently used forgotten first), and while reads fail (the database is stopped,
 * unreachable or refusing connections) a lookup answers what it last answered for the same key.
 * A lookup it has never answered throws {@link UnavailableError} (the resolver then answers 503
 * with Retry-After rather than a wrong 404). After a failure the database is left alone for
 * `retryAfterMs` (no connection attempt per scan), then tried again by the next read; one success
 * ends the degraded state. The remembered answers are used only on failure: while the database
 * answers, every read goes to it, so a changed unit answers as it is now.
 */
export function createLastKnownReader(reader: ResolverReader, options: LastKnownOptions = {}): LastKnownReader {
  const now = options.now ?? Date.now;
  const retryAfterMs = options.retryAfterMs ?? 1_000;
  const units = new Recent<unknown>(options.maxUnits ?? 100_000);
  const other = new Recent<unknown>(options.maxEntries ?? 50_000);
  let downUntil = 0;
  let degraded = false;

  /** `read` through the database, remembered under `key` in `store`; the remembered answer while reads fail. */
  const remembered = <T>(store: Recent<unknown>, key: string, read: () => Promise<T>): Promise<T> => {
    if (degraded && now() < downUntil) return fallback(store, key, undefined);
    return read().then(
      (value) => {
        degraded = false;
        store.set(key, value);
        return value;
      },
      (error: unknown) => {
        degraded = true;
        downUntil = now() + retryAfterMs;
        return fallback<T>(store, key, error);
      },
    );
  };
  const fallback = <T>(store: Recent<unknown>, key: string, cause: unknown): Promise<T> => {
    if (store.has(key)) return Promise.resolve(store.get(key) as T);
    return Promise.reject(
      new UnavailableError('the resolver cannot reach its database and has no earlier answer for this identity', retryAfterSeconds(retryAfterMs), { cause }),
    );
  };

  return {
    findBrandBySlug: (slug) => remembered(other, `b ${slug}`, () => reader.findBrandBySlug(slug)),
    findBrandsByGtin: (gtin) => remembered(other, `g ${gtin}`, () => reader.findBrandsByGtin(gtin)),
    brandDomains: () => remembered(other, 'd', () => reader.brandDomains()),
    findUnit: (brandId, serial, gtin, withLinks) =>
      remembered(units, `${brandId} ${gtin ?? ''} ${serial}`, () => reader.findUnit(brandId, serial, gtin, withLinks)),
    findProduct: (brandId, gtin) => remembered(other, `p ${brandId} ${gtin}`, () => reader.findProduct(brandId, gtin)),
    findLot: (brandId, gtin, lotCode) => remembered(other, `l ${brandId} ${gtin} ${lotCode}`, () => reader.findLot(brandId, gtin, lotCode)),
    links: {
      levelOf: (brandId, gtin) => remembered(other, `k ${brandId} ${gtin}`, () => reader.links.levelOf(brandId, gtin)),
      qualified: (brandId, gtin, level, qualifier) =>
        remembered(other, `q ${brandId} ${gtin} ${level} ${qualifier}`, () => reader.links.qualified(brandId, gtin, level, qualifier)),
    },
    close: () => reader.close(),
    get degraded() {
      return degraded;
    },
    sizes: () => ({ units: units.size, other: other.size }),
  };
}

/** Whole seconds of a wait, at least 1. */
const retryAfterSeconds = (ms: number) => Math.max(1, Math.ceil(ms / 1_000));
