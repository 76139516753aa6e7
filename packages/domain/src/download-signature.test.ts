import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { downloadExpiry, parseSigningKeys, signDownload, verifyDownload, type DownloadClaims, type SigningKey } from './download-signature.ts';

const key = (id: string, fill: number): SigningKey => ({ id, secret: new Uint8Array(32).fill(fill) });
const k1 = key('k1', 1);
const k2 = key('k2', 2);
const now = new Date('2026-01-01T00:00:00Z');
const brandId = '11111111-1111-4111-8111-111111111111';
const packId = '22222222-2222-4222-8222-222222222222';
const claims: DownloadClaims = {
  method: 'GET',
  brandId,
  packId,
  path: `/downloads/${brandId}/${packId}/payload-pack-${packId}.tar`,
  expires: downloadExpiry(now, 300),
};
const presented = (s: { exp: number; kid: string; sig: string }) => ({ exp: String(s.exp), kid: s.kid, sig: s.sig });
const { expires: _expires, ...unsigned } = claims;

describe('signDownload / verifyDownload', () => {
  it('accepts its own signature until the expiry, and refuses it from the expiry on', () => {
    const signed = signDownload([k1], claims);
    expect(signed.kid).toBe('k1');
    expect(signed.sig).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(verifyDownload([k1], unsigned, presented(signed), now)).toBeNull();
    expect(verifyDownload([k1], unsigned, presented(signed), new Date(now.getTime() + 299_999))).toBeNull();
    expect(verifyDownload([k1], unsigned, presented(signed), new Date(now.getTime() + 300_000))).toBe('expired');
  });

  it('refuses any change of any signed field (property)', () => {
    const signed = signDownload([k1], claims);
    const field = fc.constantFrom('method', 'brandId', 'packId', 'path');
    fc.assert(
      fc.property(field, fc.string({ minLength: 1, maxLength: 40 }), (name, extra) => {
        const changed = { ...unsigned, [name]: unsigned[name] + extra };
        expect(verifyDownload([k1], changed, presented(signed), now)).not.toBeNull();
      }),
    );
  });

  it('refuses a moved expiry, another key id, and any flipped bit of the signature (property)', () => {
    const signed = signDownload([k1, k2], claims);
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 10_000_000 }), (delta) => {
        expect(verifyDownload([k1, k2], unsigned, { ...presented(signed), exp: String(signed.exp + delta) }, now)).toBe('bad_signature');
        expect(verifyDownload([k1, k2], unsigned, { ...presented(signed), exp: String(signed.exp - delta) }, now)).not.toBeNull();
      }),
    );
    expect(verifyDownload([k1, k2], unsigned, { ...presented(signed), kid: 'k2' }, now)).toBe('bad_signature');
    const raw = Buffer.from(signed.sig, 'base64url');
    fc.assert(
      fc.property(fc.integer({ min: 0, max: raw.length * 8 - 1 }), (bit) => {
        const flipped = Buffer.from(raw);
        flipped[bit >> 3]! ^= 1 << (bit & 7);
        expect(verifyDownload([k1, k2], unsigned, { ...presented(signed), sig: flipped.toString('base64url') }, now)).toBe('bad_signature');
      }),
    );
  });

  it('refuses any other character at any position of the signature, including non-canonical encodings (property)', () => {
    const signed = signDownload([k1], claims);
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
    fc.assert(
      fc.property(fc.integer({ min: 0, max: signed.sig.length - 1 }), fc.integer({ min: 0, max: 63 }), (at, c) => {
        const replacement = alphabet[c]!;
        fc.pre(replacement !== signed.sig[at]);
        const sig = signed.sig.slice(0, at) + replacement + signed.sig.slice(at + 1);
        expect(verifyDownload([k1], unsigned, { ...presented(signed), sig }, now)).not.toBeNull();
      }),
      { numRuns: 500 },
    );
  });

  it('refuses truncated, padded, empty or missing parameters (property)', () => {
    const signed = signDownload([k1], claims);
    fc.assert(
      fc.property(fc.integer({ min: 0, max: signed.sig.length - 1 }), fc.string({ maxLength: 5 }), (cut, tail) => {
        expect(verifyDownload([k1], unsigned, { ...presented(signed), sig: signed.sig.slice(0, cut) }, now)).not.toBeNull();
        if (tail !== '') expect(verifyDownload([k1], unsigned, { ...presented(signed), sig: signed.sig + tail }, now)).not.toBeNull();
      }),
    );
    for (const missing of ['exp', 'kid', 'sig'] as const) {
      expect(verifyDownload([k1], unsigned, { ...presented(signed), [missing]: null }, now)).not.toBeNull();
    }
    expect(verifyDownload([k1], unsigned, { ...presented(signed), exp: '1e10' }, now)).toBe('malformed');
  });

  it("refuses another pack's signature, even of the same brand", () => {
    const otherPack = '33333333-3333-4333-8333-333333333333';
    const other = signDownload([k1], { ...claims, packId: otherPack, path: claims.path.replaceAll(packId, otherPack) });
    expect(verifyDownload([k1], unsigned, presented(other), now)).toBe('bad_signature');
  });

  it('rotates: the first key signs, every listed key verifies, and a removed key invalidates its URLs', () => {
    const old = signDownload([k1], claims);
    const current = signDownload([k2, k1], claims);
    expect(current.kid).toBe('k2');
    expect(verifyDownload([k2, k1], unsigned, presented(old), now)).toBeNull();
    expect(verifyDownload([k2, k1], unsigned, presented(current), now)).toBeNull();
    expect(verifyDownload([k2], unsigned, presented(old), now)).toBe('unknown_key');
    expect(verifyDownload([k2], unsigned, presented(current), now)).toBeNull();
  });

  it('does not accept a signature made with a different secret under the same key id', () => {
    const forged = signDownload([key('k1', 9)], claims);
    expect(verifyDownload([k1], unsigned, presented(forged), now)).toBe('bad_signature');
  });
});

describe('parseSigningKeys', () => {
  it('reads kid:base64 entries in order, standard or url-safe base64', () => {
    const a = Buffer.alloc(32, 0xfb).toString('base64');
    const b = Buffer.alloc(40, 0xfb).toString('base64url');
    const parsed = parseSigningKeys(`a:${a}, b:${b}`);
    expect('keys' in parsed && parsed.keys.map((k) => [k.id, k.secret.length])).toEqual([
      ['a', 32],
      ['b', 40],
    ]);
  });

  it('names the problem without echoing the secret', () => {
    const short = Buffer.alloc(8, 7).toString('base64');
    const parsed = parseSigningKeys(`a:${short}`);
    expect(parsed).toEqual({ error: 'key a must decode to at least 32 bytes, got 8' });
    expect(parseSigningKeys('')).toHaveProperty('error');
    expect(parseSigningKeys('nocolon')).toHaveProperty('error');
  });
});
