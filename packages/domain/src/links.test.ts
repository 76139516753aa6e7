import { describe, expect, it } from 'vitest';
import { gs1LinkTypeNames } from './gs1-link-types.ts';
import {
  acceptedLanguages,
  acceptedMediaTypes,
  chooseAmong,
  chooseLevelLink,
  linkSetViolations,
  linksetOf,
  pickAmong,
  validateLink,
  type Link,
  type LinkedLevel,
} from './links.ts';

const link = (over: Partial<Link> = {}): Link => ({
  linkType: 'pip',
  href: 'https://p.example/en',
  title: 'Passport',
  hreflang: [],
  mediaType: 'text/html',
  context: [],
  fwqs: true,
  isDefault: false,
  ...over,
});

describe('validateLink', () => {
  it('names every offending field: not https, unknown link type, no title, a malformed language', () => {
    const result = validateLink({
      linkType: 'gs1:nope',
      href: 'http://p.example',
      title: ' ',
      hreflang: ['english'],
      mediaType: null,
      context: [],
      fwqs: true,
      isDefault: false,
    });
    expect('violations' in result && result.violations.map((v) => v.field)).toEqual(['link_type', 'href', 'title', 'hreflang[0]']);
  });

  it('reads a link type in every accepted spelling', () => {
    for (const linkType of ['gs1:pip', 'https://ref.gs1.org/voc/pip', 'https://gs1.org/voc/pip']) {
      const result = validateLink({ linkType, href: 'https://p.example', title: 'P', hreflang: [], mediaType: null, context: [], fwqs: true, isDefault: true });
      expect('link' in result && result.link.linkType).toBe('pip');
    }
  });

  it('reads a link type in any case, as the vocabulary spells it', () => {
    for (const [linkType, name] of [
      ['GS1:PIP', 'pip'],
      ['gs1:certificationinfo', 'certificationInfo'],
      ['HTTPS://REF.GS1.ORG/VOC/ReportFound', 'reportFound'],
      [' gs1:Eifu ', 'eifu'],
    ]) {
      const result = validateLink({
        linkType: linkType!,
        href: 'https://p.example',
        title: 'P',
        hreflang: [],
        mediaType: null,
        context: [],
        fwqs: true,
        isDefault: false,
      });
      expect('link' in result && result.link.linkType, linkType).toBe(name);
    }
  });

  it('lists the link types a link may have when it names none', () => {
    const result = validateLink({
      linkType: 'gs1:productPage',
      href: 'https://p.example',
      title: 'P',
      hreflang: [],
      mediaType: null,
      context: [],
      fwqs: true,
      isDefault: false,
    });
    const message = 'violations' in result ? result.violations[0]!.message : '';
    expect(message).toMatch(/^"gs1:productPage" must be one of the GS1 Web Vocabulary 1\.16's link types: gs1:activityIdeas, /);
    for (const name of gs1LinkTypeNames.filter((n) => !['defaultLink', 'defaultLinkMulti', 'handledBy'].includes(n))) expect(message).toContain(`gs1:${name}`);
    expect(message).not.toContain('gs1:defaultLink,');
    expect(message).toMatch(/ \(in any case, or as https:\/\/ref\.gs1\.org\/voc\/\{name\}\)$/);
    expect(message).not.toContain('; ');
  });
});

describe('linkSetViolations', () => {
  it('refuses a second default at one level, naming it', () => {
    expect(linkSetViolations([link({ isDefault: true }), link({ href: 'https://p.example/de', isDefault: true })]).map((v) => v.field)).toEqual([
      'links[1].is_default',
    ]);
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
    const gtinLevel: LinkedLevel = {
      anchor: 'https://id.example/01/1',
      description: 'Shoe',
      links: [en, link({ linkType: 'instructions', href: 'https://i.example' })],
    };
    const serialLevel: LinkedLevel = {
      anchor: 'https://id.example/01/1/21/S',
      description: 'Shoe S',
      links: [link({ linkType: 'recallStatus', href: 'https://r.example', isDefault: true })],
    };
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
          anchor: 'https://id.example/01/1',
          itemDescription: 'Shoe',
          'https://ref.gs1.org/voc/defaultLink': [{ href: 'https://p.example/en', title: 'Passport' }],
          'https://ref.gs1.org/voc/pip': [{ href: 'https://p.example/en', title: 'Passport', type: 'text/html' }],
        },
        { anchor: 'https://id.example/01/1/21/S', itemDescription: 'Shoe S' },
      ],
    });
  });
});

describe('choosing among links of one type', () => {
  const en = link({ linkType: 'instructions', href: 'https://x.example/en', hreflang: ['en'] });
  const pdf = link({ linkType: 'instructions', href: 'https://x.example/pdf', hreflang: ['en'], mediaType: 'application/pdf' });
  const fr = link({ linkType: 'instructions', href: 'https://x.example/fr', hreflang: ['fr'] });

  it('reads Accept as media types preferred first, without */* and refused ranges', () => {
    expect(acceptedMediaTypes('text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8')).toEqual([
      'text/html',
      'application/xhtml+xml',
      'application/xml',
    ]);
    expect(acceptedMediaTypes('application/pdf;q=0.5, image/*, text/plain;q=0')).toEqual(['image/*', 'application/pdf']);
    expect(acceptedMediaTypes(undefined)).toEqual([]);
  });

  it('decides by media type, then language, then the default; offers the rest as choices', () => {
    expect(chooseAmong([en, pdf], [], null, ['application/pdf'])).toEqual({ kind: 'link', link: pdf });
    expect(chooseAmong([en, pdf], [], null, ['image/*'])).toEqual({ kind: 'choices', links: [en, pdf] });
    expect(chooseAmong([en, fr], ['fr'], null)).toEqual({ kind: 'link', link: fr });
    expect(chooseAmong([en, fr], [], null)).toEqual({ kind: 'choices', links: [en, fr] });
    expect(chooseAmong([en, { ...fr, isDefault: true }], [], null)).toEqual({ kind: 'link', link: { ...fr, isDefault: true } });
    expect(chooseAmong([en, { ...fr, hreflang: [] }], [], null)).toEqual({ kind: 'link', link: { ...fr, hreflang: [] } });
    expect(chooseAmong([], [], null)).toEqual({ kind: 'none' });
  });
});
