import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

// `npm run test:fuzz`: the property-based fuzz suite, apart from `npm test`. Same global setup
// (PostgreSQL, NATS, the migrated template database) as the main suite. Trial counts scale with
// FUZZ_RUNS (default 25 per property); FUZZ_SEED replays a failing run; FUZZ_STATS=1 prints the
// outcome counts per RPC (how many calls got past validation).
export default defineConfig({
  test: {
    root: fileURLToPath(new URL('../..', import.meta.url)),
    include: ['test/fuzz/**/*.test.ts'],
    globalSetup: ['test/support/global-setup.ts'],
    testTimeout: 120_000,
    hookTimeout: 60_000,
    teardownTimeout: 30_000,
    pool: 'forks',
    // Two cores shared with PostgreSQL: the files run side by side, each on its own database.
    maxWorkers: 2,
  },
});
