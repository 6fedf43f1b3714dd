/**
 * A reporter of `vitest.mutation.config.ts`: a test file that crashes while it loads (a
 * mutant that breaks a module's top level, a constant, an import) has no test, so Stryker's
 * vitest runner, which reads only tests, would find nothing failed and count the mutant as
 * survived. This gives such a file one failed test, "loads without error", carrying the
 * load's error: Stryker counts the mutant as killed, which it is.
 */
import type { File, Test } from '@vitest/runner';
import { experimental_getRunnerTask, type Reporter, type TestModule } from 'vitest/node';

export const LOAD_FAILURE_TEST_NAME = 'loads without error';

function hasTest(suite: { tasks: ReadonlyArray<{ type: string; tasks?: unknown }> }): boolean {
  return suite.tasks.some((task) => task.type === 'test' || (task.type === 'suite' && hasTest(task as { tasks: ReadonlyArray<{ type: string }> })));
}

/** Adds the failed "loads without error" test to a file that failed and has no test. */
export function markLoadFailure(file: File): boolean {
  if (file.result?.state !== 'fail' || hasTest(file)) return false;
  const test = {
    type: 'test',
    id: `${file.id}_load`,
    name: LOAD_FAILURE_TEST_NAME,
    fullName: `${file.name} ${LOAD_FAILURE_TEST_NAME}`,
    mode: 'run',
    file,
    suite: file,
    meta: {},
    annotations: [],
    artifacts: [],
    timeout: 0,
    result: { state: 'fail', errors: file.result.errors ?? [{ message: `${file.name} failed to load` }] },
  } as unknown as Test;
  file.tasks.push(test);
  return true;
}

export default class LoadFailuresAsFailedTests implements Reporter {
  onTestRunEnd(testModules: ReadonlyArray<TestModule>): void {
    for (const module of testModules) markLoadFailure(experimental_getRunnerTask(module));
  }
}
