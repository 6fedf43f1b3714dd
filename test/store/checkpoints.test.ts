/**
 * A cluster's checkpoints, every resource in one item, fenced by the lease's expiry: a
 * stalled holder whose lease expired writes nothing, while a forwarder under another lease
 * (its shard's after an upgrade from per-cluster leases, or a new shard layout's) writes
 * over them. Against the memory store and DynamoDB Local; in DynamoDB, a window's saves go
 * out in one BatchWriteItem per 25 clusters, and the earlier layout (an item per resource) is
 * still read.
 */
import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { LeaseLostError } from '../../shared/domain/errors';
import { PutCommand } from '@aws-sdk/lib-dynamodb';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { DynamoCheckpointStore, DynamoClusterAdmin, createDynamoStores } from '../../shared/adapters/dynamodb';
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
    await stores.checkpoints.saveCheckpoints(cluster, { inferenceservices: '100' }, leaseOf(`forwarder#${cluster}`, 40));

    // Act
    await stores.checkpoints.saveCheckpoints(cluster, { inferenceservices: '140' }, leaseOf('forwarder-shard#4/1', 1));

    // Assess
    expect((await stores.checkpoints.loadCheckpoints(cluster)).inferenceservices).toBe('140');
  });

  it('lets a new shard layout\'s lease take a cluster over from the old layout\'s', async () => {
    // Prepare
    const cluster = `c-${randomUUID()}`;
    await stores.checkpoints.saveCheckpoints(cluster, { deployments: '500' }, leaseOf('forwarder-shard#4/3', 9));

    // Act
    await stores.checkpoints.saveCheckpoints(cluster, { deployments: '510' }, leaseOf('forwarder-shard#8/5', 2));

    // Assess
    expect((await stores.checkpoints.loadCheckpoints(cluster)).deployments).toBe('510');
  });

  it('refuses a stalled holder whose lease expired, so it cannot move the checkpoint back', async () => {
    // Prepare: the new holder saved; the old one wakes up after its lease ran out
    const cluster = `c-${randomUUID()}`;
    await stores.checkpoints.saveCheckpoints(cluster, { servingruntimes: '200' }, leaseOf('forwarder-shard#2/0', 6));
    const expired: Lease = { ...leaseOf('forwarder-shard#2/0', 5), expiresAt: Date.now() - 1 };

    // Act
    const stalled = stores.checkpoints.saveCheckpoints(cluster, { servingruntimes: '150' }, expired);

    // Assess
    await expect(stalled).rejects.toBeInstanceOf(LeaseLostError);
    expect((await stores.checkpoints.loadCheckpoints(cluster)).servingruntimes).toBe('200');
  });
});

describe('checkpoints: saves of one window, in DynamoDB Local', () => {
  it('writes 60 clusters\' saves in three BatchWriteItem calls, and refuses only the expired lease\'s', async () => {
    // Prepare: a client that counts what it sends
    const tableName = `checkpoints-${randomUUID()}`;
    await ensureTable(dynamoDb(), tableName);
    const sent: string[] = [];
    const counting = { send: (command: { constructor: { name: string } }) => (sent.push(command.constructor.name), dynamoDb().send(command as never)) } as unknown as DynamoDBDocumentClient;
    const store = new DynamoCheckpointStore(counting, undefined, { tableName, checkpointSaveWindowMs: 3_000 });
    const clusters = Array.from({ length: 60 }, (_, index) => `c${index}`);
    const live = leaseOf('forwarder-shard#1/0', 2);

    // Act: the saves arrive over the window (a few milliseconds apart), one of them under a lease that expired
    const saves = clusters.map(async (clusterId, index) => {
      await new Promise((resolve) => setTimeout(resolve, index));
      return store.saveCheckpoints(clusterId, { inferenceservices: String(100 + index) }, index === 7 ? { ...live, expiresAt: Date.now() - 1 } : live);
    });
    const outcomes = await Promise.allSettled(saves);
    const loaded = await Promise.all(clusters.map((clusterId) => store.loadCheckpoints(clusterId)));

    // Assess
    expect(outcomes.filter((outcome) => outcome.status === 'rejected').map((_, index) => index)).toHaveLength(1);
    expect((outcomes[7] as PromiseRejectedResult).reason).toBeInstanceOf(LeaseLostError);
    expect(sent.filter((name) => name === 'BatchWriteCommand')).toHaveLength(3);
    expect(loaded[7]).toEqual({});
    expect(loaded.filter((_, index) => index !== 7)).toEqual(clusters.filter((_, index) => index !== 7).map((clusterId) => ({ inferenceservices: String(100 + Number(clusterId.slice(1))) })));
  });
});

