// Checks every internal link of the built docs site (docs/.vitepress/dist) and of README.md: the
// page or file it names exists, and so does its #anchor (VitePress's own dead-link check covers
// pages only, not anchors). `npm run docs:build` runs it after the build; exits 1 listing each
// broken link with the page it is on. It also checks the site's search indexes every page.
//
//   node scripts/check-doc-links.ts

import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, posix, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..');

/** Every file under `dir`, as paths relative to it with `/` separators. */
function files(dir: string, prefix = ''): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? files(path, `${prefix}${name}/`) : [`${prefix}${name}`];
  });
}

/**
 * Every broken internal link of the site built into `dist` and of `root`'s README.md, as
 * `page: href (why)`; empty when every link and anchor resolves.
 */
export function brokenDocLinks(dist: string, root: string): string[] {
  const ids = new Map<string, Set<string>>();
  /** The element ids of a built page (its anchors). */
  function anchorsOf(page: string): Set<string> {
    let found = ids.get(page);
    if (!found) {
      found = new Set([...readFileSync(join(dist, page), 'utf8').matchAll(/\sid="([^"]+)"/g)].map((m) => decodeURIComponent(m[1]!)));
      ids.set(page, found);
    }
    return found;
  }

  /** Why the site link `target` (a path within the site, maybe with #anchor) is broken, or undefined. */
  function brokenSiteLink(target: string): string | undefined {
    const [path, anchor] = target.split('#') as [string, string | undefined];
    let page = decodeURIComponent(path.replace(/^\//, ''));
    if (page === '' || page.endsWith('/')) page += 'index.html';
    if (!existsSync(join(dist, page)) && existsSync(join(dist, `${page}.html`))) page += '.html';
    if (!existsSync(join(dist, page))) return 'no such page or file';
    if (anchor && page.endsWith('.html') && !anchorsOf(page).has(decodeURIComponent(anchor))) return `no anchor #${anchor}`;
    return undefined;
  }

  const problems: string[] = [];
  for (const page of files(dist).filter((f) => f.endsWith('.html'))) {
    const html = readFileSync(join(dist, page), 'utf8');
    for (const m of html.matchAll(/\shref="([^"]*)"/g)) {
      const href = m[1]!.replace(/&amp;/g, '&');
      if (/^(?:[a-z][a-z0-9+.-]*:|\/\/)/i.test(href) || href === '') continue;
      const target = href.startsWith('#') ? `/${page}${href}` : href.startsWith('/') ? href : posix.join('/', posix.dirname(page), href);
      const why = brokenSiteLink(target);
      if (why) problems.push(`${page}: ${href} (${why})`);
    }
  }

  // README.md is read on the repository's page: its links are files of the repository; a link into
  // docs/ with an anchor is checked against that page as the site built it.
  const readme = readFileSync(join(root, 'README.md'), 'utf8').replace(/```[\s\S]*?```/g, '');
  for (const m of readme.matchAll(/\]\(([^)\s]+)\)/g)) {
    const href = m[1]!;
    if (/^[a-z][a-z0-9+.-]*:/i.test(href)) continue;
    const [path, anchor] = href.split('#') as [string, string | undefined];
    if (path !== '' && !existsSync(join(root, path))) {
      problems.push(`README.md: ${href} (no such file)`);
      continue;
    }
    if (anchor === undefined) continue;
    if (path === '') {
      problems.push(`README.md: ${href} (link into the docs instead of an anchor of the README)`);
      continue;
    }
    const rel = relative(join(root, 'docs'), join(root, path));
    if (rel.startsWith('..') || !rel.endsWith('.md')) continue;
    const why = brokenSiteLink(`/${rel.replace(/\.md$/, '.html')}#${anchor}`);
    if (why) problems.push(`README.md: ${href} (${why})`);
  }
  return problems;
}

/**
 * The built pages the site's search (VitePress's local search, built into
 * `assets/chunks/@localSearchIndex*.js`) does not index; `['no search index']` when it has none.
 */
export function unsearchablePages(dist: string): string[] {
  const all = files(dist);
  const index = all.find((f) => /^assets\/chunks\/@localSearchIndex[^/]*\.js$/.test(f));
  if (index === undefined) return ['no search index'];
  const text = readFileSync(join(dist, index), 'utf8');
  // Entries are `/page.html#heading`, and `/folder/#heading` for a folder's index page.
  const indexed = new Set([...text.matchAll(/"\/([^"#]*)#/g)].map((m) => (m[1] === '' || m[1]!.endsWith('/') ? `${m[1]}index.html` : m[1]!)));
  return all.filter((f) => f.endsWith('.html') && f !== '404.html' && !indexed.has(f));
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const dist = join(repoRoot, 'docs/.vitepress/dist');
  if (!existsSync(dist)) {
    console.error('docs/.vitepress/dist is missing: run `npm run docs:build`');
    process.exit(1);
  }
  const problems = [...brokenDocLinks(dist, repoRoot), ...unsearchablePages(dist).map((page) => `${page}: not in the site's search index`)];
  if (problems.length > 0) {
    console.error(`${problems.length} problem(s):\n${problems.join('\n')}`);
    process.exit(1);
  }
  console.log('docs links: every internal link and anchor resolves, and search indexes every page');
}
