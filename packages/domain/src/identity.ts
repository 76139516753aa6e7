/**
 * Identities of minted units: unguessable serials and the resolver URLs written at creation
 * (GS1 Digital Link URIs when the product has a GTIN). Randomness is passed in.
 */

/** Length of a serial: 20 characters, the GS1 AI 21 maximum. */
export const serialLength = 20;
/** Crockford base32: digits and upper-case letters without I, L, O, U; all inside GS1's AI 21 set and URL-safe. */
const alphabet = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';

/** Fills a buffer with cryptographically secure random bytes (node:crypto's randomFillSync in production). */
export type RandomFill = (buffer: Uint8Array) => void;

/** The alphabet's character codes, and a decoder that turns them into one string. */
const alphabetCodes = Uint8Array.from(alphabet, (c) => c.charCodeAt(0));
const latin1 = new TextDecoder('latin1');

/**
 * `count` fresh serials of 100 random bits each. Each character takes the low five bits of one
 * random byte, which is unbiased because 256 is a multiple of 32. The bytes become characters in
 * place and one string, which the serials are slices of: 5-6 times faster than building each
 * serial a character at a time (0.1 against 0.6 ms per 1,659 serials on the 2-core target).
 */
export function generateSerials(count: number, randomFill: RandomFill): string[] {
  const bytes = new Uint8Array(count * serialLength);
  randomFill(bytes);
  for (let i = 0; i < bytes.length; i++) bytes[i] = alphabetCodes[bytes[i]! & 31]!;
  const all = latin1.decode(bytes);
  const serials = new Array<string>(count);
  for (let i = 0; i < count; i++) serials[i] = all.slice(i * serialLength, (i + 1) * serialLength);
  return serials;
}

function trimSlash(base: string): string {
  return base.endsWith('/') ? base.slice(0, -1) : base;
}

/**
 * The resolver URL of a unit: `{base}/01/{gtin14}/21/{serial}` (GS1 Digital Link) when the product
 * has a GTIN, `{base}/u/{serial}` otherwise.
 */
export function unitResolverUrl(resolverBaseUrl: string, gtin14: string | null, serial: string): string {
  const base = trimSlash(resolverBaseUrl);
  return gtin14 === null ? `${base}/u/${serial}` : `${base}/01/${gtin14}/21/${serial}`;
}

/** The GS1 Digital Link URI of a lot, `{base}/01/{gtin14}/10/{lot}`, or null when the product has no GTIN. */
export function lotResolverUrl(resolverBaseUrl: string, gtin14: string | null, lotCode: string): string | null {
  return gtin14 === null ? null : `${trimSlash(resolverBaseUrl)}/01/${gtin14}/10/${encodeURIComponent(lotCode)}`;
}

/** The resolver base URL of a brand: the public address followed by `/r/{brand slug}`. */
export function brandResolverBaseUrl(publicBaseUrl: string, brandSlug: string): string {
  return `${trimSlash(publicBaseUrl)}/r/${brandSlug}`;
}
