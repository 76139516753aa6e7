import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { canonicalJson, inheritPassport, localText, passportDigest, readPassportContent, visiblePassport, type PassportContent } from './passport.ts';

const model = {
  description: { en: 'A 300 Ah battery', de: 'Eine 300-Ah-Batterie' },
  manufacturer: { name: 'Example Batteries GmbH', id: 'https://example.com/company' },
  materials: [{ name: { en: 'Lithium' }, massFraction: 0.2, recycledMassFraction: 0.1, hazardous: true }],
  emissions: { carbonFootprint: 12.5, declaredUnit: 'EA', method: 'PEF 3.1' },
  dueDiligence: [{ statement: { en: 'Cobalt sourced per OECD guidance' } }],
  access: { dueDiligence: 'authority', materials: 'legitimate_interest' },
};

describe('readPassportContent', () => {
  it('keeps a valid passport as written', () => {
    const read = readPassportContent(model);
    expect(read).toEqual({ content: model });
  });

  it('names every bad field and keeps nothing', () => {
    const read = readPassportContent({
      description: { english: 'x' },
      materials: [{ name: { en: 'Steel' }, massFraction: 1.5 }],
      circularity: { repairInstructions: { url: 'http://x.example' } },
      access: { materials: 'secret' },
      colour: 'red',
    });
    expect('violations' in read && read.violations.map((v) => v.field)).toEqual([
      'content.colour',
      'content.description.english',
      'content.materials[0].massFraction',
      'content.circularity.repairInstructions.url',
      'content.access.materials',
    ]);
  });
});

describe('the digest of a version', () => {
  it('is the SHA-256 of the RFC 8785 canonical JSON, whatever the key order', () => {
    const reordered = Object.fromEntries(
      Object.entries({ ...model, emissions: { method: 'PEF 3.1', declaredUnit: 'EA', carbonFootprint: 12.5 } }).reverse(),
    ) as PassportContent;
    expect(JSON.stringify(reordered)).not.toBe(JSON.stringify(model));
    expect(passportDigest(reordered)).toBe(passportDigest(model as PassportContent));
    expect(canonicalJson({ b: 1, a: [1e21, 'é'] })).toBe('{"a":[1e+21,"é"],"b":1}');
    expect(passportDigest({ description: { en: 'x' } })).toBe(createHash('sha256').update('{"description":{"en":"x"}}').digest('hex'));
  });
});

describe('inheritance and access', () => {
  it('takes each section from the unit, then the lot, then the model, with its class', () => {
    const lot: PassportContent = {
      emissions: { carbonFootprint: 11, declaredUnit: 'EA', method: 'PEF 3.1' },
      materials: [{ name: { en: 'Recycled lithium' } }],
      access: {},
    };
    const unit: PassportContent = { extensions: [{ term: 'https://example.com/voc#stateOfHealth', name: { en: 'State of health' }, value: 97, unit: 'P1' }] };
    const item = inheritPassport([unit, lot, model as PassportContent]);
    expect(item.emissions?.carbonFootprint).toBe(11);
    expect(item.extensions?.[0]?.value).toBe(97);
    expect(item.description).toEqual(model.description);
    // The lot rewrote the materials without restricting them; the model's due diligence stays the authority's.
    expect(item.access).toEqual({ dueDiligence: 'authority' });
  });

  it('withholds restricted sections from the public; an authority reads both classes', () => {
    const content = model as PassportContent;
    const pub = visiblePassport(content, []);
    expect(Object.keys(pub.content)).toEqual(['description', 'manufacturer', 'emissions']);
    expect(pub.withheld).toEqual(['materials', 'dueDiligence']);
    expect(visiblePassport(content, ['legitimate_interest']).restricted).toEqual(['materials']);
    expect(visiblePassport(content, ['authority']).restricted).toEqual(['materials', 'dueDiligence']);
  });

  it('picks a text by Accept-Language with fallbacks', () => {
    expect(localText(model.description, ['de-AT', 'en'])).toEqual({ text: 'Eine 300-Ah-Batterie', lang: 'de' });
    expect(localText(model.description, ['fr'])).toEqual({ text: 'A 300 Ah battery', lang: 'en' });
  });
});
