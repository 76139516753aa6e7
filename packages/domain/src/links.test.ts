import { describe, expect, it } from 'vitest';
import { acceptedLanguages, chooseLevelLink, linkSetViolations, linksetOf, pickAmong, validateLink, type Link, type LinkedLevel } from './links.ts';

const link = (over: Partial<Link> = {}): Link => ({
  linkType: 'pip', href: 'https://p.example/en', title: 'Passport', hreflang: [], mediaType: 'text/html', context: [], fwqs: true, isDefault: false, ...over,
});

describe('validateLink', () => {
  it('names every offending field: not https, unknown link type, no title, a malformed language', () => {
    const result = validateLink({ linkType: 'gs1:nope', href: 'http://p.example', title: ' ', hreflang: ['english'], mediaType: null, context: [], fwqs: true, isDefault: false });
    expect('violations' in result && result.violations.map((v) => v.field)).toEqual(['link_type', 'href', 'title', 'hreflang[0]']);
  });

  it('reads a link type in every accepted spelling', () => {
    for (const linkType of ['gs1:pip', 'https://ref.gs1.org/voc/pip', 'https://gs1.org/voc/pip']) {
      const result = validateLink({ linkType, href: 'https://p.example', title: 'P', hreflang: [], mediaType: null, context: [], fwqs: true, isDefault: true });
      expect('link' in result && result.link.linkType).toBe('pip');
    }
  });
});

describe('linkSetViolations', () => {
  it('refuses a second default at one level, naming it', () => {
    expect(linkSetViolations([link({ isDefault: true }), link({ href: 'https://p.example/de', isDefault: true })]).map((v) => v.field)).toEqual(['links[1].is_default']);
  });
});

describe('choosing a link', () => {
  const en = link({ hreflang: ['en'], isDefault: true });
  const enGb = link({ href: 'https://p.example/en-gb', hreflang: ['en-GB'] });
  const de = link({ href: 'https://p.example/de', hreflang: ['de'], context: ['DE'] });

  it('orders Accept-Language by q, dropping *', () => {
    expect(acceptedLanguages('de;q=0.5, en-GB, *;q=0.1, en;q=0.8')).toEqual(['en-gb', 'en', 'de']);
  });

  it('prefers the context, then the exact language, then its primary language, then the default', () => {
    expect(pickAmong([en, enGb, de], ['en-gb'], null)).toBe(enGb);
    expect(pickAmong([en, de], ['en-us'], null)).toBe(en);
    expect(pickAmong([en, enGb, de], ['fr'], null)).toBe(en);
    expect(pickAmong([en, enGb, de], ['en-gb'], 'DE')).toBe(de);
  });

  it('walks up the levels: the most specific level with a link of the type, or with a default', () => {
    const gtinLevel: LinkedLevel = { anchor: 'https://id.example/01/1', description: 'Shoe', links: [en, link({ linkType: 'instructions', href: 'https://i.example' })] };
    const serialLevel: LinkedLevel = { anchor: 'https://id.example/01/1/21/S', description: 'Shoe S', links: [link({ linkType: 'recallStatus', href: 'https://r.example', isDefault: true })] };
    const prefs = { languages: [], context: null };
    expect(chooseLevelLink([serialLevel, gtinLevel], { ...prefs, linkType: null })?.href).toBe('https://r.example');
    expect(chooseLevelLink([serialLevel, gtinLevel], { ...prefs, linkType: 'instructions' })?.href).toBe('https://i.example');
    expect(chooseLevelLink([serialLevel, gtinLevel], { ...prefs, linkType: 'epil' })).toBeNull();
  });
});

describe('linksetOf', () => {
  it('lists the levels least specific first, the request default under defaultLink with only href and title, no empty relations', () => {
    const gtinLevel: LinkedLevel = { anchor: 'https://id.example/01/1', description: 'Shoe', links: [link({ isDefault: true })] };
    const serialLevel: LinkedLevel = { anchor: 'https://id.example/01/1/21/S', description: 'Shoe S', links: [] };
    expect(linksetOf([serialLevel, gtinLevel])).toEqual({
      linkset: [
        {
          anchor: 'https://id.example/01/1', itemDescription: 'Shoe',
          'https://ref.gs1.org/voc/defaultLink': [{ href: 'https://p.example/en', title: 'Passport' }],
          'https://ref.gs1.org/voc/pip': [{ href: 'https://p.example/en', title: 'Passport', type: 'text/html' }],
        },
        { anchor: 'https://id.example/01/1/21/S', itemDescription: 'Shoe S' },
      ],
    });
  });
});
