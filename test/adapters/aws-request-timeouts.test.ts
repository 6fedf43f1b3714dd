/**
 * A service that accepts the connection and never answers: each AWS client the plane makes
 * fails the call at its request timeout, as a retryable outage, instead of holding the
 * invocation (and the lease it runs under) until Lambda ends it. Without
 * `throwOnRequestTimeout` the SDK's request handler would only log a warning and wait on.
 */
import { PutEventsCommand } from '@aws-sdk/client-eventbridge';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createDynamoClient, DynamoIdempotencyStore, DynamoLeaseStore } from '../../shared/adapters/dynamodb';
import { createEventBridgeClient } from '../../shared/adapters/eventbridge/client';
import { isRetryable, UnavailableError } from '../../shared/domain/errors';
import { startSilentServer, type SilentServer } from '../support/http-peer';

let silent: SilentServer;

beforeAll(async () => {
  silent = await startSilentServer();
});

afterEach(() => {
  silent.reset();
});

afterAll(async () => {
  await silent.close();
});

describe('a DynamoDB call that gets no answer', () => {
  it.each([
    ['a lease acquire', (client: ReturnType<typeof createDynamoClient>) => new DynamoLeaseStore(client).acquire('k', 'worker-1', 30_000)],
    ['an idempotency claim', (client: ReturnType<typeof createDynamoClient>) => new DynamoIdempotencyStore(client).claim('k', { inProgressTtlMs: 30_000, recordTtlSeconds: 60 })],
  ])('%s fails as a retryable outage after each attempt timed out', async (_label, call) => {
    const client = createDynamoClient({ endpoint: silent.endpoint, region: 'us-east-1', requestTimeoutMs: 200, maxAttempts: 2 });
    try {
      const error = await call(client).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(UnavailableError);
      expect(isRetryable(error)).toBe(true);
      expect((error as Error).message).toContain('TimeoutError');
      // The SDK retried the timed-out request once, as the standard retry mode does.
      expect(silent.requests()).toBe(2);
    } finally {
      client.destroy();
    }
  });
});

describe('a PutEvents that gets no answer', () => {
  it('fails with a TimeoutError after each attempt timed out', async () => {
    const client = createEventBridgeClient({ region: 'us-east-1', endpoint: silent.endpoint, requestTimeoutMs: 200, maxAttempts: 2 });
    try {
      const error = await client.send(new PutEventsCommand({ Entries: [{ Source: 'ome.pinning.test', DetailType: 'hint', Detail: '{}' }] })).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect((error as Error).name).toBe('TimeoutError');
      expect(silent.requests()).toBe(2);
    } finally {
      client.destroy();
    }
  });
});
