import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { brokenDocLinks, unsearchablePages } from '../scripts/check-doc-links.ts';
import { eventRows, eventTypes } from '../scripts/docs-events.ts';
import { generatedPages } from '../scripts/docs-generate.ts';
import { errorKinds } from '../packages/domain/src/errors.ts';

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

  it('lists every event type of the domain, and its generator refuses a type without a row', () => {
    const source = read('packages/domain/src/events.ts');
    const types = eventTypes(source);
    expect(types.length).toBeGreaterThan(30);
    const doc = read('docs/reference/events.md');
    expect(types.filter((t) => !doc.includes(`| \`${t}\` |`))).toEqual([]);
    const withNewType = source.replace('export type EventType =\n', "export type EventType =\n  | 'brand_new_event'\n");
    expect(() => eventRows(withNewType)).toThrow('brand_new_event has no row');
  });

  it('its link check names a missing page, a missing anchor and a README link to no file, and passes good links', () => {
    const dir = mkdtempSync(join(tmpdir(), 'doc-links-'));
    try {
      const dist = join(dir, 'docs/.vitepress/dist');
      mkdirSync(join(dist, 'guides'), { recursive: true });
      writeFileSync(join(dist, 'index.html'), '<a href="/guides/a.html#here">ok</a> <a href="guides/b">gone</a> <a href="https://x.test/">out</a>');
      writeFileSync(
        join(dist, 'guides/a.html'),
        '<h2 id="here">Here</h2> <a href="#here">self</a> <a href="#nowhere">bad anchor</a> <a href="../index.html">up</a>',
      );
      mkdirSync(join(dir, 'docs/guides'), { recursive: true });
      writeFileSync(join(dir, 'docs/guides/a.md'), '# A');
      writeFileSync(join(dir, 'README.md'), '[a](docs/guides/a.md#here) [b](docs/guides/a.md#gone) [c](docs/missing.md)\n```\n[d](not/checked.md)\n```\n');
      expect(brokenDocLinks(dist, dir).sort()).toEqual([
        'README.md: docs/guides/a.md#gone (no anchor #gone)',
        'README.md: docs/missing.md (no such file)',
        'guides/a.html: #nowhere (no anchor #nowhere)',
        'index.html: guides/b (no such page or file)',
      ]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('its search check names a page the site search leaves out, and a site without a search index', () => {
    const dir = mkdtempSync(join(tmpdir(), 'doc-search-'));
    try {
      mkdirSync(join(dir, 'guides'), { recursive: true });
      for (const page of ['index.html', '404.html', 'guides/index.html', 'guides/a.html', 'guides/b.html']) writeFileSync(join(dir, page), '<h1>x</h1>');
      expect(unsearchablePages(dir)).toEqual(['no search index']);
      mkdirSync(join(dir, 'assets/chunks'), { recursive: true });
      writeFileSync(
        join(dir, 'assets/chunks/@localSearchIndexroot.abc123.js'),
        `const e='{"documentIds":{"0":"/#home","1":"/guides/#guides","2":"/guides/a.html#a","3":"/guides/a.html#more"}}';export{e as default};`,
      );
      expect(unsearchablePages(dir)).toEqual(['guides/b.html']);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('describes every metric the services define', () => {
    const names = [...read('packages/runtime/src/metrics.ts').matchAll(/name: `\$\{metricPrefix\}([a-z_]+)`/g)].map((m) => `minting_${m[1]}`);
    expect(names.length).toBeGreaterThan(15);
    const doc = read('docs/reference/metrics.md');
    expect(names.filter((name) => !new RegExp(`\`${name}[{\`]`).test(doc))).toEqual([]);
  });

  it('names every kind of domain error in the errors reference', () => {
    const doc = read('docs/reference/errors.md');
    expect(errorKinds.filter((kind) => !doc.includes(`\`${kind}\``))).toEqual([]);
  });
});
