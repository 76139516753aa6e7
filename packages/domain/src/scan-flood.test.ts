import { describe, expect, it } from 'vitest';
import { createScanFloodGate, type ScanFloodFacts } from './scan-flood.ts';

interface Scan {
  readonly serial: string | null;
  readonly at: number;
}
const limits = { windowMs: 1_000, unknownPerWindow: 3, maxTracked: 100 };
const gate = () => createScanFloodGate<Scan>(limits, (scan) => ({ ...scan, serial: null }));
const facts = (serial: string, unknownSerial = false, brandId = 'b1'): ScanFloodFacts => ({
  brandId,
  gtin: '09506000134352',
  identity: `serial ${serial}`,
  unknownSerial,
});
/** Rows stored now plus rows given later, with the scans each stands for. */
function replay(scans: { serial: string; client: string; at: number; unknown?: boolean; brand?: string }[]) {
  const g = gate();
  const rows: { scan: Scan; count: number }[] = [];
  for (const s of scans) {
    const scan = { serial: s.serial, at: s.at };
    if (g.admit(scan, facts(s.serial, s.unknown, s.brand), s.client, s.at)) rows.push({ scan, count: 1 });
    rows.push(...g.due(s.at));
  }
  rows.push(...g.due(Number.POSITIVE_INFINITY));
  return { rows, gate: g };
}

describe('createScanFloodGate', () => {
  it('stores a flood of one serial from one client as one row and one row counting the repeats per window', () => {
    const scans = Array.from({ length: 34_081 }, (_, i) => ({ serial: 'S1', client: '198.51.100.7', at: Math.floor(i / 3.4) }));
    const { rows, gate: g } = replay(scans);
    // 34,081 scans over ~10 s with a 1 s window: two rows per window.
    expect(rows.length).toBeLessThanOrEqual(2 * 11);
    expect(rows.reduce((sum, r) => sum + r.count, 0)).toBe(34_081);
    expect(g.pending()).toBe(0);
  });

  it('stores every scan of different clients or different serials one by one', () => {
    const { rows } = replay([
      { serial: 'S1', client: 'a', at: 0 },
      { serial: 'S1', client: 'b', at: 1 },
      { serial: 'S2', client: 'a', at: 2 },
      { serial: 'S1', client: 'a', at: 3 },
    ]);
    expect(rows.map((r) => [r.scan.serial, r.count])).toEqual([
      ['S1', 1],
      ['S1', 1],
      ['S2', 1],
      ['S1', 1],
    ]);
  });

  it('counts a repeat after its window closed into a new window, the closed one given once', () => {
    const { rows } = replay([
      { serial: 'S1', client: 'a', at: 0 },
      { serial: 'S1', client: 'a', at: 10 },
      { serial: 'S1', client: 'a', at: 20 },
      { serial: 'S1', client: 'a', at: 1_500 },
      { serial: 'S1', client: 'a', at: 1_600 },
    ]);
    expect(rows.map((r) => [r.scan.at, r.count]).sort((x, y) => x[0]! - y[0]!)).toEqual([
      [0, 1],
      [20, 2],
      [1_500, 1],
      [1_600, 1],
    ]);
  });

  it("samples a brand's never-issued serials beyond the budget into one row per GTIN, with the exact count", () => {
    const scans = Array.from({ length: 1_000 }, (_, i) => ({ serial: `X${i}`, client: `c${i}`, at: i % 900, unknown: true }));
    const { rows } = replay(scans);
    // The budget's three, then the sampled row of the window (serial not kept), then the next window's three and its sample.
    const stored = rows.filter((r) => r.scan.serial !== null);
    const sampled = rows.filter((r) => r.scan.serial === null);
    expect(stored).toHaveLength(3);
    expect(sampled).toHaveLength(1);
    expect(rows.reduce((sum, r) => sum + r.count, 0)).toBe(1_000);
  });

  it("keeps one brand's budget away from another brand's, and known serials out of the budget", () => {
    const flood = Array.from({ length: 50 }, (_, i) => ({ serial: `X${i}`, client: `c${i}`, at: i, unknown: true, brand: 'b1' }));
    const { rows } = replay([...flood, { serial: 'Y1', client: 'z', at: 60, unknown: true, brand: 'b2' }, { serial: 'K1', client: 'z', at: 61 }]);
    expect(rows.filter((r) => r.count === 1 && r.scan.serial !== null).map((r) => r.scan.serial)).toEqual(['X0', 'X1', 'X2', 'Y1', 'K1']);
  });

  it('remembers at most maxTracked pairs: beyond it scans are stored one by one', () => {
    const g = createScanFloodGate<Scan>({ ...limits, maxTracked: 2 }, (s) => s);
    const admitted = ['a', 'b', 'c', 'c', 'c'].map((client, i) => g.admit({ serial: 'S', at: i }, facts('S'), client, i));
    expect(admitted).toEqual([true, true, true, true, true]);
    expect(g.pending()).toBe(2);
  });
});
