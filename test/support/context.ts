// What the global setup hands to the test files (vitest `provide` / `inject`).

import { inject } from 'vitest';

/** What the global setup provides to every test file, read with `testInfra()`. */
export interface TestInfra {
  /** Admin URL of the PostgreSQL server (a superuser connected to an existing database). */
  readonly databaseUrl: string;
  /** URL of the shared NATS server, with JetStream enabled. */
  readonly natsUrl: string;
  /** Database cloned by `freshDatabase()`; migrated when `migrated` is true. */
  readonly templateDatabase: string;
  /** False while `@mint/db` cannot be imported yet: the template is then an empty database. */
  readonly migrated: boolean;
  /** Unique per `vitest run`; prefixes every database the run creates. */
  readonly runId: string;
}

declare module 'vitest' {
  export interface ProvidedContext {
    mintInfra: TestInfra;
  }
}

/** The infrastructure this run uses, as resolved by the global setup. Call it inside a test file. */
export function testInfra(): TestInfra {
  return inject('mintInfra');
}
