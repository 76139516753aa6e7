// The docs site (VitePress): `npm run docs:dev` serves docs/ with hot reload, `npm run docs:build`
// builds it into docs/.vitepress/dist, failing on a dead link to a page (VitePress's own check),
// then scripts/check-doc-links.ts checks every link and anchor of the built pages and README.md.
import { cpSync } from 'node:fs';
import { join } from 'node:path';
import { defineConfig } from 'vitepress';

// The ZPL label examples are files, not pages (VitePress knows most file extensions, not this one).
process.env.VITE_EXTRA_EXTENSIONS ??= 'zpl';

const sidebar = [
  {
    text: 'Start',
    items: [
      { text: 'Overview', link: '/' },
      { text: 'Getting started', link: '/guides/getting-started' },
    ],
  },
  {
    text: 'Concepts',
    items: [
      { text: 'Glossary', link: '/concepts/glossary' },
      { text: 'State machines', link: '/concepts/state-machines' },
      { text: 'Architecture', link: '/concepts/architecture' },
    ],
  },
  {
    text: 'Guides',
    items: [
      { text: 'Minting, step by step', link: '/guides/minting' },
      { text: 'Payload packs and downloads', link: '/guides/packs' },
      { text: 'Serial lifecycle and EPCIS', link: '/guides/lifecycle' },
      { text: 'Label formats', link: '/guides/labels' },
      { text: 'Resolver and brand domains', link: '/guides/resolver' },
      { text: 'Scan intelligence', link: '/guides/scans' },
      { text: 'Digital product passports', link: '/guides/passports' },
      { text: 'Webhooks', link: '/guides/webhooks' },
      { text: 'Imports', link: '/guides/imports' },
      { text: 'Web console', link: '/guides/console' },
      { text: 'mintctl', link: '/guides/mintctl' },
      { text: 'Client package and examples', link: '/guides/client' },
      { text: 'Browsers and gRPC tools', link: '/guides/browsers-and-grpc-tools' },
      { text: 'Development', link: '/guides/development' },
    ],
  },
  {
    text: 'Reference',
    items: [
      { text: 'Configuration', link: '/reference/configuration' },
      { text: 'Limits, timeouts and input rules', link: '/reference/limits' },
      { text: 'RPCs', link: '/reference/rpcs' },
      { text: 'HTTP API (/v1)', link: '/reference/http-api' },
      { text: '/v1 routes (OpenAPI)', link: '/reference/openapi' },
      { text: 'Authentication and roles', link: '/reference/access' },
      { text: 'Errors', link: '/reference/errors' },
      { text: 'Events', link: '/reference/events' },
      { text: 'Metrics, logs, start-up', link: '/reference/metrics' },
    ],
  },
  {
    text: 'Operations',
    items: [
      { text: 'Helm deployment', link: '/operations/helm' },
      { text: 'Scaling', link: '/operations/scaling' },
      { text: 'Connection poolers', link: '/operations/connection-poolers' },
      { text: 'Upgrades and rollback', link: '/operations/upgrades' },
    ],
  },
  {
    text: 'Proof',
    items: [
      { text: 'Benchmarks', link: '/proof/benchmarks' },
      { text: 'Latest benchmark report', link: '/proof/report' },
      { text: 'Faults, fuzzing, soak', link: '/proof/faults' },
    ],
  },
  {
    text: 'Decisions',
    items: [
      { text: 'Index', link: '/decisions/' },
      { text: 'Row-level security', link: '/decisions/row-level-security' },
      { text: 'Embedded database for dev mode', link: '/decisions/embedded-database' },
      { text: 'Packs in NATS Object Store', link: '/decisions/nats-object-store-packs' },
      { text: 'No build step', link: '/decisions/no-build-step' },
      { text: 'Console built by npm ci', link: '/decisions/console-build' },
    ],
  },
];

export default defineConfig({
  title: 'Minting service',
  description: 'Mints digital product passports: serial units, lots and product-level identities.',
  // Dead links fail the build (VitePress's default, kept on purpose).
  ignoreDeadLinks: false,
  lastUpdated: false,
  themeConfig: {
    search: { provider: 'local' },
    sidebar,
    outline: [2, 3],
  },
  // The label examples are linked as files (SVG, ZPL); Vite copies only the images, so the whole folder goes along.
  buildEnd(site) {
    cpSync(join(site.srcDir, 'labels'), join(site.outDir, 'labels'), { recursive: true });
  },
});
