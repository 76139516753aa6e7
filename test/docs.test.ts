import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { generatedPages } from '../scripts/docs-generate.ts';

const root = new URL('../', import.meta.url);
const read = (path: string) => readFileSync(new URL(path, root), 'utf8');

describe('the docs', () => {
  it.each(generatedPages.map((page) => [page.path, page]))('%s is what its generator writes today', (_, page) => {
    expect(read(page.path), `${page.path} is stale: run \`npm run docs:generate\``).toBe(page.render());
  });

  it('keeps the README a short entry (at most 200 lines)', () => {
    expect(read('README.md').split('\n').length).toBeLessThanOrEqual(200);
  });

  it('documents every variable the configuration reads', () => {
    const names = [...read('packages/runtime/src/config.ts').matchAll(/\bread\.\w+\('([A-Z][A-Z0-9_]*)'/g)].map((m) => m[1]!);
    expect(names.length).toBeGreaterThan(40);
    const doc = read('docs/reference/configuration.md');
    expect(names.filter((name) => !doc.includes(`\`${name}\``))).toEqual([]);
  });
});
