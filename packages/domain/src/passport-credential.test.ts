import { readFileSync } from 'node:fs';
import Ajv2020 from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { describe, expect, it } from 'vitest';
import { readPassportContent, type PassportContent } from './passport.ts';
import { credentialIssuerOf, identityPassportCredential, type IdentityPassportInput } from './passport-credential.ts';

const input: IdentityPassportInput = {
  key: { kind: 'serial', gtin: '09506000134352', serial: 'S1', lot: 'L1' },
  anchor: 'https://id.acme.example/01/09506000134352/10/L1/21/S1',
  title: 'Battery',
  brand: { name: 'Acme', slug: 'acme' },
  content: { description: { en: 'Traction battery', de: 'Traktionsbatterie' } },
  version: 3,
  publishedAt: new Date('2026-03-01T10:00:00.123Z'),
  statusIndex: 17,
  languages: [],
};

describe('identityPassportCredential', () => {
  it("is issued by the did:web of the host that answers, names the version and its entry in that host's status list", () => {
    const c = identityPassportCredential(input) as Record<string, any>;
    expect([credentialIssuerOf(c), c.id, c.validFrom]).toEqual(['did:web:id.acme.example', `${input.anchor}?passportVersion=3`, '2026-03-01T10:00:00Z']);
    expect(c.credentialStatus).toEqual({
      id: 'https://id.acme.example/.well-known/passport-status/acme#17',
      type: 'BitstringStatusListEntry',
      statusPurpose: 'revocation',
      statusListIndex: '17',
      statusListCredential: 'https://id.acme.example/.well-known/passport-status/acme',
    });
    expect(c.credentialSubject.product).toMatchObject({ registeredId: '09506000134352', batchNumber: 'L1', serialNumber: 'S1' });
    const onService = identityPassportCredential({ ...input, anchor: 'http://127.0.0.1:8080/r/acme/01/09506000134352/10/L1/21/S1' });
    expect(credentialIssuerOf(onService)).toBe('did:web:127.0.0.1%3A8080');
  });

  it('takes the level from the key: a unit is an item, a lot a batch, a GTIN the model', () => {
    const level = (key: IdentityPassportInput['key']) =>
      (identityPassportCredential({ ...input, key }) as Record<string, any>).credentialSubject.granularityLevel;
    expect([
      level(input.key),
      level({ kind: 'token', token: 'T1' }),
      level({ kind: 'lot', gtin: '09506000134352', lot: 'L1' }),
      level({ kind: 'gtin', gtin: '09506000134352' }),
    ]).toEqual(['item', 'item', 'batch', 'model']);
  });

  it('gives the same bytes for the same version, reader and language, other bytes in another language', () => {
    const bytes = (languages: string[]) => JSON.stringify(identityPassportCredential({ ...input, languages }));
    expect(bytes([])).toBe(bytes([]));
    expect(bytes(['de'])).not.toBe(bytes([]));
    expect(bytes(['de'])).toContain('Traktionsbatterie');
  });
});

describe('a passport with every section', () => {
  it('is read as written from the documented example, and its credential at every level is valid against the vendored UNTP DPP schema', () => {
    const guide = readFileSync(new URL('../../../docs/guides/passports.md', import.meta.url), 'utf8');
    const example = JSON.parse(guide.split('```json\n')[1]!.split('\n```')[0]!) as Record<string, unknown>;
    expect(Object.keys(example).sort()).toEqual([
      'access',
      'circularity',
      'conformity',
      'countryOfProduction',
      'description',
      'dimensions',
      'dueDiligence',
      'emissions',
      'extensions',
      'facility',
      'manufacturer',
      'materials',
      'productionDate',
    ]);
    const read = readPassportContent(example);
    expect(read).toEqual({ content: example });
    const schema = JSON.parse(
      readFileSync(new URL('../../../test/fixtures/standards/untp-dpp/untp-dpp-untp-dpp-schema.json', import.meta.url), 'utf8'),
    ) as object;
    const ajv = new Ajv2020.default({ strict: false, allErrors: true });
    addFormats.default(ajv);
    const validate = ajv.compile(schema);
    for (const key of [input.key, { kind: 'lot', gtin: '09506000134352', lot: 'L1' }, { kind: 'gtin', gtin: '09506000134352' }] as const) {
      const credential = identityPassportCredential({ ...input, key, content: example as PassportContent }) as Record<string, any>;
      expect(validate(credential), JSON.stringify(validate.errors)).toBe(true);
      const subject = credential.credentialSubject;
      expect(subject.materialsProvenance[0]).toMatchObject({ massFraction: 0.2, recycledMassFraction: 0.1, hazardous: true });
      expect(subject.emissionsScorecard.carbonFootprint).toBe(61.5);
      expect(subject.circularityScorecard).toMatchObject({ recyclableContent: 0.8, recycledContent: 0.12 });
      expect(subject.product.characteristics['https://example.com/voc#stateOfHealth']).toEqual({ value: 97, unit: 'P1' });
      expect(subject.conformityClaim[0].conformityEvidence.linkURL).toBe('https://example.com/ce.pdf');
    }
  });
});
