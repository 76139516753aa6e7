// The dependency rule: imports point down (services -> use cases -> db -> domain), the two
// services never import each other, and nothing reaches into another package's files.

import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const root = join(import.meta.dirname, '..');
/** Layer of each workspace package: a package may import only packages of a lower layer. */
const layers: Record<string, number> = {
  '@mint/domain': 0, '@mint/contract': 0, '@mint/bus': 0, '@mint/store': 0,
  '@mint/db': 1, '@mint/http': 1,
  '@mint/usecases': 2, '@mint/runtime': 2,
  '@mint/api': 3, '@mint/executor': 3,
  '@mint/cli': 4,
};

interface Workspace { name: string; dir: string; declared: string[] }

function workspaces(): Workspace[] {
  return ['packages', 'services'].flatMap((group) => readdirSync(join(root, group)).map((entry) => {
    const dir = join(root, group, entry);
    const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { name: string; dependencies?: Record<string, string> };
    return { name: pkg.name, dir, declared: Object.keys(pkg.dependencies ?? {}).filter((d) => d.startsWith('@mint/')) };
  }));
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((entry) => {
    const path = join(dir, entry);
    if (entry === 'node_modules' || entry === 'gen') return [];
    if (statSync(path).isDirectory()) return sourceFiles(path);
    return /\.ts$/.test(entry) ? [path] : [];
  });
}

function importsOf(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  return [...text.matchAll(/(?:from|import)\s*\(?\s*['"](@mint\/[^'"]+)['"]/g)].map((m) => m[1]!);
}

describe('the dependency rule', () => {
  const all = workspaces();

  it('knows the layer of every workspace package', () => {
    expect(all.map((w) => w.name).filter((n) => !(n in layers))).toEqual([]);
  });

  for (const ws of all) {
    it(`${ws.name} depends only on lower layers, through their public entry`, () => {
      const problems: string[] = [];
      for (const dep of ws.declared) {
        if (!(layers[dep]! < layers[ws.name]!)) problems.push(`package.json declares ${dep}`);
      }
      for (const file of sourceFiles(ws.dir)) {
        for (const spec of importsOf(file)) {
          const target = spec.split('/').slice(0, 2).join('/');
          const where = file.slice(root.length + 1);
          if (spec !== target) problems.push(`${where} deep-imports ${spec}`);
          else if (target !== ws.name && !(layers[target]! < layers[ws.name]!)) problems.push(`${where} imports ${target}`);
          else if (target !== ws.name && file.includes('/src/') && !ws.declared.includes(target)) problems.push(`${where} imports undeclared ${target}`);
        }
      }
      expect(problems).toEqual([]);
    });
  }
});
