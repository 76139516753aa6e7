import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { gs1LinkTypeNames, gs1LinkTypeOf, gs1LinkTypeOfAnyCase, gs1VocabularyVersion } from './gs1-link-types.ts';
import { readLinkType } from './resolution.ts';

const root = join(import.meta.dirname, '../../..');
const vocabularyFile = join(root, 'test/fixtures/standards/gs1-webvoc/gs1Voc_v1_16.jsonld');

/** The vendored GS1 Web Vocabulary 1.16, read here without the generator's code. */
const vocabulary = JSON.parse(readFileSync(vocabularyFile, 'utf8').replace(/^\uFEFF/, '')) as { '@graph': Record<string, unknown>[] };
const vocabularyLinkTypes = vocabulary['@graph']
  .filter((node) => JSON.stringify(node['rdfs:subPropertyOf'] ?? null).includes('"gs1:linkType"'))
  .map((node) => String(node['@id']).replace(/^gs1:/, ''));

describe('GS1 link types', () => {
  it('are exactly the gs1:linkType terms of the vendored GS1 Web Vocabulary 1.16', () => {
    expect(gs1VocabularyVersion).toBe('1.16');
    expect(vocabularyLinkTypes).toHaveLength(60);
    expect([...gs1LinkTypeNames].sort()).toEqual([...vocabularyLinkTypes].sort());
  });

  it('accept the terms the hand-typed list lacked: gs1:eifu, gs1:backgroundInfo and gs1:reportFound, in every accepted spelling', () => {
    for (const name of ['eifu', 'backgroundInfo', 'reportFound']) {
      for (const value of [`gs1:${name}`, `https://ref.gs1.org/voc/${name}`, `https://gs1.org/voc/${name}`]) {
        expect(gs1LinkTypeOf(value), value).toBe(name);
        expect(readLinkType(value), value).toEqual({ kind: 'link', name });
      }
    }
    expect(gs1LinkTypeOf('gs1:nosuchlt')).toBeNull();
  });

  it('differ by more than case, so a link written in any case names exactly one', () => {
    expect(new Set(gs1LinkTypeNames.map((name) => name.toLowerCase())).size).toBe(gs1LinkTypeNames.length);
    for (const name of gs1LinkTypeNames) expect(gs1LinkTypeOfAnyCase(`GS1:${name.toUpperCase()}`)).toBe(name);
    expect(gs1LinkTypeOfAnyCase('gs1:nosuchlt')).toBeNull();
  });

  it('the generated module is what scripts/gs1-link-types.ts makes of the vendored vocabulary', () => {
    const out = execFileSync(process.execPath, [join(root, 'scripts/gs1-link-types.ts'), vocabularyFile, '--check'], { encoding: 'utf8' });
    expect(out).toContain('is current (60 link types of GS1 Web Vocabulary 1.16)');
  });
});
