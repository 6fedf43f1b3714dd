/**
 * A test file that crashes while loading must count as a failed test for Stryker's vitest
 * runner, read with the runner's own conversion (@stryker-mutator/vitest-runner), so a
 * mutant that breaks a module's top level is killed, not survived.
 */
import type { File } from '@vitest/runner';
import { describe, expect, it } from 'vitest';
import { collectTestsFromSuite, convertTestToTestResult } from '../../node_modules/@stryker-mutator/vitest-runner/dist/src/vitest-helpers.js';
import { LOAD_FAILURE_TEST_NAME, markLoadFailure } from '../support/load-failures-reporter';

type StrykerResult = { status: number; name: string; failureMessage?: string };
const strykerRead = (file: File): StrykerResult[] =>
  collectTestsFromSuite(file).map((test) => convertTestToTestResult(test) as StrykerResult);

function fileTask(state: 'pass' | 'fail', tasks: unknown[] = []): File {
  const file = { type: 'suite', id: 'f1', name: 'test/x.test.ts', filepath: '/repo/test/x.test.ts', mode: 'run', tasks, meta: {}, projectName: '', file: undefined as unknown } as unknown as File;
  (file as { file: File }).file = file;
  file.result = state === 'fail' ? { state, errors: [{ message: 'Cannot read properties of undefined (reading "x")', name: 'TypeError' }] } : { state };
  return file;
}

describe('the load-failure reporter', () => {
  it('turns a file that failed to load, with no test, into one failed test Stryker reads as failed', () => {
    const file = fileTask('fail');
    expect(strykerRead(file)).toEqual([]);

    expect(markLoadFailure(file)).toBe(true);

    const results = strykerRead(file);
    expect(results).toHaveLength(1);
    // TestStatus.Failed is 1 in @stryker-mutator/api.
    expect(results[0]).toMatchObject({ status: 1, name: `test/x.test.ts ${LOAD_FAILURE_TEST_NAME}`, failureMessage: 'Cannot read properties of undefined (reading "x")' });
  });

  it('leaves a file that loaded alone, whatever its tests did', () => {
    const passing = fileTask('pass');
    const failingTest = fileTask('fail', [{ type: 'test', name: 't', mode: 'run', result: { state: 'fail' } }]);

    expect([markLoadFailure(passing), markLoadFailure(failingTest)]).toEqual([false, false]);
    expect(passing.tasks).toHaveLength(0);
    expect(failingTest.tasks).toHaveLength(1);
  });
});
