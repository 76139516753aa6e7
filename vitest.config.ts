import { defineConfig } from 'vitest/config';

// One run covers unit tests beside the code and integration tests under test/ folders.
// Fault-injection, fuzz, full-size pack and Citus suites live in test/faults, test/fuzz, test/packs-full and test/citus and run separately.
export default defineConfig({
  test: {
    include: [
      'packages/**/*.test.ts',
      'services/**/*.test.ts',
      'packages/*/test/**/*.test.ts',
      'services/*/test/**/*.test.ts',
      'test/**/*.test.ts',
    ],
    exclude: ['**/node_modules/**', 'test/faults/**', 'test/fuzz/**', 'test/packs-full/**', 'test/citus/**'],
    // Resolves PostgreSQL and NATS once per run and builds the migrated template database.
    globalSetup: ['test/support/global-setup.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    teardownTimeout: 30_000,
    // Child processes: tests start servers, open sockets and may kill NATS; forks isolate that.
    pool: 'forks',
    // The machines have 2 cores; more workers only add contention on PostgreSQL.
    maxWorkers: 2,
  },
});
