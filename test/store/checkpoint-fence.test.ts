/**
 * Checkpoints are fenced per lease: a stalled holder of the same lease cannot move a
 * checkpoint back, while a forwarder under another lease (its shard's after an upgrade from
 * per-cluster leases, or a new shard layout's) is not refused by tokens it cannot compare.
 * Against the memory store and DynamoDB Local, whose condition expression decides.
 */
import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { LeaseLostError } from '../../shared/domain/errors';
import { createDynamoStores } from '../../shared/adapters/dynamodb';
import { createMemoryStores } from '../../shared/adapters/memory';
import type { Lease, Stores } from '../../shared/ports/store';
import { ensureTable } from '../../local/dynamodb-local';
import { useDynamoDbLocalClient } from '../support/dynamodb-for-tests';

const dynamoDb = useDynamoDbLocalClient();

const backends: Array<{ name: string; create(): Promise<Stores> }> = [
  { name: 'memory', create: async () => createMemoryStores() },
  {
    name: 'DynamoDB Local',
    create: async () => {
      const tableName = `checkpoints-${randomUUID()}`;
      await ensureTable(dynamoDb(), tableName);
      return createDynamoStores(dynamoDb(), { tableName });
    },
  },
];

const leaseOf = (key: string, fencingToken: number): Lease => ({ key, holder: `holder-${fencingToken}`, fencingToken, expiresAt: Date.now() + 60_000 });

describe.each(backends)('checkpoint fence: $name', (backend) => {
  let stores: Stores;
  beforeAll(async () => {
    stores = await backend.create();
  });

  it('lets the shard\'s lease write over a checkpoint a cluster\'s own lease wrote with a higher token', async () => {
    // Prepare: before the upgrade, the cluster's own lease had been taken 40 times
    const cluster = `c-${randomUUID()}`;
    await stores.checkpoints.saveCheckpoint(cluster, 'inferenceservices', '100', leaseOf(`forwarder#${cluster}`, 40));

    // Act
    await stores.checkpoints.saveCheckpoint(cluster, 'inferenceservices', '140', leaseOf('forwarder-shard#4/1', 1));

    // Assess
    expect(await stores.checkpoints.loadCheckpoint(cluster, 'inferenceservices')).toBe('140');
  });

  it('lets a new shard layout\'s lease take a cluster over from the old layout\'s', async () => {
    // Prepare
    const cluster = `c-${randomUUID()}`;
    await stores.checkpoints.saveCheckpoint(cluster, 'deployments', '500', leaseOf('forwarder-shard#4/3', 9));

    // Act
    await stores.checkpoints.saveCheckpoint(cluster, 'deployments', '510', leaseOf('forwarder-shard#8/5', 2));

    // Assess
    expect(await stores.checkpoints.loadCheckpoint(cluster, 'deployments')).toBe('510');
  });

  it('refuses a stalled holder of the same shard lease, so it cannot move the checkpoint back', async () => {
    // Prepare
    const cluster = `c-${randomUUID()}`;
    await stores.checkpoints.saveCheckpoint(cluster, 'servingruntimes', '200', leaseOf('forwarder-shard#2/0', 6));

    // Act
    const stalled = stores.checkpoints.saveCheckpoint(cluster, 'servingruntimes', '150', leaseOf('forwarder-shard#2/0', 5));

    // Assess
    await expect(stalled).rejects.toBeInstanceOf(LeaseLostError);
    expect(await stores.checkpoints.loadCheckpoint(cluster, 'servingruntimes')).toBe('200');
  });
});
