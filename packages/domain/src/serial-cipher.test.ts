import { createCipheriv, randomFillSync } from 'node:crypto';
import { FF1 } from '@noble/ciphers/ff1';
import { describe, expect, it } from 'vitest';
import { generateSerials, generateTimedSerials, serialAlphabet, serialLength } from './identity.ts';
import { createSerialCipher, generateSerialCipherKey, serialCipherKeyBytes, serialCipherMaxOrdinal, serialCipherMaxSeq } from './serial-cipher.ts';

const random = (bytes: Uint8Array) => void randomFillSync(bytes);
const fromHex = (hex: string) => Uint8Array.from(Buffer.from(hex, 'hex'));
const serialPattern = new RegExp(`^[${serialAlphabet}]{${serialLength}}$`);

/**
 * FF1 as NIST SP 800-38G writes it, for any radix, length and tweak, one AES block at a time with
 * BigInt arithmetic: the reference the radix-32 cipher is held to (it is itself held to NIST's samples).
 */
function referenceFf1(key: Uint8Array, radix: number, tweak: Uint8Array, x: number[], decrypt: boolean): number[] {
  const aes = (block: Uint8Array) => {
    const c = createCipheriv(`aes-${key.length * 8}-ecb`, key, null);
    c.setAutoPadding(false);
    return Uint8Array.from(c.update(block));
  };
  const bigRadix = BigInt(radix);
  const num = (digits: number[]) => digits.reduce((n, d) => n * bigRadix + BigInt(d), 0n);
  const str = (m: number, value: bigint) => {
    const out = new Array<number>(m);
    for (let k = m - 1; k >= 0; k--, value /= bigRadix) out[k] = Number(value % bigRadix);
    return out;
  };
  const n = x.length;
  const u = Math.floor(n / 2);
  const v = n - u;
  const b = Math.ceil(Math.ceil(v * Math.log2(radix)) / 8);
  const d = 4 * Math.ceil(b / 4) + 4;
  const t = tweak.length;
  const p = [
    1,
    2,
    1,
    radix >> 16,
    (radix >> 8) & 255,
    radix & 255,
    10,
    u & 255,
    n >>> 24,
    (n >> 16) & 255,
    (n >> 8) & 255,
    n & 255,
    t >>> 24,
    (t >> 16) & 255,
    (t >> 8) & 255,
    t & 255,
  ];
  const pad = (((-t - b - 1) % 16) + 16) % 16;
  const round = (i: number, half: number[]) => {
    const numBytes = new Uint8Array(b);
    let h = num(half);
    for (let k = b - 1; k >= 0; k--, h >>= 8n) numBytes[k] = Number(h & 255n);
    const pq = Uint8Array.from([...p, ...tweak, ...new Array<number>(pad).fill(0), i, ...numBytes]);
    let r = new Uint8Array(16);
    for (let off = 0; off < pq.length; off += 16) r = aes(r.map((byte, k) => byte ^ pq[off + k]!));
    const s = [...r];
    for (let j = 1; s.length < d; j++) {
      const block = new Uint8Array(16);
      block[12] = j >>> 24;
      block[13] = (j >> 16) & 255;
      block[14] = (j >> 8) & 255;
      block[15] = j & 255;
      s.push(...aes(r.map((byte, k) => byte ^ block[k]!)));
    }
    return s.slice(0, d).reduce((y, byte) => (y << 8n) | BigInt(byte), 0n);
  };
  let a = x.slice(0, u);
  let bb = x.slice(u);
  if (!decrypt) {
    for (let i = 0; i < 10; i++) {
      const m = i % 2 === 0 ? u : v;
      const mod = bigRadix ** BigInt(m);
      const c = (num(a) + round(i, bb)) % mod;
      a = bb;
      bb = str(m, c);
    }
  } else {
    for (let i = 9; i >= 0; i--) {
      const m = i % 2 === 0 ? u : v;
      const mod = bigRadix ** BigInt(m);
      const c = (((num(bb) - round(i, a)) % mod) + mod) % mod;
      bb = a;
      a = str(m, c);
    }
  }
  return [...a, ...bb];
}

const digits36 = '0123456789abcdefghijklmnopqrstuvwxyz';
const toDigits = (s: string) => [...s].map((c) => digits36.indexOf(c));
const fromDigits = (xs: number[]) => xs.map((d) => digits36[d]).join('');

/** The serial of (ordinal, seq) by the reference: the 100-bit plaintext ordinal * 2^20 + seq in 20 base-32 digits. */
function referenceSerial(key: Uint8Array, ordinal: number, seq: number): string {
  let plain = BigInt(ordinal) * 2n ** 20n + BigInt(seq);
  const x = new Array<number>(20);
  for (let k = 19; k >= 0; k--, plain >>= 5n) x[k] = Number(plain & 31n);
  return referenceFf1(key, 32, new Uint8Array(0), x, false)
    .map((d) => serialAlphabet[d])
    .join('');
}

