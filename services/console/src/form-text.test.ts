import { describe, expect, it } from 'vitest';
import {
  inLanguage,
  isLanguageTag,
  parseSerials,
  sectionTexts,
  withText,
  passportFieldErrors,
  passportLanguages,
  sectionChanges,
  sectionOf,
  visibleSections,
} from './form-text.ts';

describe('passportFieldErrors and sectionOf', () => {
  it("places each of the API's passport field errors at its section", () => {
    const errors = passportFieldErrors(
      'content.materials[0].massFraction: must be a number from 0 to 1; content.access.dueDiligence: must be public, legitimate_interest or authority; content: is too large',
    );
    expect(errors.map((e) => [sectionOf(e.field), e.message])).toEqual([
      ['materials', 'must be a number from 0 to 1'],
      ['dueDiligence', 'must be public, legitimate_interest or authority'],
      ['', 'is too large'],
    ]);
    expect(passportFieldErrors('the draft moved on')).toEqual([]);
  });
});

describe('parseSerials', () => {
  it('reads serials one per line or separated by commas, semicolons or spaces', () => {
    expect(parseSerials(' A1\nB2, C3;D4\r\n\n E5 ')).toEqual(['A1', 'B2', 'C3', 'D4', 'E5']);
    expect(parseSerials('  \n ')).toEqual([]);
  });
});

describe('sectionChanges', () => {
  it('lists the sections added, removed and changed between two versions', () => {
    const changes = sectionChanges(
      { description: { en: 'Jacket' }, facility: { name: 'Plant' }, access: { materials: 'authority' } },
      { description: { en: 'Wool jacket' }, materials: [{ name: { en: 'Wool' } }], access: { materials: 'authority' } },
    );
    expect(changes.map((c) => [c.section, c.change])).toEqual([
      ['description', 'changed'],
      ['materials', 'added'],
      ['facility', 'removed'],
    ]);
    expect(changes[0]!.before).toContain('"Jacket"');
    expect(changes[0]!.after).toContain('"Wool jacket"');
    expect(sectionChanges({ a: 1 }, { a: 1 })).toEqual([]);
  });
});

describe('the passport preview', () => {
  const content = {
    description: { en: 'Jacket', de: 'Jacke' },
    materials: [{ name: { en: 'Wool', fr: 'Laine' }, massFraction: 0.4 }],
    dueDiligence: { report: 'x' },
    conformity: [{ standard: 'EN 1' }],
    access: { materials: 'legitimate_interest', dueDiligence: 'authority' },
  };

  it('shows a shopper the public sections, a legitimate interest its own too, an authority every section', () => {
    expect(visibleSections(content, 'public').map((s) => s.section)).toEqual(['description', 'conformity']);
    expect(visibleSections(content, 'legitimate_interest').map((s) => s.section)).toEqual(['description', 'materials', 'conformity']);
    expect(visibleSections(content, 'authority').map((s) => [s.section, s.restricted])).toEqual([
      ['description', undefined],
      ['materials', 'legitimate_interest'],
      ['dueDiligence', 'authority'],
      ['conformity', undefined],
    ]);
  });

  it('reads the texts in the language asked for, else English', () => {
    expect(passportLanguages(content)).toEqual(['de', 'en', 'fr']);
    expect(inLanguage(content.description, 'de')).toBe('Jacke');
    expect(inLanguage(content.materials, 'de')).toEqual([{ name: 'Wool', massFraction: 0.4 }]);
    expect(inLanguage(content.materials, 'fr')).toEqual([{ name: 'Laine', massFraction: 0.4 }]);
  });
});

describe('sectionTexts and withText', () => {
  it('finds every text of a section by its API field name and sets one language of one text, leaving the rest', () => {
    const materials = [{ name: { en: 'Wool', de: 'Wolle' }, massFraction: 0.4 }, { name: { en: 'Cotton' } }];
    expect(sectionTexts('materials', materials)).toEqual([
      { path: [0, 'name'], field: 'materials[0].name', texts: { en: 'Wool', de: 'Wolle' } },
      { path: [1, 'name'], field: 'materials[1].name', texts: { en: 'Cotton' } },
    ]);
    expect(sectionTexts('description', { en: 'Jacket' })).toEqual([{ path: [], field: 'description', texts: { en: 'Jacket' } }]);
    const edited = withText(materials, [1, 'name'], 'fr', 'Coton');
    expect(edited).toEqual([materials[0], { name: { en: 'Cotton', fr: 'Coton' } }]);
    expect(materials[1]).toEqual({ name: { en: 'Cotton' } });
    // An empty text removes its language, unless it is the text's last one.
    expect(withText(edited, [1, 'name'], 'fr', '')).toEqual(materials);
    expect(withText({ en: 'Jacket' }, [], 'en', '')).toEqual({ en: '' });
    expect(isLanguageTag('fr-CA')).toBe(true);
    expect(isLanguageTag('French')).toBe(false);
  });
});
