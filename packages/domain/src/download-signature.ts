/**
 * Signed, time-limited download URLs of payload packs: HMAC-SHA256 over the method, brand, pack,
 * path, expiry and key id. Several keys verify at once (rotation); the first one signs. The clock
 * is passed in; nothing here does I/O.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';

/** One download signing key. */
export interface SigningKey {
  /** Key id carried in the URL (`kid`), letters, digits, `-` or `_`, at most 32 characters. */
  readonly id: string;
  /** HMAC secret, at least 32 bytes. */
  readonly secret: Uint8Array;
}

/** Shortest accepted signing secret, in bytes. */
export const minSigningSecretBytes = 32;
/** Default validity of a download URL: five minutes. */
export const defaultDownloadTtlSeconds = 300;
/** Longest validity of a download URL: fifteen minutes. */
export const maxDownloadTtlSeconds = 900;
/** Shape of a key id. */
export const signingKeyIdPattern = /^[A-Za-z0-9_-]{1,32}$/;

/** What a download signature covers. */
export interface DownloadClaims {
  /** HTTP method the URL may be used with (GET). */
  readonly method: string;
  readonly brandId: string;
  readonly packId: string;
  /** URL path, e.g. `/downloads/{brand}/{pack}/{pack}.tar`. */
  readonly path: string;
  /** Expiry, in whole seconds since the epoch. */
  readonly expires: number;
}

/** The query parameters of a signed URL. */
export interface DownloadSignature {
  /** Expiry in seconds since the epoch. */
  readonly exp: number;
  /** Id of the signing key. */
  readonly kid: string;
  /** base64url HMAC-SHA256, 43 characters. */
  readonly sig: string;
}

/** Why a URL was refused; the download route answers the same 403 for every reason. */
export type DownloadRefusal = 'malformed' | 'expired' | 'unknown_key' | 'bad_signature';

/**
 * Parses `DOWNLOAD_SIGNING_KEYS`: comma-separated `kid:base64secret` entries (standard or url-safe
 * base64). Returns the keys in order, or a message naming the problem without echoing a secret.
 */
export function parseSigningKeys(text: string): { keys: SigningKey[] } | { error: string } {
  const keys: SigningKey[] = [];
  const entries = text
    .split(',')
    .map((e) => e.trim())
    .filter((e) => e !== '');
  if (entries.length === 0) return { error: 'must list at least one kid:base64secret entry' };
  for (const [i, entry] of entries.entries()) {
    const colon = entry.indexOf(':');
    const id = colon < 0 ? '' : entry.slice(0, colon);
    const encoded = colon < 0 ? '' : entry.slice(colon + 1);
    if (!signingKeyIdPattern.test(id)) return { error: `entry ${i + 1} must be kid:base64secret with a kid of letters, digits, "-" or "_" (at most 32)` };
    if (!/^[A-Za-z0-9+/_-]+={0,2}$/.test(encoded)) return { error: `key ${id} must be base64` };
    const secret = Buffer.from(encoded, encoded.includes('-') || encoded.includes('_') ? 'base64url' : 'base64');
    if (secret.length < minSigningSecretBytes) return { error: `key ${id} must decode to at least ${minSigningSecretBytes} bytes, got ${secret.length}` };
    if (keys.some((k) => k.id === id)) return { error: `key id ${id} appears twice` };
    keys.push({ id, secret: new Uint8Array(secret) });
  }
  return { keys };
}

/** The exact bytes signed: one field per line, prefixed by a version tag. */
function canonical(claims: DownloadClaims, kid: string): string {
  return ['mint-download-v1', claims.method.toUpperCase(), claims.brandId, claims.packId, claims.path, String(claims.expires), kid].join('\n');
}

function mac(secret: Uint8Array, claims: DownloadClaims, kid: string): Buffer {
  return createHmac('sha256', secret).update(canonical(claims, kid)).digest();
}

/** Signs `claims` with the first key. Throws when there is no key. */
export function signDownload(keys: readonly SigningKey[], claims: DownloadClaims): DownloadSignature {
  const key = keys[0];
  if (key === undefined) throw new Error('no download signing key configured');
  return { exp: claims.expires, kid: key.id, sig: mac(key.secret, claims, key.id).toString('base64url') };
}

/**
 * Checks a signature presented with a URL at `now`. Compares in constant time; an unknown key or a
 * malformed signature still computes one MAC so every refusal costs about the same. Returns null
 * when the URL is valid, or why it is not (for metrics only: callers answer every refusal alike).
 */
export function verifyDownload(
  keys: readonly SigningKey[],
  claims: Omit<DownloadClaims, 'expires'>,
  presented: { readonly exp: string | null; readonly kid: string | null; readonly sig: string | null },
  now: Date,
): DownloadRefusal | null {
  const exp = presented.exp !== null && /^\d{1,12}$/.test(presented.exp) ? Number(presented.exp) : null;
  const decoded = presented.sig !== null && /^[A-Za-z0-9_-]{43}$/.test(presented.sig) ? Buffer.from(presented.sig, 'base64url') : null;
  // Only the canonical encoding counts: the last character's unused bits cannot vary.
  const sig = decoded !== null && decoded.toString('base64url') === presented.sig ? decoded : null;
  const key = keys.find((k) => k.id === presented.kid);
  const full: DownloadClaims = { ...claims, expires: exp ?? 0 };
  const expected = mac((key ?? keys[0] ?? { secret: new Uint8Array(32) }).secret, full, presented.kid ?? '');
  const matches = timingSafeEqual(expected, sig !== null && sig.length === expected.length ? sig : Buffer.alloc(expected.length));
  if (exp === null || sig === null || sig.length !== expected.length) return 'malformed';
  if (key === undefined) return 'unknown_key';
  if (!matches) return 'bad_signature';
  if (exp * 1000 <= now.getTime()) return 'expired';
  return null;
}

/** The expiry (whole seconds since the epoch) of a URL issued at `now` for `ttlSeconds`. */
export function downloadExpiry(now: Date, ttlSeconds: number): number {
  return Math.floor(now.getTime() / 1000) + ttlSeconds;
}
