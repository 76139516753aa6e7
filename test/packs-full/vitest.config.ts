import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

// `npm run test:packs:full`: full-size pack runs (a 1,000,000-unit serial batch), apart from
// `npm test`, which runs the same checks on a small batch. Same global setup (PostgreSQL, NATS,
// the migrated template database) as the main suite.
export default defineConfig({
  test: {
    root: fileURLToPath(new URL('../..', import.meta.url)),
    include: ['test/packs-full/**/*.test.ts'],
    globalSetup: ['test/support/global-setup.ts'],
    testTimeout: 1_800_000,
    hookTimeout: 120_000,
    teardownTimeout: 60_000,
    pool: 'forks',
    maxWorkers: 1,
  },
});
