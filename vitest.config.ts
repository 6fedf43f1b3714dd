import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // Integration suites start real local services (API server, DynamoDB Local, kubectl).
    testTimeout: 60_000,
    hookTimeout: 120_000,
    // Two cores: keep suites that spawn Java and kubectl from starving each other.
    maxWorkers: 2,
    // The SDK warns once per process that its 2027 releases need Node 22; we pin today's
    // versions, and the warning buries test output (child processes inherit this too).
    env: { AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true' },
    reporters: ['default', './test/support/summary-reporter.ts'],
  },
});
