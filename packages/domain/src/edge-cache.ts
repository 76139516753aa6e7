// What a caching proxy in front of the resolver may keep, under which surrogate keys, which keys a
// change purges, and the scan a cached answer stands for (logged by the proxy on each hit and
// shipped into the scan ingest, so scan counts stay exact when the cache answers).

/** How long a shared cache keeps a GTIN or lot answer (s-maxage), seconds. A link or domain change purges it at once. */
export const edgeCacheSeconds = 300;

/**
 * `Cache-Control` of an answer a shared cache may keep: no private cache (a browser revalidates
 * every scan, so each reaches the shared cache and is counted there), a shared one for
 * {@link edgeCacheSeconds}.
 */
export const edgeCacheControl = `public, max-age=0, s-maxage=${edgeCacheSeconds}`;

/** The key every cacheable resolver answer carries: purging it empties the cache of resolver answers. */
export const allResolverAnswersKey = 'resolver';

/**
 * The surrogate keys of a cacheable answer of a brand's GTIN (or of a lot of it), space-separated
 * as `Surrogate-Key` carries them: every resolver answer, the brand's answers, and the GTIN's.
 */
export function surrogateKeysOf(brandId: string, gtin: string): string {
  return `${allResolverAnswersKey} b-${brandId} g-${brandId}-${gtin}`;
}

/**
 * The key a change of a brand's links purges: a GTIN's links (or of a lot or serial below it)
 * purge that GTIN's answers; the brand level's links (gtin '') and any change of the brand as a
 * whole (null: its resolver domain) purge all of the brand's answers.
 */
export function purgeKeyOf(brandId: string, gtin: string | null): string {
  return gtin === null || gtin === '' ? `b-${brandId}` : `g-${brandId}-${gtin}`;
}

/** The scan a cached answer stands for: what the resolver records for it, but its time and client. */
export interface EdgeScan {
  readonly brandId: string;
  /** gtin or lot (units are never cached). */
  readonly kind: 'gtin' | 'lot';
  readonly gtin: string;
  /** The lot code of a lot scan; null for a GTIN scan. */
  readonly lot: string | null;
  readonly outcome: string;
  readonly representation: string;
  /** The link type served; null when none. */
  readonly linkType: string | null;
}

/** The scan as a header value (`X-Scan`): URL-encoded fields, printable ASCII only. */
export function encodeEdgeScan(scan: EdgeScan): string {
  const fields: [string, string][] = [
    ['b', scan.brandId],
    ['k', scan.kind],
    ['g', scan.gtin],
    ['o', scan.outcome],
    ['r', scan.representation],
  ];
  if (scan.lot !== null) fields.push(['l', scan.lot]);
  if (scan.linkType !== null) fields.push(['t', scan.linkType]);
  return new URLSearchParams(fields).toString();
}

/** The scan of an `X-Scan` value, or null when it is not one (missing fields, another kind). */
export function decodeEdgeScan(value: string): EdgeScan | null {
  const p = new URLSearchParams(value);
  const brandId = p.get('b');
  const kind = p.get('k');
  const gtin = p.get('g');
  const outcome = p.get('o');
  const representation = p.get('r');
  if (brandId === null || gtin === null || outcome === null || representation === null || (kind !== 'gtin' && kind !== 'lot')) return null;
  const lot = p.get('l');
  if (kind === 'lot' && lot === null) return null;
  return { brandId, kind, gtin, lot: kind === 'lot' ? lot : null, outcome, representation, linkType: p.get('t') };
}
