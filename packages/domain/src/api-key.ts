import { createHash } from 'node:crypto';

/**
 * API key format: `mk_<lookup>_<secret><check>`. The lookup part finds the row, only a SHA-256 of
 * the secret is stored, and the 4-character check lets a mistyped or made-up key be rejected
 * before any database lookup.
 */
const prefix = 'mk_';
const alphabet = '0123456789abcdefghjkmnpqrstvwxyz';
const lookupLength = 12;
const secretLength = 32;
const checkLength = 4;

/** The parts of a well-formed API key. */
export interface ParsedApiKey {
  readonly lookupId: string;
  readonly secret: string;
}

function encode(bytes: Uint8Array): string {
  let s = '';
  for (const b of bytes) s += alphabet[b & 31];
  return s;
}

function check(body: string): string {
  return encode(createHash('sha256').update(body).digest().subarray(0, checkLength));
}

/** Prefix of a passport access credential (the same format as an API key, another prefix). */
export const passportKeyPrefix = 'pp_';

/** A new key (`keyPrefix` first, `mk_` by default) from `randomFill` randomness: returns the full key (shown once) and its parts. */
export function generateApiKey(randomFill: (buffer: Uint8Array) => void, keyPrefix = prefix): ParsedApiKey & { readonly key: string } {
  const bytes = new Uint8Array(lookupLength + secretLength);
  randomFill(bytes);
  const lookupId = encode(bytes.subarray(0, lookupLength));
  const secret = encode(bytes.subarray(lookupLength));
  const body = `${keyPrefix}${lookupId}_${secret}`;
  return { key: body + check(body), lookupId, secret };
}

/** The parts of a key, or null when it is malformed or its check characters do not match. */
export function parseApiKey(key: string, keyPrefix = prefix): ParsedApiKey | null {
  const total = keyPrefix.length + lookupLength + 1 + secretLength + checkLength;
  if (key.length !== total || !key.startsWith(keyPrefix)) return null;
  const body = key.slice(0, total - checkLength);
  if (check(body) !== key.slice(total - checkLength)) return null;
  const lookupId = key.slice(keyPrefix.length, keyPrefix.length + lookupLength);
  const secret = key.slice(keyPrefix.length + lookupLength + 1, total - checkLength);
  if (key[keyPrefix.length + lookupLength] !== '_') return null;
  return { lookupId, secret };
}

/** The stored form of a key's secret (hex SHA-256). */
export function hashApiKeySecret(secret: string): string {
  return createHash('sha256').update(secret).digest('hex');
}
