import { randomFillSync } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { generateSerials, generateTimedSerials, serialLength, serialTimeLength, unitIdOf, unitIdPrefix } from './identity.ts';

describe('generateSerials', () => {
  it('spells each random byte as the Crockford base32 character of its low five bits, 20 to a serial', () => {
    // Bytes 0, 1, 2, ...: the first serial spells alphabet[0..19], the second alphabet[20..31] then
    // alphabet[0..7] again (byte 32 has low bits 0); the 13th holds bytes 240-255, then 0-3.
    const counting = (bytes: Uint8Array) =>
      bytes.forEach((_, i) => {
        bytes[i] = i % 256;
      });
    const serials = generateSerials(13, counting);
    expect(serials[0]).toBe('0123456789ABCDEFGHJK');
    expect(serials[1]).toBe('MNPQRSTVWXYZ01234567');
    expect(serials[12]).toBe('GHJKMNPQRSTVWXYZ0123');
    expect(serials).toHaveLength(13);
  });

  it('makes distinct serials of serialLength characters from the alphabet only', () => {
    const serials = generateSerials(5000, (bytes) => void randomFillSync(bytes));
    expect(new Set(serials).size).toBe(5000);
    for (const serial of serials) expect(serial).toMatch(new RegExp(`^[0-9A-HJKMNP-TV-Z]{${serialLength}}$`));
  });

  it('makes none for a count of 0', () => {
    expect(generateSerials(0, (bytes) => void randomFillSync(bytes))).toEqual([]);
  });
});

describe('generateTimedSerials', () => {
  const random = (bytes: Uint8Array) => void randomFillSync(bytes);

  it('starts every serial with its second, so serials of later seconds sort after earlier ones', () => {
    const at = new Date('2026-11-28T02:30:00.000Z');
    const first = generateTimedSerials(1000, at, random);
    const next = generateTimedSerials(1000, new Date(at.getTime() + 1000), random);
    const prefixes = new Set(first.map((s) => s.slice(0, serialTimeLength)));
    expect(prefixes.size).toBe(1);
    expect(next[0]!.slice(0, serialTimeLength) > first[0]!.slice(0, serialTimeLength)).toBe(true);
    expect([...first, ...next].every((s) => new RegExp(`^[0-9A-HJKMNP-TV-Z]{${serialLength}}$`).test(s))).toBe(true);
    expect(first.every((s) => next.every((t) => t > s))).toBe(true);
  });

  it('keeps 70 random bits after the prefix: 100,000 serials of one second are distinct', () => {
    const serials = generateTimedSerials(100_000, new Date(), random);
    expect(new Set(serials).size).toBe(100_000);
    expect(new Set(serials.map((s) => s.slice(serialTimeLength, serialTimeLength + 4))).size).toBeGreaterThan(90_000);
  });
});

describe('unitIdOf', () => {
  const batch = 'f47ac10b-58cc-4372-a567-0e02b2c3d479';

  it('is the batch id with version 8 and the seq in the last four bytes, ascending with seq', () => {
    expect(unitIdOf(batch, 1)).toBe('f47ac10b-58cc-8372-a567-0e0200000001');
    expect(unitIdOf(batch, 0x12345678)).toBe('f47ac10b-58cc-8372-a567-0e0212345678');
    expect(unitIdOf(batch, 2) > unitIdOf(batch, 1)).toBe(true);
    expect(unitIdPrefix(batch)).toBe('f47ac10b58cc8372a5670e02');
  });

  it('never equals a random (version 4) id', () => {
    expect(unitIdOf(batch, 7)[14]).toBe('8');
    expect(() => unitIdOf('not-a-uuid', 1)).toThrow('mint batch id must be a uuid');
  });
});
