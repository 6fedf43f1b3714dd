import { defineConfig } from 'vitest/config';

/**
 * The unit tests of the pure domain modules, and nothing else: the suites Stryker runs
 * for every mutant. No suite here starts a service, so each mutant takes milliseconds.
 */
export default defineConfig({
  test: {
    include: [
      'test/runtime/**/*.test.ts',
      'test/rollout/**/*.test.ts',
      'test/events/pattern.test.ts',
      'test/events/hint-event.test.ts',
      'test/events/routing.test.ts',
      // The hostile-input table exercises quantity, pin and repin rules without services.
      'test/hostile/hostile-input.test.ts',
      // The lease-guarded reconcile and the hint handler's partial batch, on memory stores.
      'test/app/reconcile.test.ts',
      'test/app/hint-handler.test.ts',
    ],
    maxWorkers: 1,
    // A test file that crashes while loading counts as a failed test, so the mutant that
    // crashed it is killed rather than survived (test/support/load-failures-reporter.ts).
    reporters: ['default', './test/support/load-failures-reporter.ts'],
  },
});
