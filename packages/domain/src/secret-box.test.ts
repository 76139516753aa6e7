import { describe, expect, it } from 'vitest';
import { isSealedSecret, openSecret, parseSecretKeys, sealedSecretKeyId, sealSecret, type SecretBoxError } from './secret-box.ts';

const keys = [
  { id: 'k2', secret: new Uint8Array(32).fill(2) },
  { id: 'k1', secret: new Uint8Array(32).fill(1) },
];
let counter = 0;
const random = (buffer: Uint8Array) => void buffer.fill(++counter);

describe('secrets at rest', () => {
  it('seals with the first key, opens with any listed key, and never shows the plaintext', () => {
    const sealed = sealSecret(keys, 'whsec_top-secret', 'row-1', random);
    expect(isSealedSecret(sealed)).toBe(true);
    expect(sealedSecretKeyId(sealed)).toBe('k2');
    expect(sealed).not.toContain('top-secret');
    expect(openSecret(keys, sealed, 'row-1')).toBe('whsec_top-secret');
    const older = sealSecret(keys.slice(1), 'whsec_older', 'row-1', random);
    expect(openSecret(keys, older, 'row-1')).toBe('whsec_older');
    // A fresh IV every time: the same secret seals differently.
    expect(sealSecret(keys, 'whsec_top-secret', 'row-1', random)).not.toBe(sealed);
  });

  it('refuses a value moved to another row, altered, or sealed with a key no longer listed, naming only the key id', () => {
    const sealed = sealSecret(keys, 'whsec_top-secret', 'row-1', random);
    const failure = (f: () => unknown) => {
      try {
        f();
      } catch (err) {
        return err as SecretBoxError;
      }
      throw new Error('expected a failure');
    };
    expect(failure(() => openSecret(keys, sealed, 'row-2')).name).toBe('SecretBoxError');
    const flipped = sealed.slice(0, -2) + (sealed.at(-2) === 'A' ? 'B' : 'A') + sealed.at(-1)!;
    expect(failure(() => openSecret(keys, flipped, 'row-1')).message).toMatch(/k2 does not open/);
    expect(failure(() => openSecret(keys.slice(1), sealed, 'row-1')).message).toBe('secret sealed with key k2, which is not configured');
    // A value stored before sealing existed reads as it is.
    expect(openSecret(keys, 'whsec_plain', 'row-1')).toBe('whsec_plain');
  });

  it('parses kid:base64key lists of 32-byte keys', () => {
    expect(parseSecretKeys(`a:${Buffer.alloc(32, 1).toString('base64')}`)).toMatchObject({ keys: [{ id: 'a' }] });
    expect(parseSecretKeys(`a:${Buffer.alloc(40, 1).toString('base64')}`)).toEqual({ error: 'key a must decode to exactly 32 bytes, got 40' });
  });
});
