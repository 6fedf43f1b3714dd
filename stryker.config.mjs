// Mutation testing of the pure domain modules with their unit tests (docs/testing.md).
// `npm run mutation` runs this, then scripts/mutation-score.ts checks every module.
/** @type {import('@stryker-mutator/api/core').PartialStrykerOptions} */
export default {
  testRunner: 'vitest',
  vitest: { configFile: 'vitest.mutation.config.ts' },
  plugins: ['@stryker-mutator/vitest-runner'],
  mutate: [
    'shared/runtime/**/*.ts',
    'shared/rollout/**/*.ts',
    'shared/events/**/*.ts',
    // Types, re-exports and doc only: nothing to mutate.
    '!shared/runtime/index.ts',
    '!shared/runtime/go-types.ts',
    '!shared/rollout/types.ts',
  ],
  coverageAnalysis: 'perTest',
  // Only mutants in changed code, or covered by changed tests, are run again.
  incremental: true,
  incrementalFile: 'reports/stryker-incremental.json',
  reporters: ['json', 'clear-text', 'progress'],
  jsonReporter: { fileName: 'reports/mutation/mutation.json' },
  // Two shared cores: one test runner at a time.
  concurrency: 1,
  timeoutMS: 10_000,
  thresholds: { high: 90, low: 85, break: 85 },
  tempDirName: '.stryker-tmp',
  cleanTempDir: true,
};
