// A vitest reporter that prints nothing: at the end of the run it writes the counts that
// scripts/test.ts turns into the closing "N passed, N failed" line. It runs next to the
// default reporter, which still shows the details.

import { writeFileSync } from 'node:fs';
import type { Reporter, SerializedError, TestModule, TestRunEndReason, TestSpecification, TestSuite } from 'vitest/node';

/** Environment variable naming the file the summary is written to; no file, no summary. */
export const summaryFileVariable = 'MINT_TEST_SUMMARY_FILE';

/** What the reporter writes, as JSON. */
export interface TestSummary {
  /** Test cases that passed. */
  readonly passed: number;
  /** Failed test cases, plus one per failure outside a test (see `problems`). */
  readonly failed: number;
  /** Test cases skipped or todo. */
  readonly skipped: number;
  /** Test files vitest set out to run. */
  readonly queued: number;
  /** Test files that were collected (fewer than `queued` when the run broke off early). */
  readonly files: number;
  /** Failures not tied to a test case: collection errors, failing hooks, unhandled errors. */
  readonly problems: readonly string[];
  /** vitest's own verdict. */
  readonly reason: TestRunEndReason;
}

/** Counts the run into a `TestSummary` (exported for tests of this reporter). */
export function summarize(
  queued: number,
  modules: ReadonlyArray<TestModule>,
  unhandledErrors: ReadonlyArray<SerializedError>,
  reason: TestRunEndReason,
): TestSummary {
  let passed = 0;
  let failed = 0;
  let skipped = 0;
  const problems: string[] = [];

  for (const module of modules) {
    for (const test of module.children.allTests()) {
      const state = test.result().state;
      if (state === 'passed') passed += 1;
      else if (state === 'failed') failed += 1;
      else if (state === 'skipped') skipped += 1;
    }
    // An error on a module or suite (import failure, failing beforeAll/afterAll) that no
    // failed test already accounts for is one failure of its own.
    const containers: (TestModule | TestSuite)[] = [module, ...module.children.allSuites()];
    for (const container of containers) {
      const errors = container.errors();
      if (errors.length === 0 || hasFailedTest(container)) continue;
      const where = container.type === 'module' ? container.relativeModuleId : `${container.module.relativeModuleId} > ${container.fullName}`;
      problems.push(`${where}: ${errors.map(firstLine).join('; ')}`);
    }
  }
  for (const error of unhandledErrors) problems.push(`unhandled error: ${firstLine(error)}`);
  failed += problems.length;
  return { passed, failed, skipped, queued, files: modules.length, problems, reason };
}

function hasFailedTest(container: TestModule | TestSuite): boolean {
  for (const _ of container.children.allTests('failed')) return true;
  return false;
}

function firstLine(error: SerializedError): string {
  const text = `${error.name ?? 'Error'}: ${error.message ?? String(error)}`;
  return text.split('\n', 1)[0] ?? text;
}

/** The reporter; vitest instantiates the default export when given this file's path. */
export default class SummaryReporter implements Reporter {
  #queued = 0;

  onTestRunStart(specifications: ReadonlyArray<TestSpecification>): void {
    this.#queued = specifications.length;
  }

  onTestRunEnd(modules: ReadonlyArray<TestModule>, unhandledErrors: ReadonlyArray<SerializedError>, reason: TestRunEndReason): void {
    const file = process.env[summaryFileVariable];
    if (file === undefined || file === '') return;
    writeFileSync(file, JSON.stringify(summarize(this.#queued, modules, unhandledErrors, reason)));
  }
}