describe('the FF1 reference', () => {
  // NIST SP 800-38G, FF1 samples 1-9 (AES-128, AES-192, AES-256; radix 10 and 36; three tweaks).
  const keys = [
    '2B7E151628AED2A6ABF7158809CF4F3C',
    '2B7E151628AED2A6ABF7158809CF4F3CEF4359D8D580AA4F',
    '2B7E151628AED2A6ABF7158809CF4F3CEF4359D8D580AA4F7F036D6F04FC6A94',
  ];
  const samples: [key: string, radix: number, tweak: string, plaintext: string, ciphertext: string][] = [
    [keys[0]!, 10, '', '0123456789', '2433477484'],
    [keys[0]!, 10, '39383736353433323130', '0123456789', '6124200773'],
    [keys[0]!, 36, '3737373770717273373737', '0123456789abcdefghi', 'a9tv40mll9kdu509eum'],
    [keys[1]!, 10, '', '0123456789', '2830668132'],
    [keys[1]!, 10, '39383736353433323130', '0123456789', '2496655549'],
    [keys[1]!, 36, '3737373770717273373737', '0123456789abcdefghi', 'xbj3kv35jrawxv32ysr'],
    [keys[2]!, 10, '', '0123456789', '6657667009'],
    [keys[2]!, 10, '39383736353433323130', '0123456789', '1001623463'],
    [keys[2]!, 36, '3737373770717273373737', '0123456789abcdefghi', 'xs8a0azh2avyalyzuwd'],
  ];

  it.each(samples.map((s, i) => [i + 1, ...s] as const))('matches NIST sample %i both ways', (_, key, radix, tweak, plaintext, ciphertext) => {
    expect(fromDigits(referenceFf1(fromHex(key), radix, fromHex(tweak), toDigits(plaintext), false))).toBe(ciphertext);
    expect(fromDigits(referenceFf1(fromHex(key), radix, fromHex(tweak), toDigits(ciphertext), true))).toBe(plaintext);
  });
});

