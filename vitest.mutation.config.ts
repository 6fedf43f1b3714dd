import { defineConfig } from 'vitest/config';

/**
 * The suites Stryker runs for every mutant: the unit tests of the domain modules, and
 * the tests of the lease, fence and idempotency group. The stores' tests run against the
 * one DynamoDB Local the global setup starts for the whole run, and the fence tests against
 * the embedded API server, so each mutant costs its tests and no service start.
 */
export default defineConfig({
  test: {
    include: [
      'test/runtime/**/*.test.ts',
      'test/rollout/**/*.test.ts',
      'test/events/pattern.test.ts',
      'test/events/hint-event.test.ts',
      'test/events/routing.test.ts',
      // The rollout shapes upstream's webhook refuses (rollout/admission.ts), over the pure
      // rule and the review, without services.
      'test/admission/rollout-admission.test.ts',
      // The hostile-input table exercises quantity, pin and repin rules without services.
      'test/hostile/hostile-input.test.ts',
      // The lease-guarded reconcile and the hint handler's partial batch, on memory stores.
      'test/app/reconcile.test.ts',
      'test/app/hint-handler.test.ts',
      // The stores' leases and claims, their condition expressions against DynamoDB Local
      // and the exact requests they send; the workload fence and the rollout run's
      // fenced client against the embedded API server.
      'test/store/store-contract.test.ts',
      'test/store/dynamodb-adapter.test.ts',
      'test/faults/idempotency-records.test.ts',
      'test/faults/lease-fencing.test.ts',
      'test/faults/workload-fence.test.ts',
      'test/faults/fenced-deployments.test.ts',
    ],
    globalSetup: ['./test/support/mutation-global-setup.ts'],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    maxWorkers: 1,
    // A test file that crashes while loading counts as a failed test, so the mutant that
    // crashed it is killed rather than survived (test/support/load-failures-reporter.ts).
    reporters: ['default', './test/support/load-failures-reporter.ts'],
  },
});
