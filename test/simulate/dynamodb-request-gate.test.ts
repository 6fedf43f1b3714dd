/**
 * The local plane's DynamoDB client under a thousand forwarders starting at once: with
 * `maxConcurrentRequests` every call waits its turn in the process and succeeds, with the
 * old 1 s connection timeout and no SDK retry to hide a failure, and never more calls than
 * the limit reach DynamoDB Local at once. (The thousand checkpoint loads themselves are ten
 * BatchGetItem calls now; a thousand saves are the flood a lease renewal must pass.)
 */
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDynamoClient, createDynamoStores } from '../../shared/adapters/dynamodb';
import type { Lease } from '../../shared/ports/store';
import { ensureTable, startDynamoDbLocal } from '../../local/dynamodb-local';
import type { DynamoDbLocal } from '../../local/dynamodb-local';

const TABLE = 'request-gate';
const CLUSTERS = 1_000;
const LIMIT = 16;

let local: DynamoDbLocal | undefined;
let seeding: DynamoDBDocumentClient | undefined;

beforeAll(async () => {
  local = await startDynamoDbLocal();
  seeding = createDynamoClient({ endpoint: local.endpoint, region: 'us-east-1', requestTimeoutMs: 10_000 });
  await ensureTable(seeding, TABLE);
}, 120_000);

afterAll(async () => {
  seeding?.destroy();
  await local?.stop();
});

/** Counts the calls between the gate and the wire: the most ever in flight there at once. */
function observeInFlight(client: DynamoDBDocumentClient): { max: number; calls: number } {
  const seen = { max: 0, calls: 0 };
  let current = 0;
  client.middlewareStack.add(
    (next) => async (args) => {
      current += 1;
      seen.calls += 1;
      seen.max = Math.max(seen.max, current);
      try {
        return await next(args);
      } finally {
        current -= 1;
      }
    },
    { step: 'finalizeRequest', name: 'testInFlightCounter' },
  );
  return seen;
}

/**
 * Records each HTTP request as it is handed to the HTTP handler, by its operation (`GetItem`,
 * `UpdateItem`, …): the order in which calls reach DynamoDB, retries included. The order in
 * which they finish is DynamoDB Local's to choose and says nothing about the gate.
 */
function observeWireOrder(client: DynamoDBDocumentClient): string[] {
  const sent: string[] = [];
  client.middlewareStack.add(
    (next) => async (args) => {
      const target = (args.request as { headers?: Record<string, string> }).headers?.['x-amz-target'] ?? '';
      sent.push(target.slice(target.lastIndexOf('.') + 1));
      return next(args);
    },
    { step: 'deserialize', priority: 'low', name: 'testWireOrder' },
  );
  return sent;
}

describe('Method: createDynamoClient with maxConcurrentRequests', () => {
  it('loads a thousand checkpoints asked for at once, each once, in ten BatchGetItem calls, never more than the limit in flight', async () => {
    // Prepare: one checkpoint per cluster, written under a lease.
    if (!local || !seeding) throw new Error('DynamoDB Local did not start');
    const writer = createDynamoStores(seeding, { tableName: TABLE });
    const lease: Lease = { key: 'forwarder#seed', holder: 'seed', fencingToken: 1, expiresAt: Date.now() + 60_000 };
    const ids = Array.from({ length: CLUSTERS }, (_, index) => `cluster-${index}`);
    for (let start = 0; start < ids.length; start += 50) {
      await Promise.all(ids.slice(start, start + 50).map((id) => writer.checkpoints.saveCheckpoints(id, { inferenceservices: `rv-${id}` }, lease)));
    }
    const gated = createDynamoClient({ endpoint: local.endpoint, region: 'us-east-1', connectionTimeoutMs: 1_000, maxAttempts: 1, maxConcurrentRequests: LIMIT });
    const inFlight = observeInFlight(gated);
    const reader = createDynamoStores(gated, { tableName: TABLE });

    try {
      // Act
      const results = await Promise.allSettled(ids.map((id) => reader.checkpoints.loadCheckpoints(id).then((saved) => saved.inferenceservices)));

      // Assess
      const failures = results.filter((result) => result.status === 'rejected');
      expect(failures).toEqual([]);
      expect(results.map((result) => (result.status === 'fulfilled' ? result.value : undefined))).toEqual(ids.map((id) => `rv-${id}`));
      expect(inFlight.calls).toBe(CLUSTERS / 100);
      expect(inFlight.max).toBeLessThanOrEqual(LIMIT);
      expect(inFlight.max).toBeGreaterThan(1);
    } finally {
      gated.destroy();
    }
  }, 120_000);

  it('lets a lease renewal asked for behind a thousand queued writes go ahead of them', async () => {
    // Prepare: a held lease, and a thousand writes queued on a gated client before its renewal
    // (forwarder errors: one PutItem each; checkpoint saves now go out in batches).
    if (!local || !seeding) throw new Error('DynamoDB Local did not start');
    const gated = createDynamoClient({ endpoint: local.endpoint, region: 'us-east-1', requestTimeoutMs: 10_000, maxConcurrentRequests: LIMIT });
    const stores = createDynamoStores(gated, { tableName: TABLE });
    const held = await stores.leases.acquire('forwarder#renewed', 'holder', 30_000);
    if (!held) throw new Error('the lease was not free');
    const sent = observeWireOrder(gated);
    try {
      // Act
      const writes = Array.from({ length: CLUSTERS }, (_, index) => stores.checkpoints.recordForwarderError(`cluster-${index}`, `watch failed ${index}`));
      const renewal = stores.leases.renew(held, 30_000);
      await Promise.all([...writes, renewal]);

      // Assess: the renewal took the first slot freed after it was asked for, so only the
      // LIMIT writes already in flight, and the few let through while it was being signed,
      // reached DynamoDB before it; in arrival order it would have been the last of all.
      expect(sent).toContain('UpdateItem');
      expect(sent.filter((operation) => operation === 'PutItem').length).toBeGreaterThanOrEqual(CLUSTERS);
      expect(sent.indexOf('UpdateItem')).toBeLessThanOrEqual(2 * LIMIT);
    } finally {
      gated.destroy();
    }
  }, 120_000);

  it('refuses a limit below one', () => {
    expect(() => createDynamoClient({ region: 'us-east-1', endpoint: 'http://127.0.0.1:9', maxConcurrentRequests: 0 })).toThrow(RangeError);
  });
});
