import type { Reporter, SerializedError, TestModule } from 'vitest/node';

/** Errors that fail a file without failing one of its tests: a failed hook, an import error. */
function errorsOutsideTests(testModule: TestModule): number {
  let count = testModule.errors().length;
  for (const suite of testModule.children.allSuites()) count += suite.errors().length;
  return count;
}

/**
 * Prints one closing line `N passed, N failed[, N skipped]` that CI reads, after vitest's
 * own summary. A file that fails outside its tests (a `beforeAll` that throws, a module
 * that does not load) counts as one failure, and so does each unhandled error, so the
 * line never reads "0 failed" for a run that failed.
 */
export default class SummaryReporter implements Reporter {
  onTestRunEnd(testModules: ReadonlyArray<TestModule>, unhandledErrors: ReadonlyArray<SerializedError>): void {
    let passed = 0;
    let failed = unhandledErrors.length;
    let skipped = 0;
    for (const testModule of testModules) {
      let failedHere = 0;
      for (const test of testModule.children.allTests()) {
        const state = test.result().state;
        if (state === 'passed') passed += 1;
        else if (state === 'failed') failedHere += 1;
        else skipped += 1;
      }
      if (failedHere === 0 && (testModule.state() === 'failed' || errorsOutsideTests(testModule) > 0)) failedHere = 1;
      failed += failedHere;
    }
    const tail = skipped > 0 ? `, ${skipped} skipped` : '';
    process.stdout.write(`\n${passed} passed, ${failed} failed${tail}\n`);
  }
}
