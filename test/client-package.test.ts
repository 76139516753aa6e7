// @mint/client is publishable as it stands: its package.json names it, versions it and says what
// it exports; `npm pack` packs a tarball whose every import resolves, either to a file inside the
// tarball or to a package the package.json depends on (nothing reaches back into the repository).

import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join, posix } from 'node:path';
import { describe, expect, it } from 'vitest';

const root = join(import.meta.dirname, '..');
const dir = join(root, 'packages/client');
const manifest = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as {
  name: string;
  version: string;
  private?: boolean;
  files: string[];
  dependencies: Record<string, string>;
  exports: Record<string, { types: string; default: string }>;
};

/** The files `npm pack` puts in the tarball, as npm itself lists them. */
function packedFiles(): string[] {
  const out = execFileSync('npm', ['pack', '--dry-run', '--json', '--ignore-scripts', '-w', '@mint/client'], {
    cwd: root,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'ignore'],
  });
  const [pack] = JSON.parse(out) as { name: string; version: string; files: { path: string }[] }[];
  expect(pack).toMatchObject({ name: manifest.name, version: manifest.version });
  return pack!.files.map((f) => f.path);
}

describe('the @mint/client package', () => {
  it('has what npm publish needs: a scoped name, a semver version, files and typed exports that exist', () => {
    expect(manifest.name).toBe('@mint/client');
    expect(manifest.version).toMatch(/^\d+\.\d+\.\d+(?:-[\w.]+)?$/);
    expect(manifest.private).toBeUndefined();
    expect(manifest.files).toContain('src');
    const entry = manifest.exports['.']!;
    expect(existsSync(join(dir, entry.types)), entry.types).toBe(true);
    expect(existsSync(join(dir, entry.default)), entry.default).toBe(true);
  });

  it('packs a tarball whose every import resolves inside it or to a declared dependency', () => {
    const files = packedFiles();
    expect(files).toEqual(expect.arrayContaining(['package.json', 'README.md', 'src/index.js', 'src/index.d.ts', 'src/gen/mint/v1/mint_service_pb.js']));
    expect(files.filter((f) => /\.test\.|(^|\/)test\//.test(f))).toEqual([]);
    const unresolved: string[] = [];
    for (const file of files.filter((f) => /\.(?:js|d\.ts)$/.test(f))) {
      const text = readFileSync(join(dir, file), 'utf8');
      for (const m of text.matchAll(/\bfrom\s+['"]([^'"]+)['"]/g)) {
        const spec = m[1]!;
        if (spec.startsWith('.')) {
          if (!files.includes(posix.join(posix.dirname(file), spec))) unresolved.push(`${file}: ${spec} (not packed)`);
        } else {
          const name = spec.startsWith('@') ? spec.split('/').slice(0, 2).join('/') : spec.split('/')[0]!;
          if (!(name in manifest.dependencies)) unresolved.push(`${file}: ${spec} (not a dependency)`);
        }
      }
    }
    expect(unresolved).toEqual([]);
  });
});
