/**
 * DynamoDB Local for a test file. Under the mutation run (vitest.mutation.config.ts) one
 * instance, started by test/support/mutation-global-setup.ts, serves every file and every
 * mutant, so a mutant costs its tests and not a Java start; `stop()` then leaves it running.
 * Elsewhere each file starts and stops its own.
 */
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, inject } from 'vitest';
import { createDynamoClient } from '../../shared/adapters/dynamodb';
import { startDynamoDbLocal, type DynamoDbLocal } from '../../local/dynamodb-local';

declare module 'vitest' {
  export interface ProvidedContext {
    /** The endpoint of the DynamoDB Local the whole run shares, when one was started for it. */
    sharedDynamoDbEndpoint?: string;
  }
}

/** The shared instance when the run has one, else a new one this file owns. */
export async function dynamoDbLocalForTests(): Promise<DynamoDbLocal & { shared: boolean }> {
  const endpoint = inject('sharedDynamoDbEndpoint');
  if (endpoint === undefined) return { ...(await startDynamoDbLocal()), shared: false };
  const port = Number(new URL(endpoint).port);
  return { endpoint, port, pid: undefined, loopbackOnly: true, shared: true, stop: async () => undefined };
}

/**
 * A document client on DynamoDB Local for the calling test file: started before its tests,
 * stopped after them. Call at the top level of the file; the returned function gives the client.
 */
export function useDynamoDbLocalClient(): () => DynamoDBDocumentClient {
  let local: (DynamoDbLocal & { shared: boolean }) | undefined;
  let client: DynamoDBDocumentClient | undefined;
  beforeAll(async () => {
    local = await dynamoDbLocalForTests();
    client = createDynamoClient({ endpoint: local.endpoint, region: 'us-east-1' });
  });
  afterAll(async () => {
    client?.destroy();
    await local?.stop();
  });
  return () => {
    if (client === undefined) throw new Error('DynamoDB Local did not start');
    return client;
  };
}
