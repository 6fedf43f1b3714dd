// Mutation testing of the domain modules and of the lease, fence and idempotency group (docs/testing.md).
// `npm run mutation` runs this, then scripts/mutation-score.ts checks every module.
import { readFileSync } from 'node:fs';

const LEASE_FENCE_GROUP = JSON.parse(readFileSync(new URL('./mutation/lease-fence-group.json', import.meta.url), 'utf8'));

/** @type {import('@stryker-mutator/api/core').PartialStrykerOptions} */
export default {
  testRunner: 'vitest',
  vitest: { configFile: 'vitest.mutation.config.ts' },
  plugins: ['@stryker-mutator/vitest-runner'],
  mutate: [
    'shared/domain/runtime/**/*.ts',
    'shared/domain/rollout/**/*.ts',
    'shared/domain/hint-event.ts',
    'shared/domain/go-duration.ts',
    'shared/domain/go-json.ts',
    // The EventBridge pattern matcher the local bus routes with.
    'local/bus/pattern.ts',
    // The lease, fence and idempotency group, gated at 90 % (scripts/mutation-score.ts
    // reads the same list): the stores' leases and claims (DynamoDB's condition expressions
    // and the memory stores that mirror them), the idempotency rules, the lease-guarded
    // reconcile, the hint handler's partial batch and the fenced Deployment writers.
    ...LEASE_FENCE_GROUP,
    // Types and re-exports only: nothing to mutate.
    '!shared/domain/runtime/index.ts',
    '!shared/domain/rollout/types.ts',
    // Data, not logic: upstream's Go field table, transcribed (1,900 string literals,
    // each a static mutant that runs every test). The revision-hash golden tests check
    // the fields the seed runtime uses; docs/testing.md says why the rest is out of scope.
    '!shared/domain/runtime/go-types.ts',
  ],
  coverageAnalysis: 'perTest',
  // Only mutants in changed code, or covered by changed tests, are run again. The file is
  // committed, so a fresh clone (CI) starts from the last full run's results.
  incremental: true,
  incrementalFile: 'mutation/incremental.json',
  reporters: ['json', 'clear-text', 'progress'],
  jsonReporter: { fileName: 'reports/mutation/mutation.json' },
  // Two shared cores: one test runner at a time.
  concurrency: 1,
  timeoutMS: 10_000,
  thresholds: { high: 90, low: 85, break: 85 },
  tempDirName: '.stryker-tmp',
  cleanTempDir: true,
};
