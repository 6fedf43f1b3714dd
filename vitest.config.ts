import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // Integration suites start real local services (API server, DynamoDB Local, kubectl).
    testTimeout: 60_000,
    hookTimeout: 120_000,
    // Two cores: keep suites that spawn Java and kubectl from starving each other.
    maxWorkers: 2,
    reporters: ['default', './test/support/summary-reporter.ts'],
  },
});
