import { randomFillSync } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { generateSerials, serialLength } from './identity.ts';

describe('generateSerials', () => {
  it('spells each random byte as the Crockford base32 character of its low five bits, 20 to a serial', () => {
    // Bytes 0, 1, 2, ...: the first serial spells alphabet[0..19], the second alphabet[20..31] then
    // alphabet[0..7] again (byte 32 has low bits 0); the 13th holds bytes 240-255, then 0-3.
    const counting = (bytes: Uint8Array) => bytes.forEach((_, i) => { bytes[i] = i % 256; });
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
