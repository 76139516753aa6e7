import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { FirstRows } from './first-rows.ts';

describe('FirstRows', () => {
  it('answers as a Map of first rows would, for any keys (unicode, empty, repeated)', () => {
    fc.assert(fc.property(fc.array(fc.oneof(fc.string(), fc.string({ unit: 'grapheme' }), fc.constantFrom('', 'a', 'A', 'é', 'e\u0301')), { maxLength: 300 }), (keys) => {
      const rows = new FirstRows();
      const oracle = new Map<string, number>();
      keys.forEach((key, row) => {
        expect(rows.get(key)).toBe(oracle.get(key));
        if (!oracle.has(key)) oracle.set(key, row);
        expect(rows.add(key, row)).toBe(oracle.get(key));
      });
      expect(rows.size).toBe(oracle.size);
      for (const [key, row] of oracle) expect(rows.get(key)).toBe(row);
    }));
  });

  it('keeps every key of a million exactly as its storage grows', () => {
    const rows = new FirstRows();
    for (let i = 0; i < 1_000_000; i++) rows.add(`SKU-${i}`, i + 1);
    expect(rows.size).toBe(1_000_000);
    expect([rows.get('SKU-0'), rows.get('SKU-654321'), rows.get('SKU-999999'), rows.get('SKU-1000000'), rows.get('SKU-01')]).toEqual([1, 654_322, 1_000_000, undefined, undefined]);
    expect(rows.add('SKU-42', 7)).toBe(43);
  });
});
