// The dependency rule: imports point down (services -> use cases -> db -> domain), the two
// services never import each other, and nothing reaches into another package's files. SQL is
// written only in packages/db, the use cases reach the ORM only through its repositories, package
// entry points export named symbols, and no file imports itself through a circle of others.

import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import madge from 'madge';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const root = join(import.meta.dirname, '..');
/** Layer of each workspace package: a package may import only packages of a lower layer. */
const layers: Record<string, number> = {
  '@mint/domain': 0,
  '@mint/contract': 0,
  '@mint/bus': 0,
  '@mint/store': 0,
  // The publishable client: its own generated copy of the contract and a Connect transport, nothing else of the workspace.
  '@mint/client': 0,
  '@mint/db': 1,
  '@mint/http': 1,
  '@mint/labels': 1,
  '@mint/pages': 1,
  '@mint/usecases': 2,
  '@mint/runtime': 2,
  '@mint/wire': 2,
  '@mint/api': 3,
  '@mint/executor': 3,
  // The web console runs in a browser: it may use the contract and nothing else of the workspace.
  '@mint/console': 3,
  '@mint/cli': 4,
};

interface Workspace {
  name: string;
  dir: string;
  declared: string[];
}

function workspaces(): Workspace[] {
  return ['packages', 'services'].flatMap((group) =>
    readdirSync(join(root, group)).map((entry) => {
      const dir = join(root, group, entry);
      const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { name: string; dependencies?: Record<string, string> };
      return { name: pkg.name, dir, declared: Object.keys(pkg.dependencies ?? {}).filter((d) => d.startsWith('@mint/')) };
    }),
  );
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

/** Statement shapes: a literal whose text (placeholders as `?`) starts like one of these is SQL. */
const sqlStatement = [
  /^select\s[\s\S]*\bfrom\s/i,
  /^select\s+(\d+|\?|\*|[a-z_]+\s*\()/i,
  /^insert\s+into\s/i,
  /^update\s+[\w".]+(\s+(as\s+)?\w+)?\s+set\s/i,
  /^delete\s+from\s/i,
  /^with\s+(recursive\s+)?[\w"]+(\s*\([^)]*\))?\s+as\s+(not\s+)?(materialized\s+)?\(/i,
  /^(set\s+(local\s+|session\s+)?[\w.]+\s*(=|to\s)|copy\s|truncate\s|(create|alter|drop)\s+(table|index|database|schema|view)\s)/i,
];
/** Calls that run SQL or build it: the ORM's and Kysely's raw entry points. */
const queryCalls = new Set(['execute', 'getKysely', 'raw', 'createQueryBuilder', 'qb', 'executeQuery']);
/** Drivers and query builders only packages/db may import. */
const queryModules = new Set(['kysely', 'pg', 'pg-copy-streams', '@mikro-orm/sql', '@mikro-orm/postgresql']);

/** Where `text` (a TypeScript file) writes SQL or reaches for a way to run it: one "line: what" per finding. */
function sqlFindings(fileName: string, text: string): string[] {
  const source = ts.createSourceFile(fileName, text, ts.ScriptTarget.Latest, true);
  const findings: string[] = [];
  const report = (node: ts.Node, what: string) => {
    findings.push(`${source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1}: ${what}`);
  };
  const visit = (node: ts.Node): void => {
    let literal: string | undefined;
    if (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node)) literal = node.text;
    else if (ts.isTemplateExpression(node)) literal = node.head.text + node.templateSpans.map((span) => `?${span.literal.text}`).join('');
    if (literal !== undefined && !ts.isImportDeclaration(node.parent) && !ts.isExportDeclaration(node.parent)) {
      const trimmed = literal.trim();
      if (sqlStatement.some((shape) => shape.test(trimmed))) report(node, `SQL text ${JSON.stringify(trimmed.slice(0, 40))}`);
    }
    if (ts.isTaggedTemplateExpression(node)) {
      const tag = ts.isPropertyAccessExpression(node.tag) ? node.tag.name.text : ts.isIdentifier(node.tag) ? node.tag.text : '';
      if (tag === 'sql') report(node, 'sql`...` template');
    }
    if (ts.isCallExpression(node)) {
      const callee = ts.isPropertyAccessExpression(node.expression) ? node.expression.name.text : ts.isIdentifier(node.expression) ? node.expression.text : '';
      if (queryCalls.has(callee)) report(node, `call of ${callee}()`);
    }
    if ((ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) && node.moduleSpecifier && ts.isStringLiteral(node.moduleSpecifier)) {
      if (queryModules.has(node.moduleSpecifier.text)) report(node, `import of ${node.moduleSpecifier.text}`);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return findings;
}

/** Application source files: every package's and service's src, tests left out. */
function applicationFiles(): string[] {
  return ['packages', 'services'].flatMap((group) =>
    readdirSync(join(root, group)).flatMap((entry) => {
      const src = join(root, group, entry, 'src');
      try {
        statSync(src);
      } catch {
        return [];
      }
      return sourceFiles(src).filter((file) => !file.endsWith('.test.ts'));
    }),
  );
}

describe('the web console', () => {
  const consoleDir = join(root, 'services/console');
  const files = (dir: string): string[] =>
    readdirSync(dir).flatMap((entry) => {
      const path = join(dir, entry);
      if (statSync(path).isDirectory()) return files(path);
      return /\.tsx?$/.test(entry) ? [path] : [];
    });

  it('imports only the contract of the workspace, and no Node module (it runs in a browser)', () => {
    const problems: string[] = [];
    const pkg = JSON.parse(readFileSync(join(consoleDir, 'package.json'), 'utf8')) as { dependencies?: Record<string, string> };
    for (const dep of Object.keys(pkg.dependencies ?? {}).filter((d) => d.startsWith('@mint/'))) {
      if (dep !== '@mint/contract') problems.push(`package.json declares ${dep}`);
    }
    for (const file of files(join(consoleDir, 'src'))) {
      const text = readFileSync(file, 'utf8');
      for (const m of text.matchAll(/(?:from|import)\s*\(?\s*['"]([^'"]+)['"]/g)) {
        const spec = m[1]!;
        if ((spec.startsWith('@mint/') && spec !== '@mint/contract') || spec.startsWith('node:'))
          problems.push(`${file.slice(root.length + 1)} imports ${spec}`);
      }
    }
    expect(problems).toEqual([]);
  });

  it('is not imported by any other package (the API serves its built files, never its code)', () => {
    const importers = workspaces()
      .filter((w) => w.name !== '@mint/console' && w.declared.includes('@mint/console'))
      .map((w) => w.name);
    expect(importers).toEqual([]);
  });
});

describe('SQL lives only in packages/db', () => {
  it('finds SQL text, raw query calls and driver imports, and leaves ordinary strings alone', () => {
    const flagged = [
      'const q = "select id from mint_jobs where brand_id = ?";',
      'const q = `SELECT count(*) AS n FROM outbox`;',
      'await em.execute(`select 1`);',
      'const q = `select status, n from ${table} where id = ${id}`;',
      "const q = 'insert into outbox (brand_id) values (?)';",
      'const q = `update mint_jobs set attempts = attempts + 1 where id = ?`;',
      "const q = 'update payload_packs k set status = ?';",
      'const q = `delete from outbox where id = ${id}`;',
      'const q = `with changed as (update mint_units set status = 1) select 1`;',
      "const q = 'set local lock_timeout = 2000';",
      'const q = `copy (select 1) to stdout`;',
      'await db.selectFrom("x").execute();',
      'const k = em.getKysely();',
      'const s = sql`now()`;',
      'const r = raw("now()");',
      'const r = em.raw("now()");',
      "import { sql } from 'kysely';",
      "import pg from 'pg';",
    ];
    const ordinary = [
      "const m = 'select a product first';",
      'const m = `update the batch ${id} before minting`;',
      "const m = 'delete the key, then retry';",
      "const m = 'with the lease held, nothing else writes';",
      "const m = 'the job was updated; insert skipped';",
      "import { openDatabase } from '@mint/db';",
      'const x = run(1);',
    ];
    expect(flagged.filter((code) => sqlFindings('x.ts', code).length === 0)).toEqual([]);
    expect(ordinary.filter((code) => sqlFindings('x.ts', code).length > 0)).toEqual([]);
  });

  it('no package or service outside packages/db writes SQL or runs it', () => {
    const problems = applicationFiles()
      .filter((file) => !file.startsWith(`${join(root, 'packages', 'db')}/`))
      .flatMap((file) => sqlFindings(file, readFileSync(file, 'utf8')).map((finding) => `${file.slice(root.length + 1)}:${finding}`));
    expect(problems).toEqual([]);
  });
});

describe('package entry points', () => {
  it('export named symbols, never export * (the generated contract aside)', () => {
    const problems: string[] = [];
    for (const file of applicationFiles().filter((f) => f.endsWith('/index.ts') && !f.startsWith(`${join(root, 'packages', 'contract')}/`))) {
      const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true);
      for (const statement of source.statements) {
        if (ts.isExportDeclaration(statement) && statement.exportClause === undefined) {
          problems.push(
            `${file.slice(root.length + 1)}:${source.getLineAndCharacterOfPosition(statement.getStart(source)).line + 1}: ${statement.getText(source)}`,
          );
        }
      }
    }
    expect(problems).toEqual([]);
  });
});

describe('use cases by feature', () => {
  const useCases = join(root, 'packages', 'usecases', 'src');
  const featureOf = (file: string): string | null => {
    const parts = file.slice(useCases.length + 1).split('/');
    return parts.length > 1 ? parts[0]! : null;
  };

  it("keep each feature in a folder of its own: only the package's entry, the context and the idempotency keys lie beside them", () => {
    const flat = readdirSync(useCases).filter((entry) => entry.endsWith('.ts'));
    expect(flat.sort()).toEqual(['context.ts', 'idempotency.ts', 'index.ts']);
  });

  it('reach another feature only through its index', () => {
    const problems: string[] = [];
    for (const file of sourceFiles(useCases)) {
      const feature = featureOf(file);
      for (const m of readFileSync(file, 'utf8').matchAll(/(?:from|import)\s*\(?\s*['"](\.{1,2}\/[^'"]+)['"]/g)) {
        const target = join(file, '..', m[1]!);
        const targetFeature = featureOf(target);
        if (targetFeature !== null && targetFeature !== feature && !target.endsWith(`/${targetFeature}/index.ts`)) {
          problems.push(`${file.slice(root.length + 1)} imports ${m[1]}`);
        }
      }
    }
    expect(problems).toEqual([]);
  });
});

/**
 * Where the use-case files `files` reach for persistence itself: an import of MikroORM, an import
 * of one of packages/db's entities, or a member of the ORM's entity manager used (`em.find`,
 * `em.create`, `em.flush`, `em.transactional`...). They may hold an entity manager and hand it to
 * packages/db's repositories, nothing more. `extra` adds files held in memory (path -> text).
 */
function persistenceFindings(files: readonly string[], extra: ReadonlyMap<string, string> = new Map()): string[] {
  const config = ts.getParsedCommandLineOfConfigFile(join(root, 'tsconfig.json'), {}, { ...ts.sys, onUnRecoverableConfigFileDiagnostic: () => undefined })!;
  const host = ts.createCompilerHost(config.options);
  const { getSourceFile, fileExists, readFile } = host;
  host.getSourceFile = (name, version, ...rest) =>
    extra.has(name) ? ts.createSourceFile(name, extra.get(name)!, version) : getSourceFile.call(host, name, version, ...rest);
  host.fileExists = (name) => extra.has(name) || fileExists.call(host, name);
  host.readFile = (name) => extra.get(name) ?? readFile.call(host, name);
  const program = ts.createProgram([...files, ...extra.keys()], config.options, host);
  const checker = program.getTypeChecker();
  const entities = `${join(root, 'packages', 'db', 'src', 'entities')}/`;
  // An entity is a `defineEntity(...)` value or its `InferEntity<...>` type; the entity files' other exports (mappers of stored forms) are not.
  const isEntity = (d: ts.Declaration) =>
    (ts.isVariableDeclaration(d) &&
      d.initializer !== undefined &&
      ts.isCallExpression(d.initializer) &&
      d.initializer.expression.getText() === 'defineEntity') ||
    (ts.isTypeAliasDeclaration(d) && d.type.getText().startsWith('InferEntity<'));
  const findings: string[] = [];
  for (const file of [...files, ...extra.keys()]) {
    const source = program.getSourceFile(file)!;
    const report = (node: ts.Node, what: string) => {
      findings.push(`${file.slice(root.length + 1)}:${source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1}: ${what}`);
    };
    const visit = (node: ts.Node): void => {
      if (ts.isImportDeclaration(node) && ts.isStringLiteral(node.moduleSpecifier) && node.moduleSpecifier.text.startsWith('@mikro-orm/')) {
        report(node, `import of ${node.moduleSpecifier.text}`);
      }
      if (ts.isImportSpecifier(node)) {
        const symbol = checker.getSymbolAtLocation(node.name);
        const target = symbol && symbol.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(symbol) : symbol;
        if (target?.declarations?.some((d) => d.getSourceFile().fileName.startsWith(entities) && isEntity(d)))
          report(node, `import of the entity ${node.name.text}`);
      }
      if (ts.isPropertyAccessExpression(node)) {
        const type = checker.getTypeAtLocation(node.expression);
        if (/EntityManager$/.test(type.getSymbol()?.getName() ?? '')) report(node, `entity manager's ${node.name.text}`);
      }
      ts.forEachChild(node, visit);
    };
    visit(source);
  }
  return findings;
}

describe('persistence lives only in packages/db', () => {
  const useCases = join(root, 'packages', 'usecases', 'src');
  const files = sourceFiles(useCases).filter((file) => !file.endsWith('.test.ts'));
  const flagged = [
    "import { wrap } from '@mikro-orm/core';\nexport const w = wrap;",
    "import { Product } from '@mint/db';\nexport const p = Product;",
    "import type { MintJob } from '@mint/db';\nexport type J = MintJob;",
    "import { unitOfWork } from '@mint/db';\nexport const f = (ctx: UseCaseContext) => unitOfWork(ctx.db).flush();",
    "import { unitOfWork } from '@mint/db';\nexport async function f(ctx: UseCaseContext) { const em = unitOfWork(ctx.db); return em.count('MintJob', {}); }",
    "import { transaction } from '@mint/db';\nexport const f = (ctx: UseCaseContext) => transaction(ctx.db, (tx) => tx.transactional(async () => 1));",
    "import type { Em } from '@mint/db';\nexport const f = (em: Em) => em.fork();",
  ];
  const ordinary = [
    "import { findBatch, unitOfWork } from '@mint/db';\nexport const f = (ctx: UseCaseContext) => findBatch(unitOfWork(ctx.db), 'b', 'x');",
    "import { appendEvents, transaction } from '@mint/db';\nexport const f = (ctx: UseCaseContext) => transaction(ctx.db, (em) => appendEvents(em, new Date(), []));",
    'export const f = (xs: string[]) => xs.find((x) => x === "a");',
  ];
  // Probe files held in memory beside the use cases, checked in the same program as the real ones (one type-check, not one per probe).
  const probeName = (kind: string, i: number) => join(useCases, 'mint', `__probe_${kind}_${i}__.ts`);
  const probes = new Map(
    [...flagged.map((body, i) => [probeName('flagged', i), body] as const), ...ordinary.map((body, i) => [probeName('ordinary', i), body] as const)].map(
      ([name, body]) => [name, `import type { UseCaseContext } from '../context.ts';\n${body}\n`] as const,
    ),
  );
  let findings: string[] | undefined;
  const all = () => (findings ??= persistenceFindings(files, probes));
  const of = (file: string) => all().filter((f) => f.startsWith(`${file.slice(root.length + 1)}:`));

  it('finds a use case that imports MikroORM or an entity, or calls the entity manager; passing it to a repository is fine', { timeout: 180_000 }, () => {
    expect(flagged.filter((_, i) => of(probeName('flagged', i)).length === 0)).toEqual([]);
    expect(ordinary.filter((_, i) => of(probeName('ordinary', i)).length > 0)).toEqual([]);
  });

  it('no use case imports MikroORM or an entity, or calls the entity manager', { timeout: 180_000 }, () => {
    expect(all().filter((f) => !f.includes('/__probe_'))).toEqual([]);
  });
});

describe('import circles', () => {
  // madge reads the imports of every TypeScript file (type-only imports included) as the compiler resolves them.
  const circles = async (dirs: string[]) => {
    const graph = await madge(dirs, {
      fileExtensions: ['ts'],
      tsConfig: join(root, 'tsconfig.json'),
      excludeRegExp: [/node_modules/, /\/gen\//, /\.d\.ts$/],
    });
    return graph.circular();
  };

  it('finds a circle when two files import each other', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'circles-'));
    writeFileSync(join(dir, 'a.ts'), "import type { B } from './b.ts';\nexport interface A { b: B }\n");
    writeFileSync(join(dir, 'b.ts'), "import type { A } from './a.ts';\nexport interface B { a: A }\n");
    try {
      expect(await circles([dir])).toEqual([['a.ts', 'b.ts']]);
    } finally {
      rmSync(dir, { recursive: true });
    }
  });

  it('there is none in any package or service', { timeout: 120_000 }, async () => {
    expect(await circles([join(root, 'packages'), join(root, 'services')])).toEqual([]);
  });
});
