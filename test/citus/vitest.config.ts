import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

// `npm run test:citus`: the end-to-end suite on a real Citus (a coordinator and its workers), apart
// from `npm test`. It needs CITUS_URL (a coordinator's database with the workers added, as
// `bash ../shared/citus/start.sh 6601` prints it) and fails at once without it. Each file makes a
// database of its own on every node, runs `mintctl migrate` on it and drops it at the end.
// CITUS_UNITS sets the size of the mint (default 10,000; the full size is 100,000).
export default defineConfig({
  test: {
    root: fileURLToPath(new URL('../..', import.meta.url)),
    include: ['test/citus/**/*.test.ts'],
    globalSetup: ['test/citus/global-setup.ts'],
    testTimeout: 300_000,
    hookTimeout: 120_000,
    pool: 'forks',
    maxWorkers: 1,
    fileParallelism: false,
  },
});
