// `npm run docs:generate`: writes the generated docs pages (the state machines from the domain,
// the RPC reference from the contract, the /v1 routes from the OpenAPI document, the
// configuration from the defaults object and the Config fields, the events from the domain's
// EventType and its table). `--check`
// writes nothing and exits 1 naming every stale page; `npm run docs:build` runs it, and
// test/docs.test.ts regenerates and compares too.
//
//   node scripts/docs-generate.ts [--check]

import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { renderConfiguration } from './docs-configuration.ts';
import { renderEvents } from './docs-events.ts';
import { renderOpenApi } from './docs-openapi.ts';
import { renderRpcs } from './docs-rpcs.ts';
import { renderStateMachines } from './docs-state-machines.ts';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');

/** Every generated page: its path under the repository and its renderer. */
export const generatedPages: readonly { readonly path: string; readonly render: () => string }[] = [
  { path: 'docs/concepts/state-machines.md', render: renderStateMachines },
  { path: 'docs/reference/rpcs.md', render: renderRpcs },
  { path: 'docs/reference/openapi.md', render: renderOpenApi },
  { path: 'docs/reference/configuration.md', render: renderConfiguration },
  { path: 'docs/reference/events.md', render: renderEvents },
];

if (import.meta.url === `file://${process.argv[1]}`) {
  const check = process.argv.includes('--check');
  const stale: string[] = [];
  for (const page of generatedPages) {
    const file = join(root, page.path);
    const text = page.render();
    if (check) {
      let current = '';
      try {
        current = readFileSync(file, 'utf8');
      } catch {}
      if (current !== text) stale.push(page.path);
    } else {
      writeFileSync(file, text);
      console.log(`wrote ${page.path}`);
    }
  }
  if (stale.length > 0) {
    console.error(`stale generated docs: ${stale.join(', ')}; run \`npm run docs:generate\` and commit them`);
    process.exit(1);
  }
}
