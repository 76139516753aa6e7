import { describe, expect, it } from 'vitest';
import {
  decideResolution,
  forwardQuery,
  negotiate,
  parseResolverRequest,
  readLinkType,
  resolverDescription,
  resolverRootPathOf,
  type FoundIdentity,
  type ParsedResolverRequest,
} from './resolution.ts';
import { gs1LinkTypeOf } from './gs1-link-types.ts';
import digitalLink from 'digital-link.js';

const gtin = '09506000134352';
const identity = (path: string) => {
  const parsed = parseResolverRequest(path);
  return parsed.kind === 'identity' ? parsed.path : parsed;
};

describe('parseResolverRequest', () => {
  it('reads the routes under a brand slug, with qualifiers in the order 22, 10, 21', () => {
    expect(identity(`/r/acme/01/${gtin}/21/ABC123`)).toEqual({ slug: 'acme', key: { kind: 'serial', gtin, serial: 'ABC123' } });
    expect(identity(`/r/acme/01/${gtin}/10/LOT%2F1`)).toEqual({ slug: 'acme', key: { kind: 'lot', gtin, lot: 'LOT/1' } });
    expect(identity(`/r/acme/01/${gtin}`)).toEqual({ slug: 'acme', key: { kind: 'gtin', gtin } });
    expect(identity(`/r/acme/01/${gtin}/`)).toEqual({ slug: 'acme', key: { kind: 'gtin', gtin } });
    expect(identity('/r/acme/u/TOKEN1')).toEqual({ slug: 'acme', key: { kind: 'token', token: 'TOKEN1' } });
    expect(identity(`/r/acme/01/${gtin}/22/CPV1/10/L1/21/S1`)).toEqual({ slug: 'acme', key: { kind: 'serial', gtin, serial: 'S1', lot: 'L1', cpv: 'CPV1' } });
    expect(identity(`/r/acme/01/${gtin}/22/CPV1/10/L1`)).toEqual({ slug: 'acme', key: { kind: 'lot', gtin, lot: 'L1', cpv: 'CPV1' } });
    expect(identity(`/r/acme/01/${gtin}/22/CPV1`)).toEqual({ slug: 'acme', key: { kind: 'gtin', gtin, cpv: 'CPV1' } });
  });

  it('gives the canonical path of an identity', () => {
    expect(parseResolverRequest(`/r/acme/01/${gtin}/10/L%2f1/21/S1/`)).toMatchObject({ kind: 'identity', canonicalPath: `/r/acme/01/${gtin}/10/L%2F1/21/S1` });
  });

  it('moves a GTIN-8, -12 or -13 to its GTIN-14 form', () => {
    expect(parseResolverRequest('/r/acme/01/9506000134352/21/S1')).toEqual({ kind: 'moved', canonicalPath: `/r/acme/01/${gtin}/21/S1` });
    expect(parseResolverRequest('/r/acme/01/95060001343')).toMatchObject({ kind: 'malformed' });
  });

  it('refuses malformed paths with a reason naming the problem', () => {
    const cases: [string, RegExp][] = [
      ['/r/acme/01/09506000134353', /check digit/],
      ['/r/acme/01/09506000134', /8, 12, 13 or 14 digits/],
      ['/r/acme/01/0950600013435X', /8, 12, 13 or 14 digits/],
      [`/r/acme/01/${gtin}/21/${'A'.repeat(21)}`, /longer than 20/],
      [`/r/acme/01/${gtin}/10/${'A'.repeat(21)}`, /longer than 20/],
      [`/r/acme/01/${gtin}/22/${'A'.repeat(21)}`, /longer than 20/],
      [`/r/acme/01/${gtin}/21/a%20b`, /character set 82/],
      [`/r/acme/01/${gtin}/21/%E2%82%AC`, /character set 82/],
      [`/r/acme/01/${gtin}/21/S1/10/L1`, /out of order/],
      [`/r/acme/01/${gtin}/10/L1/22/C1`, /out of order/],
      [`/r/acme/01/${gtin}/21/S1/21/S2`, /out of order or repeated/],
      [`/r/acme/01/${gtin}/99/x`, /not a key qualifier/],
      [`/r/acme/01/${gtin}/17/261231`, /data attributes go in the query string/],
      [`/r/acme/01/${gtin}/21`, /has no value/],
      [`/r/acme/01/${gtin}/21/`, /has no value/],
      [`/r/acme/01/${gtin}/21/%E0%A4%A`, /percent-encoded/],
      [`/r/acme/01/${gtin}//21/S1`, /empty segment/],
      ['/r/acme/414/9506000000006', /AI 414 is not served here/],
      ['/r/acme/02/x', /not a primary key/],
      ['/r/acme', /no primary key/],
      ['/r/acme/u/', /exactly one token/],
      ['/r/acme/u/a/b', /exactly one token/],
      ['/r/Acme/01/09506000134352', /brand slug/],
      ['/r/acme/NOTCOMPRESSED', /nor a compressed one/],
    ];
    for (const [path, reason] of cases) {
      const parsed: ParsedResolverRequest = parseResolverRequest(path);
      expect(parsed.kind, path).toBe('malformed');
      if (parsed.kind === 'malformed') expect(parsed.reason, path).toMatch(reason);
    }
  });

  it('decompresses a compressed Digital Link and keeps its data attributes', () => {
    // Compressed with GS1's toolkit: /01/09506000134352/10/LOT-7/21/ABC123?17=261231
    expect(parseResolverRequest('/r/acme/GhFKk4XBoMpZyf3Z_jejVeCRg')).toEqual({
      kind: 'identity',
      path: { slug: 'acme', key: { kind: 'serial', gtin, serial: 'ABC123', lot: 'LOT-7' } },
      canonicalPath: `/r/acme/01/${gtin}/10/LOT-7/21/ABC123`,
      decompressedQuery: '17=261231',
    });
    expect(parseResolverRequest('/r/acme/ARFKk4XBoA')).toMatchObject({ kind: 'identity', canonicalPath: `/r/acme/01/${gtin}`, decompressedQuery: '' });
  });
});

