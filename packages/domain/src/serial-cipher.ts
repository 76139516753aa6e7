/**
 * Serials that decode to their unit: a unit's serial is the FF1 encryption (NIST SP 800-38G rev. 1,
 * format-preserving) of its position, its batch's per-brand ordinal and its seq, under the brand's
 * key, over the serial alphabet (radix 32, 20 characters: 100 bits). The serial thus names its batch
 * and seq to whoever holds the key, and to nobody else.
 *
 * Plaintext: the 100-bit number `batchOrdinal * 2^20 + seq`, written in 20 base-32 digits, most
 * significant first: 48 bits of zero padding, the batch ordinal in 32 bits (0..2^32 - 1), the seq in
 * 20 bits (1..2^20 - 1; a batch holds at most 1,000,000 units). Tweak: empty (the key is the brand's
 * own, so a tweak would separate nothing).
 *
 * Uniqueness by construction: FF1 under one key is a permutation of the 2^100 strings of 20
 * characters, so distinct (ordinal, seq) pairs are distinct plaintexts and give distinct serials;
 * no index or retry is needed to keep a brand's serials unique.
 *
 * Unguessability: without the key the serials are indistinguishable from a random permutation's
 * (FF1's security claim), so a guessed serial decrypts to a uniformly random plaintext among the
 * 2^100 (or the 2^100 - q left after seeing q serials). A guess names a unit of a batch of n units
 * with probability n / 2^100: 7.9e-25 for a 1,000,000-unit batch; a unit of any batch of a brand
 * that minted U units in all, U / 2^100 (at most 2^52 / 2^100 = 3.6e-15, every ordinal and seq
 * used). A guess is recognised as forged with probability 1 - 2^52 / 2^100, since its padding is
 * then not zero. Serials made before (random, or timed by {@link generateTimedSerials}) decode to
 * null but for the same fraction, 2^-48.
 *
 * AES-256 rather than AES-128: the key guards every serial a brand ever prints, for as long as its
 * labels are in circulation (decades), and is 32 bytes like the project's other sealed keys. The
 * longer key costs little: measured side by side, AES-128 encoded ranges 1.24x as fast and single
 * serials no faster (one decode's cost is its ten calls into OpenSSL, not their rounds), and
 * AES-256 encodes several hundred thousand units a second on one core (bench:serial-cipher), well
 * above the executor's 40,000-100,000.
 *
 * Speed: FF1's ten rounds run over a whole range of units at once, one AES-ECB call per round over
 * all of its blocks. With an empty tweak and 20 digits, the PRF's input is two blocks, P (fixed by
 * radix, length and tweak length) and Q (the round number and the half being hashed), so each
 * round's R is AES(AES(P) xor Q), AES(P) computed once per key. Radix 32 is a power of two, so
 * NUM and STR are bit moves, and each 50-bit half fits a JS number exactly (2^50 < 2^53).
 */
import { createCipheriv } from 'node:crypto';
import { type RandomFill, serialAlphabet, serialLength } from './identity.ts';

/** Length of a serial cipher key in bytes: AES-256. */
export const serialCipherKeyBytes = 32;
/** Largest batch ordinal a serial can carry (32 bits). */
export const serialCipherMaxOrdinal = 2 ** 32 - 1;
/** Largest seq a serial can carry (20 bits; a batch holds at most 1,000,000 units). */
export const serialCipherMaxSeq = 2 ** 20 - 1;

/** A unit's position: its batch's per-brand ordinal and its seq in the batch. */
export interface SerialPosition {
  readonly batchOrdinal: number;
  readonly seq: number;
}

/** Encodes positions as serials and serials back to positions, under one key. */
export interface SerialCipher {
  /** The serials of seqs firstSeq..firstSeq+count-1 of a batch, in seq order (the executor's chunk). */
  encodeRange(batchOrdinal: number, firstSeq: number, count: number): string[];
  /** The serial of one unit. */
  encode(batchOrdinal: number, seq: number): string;
  /**
   * The position a serial encodes, or null when it encodes none: a string of the wrong length or
   * outside the (upper-case) alphabet, a serial whose padding is not zero (forged, made under
   * another key, or made before serials were encoded), or one whose seq is 0. Exact: lower case is
   * refused, as the resolver matches serials exactly.
   */
  decode(serial: string): SerialPosition | null;
  /** {@link SerialCipher.decode} of each serial, in order, in one pass (ten AES calls in all): for a batch of lookups. */
  decodeMany(serials: readonly string[]): (SerialPosition | null)[];
}

/** A fresh random serial cipher key (randomness passed in: node:crypto's randomFillSync in production). */
export function generateSerialCipherKey(randomFill: RandomFill): Uint8Array {
  const key = new Uint8Array(serialCipherKeyBytes);
  randomFill(key);
  return key;
}

const half = 2 ** 50;
const two32 = 2 ** 32;
const two30 = 2 ** 30;
const two25 = 2 ** 25;
const two20 = 2 ** 20;
const rounds = 10;