describe('createSerialCipher', () => {
  const key = generateSerialCipherKey(random);
  const cipher = createSerialCipher(key);

  it('encodes digit for digit as the FF1 reference and @noble/ciphers FF1 (radix 32, AES-256, empty tweak) do', () => {
    const noble = FF1(32, key);
    const fixed = [
      [0, 1],
      [0, serialCipherMaxSeq],
      [serialCipherMaxOrdinal, 1],
      [serialCipherMaxOrdinal, serialCipherMaxSeq],
      [2 ** 30 - 1, 1_000_000],
      [2 ** 30, 7],
    ];
    const drawn = Array.from({ length: 3000 }, () => {
      const words = new Uint32Array(2);
      randomFillSync(words);
      return [words[0]!, (words[1]! % serialCipherMaxSeq) + 1];
    });
    for (const [ordinal, seq] of [...fixed, ...drawn]) {
      const serial = cipher.encode(ordinal!, seq!);
      let plain = BigInt(ordinal!) * 2n ** 20n + BigInt(seq!);
      const x = new Array<number>(20);
      for (let k = 19; k >= 0; k--, plain >>= 5n) x[k] = Number(plain & 31n);
      expect(serial).toBe(
        noble
          .encrypt(x)
          .map((d) => serialAlphabet[d])
          .join(''),
      );
      expect(cipher.decode(serial)).toEqual({ batchOrdinal: ordinal, seq });
    }
    for (const [ordinal, seq] of [...fixed, ...drawn.slice(0, 50)]) expect(cipher.encode(ordinal!, seq!)).toBe(referenceSerial(key, ordinal!, seq!));
  });

  it('encodes a range as each of its units alone', () => {
    const range = cipher.encodeRange(41, 999_001, 1000);
    expect(range).toHaveLength(1000);
    for (let j = 0; j < range.length; j += 37) expect(range[j]).toBe(cipher.encode(41, 999_001 + j));
    expect(range[999]).toBe(cipher.encode(41, 1_000_000));
    expect(cipher.encodeRange(41, 5, 0)).toEqual([]);
  });

  const batchSize = Number(process.env.SERIAL_CIPHER_BATCH ?? 100_000);
  it(`gives a whole batch (${batchSize.toLocaleString('en')} seqs, SERIAL_CIPHER_BATCH) distinct serials that decode to their seqs`, {
    timeout: 300_000,
  }, () => {
    const seen = new Set<string>();
    const ordinal = 123_456_789;
    for (let first = 1; first <= batchSize; first += 2000) {
      const count = Math.min(2000, batchSize - first + 1);
      const serials = cipher.encodeRange(ordinal, first, count);
      const positions = cipher.decodeMany(serials);
      for (let j = 0; j < count; j++) {
        const serial = serials[j]!;
        if (!serialPattern.test(serial)) expect(serial).toMatch(serialPattern);
        seen.add(serial);
        const position = positions[j]!;
        if (position === null || position.batchOrdinal !== ordinal || position.seq !== first + j)
          expect(position).toEqual({ batchOrdinal: ordinal, seq: first + j });
      }
    }
    expect(seen.size).toBe(batchSize);
  });

  it('decodes serials made before (random or timed) to null, but for a negligible fraction', () => {
    // A serial that is not an encoding decrypts to a uniform plaintext: zero padding with probability 2^-48.
    const old = [...generateTimedSerials(100_000, new Date(), random), ...generateSerials(100_000, random)];
    expect(cipher.decodeMany(old).filter((p) => p !== null)).toEqual([]);
    expect(old.slice(0, 2000).filter((s) => cipher.decode(s) !== null)).toEqual([]);
  });

  it('decodes many serials at once as each alone, the malformed and foreign ones to null in their places', () => {
    const mixed = [...cipher.encodeRange(9, 500, 40), 'short', ...generateTimedSerials(20, new Date(), random), ...cipher.encodeRange(2 ** 31, 1, 40)];
    mixed.splice(30, 0, mixed[3]!.toLowerCase());
    const many = cipher.decodeMany(mixed);
    expect(many).toEqual(mixed.map((s) => cipher.decode(s)));
    expect(many[0]).toEqual({ batchOrdinal: 9, seq: 500 });
    expect(many[30]).toBeNull();
    expect(many.at(-1)).toEqual({ batchOrdinal: 2 ** 31, seq: 40 });
    expect(many.filter((p) => p === null)).toHaveLength(22);
    expect(cipher.decodeMany([])).toEqual([]);
  });

  it('decodes strings of the wrong length or outside the alphabet, and lower case, to null', () => {
    const serial = cipher.encode(7, 42);
    expect(cipher.decode(serial)).toEqual({ batchOrdinal: 7, seq: 42 });
    for (const wrong of [
      '',
      serial.slice(1),
      `${serial}0`,
      serial.toLowerCase(),
      `I${serial.slice(1)}`,
      `U${serial.slice(1)}`,
      `${serial.slice(0, 19)}-`,
      `${serial.slice(0, 19)}é`,
    ]) {
      expect(cipher.decode(wrong)).toBeNull();
    }
  });

  it('decodes to null the encryptions of plaintexts that name no unit: padding not zero, or seq 0', () => {
    const noble = FF1(32, key);
    const serialOf = (plain: bigint) => {
      const x = new Array<number>(20);
      for (let k = 19; k >= 0; k--, plain >>= 5n) x[k] = Number(plain & 31n);
      return noble
        .encrypt(x)
        .map((d) => serialAlphabet[d])
        .join('');
    };
    const unit = 5n * 2n ** 20n + 42n;
    expect(cipher.decode(serialOf(unit))).toEqual({ batchOrdinal: 5, seq: 42 });
    // The lowest and the highest padding bit, and every padding bit, set on a real unit's plaintext.
    for (const padding of [2n ** 52n, 2n ** 99n, 2n ** 100n - 2n ** 52n]) expect(cipher.decode(serialOf(unit + padding))).toBeNull();
    expect(cipher.decode(serialOf(5n * 2n ** 20n))).toBeNull();
  });

  it('gives other serials under another key, which do not decode under the first', () => {
    const other = createSerialCipher(generateSerialCipherKey(random));
    const mine = cipher.encodeRange(3, 1, 2000);
    const theirs = other.encodeRange(3, 1, 2000);
    expect(theirs.filter((s, j) => s === mine[j])).toEqual([]);
    expect(theirs.filter((s) => cipher.decode(s) !== null)).toEqual([]);
  });

  it('refuses a key of the wrong length and positions outside its fields', () => {
    expect(() => createSerialCipher(new Uint8Array(16))).toThrow(`serial cipher key must be ${serialCipherKeyBytes} bytes, got 16`);
    expect(() => cipher.encode(-1, 1)).toThrow(/batch ordinal/);
    expect(() => cipher.encode(2 ** 32, 1)).toThrow(/batch ordinal/);
    expect(() => cipher.encode(1.5, 1)).toThrow(/batch ordinal/);
    expect(() => cipher.encode(0, 0)).toThrow(/seq must be/);
    expect(() => cipher.encode(0, 2 ** 20)).toThrow(/seq must be/);
    expect(() => cipher.encodeRange(0, serialCipherMaxSeq, 2)).toThrow(/seq must be/);
    expect(() => cipher.encodeRange(0, 1, -1)).toThrow(/count/);
  });
});