describe('link types', () => {
  it('reads linkset, GS1 link types in every accepted spelling, and anything else as unknown', () => {
    expect(readLinkType(null)).toEqual({ kind: 'none' });
    expect(readLinkType('linkset')).toEqual({ kind: 'linkset' });
    expect(readLinkType('all')).toEqual({ kind: 'linkset' });
    for (const value of ['gs1:pip', 'https://ref.gs1.org/voc/pip', 'https://gs1.org/voc/pip'])
      expect(readLinkType(value)).toEqual({ kind: 'link', name: 'pip' });
    expect(readLinkType('gs1:defaultLink')).toEqual({ kind: 'link', name: 'defaultLink' });
    expect(readLinkType('gs1:nosuchlt')).toEqual({ kind: 'unknown', value: 'gs1:nosuchlt' });
    expect(readLinkType('pip')).toEqual({ kind: 'unknown', value: 'pip' });
    expect(gs1LinkTypeOf('https://example.org/voc/pip')).toBeNull();
  });
});

describe('negotiate', () => {
  it('redirects browsers and clients without a preference', () => {
    expect(negotiate('text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8')).toBe('redirect');
    expect(negotiate(undefined)).toBe('redirect');
    expect(negotiate('*/*')).toBe('redirect');
    expect(negotiate('image/png')).toBe('redirect');
  });

  it('answers JSON and linkset when asked, and a requested link type always redirects', () => {
    expect(negotiate('application/json')).toBe('json');
    expect(negotiate('application/linkset+json')).toBe('linkset');
    expect(negotiate('application/json;q=0.5, application/linkset+json')).toBe('linkset');
    expect(negotiate('text/html;q=0.4, application/json')).toBe('json');
    expect(negotiate('text/html', { kind: 'linkset' })).toBe('linkset');
    expect(negotiate('application/linkset+json', { kind: 'link', name: 'pip' })).toBe('redirect');
  });
});

