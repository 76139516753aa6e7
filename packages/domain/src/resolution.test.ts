import { describe, expect, it } from 'vitest';
import { buildLinkset, decideResolution, negotiate, parseResolverPath, type FoundIdentity } from './resolution.ts';

const gtin = '09506000134352';

describe('parseResolverPath', () => {
  it('reads the four routes under a brand slug', () => {
    expect(parseResolverPath(`/r/acme/01/${gtin}/21/ABC123`)).toEqual({ slug: 'acme', key: { kind: 'serial', gtin, serial: 'ABC123' } });
    expect(parseResolverPath(`/r/acme/01/${gtin}/10/LOT%2F1`)).toEqual({ slug: 'acme', key: { kind: 'lot', gtin, lot: 'LOT/1' } });
    expect(parseResolverPath(`/r/acme/01/${gtin}`)).toEqual({ slug: 'acme', key: { kind: 'gtin', gtin } });
    expect(parseResolverPath(`/r/acme/01/${gtin}/`)).toEqual({ slug: 'acme', key: { kind: 'gtin', gtin } });
    expect(parseResolverPath('/r/acme/u/TOKEN1')).toEqual({ slug: 'acme', key: { kind: 'token', token: 'TOKEN1' } });
  });

  it('normalises a GTIN-13 to GTIN-14', () => {
    expect(parseResolverPath('/r/acme/01/9506000134352')?.key).toEqual({ kind: 'gtin', gtin });
  });

  it('rejects wrong check digits, unknown AIs, overlong serials and other paths', () => {
    for (const path of [
      '/r/acme/01/09506000134353', `/r/acme/01/${gtin}/22/A`, `/r/acme/01/${gtin}/21/${'A'.repeat(21)}`, `/r/acme/01/${gtin}/21/`,
      '/r/Acme/01/09506000134352', '/r/acme', '/r/acme/u/', '/r/acme/u/a/b', '/x/acme/01/09506000134352', `/r/acme/01/${gtin}/21/%E0%A4%A`,
      `/r/acme/01/${gtin}/21/a%20b`,
    ]) {
      expect(parseResolverPath(path), path).toBeNull();
    }
  });
});

describe('negotiate', () => {
  it('redirects browsers and clients without a preference', () => {
    expect(negotiate('text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8', null)).toBe('redirect');
    expect(negotiate(undefined, null)).toBe('redirect');
    expect(negotiate('*/*', null)).toBe('redirect');
    expect(negotiate('image/png', null)).toBe('redirect');
  });

  it('answers JSON and linkset when asked', () => {
    expect(negotiate('application/json', null)).toBe('json');
    expect(negotiate('application/linkset+json', null)).toBe('linkset');
    expect(negotiate('application/json;q=0.5, application/linkset+json', null)).toBe('linkset');
    expect(negotiate('text/html;q=0.4, application/json', null)).toBe('json');
    expect(negotiate('text/html', 'linkset')).toBe('linkset');
    expect(negotiate(undefined, 'all')).toBe('linkset');
  });
});

describe('decideResolution', () => {
  const found = (over: Partial<Extract<FoundIdentity, { kind: 'found' }>> = {}): FoundIdentity => ({
    kind: 'found', unitStatus: 'active', batchStatus: 'minted', ownTarget: null, productPassportUrl: 'https://p.example/x',
    brandDefaultPassportUrl: 'https://brand.example', ...over,
  });

  it('walks up from the unit to the product, then to the brand default', () => {
    expect(decideResolution(found({ ownTarget: 'https://own' }))).toEqual({ kind: 'resolved', target: 'https://own' });
    expect(decideResolution(found())).toEqual({ kind: 'resolved', target: 'https://p.example/x' });
    expect(decideResolution(found({ productPassportUrl: null }))).toEqual({ kind: 'resolved', target: 'https://brand.example' });
    expect(decideResolution(found({ productPassportUrl: null, brandDefaultPassportUrl: null }))).toEqual({ kind: 'resolved', target: null });
  });

  it('answers gone for a voided batch before anything else, and not activated for an inactive unit', () => {
    expect(decideResolution(found({ batchStatus: 'voided', unitStatus: 'inactive' }))).toEqual({ kind: 'gone' });
    expect(decideResolution(found({ unitStatus: 'inactive' }))).toEqual({ kind: 'not_activated' });
    expect(decideResolution({ kind: 'none' })).toEqual({ kind: 'not_found' });
  });
});

describe('buildLinkset', () => {
  it('is an RFC 9264 linkset anchored at the identity', () => {
    expect(buildLinkset('https://id.example/01/1', 'https://p.example', 'Shoe')).toEqual({
      linkset: [{
        anchor: 'https://id.example/01/1',
        'https://gs1.org/voc/defaultLink': [{ href: 'https://p.example', type: 'text/html', title: 'Shoe' }],
        'https://gs1.org/voc/pip': [{ href: 'https://p.example', type: 'text/html', title: 'Shoe' }],
      }],
    });
  });
});
