import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

// `npm run test:faults`: the fault-injection suite, apart from `npm test`. Same global setup
// (PostgreSQL, NATS, the migrated template database) as the main suite; the NATS scenario starts
// and kills a nats-server of its own. Each scenario prints one line
// `<scenario>: trials=N lost=0 duplicates=0 ...`.
//
// FAULT_TRIALS scales every scenario (default 4, the CI size: about 1 minute on 2 cores).
// FAULT_TRIALS=20 is the full size: 20 executor SIGKILLs on 1,000,000-unit jobs (the job
// size is min(1,000,000, 50,000 x trials); FAULT_UNITS overrides it), 20 nats-server kills, 20
// rounds of pg_terminate_backend and 20 API kills per protocol. The 3-node JetStream cluster
// scenarios (nats-cluster.test.ts) kill the job stream's leader or a follower FAULT_TRIALS times
// during two jobs of the same size (1,000,000 units each at full size) and lose a node holding packs
// FAULT_TRIALS times; pack-download-memory.test.ts downloads a 384 MiB pack (1 GiB at full size)
// through the API while measuring its RSS. lifecycle-kill.test.ts runs the lifecycle scenario twice
// (undisturbed, then with FAULT_TRIALS executor and as many API SIGKILLs) at FAULT_LIFECYCLE_UNITS
// units (default 4,000; 100,000 is the size). pg-outage.test.ts stops a private PostgreSQL for
// FAULT_OUTAGE_SECONDS (default 15) under 1,000 scans/s; `npm run test:faults:outage` runs the 60 s.
export default defineConfig({
  test: {
    root: fileURLToPath(new URL('../..', import.meta.url)),
    include: ['test/faults/**/*.test.ts'],
    globalSetup: ['test/support/global-setup.ts'],
    // Each scenario bounds itself (see `scenarioTimeoutMs`); these are the outer limits.
    testTimeout: 900_000,
    hookTimeout: 60_000,
    teardownTimeout: 30_000,
    pool: 'forks',
    // The scenarios run executors and an API of their own: one file at a time keeps the timing
    // they measure (leases, ack deadlines) from depending on the other files' load.
    maxWorkers: 1,
    fileParallelism: false,
  },
});