describe('checkpoints: the earlier layout, one item per resource, in DynamoDB Local', () => {
  it('is read while the cluster has no checkpoints item; the first save carries its positions over', async () => {
    // Prepare: what a forwarder of the earlier release left, then one save of the new layout
    const tableName = `checkpoints-${randomUUID()}`;
    await ensureTable(dynamoDb(), tableName);
    const stores = createDynamoStores(dynamoDb(), { tableName });
    const cluster = `c-${randomUUID()}`;
    for (const [resource, resourceVersion] of [['inferenceservices', '100'], ['deployments', '80']] as const) {
      const item = { pk: `CHECKPOINT#${cluster}`, sk: resource, resourceVersion, fencingToken: 3, leaseKey: `forwarder#${cluster}`, updatedAt: 1 };
      await dynamoDb().send(new PutCommand({ TableName: tableName, Item: item }));
    }
    await stores.checkpoints.recordForwarderError(cluster, 'watch failed');
    const before = await stores.checkpoints.loadCheckpoints(cluster);

    // Act: a forwarder saves every position it follows, those it loaded from the earlier layout included
    await stores.checkpoints.saveCheckpoints(cluster, { ...before, inferenceservices: '120' }, leaseOf('forwarder-shard#1/0', 1));
    const after = await stores.checkpoints.loadCheckpoints(cluster);
    const admin = new DynamoClusterAdmin(dynamoDb(), { tableName });
    const listed = await admin.listCheckpoints(cluster);
    await admin.deleteCluster({ id: cluster });

    // Assess
    expect(before).toEqual({ inferenceservices: '100', deployments: '80' });
    expect(after).toEqual({ inferenceservices: '120', deployments: '80' });
    expect(listed.map(({ resource, resourceVersion, leaseKey }) => ({ resource, resourceVersion, leaseKey }))).toEqual([
      { resource: 'deployments', resourceVersion: '80', leaseKey: 'forwarder-shard#1/0' },
      { resource: 'inferenceservices', resourceVersion: '120', leaseKey: 'forwarder-shard#1/0' },
    ]);
    expect(await stores.checkpoints.loadCheckpoints(cluster)).toEqual({});
    expect(await stores.checkpoints.loadForwarderError(cluster)).toBeUndefined();
  });
});

describe('checkpoints: the loads of one turn, read together in DynamoDB Local', () => {
  it('reads 150 clusters with two BatchGetItem calls, and a cluster without a checkpoints item from its partition', async () => {
    // Prepare: 150 clusters saved, one left by the earlier layout, one never saved
    const tableName = `checkpoints-${randomUUID()}`;
    await ensureTable(dynamoDb(), tableName);
    const stores = createDynamoStores(dynamoDb(), { tableName });
    const saved = Array.from({ length: 150 }, (_, i) => `c${i}-${randomUUID()}`);
    for (let start = 0; start < saved.length; start += 25) {
      await Promise.all(saved.slice(start, start + 25).map((cluster, i) => stores.checkpoints.saveCheckpoints(cluster, { inferenceservices: String(start + i + 1) }, leaseOf('forwarder-shard#1/0', 1))));
    }
    const earlier = `c-earlier-${randomUUID()}`;
    await dynamoDb().send(new PutCommand({ TableName: tableName, Item: { pk: `CHECKPOINT#${earlier}`, sk: 'deployments', resourceVersion: '80', fencingToken: 3, leaseKey: `forwarder#${earlier}`, updatedAt: 1 } }));
    const commands: string[] = [];
    dynamoDb().middlewareStack.add((next, context) => async (args) => (commands.push(String(context.commandName)), next(args)), { step: 'initialize', name: 'countCheckpointLoads' });

    // Act: as a shard's run starts its clusters, all at once
    let loaded: Awaited<ReturnType<Stores['checkpoints']['loadCheckpoints']>>[];
    try {
      loaded = await Promise.all([...saved, earlier, `c-never-${randomUUID()}`].map((cluster) => stores.checkpoints.loadCheckpoints(cluster)));
    } finally {
      dynamoDb().middlewareStack.remove('countCheckpointLoads');
    }

    // Assess
    expect(commands.filter((name) => name.startsWith('BatchGet'))).toHaveLength(2);
    expect(commands.filter((name) => name.startsWith('Query'))).toHaveLength(2);
    expect(commands).toHaveLength(4);
    expect(loaded.slice(0, 150).map((checkpoints) => checkpoints.inferenceservices)).toEqual(saved.map((_, i) => String(i + 1)));
    expect(loaded.slice(150)).toEqual([{ deployments: '80' }, {}]);
  }, 60_000);
});