const alphabetCodes = Uint8Array.from(serialAlphabet, (c) => c.charCodeAt(0));
/** Digit of each character code, -1 outside the alphabet. */
const digitOf = new Int8Array(128).fill(-1);
for (let d = 0; d < 32; d++) digitOf[alphabetCodes[d]!] = d;
const latin1 = new TextDecoder('latin1');

/**
 * FF1's P for radix 32, 20 digits, an empty tweak: [1][2][1] [radix]3 [10] [u mod 256] [n]4 [t]4
 * with u = 10 (the first half's digits), n = 20, t = 0.
 */
const ff1P = Uint8Array.from([1, 2, 1, 0, 0, 32, 10, 10, 0, 0, 0, 20, 0, 0, 0, 0]);

/**
 * A serial cipher under `key` ({@link serialCipherKeyBytes} bytes). Keep one per key: it holds the
 * AES context and AES(P). Throws on a key of another length.
 */
export function createSerialCipher(key: Uint8Array): SerialCipher {
  if (key.length !== serialCipherKeyBytes) throw new Error(`serial cipher key must be ${serialCipherKeyBytes} bytes, got ${key.length}`);
  // ECB encryption without padding is stateless from block to block and returns every block it is
  // given, so one context serves every call.
  const aes = createCipheriv('aes-256-ecb', key, null);
  aes.setAutoPadding(false);
  const y0 = aes.update(ff1P);
  const y0View = new DataView(y0.buffer, y0.byteOffset, 16);
  const w0 = y0View.getUint32(0);
  const w1 = y0View.getUint32(4);
  const w2 = y0View.getUint32(8);
  const w3 = y0View.getUint32(12);

  /**
   * One FF1 round over every unit: R = AES(AES(P) xor Q) with Q = [0]8 [round]1 [NUM(half)]7, and
   * the low 50 bits of R's first 12 bytes (y mod 32^10) returned in `y`. The blocks' first 8 bytes,
   * AES(P)'s own, are written once by {@link blocksFor}.
   */
  const prf = (round: number, halves: Float64Array, y: Float64Array, count: number, blocks: Uint8Array, view: DataView) => {
    const roundBits = round << 24;
    for (let j = 0; j < count; j++) {
      const h = halves[j]!;
      const hi = Math.floor(h / two32);
      const at = j * 16;
      view.setUint32(at + 8, (w2 ^ roundBits ^ hi) >>> 0);
      view.setUint32(at + 12, (w3 ^ (h - hi * two32)) >>> 0);
    }
    const r = aes.update(blocks);
    if (r.length !== count * 16) throw new Error('AES-ECB returned a short output');
    for (let j = 0; j < count; j++) y[j] = (r.readUInt32BE(j * 16 + 4) & 0x3ffff) * two32 + r.readUInt32BE(j * 16 + 8);
  };

  /** Room for `count` PRF blocks, each starting with AES(P)'s first 8 bytes (Q's first 8 are zero). */
  const blocksFor = (count: number) => {
    const blocks = new Uint8Array(count * 16);
    const view = new DataView(blocks.buffer);
    for (let at = 0; at < blocks.length; at += 16) {
      view.setUint32(at, w0);
      view.setUint32(at + 4, w1);
    }
    return { blocks, view };
  };
  // One unit's blocks and halves, reused by every single-serial call (each runs to its end before
  // the next starts), so decoding one serial allocates next to nothing.
  const single = { ...blocksFor(1), a: new Float64Array(1), b: new Float64Array(1), y: new Float64Array(1) };

  /** Encrypts the `count` plaintexts (a, b) in place: FF1.Encrypt's ten rounds. */
  const encrypt = (a: Float64Array, b: Float64Array, count: number) => {
    const { blocks, view } = count === 1 ? single : blocksFor(count);
    const y = count === 1 ? single.y : new Float64Array(count);
    for (let i = 0; i < rounds; i++) {
      prf(i, b, y, count, blocks, view);
      for (let j = 0; j < count; j++) {
        let c = a[j]! + y[j]!;
        if (c >= half) c -= half;
        a[j] = b[j]!;
        b[j] = c;
      }
    }
  };

  /** Decrypts the `count` ciphertexts (a, b) in place: FF1.Decrypt's ten rounds. */
  const decrypt = (a: Float64Array, b: Float64Array, count: number) => {
    const { blocks, view } = count === 1 ? single : blocksFor(count);
    const y = count === 1 ? single.y : new Float64Array(count);
    for (let i = rounds - 1; i >= 0; i--) {
      prf(i, a, y, count, blocks, view);
      for (let j = 0; j < count; j++) {
        let c = b[j]! - y[j]!;
        if (c < 0) c += half;
        b[j] = a[j]!;
        a[j] = c;
      }
    }
  };

  const checkPosition = (batchOrdinal: number, seq: number) => {
    if (!Number.isInteger(batchOrdinal) || batchOrdinal < 0 || batchOrdinal > serialCipherMaxOrdinal) {
      throw new RangeError(`batch ordinal must be an integer 0..${serialCipherMaxOrdinal}, got ${batchOrdinal}`);
    }
    if (!Number.isInteger(seq) || seq < 1 || seq > serialCipherMaxSeq) throw new RangeError(`seq must be an integer 1..${serialCipherMaxSeq}, got ${seq}`);
  };

  const encodeRange = (batchOrdinal: number, firstSeq: number, count: number): string[] => {
    if (!Number.isInteger(count) || count < 0) throw new RangeError(`count must be a non-negative integer, got ${count}`);
    if (count === 0) return [];
    checkPosition(batchOrdinal, firstSeq);
    checkPosition(batchOrdinal, firstSeq + count - 1);
    // Plaintext batchOrdinal * 2^20 + seq: its top half holds the ordinal's top 2 bits, its bottom
    // half the ordinal's low 30 bits and the seq.
    const low = batchOrdinal % two30;
    const a = new Float64Array(count).fill((batchOrdinal - low) / two30);
    const b = new Float64Array(count);
    const base = low * two20 + firstSeq;
    for (let j = 0; j < count; j++) b[j] = base + j;
    encrypt(a, b, count);
    const bytes = new Uint8Array(count * serialLength);
    for (let j = 0; j < count; j++) {
      const at = j * serialLength;
      spell(a[j]!, bytes, at);
      spell(b[j]!, bytes, at + 10);
    }
    const all = latin1.decode(bytes);
    const serials = new Array<string>(count);
    for (let j = 0; j < count; j++) serials[j] = all.slice(j * serialLength, (j + 1) * serialLength);
    return serials;
  };

  /** The position of decrypted halves (top, bottom), or null when the padding is not zero or the seq is 0. */
  const positionOf = (top: number, bottom: number): SerialPosition | null => {
    // Zero padding: the plaintext is below 2^52, so its top half is below 4.
    if (top >= 4) return null;
    const seq = bottom % two20;
    return seq === 0 ? null : { batchOrdinal: top * two30 + (bottom - seq) / two20, seq };
  };

  const decode = (serial: string): SerialPosition | null => {
    if (typeof serial !== 'string' || serial.length !== serialLength) return null;
    const ah = read5(serial, 0);
    const al = read5(serial, 5);
    const bh = read5(serial, 10);
    const bl = read5(serial, 15);
    if (ah < 0 || al < 0 || bh < 0 || bl < 0) return null;
    const { a, b } = single;
    a[0] = ah * two25 + al;
    b[0] = bh * two25 + bl;
    decrypt(a, b, 1);
    return positionOf(a[0]!, b[0]!);
  };

  const decodeMany = (serials: readonly string[]): (SerialPosition | null)[] => {
    const count = serials.length;
    const out = new Array<SerialPosition | null>(count).fill(null);
    // The well-formed serials' indexes and halves; the others stay null.
    const index: number[] = [];
    const a = new Float64Array(count);
    const b = new Float64Array(count);
    for (let j = 0; j < count; j++) {
      const serial = serials[j];
      if (typeof serial !== 'string' || serial.length !== serialLength) continue;
      const ah = read5(serial, 0);
      const al = read5(serial, 5);
      const bh = read5(serial, 10);
      const bl = read5(serial, 15);
      if (ah < 0 || al < 0 || bh < 0 || bl < 0) continue;
      a[index.length] = ah * two25 + al;
      b[index.length] = bh * two25 + bl;
      index.push(j);
    }
    if (index.length === 0) return out;
    decrypt(a, b, index.length);
    for (let k = 0; k < index.length; k++) out[index[k]!] = positionOf(a[k]!, b[k]!);
    return out;
  };

  return {
    encodeRange,
    encode: (batchOrdinal, seq) => encodeRange(batchOrdinal, seq, 1)[0]!,
    decode,
    decodeMany,
  };
}

/** Writes the 10 base-32 characters of a 50-bit half at `at`, most significant first. */
function spell(value: number, bytes: Uint8Array, at: number): void {
  let hi = Math.floor(value / two25);
  let lo = value - hi * two25;
  for (let k = 4; k >= 0; k--) {
    bytes[at + k] = alphabetCodes[hi & 31]!;
    bytes[at + 5 + k] = alphabetCodes[lo & 31]!;
    hi >>>= 5;
    lo >>>= 5;
  }
}

/** The 25-bit number five characters of `serial` from `at` spell, or -1 if one is outside the alphabet. */
function read5(serial: string, at: number): number {
  let n = 0;
  for (let k = 0; k < 5; k++) {
    const code = serial.charCodeAt(at + k);
    const d = code < 128 ? digitOf[code]! : -1;
    if (d < 0) return -1;
    n = (n << 5) | d;
  }
  return n;
}
