import { defineConfig } from 'vitest/config';

// One run covers unit tests beside the code and integration tests under test/ folders, as two
// projects: the pure packages (domain rules, label drawing) run without PostgreSQL or NATS, so
// `npm test -- packages/domain` needs neither; everything else shares the run's migrated template
// database. Fault-injection, fuzz, full-size pack and Citus suites live in test/faults, test/fuzz,
// test/packs-full and test/citus and run separately.
const pure = ['packages/domain/**/*.test.ts', 'packages/labels/**/*.test.ts', 'packages/pages/**/*.test.ts', 'packages/wire/**/*.test.ts'];
const excluded = ['**/node_modules/**', 'test/faults/**', 'test/fuzz/**', 'test/packs-full/**', 'test/citus/**'];

export default defineConfig({
  test: {
    testTimeout: 30_000,
    hookTimeout: 60_000,
    teardownTimeout: 30_000,
    // Child processes: tests start servers, open sockets and may kill NATS; forks isolate that.
    pool: 'forks',
    // The machines have 2 cores; more workers only add contention on PostgreSQL.
    maxWorkers: 2,
    projects: [
      { extends: true, test: { name: 'pure', include: pure, exclude: excluded } },
      {
        extends: true,
        test: {
          name: 'integration',
          include: ['packages/**/*.test.ts', 'services/**/*.test.ts', 'test/**/*.test.ts'],
          exclude: [...excluded, ...pure],
          // Resolves PostgreSQL and NATS once per run and builds the migrated template database.
          globalSetup: ['test/support/global-setup.ts'],
        },
      },
    ],
  },
});
