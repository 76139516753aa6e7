/**
 * Keeps anonymous scan floods from becoming rows. The resolver answers every scan, but what it
 * records of a flood is bounded: one client's repeated scans of one identity within a window are
 * one row plus one row counting the repeats, and a brand's scans of serials it never issued are
 * stored one by one only up to a budget per window, beyond which they are counted per GTIN into
 * one sampled row. Counts stay exact: the rows' counts add up to the scans answered.
 *
 * The client key (an address) lives only in memory for one window; it is never part of a row.
 */

/** Limits of a {@link ScanFloodGate}. */
export interface ScanFloodLimits {
  /** How long one client's repeats of one scan are counted into one row, in milliseconds. */
  readonly windowMs: number;
  /** Scans of never-issued serials a brand has stored one by one per window; the rest are counted per GTIN. */
  readonly unknownPerWindow: number;
  /** Most (client, scan) pairs remembered at once; beyond it a new pair's scans are stored one by one. */
  readonly maxTracked: number;
}

/** The defaults: a minute's window, 100 never-issued serials a brand a minute, 50,000 pairs (a few MB). */
export const defaultScanFloodLimits: ScanFloodLimits = { windowMs: 60_000, unknownPerWindow: 100, maxTracked: 50_000 };

/** What the gate needs to know of a scan besides the scan itself. */
export interface ScanFloodFacts {
  /** The brand whose identity was scanned. */
  readonly brandId: string;
  /** The GTIN of the path, when it had one. */
  readonly gtin: string | null;
  /** What makes two scans the same scan (identity, outcome, representation, link type), as one string. */
  readonly identity: string;
  /** True when the path named a serial the brand never issued. */
  readonly unknownSerial: boolean;
}

/** A row to store: a scan and how many scans it stands for. */
export interface CountedScan<T> {
  readonly scan: T;
  readonly count: number;
}

/** Decides which scans become rows now and which are counted into rows written when their window closes. */
export interface ScanFloodGate<T> {
  /** True: store this scan now (as one scan). False: it was counted into a row that {@link due} gives later. */
  admit(scan: T, facts: ScanFloodFacts, client: string, now: number): boolean;
  /** The counted rows of the windows closed by `now` (every window with `Infinity`), each given once. */
  due(now: number): CountedScan<T>[];
  /** How many pairs and buckets are held (0 when nothing is pending). */
  pending(): number;
}

interface Repeats<T> {
  readonly until: number;
  last: T | null;
  count: number;
}

/**
 * A gate with the given limits. `sampled` turns a scan of a never-issued serial into the row that
 * counts a flood's scans under its GTIN (the serials of those scans are not kept).
 */
export function createScanFloodGate<T>(limits: ScanFloodLimits, sampled: (scan: T) => T): ScanFloodGate<T> {
  // Entries are added with `until = now + window` and `now` only grows, so each map's insertion
  // order is its order of expiry: `due` reads from the front and stops at the first open window.
  const repeats = new Map<string, Repeats<T>>();
  const budgets = new Map<string, { until: number; used: number }>();
  const floods = new Map<string, Repeats<T>>();
  /** Rows of windows found closed by `admit` before `due` collected them. */
  let closed: CountedScan<T>[] = [];
  /** Takes a closed window's entry out of its map, keeping its count for `due`. */
  const close = (map: Map<string, Repeats<T>>, key: string, value: Repeats<T>) => {
    map.delete(key);
    if (value.count > 0 && value.last !== null) closed.push({ scan: value.last, count: value.count });
  };

  const expire = <V extends { until: number }>(map: Map<string, V>, now: number, each: (value: V) => void) => {
    for (const [key, value] of map) {
      if (value.until > now) break;
      map.delete(key);
      each(value);
    }
  };

  return {
    admit(scan, facts, client, now) {
      const pair = `${client}\u0000${facts.brandId}\u0000${facts.identity}`;
      const seen = repeats.get(pair);
      if (seen !== undefined && seen.until > now) {
        seen.last = scan;
        seen.count++;
        return false;
      }
      if (seen !== undefined) close(repeats, pair, seen);
      if (facts.unknownSerial) {
        let budget = budgets.get(facts.brandId);
        if (budget === undefined || budget.until <= now) {
          budgets.delete(facts.brandId);
          budget = { until: now + limits.windowMs, used: 0 };
          budgets.set(facts.brandId, budget);
        }
        if (budget.used >= limits.unknownPerWindow) {
          const bucket = `${facts.brandId}\u0000${facts.gtin ?? ''}`;
          const flood = floods.get(bucket);
          if (flood !== undefined && flood.until > now) {
            flood.count++;
            return false;
          }
          if (flood !== undefined) close(floods, bucket, flood);
          if (floods.size >= limits.maxTracked) return true;
          floods.set(bucket, { until: now + limits.windowMs, last: sampled(scan), count: 1 });
          return false;
        }
        budget.used++;
      }
      if (repeats.size < limits.maxTracked) repeats.set(pair, { until: now + limits.windowMs, last: null, count: 0 });
      return true;
    },
    due(now) {
      const rows = closed;
      closed = [];
      const collect = (value: Repeats<T>) => {
        if (value.count > 0 && value.last !== null) rows.push({ scan: value.last, count: value.count });
      };
      expire(repeats, now, collect);
      expire(floods, now, collect);
      expire(budgets, now, () => {});
      return rows;
    },
    pending: () => repeats.size + floods.size + budgets.size + closed.length,
  };
}
