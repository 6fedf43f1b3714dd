/**
 * Global setup of the mutation run (vitest.mutation.config.ts): one DynamoDB Local for the
 * whole run, so the stores' condition expressions are mutated against the real thing at
 * the cost of their tests alone (test/support/dynamodb-for-tests.ts).
 */
import type { TestProject } from 'vitest/node';
import { startDynamoDbLocal } from '../../local/dynamodb-local';

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const local = await startDynamoDbLocal();
  project.provide('sharedDynamoDbEndpoint', local.endpoint);
  return async () => {
    await local.stop();
  };
}
