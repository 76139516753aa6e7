/**
 * The one rule for every URL the service stores and later sends as a redirect target (a
 * product's passport_url, a resolver link's href): an absolute https URL with a host, at most
 * `maxStoredUrlLength` characters, stored in its ASCII form. Pure.
 */
import type { FieldViolation } from './errors.ts';

/** Longest stored URL, before and after it is written in ASCII. */
export const maxStoredUrlLength = 2_000;

/** Visible ASCII: what the ASCII form of a URL consists of, and always a valid HTTP header value. */
const visibleAscii = /^[\x21-\x7e]+$/;

/**
 * The ASCII form of `text` when it is a storable URL, else null. The ASCII form is the WHATWG URL
 * serialisation: a punycode host (`bücher.example` -> `xn--bcher-kva.example`), a percent-encoded
 * path, query and fragment (`/€-euro` -> `/%E2%82%AC-euro`), a lower-case scheme and host, no
 * default port, and `/` as the path of a bare origin. White space anywhere is refused rather than
 * dropped as the URL parser would.
 */
export function storableUrlOf(text: string): string | null {
  if (text.length > maxStoredUrlLength || /\s/.test(text)) return null;
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return null;
  }
  if (url.protocol !== 'https:' || url.hostname === '') return null;
  const ascii = url.href;
  return ascii.length <= maxStoredUrlLength && visibleAscii.test(ascii) ? ascii : null;
}

/** The violation of `text` on `field` when it is not a storable URL; empty when it is. */
export function storableUrlViolations(text: string, field: string): FieldViolation[] {
  return storableUrlOf(text) === null ? [{ field, message: `must be an https URL of at most ${maxStoredUrlLength} characters` }] : [];
}