describe('decideResolution', () => {
  const found = (over: Partial<Extract<FoundIdentity, { kind: 'found' }>> = {}): FoundIdentity => ({
    kind: 'found',
    unitStatus: 'active',
    batchStatus: 'minted',
    target: 'https://p.example/x',
    ...over,
  });

  it('resolves an identity in a live state to the target its links chose, or to none', () => {
    expect(decideResolution(found())).toEqual({ kind: 'resolved', target: 'https://p.example/x' });
    expect(decideResolution(found({ target: null }))).toEqual({ kind: 'resolved', target: null });
  });

  it('answers gone for a voided batch before anything else, and not activated for an inactive unit', () => {
    expect(decideResolution(found({ batchStatus: 'voided', unitStatus: 'inactive' }))).toEqual({ kind: 'gone' });
    expect(decideResolution(found({ unitStatus: 'inactive' }))).toEqual({ kind: 'not_activated' });
    expect(decideResolution({ kind: 'none' })).toEqual({ kind: 'not_found' });
  });
});

describe('forwardQuery', () => {
  it('passes every pair on as sent, minus linkType', () => {
    expect(forwardQuery('https://p.example/x', '')).toBe('https://p.example/x');
    expect(forwardQuery('https://p.example/x', 'linkType=gs1:pip')).toBe('https://p.example/x');
    expect(forwardQuery('https://p.example/x', '17=261231&foo=a%20b&linkType=gs1:pip&flag')).toBe('https://p.example/x?17=261231&foo=a%20b&flag');
    expect(forwardQuery('https://p.example/x?lang=en#top', 'foo=bar')).toBe('https://p.example/x?lang=en&foo=bar#top');
  });
});

describe('resolverRootPathOf', () => {
  it("finds a Digital Link written directly under the root /r, never a brand's path", () => {
    expect(resolverRootPathOf(`/r/01/${gtin}/21/ABC`)).toBe(`/01/${gtin}/21/ABC`);
    expect(resolverRootPathOf(`/r/01/${gtin}/`)).toBe(`/01/${gtin}/`);
    expect(resolverRootPathOf('/r/01/9506000134352')).toBe('/01/9506000134352');
    expect(resolverRootPathOf('/r/01/12345')).toBeNull();
    const compressed = digitalLink.Utils.compressWebUri(`https://x.example/01/${gtin}/21/ABC`).slice('https://x.example'.length);
    expect(resolverRootPathOf(`/r${compressed}`)).toBe(compressed);
    // A brand's base (its slug may even be "01"), a slug alone, other paths.
    for (const path of [`/r/acme/01/${gtin}/21/ABC`, `/r/01/01/${gtin}`, '/r/01/u/TOKEN', '/r/acme', `/r/acme${compressed}`, `/v1/01/${gtin}`]) {
      expect(resolverRootPathOf(path), path).toBeNull();
    }
  });
});

describe('resolverDescription', () => {
  it("writes the contact as the description file schema's vCard-like object", () => {
    const described = (contact?: string) => resolverDescription({ name: 'R', resolverRoot: 'https://id.example', contact });
    expect(described()).not.toHaveProperty('contact');
    expect(described('ops@id.example').contact).toEqual({ fn: 'ops@id.example', hasEmail: 'mailto:ops@id.example' });
    expect(described('mailto:ops@id.example').contact).toEqual({ fn: 'ops@id.example', hasEmail: 'mailto:ops@id.example' });
    expect(described('https://id.example/contact').contact).toEqual({ fn: 'https://id.example/contact', hasURL: 'https://id.example/contact' });
  });
});
