/**
 * The idempotency path against DynamoDB Local: leases and sync-value records in the real
 * table, and what happens when DynamoDB cannot be reached.
 */
import { randomUUID } from 'node:crypto';
import { createServer, type AddressInfo } from 'node:net';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDynamoClient, createDynamoStores } from '../../shared/adapters/dynamodb';
import { Resources } from '../../shared/domain/model/resources';
import { pinInferenceService } from '../../shared/use-cases/pinning';
import { systemClock } from '../../shared/ports/clock';
import type { Stores } from '../../shared/ports/store';
import { ensureTable, startDynamoDbLocal, type DynamoDbLocal } from '../../local/dynamodb-local';
import { annotateSync, applyRuntime, deliver, getIsvc, NS, pinColumns, REV_085, REV_090, RUNTIME, seedIsvc, seedRuntime, startPinningWorld, type PinningWorld } from './support';

let local: DynamoDbLocal | undefined;
let dynamo: DynamoDBDocumentClient | undefined;
let stores: Stores;
let world: PinningWorld;

beforeAll(async () => {
  local = await startDynamoDbLocal();
  dynamo = createDynamoClient({ endpoint: local.endpoint, region: 'us-east-1' });
  const tableName = `pinning-${randomUUID()}`;
  await ensureTable(dynamo, tableName);
  stores = createDynamoStores(dynamo, { tableName, clock: systemClock });
  world = await startPinningWorld({ leases: stores.leases, idempotency: stores.idempotency });
  await applyRuntime(world.admin, seedRuntime('0.9'));
});

afterAll(async () => {
  await world?.stop();
  dynamo?.destroy();
  await local?.stop();
});

/** A port nothing listens on: connections are refused at once. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

const runtimeChanged = { kind: 'ServingRuntime', namespace: NS, name: RUNTIME, change: 'modified' } as const;

describe('pinning over DynamoDB Local', () => {
  it('rolls forward once for 10 concurrent deliveries, and never again for a reused value', async () => {
    await world.admin.create(Resources.inferenceServices, seedIsvc('ddb'));
    await world.pin('ddb');
    await applyRuntime(world.admin, seedRuntime('0.85'));
    await world.driftCheck(runtimeChanged);
    await annotateSync(world.admin, 'ddb', 'ddb-1');
    world.client.reset();
    const results = await Promise.all(Array.from({ length: 10 }, () => deliver(() => world.pin('ddb'))));
    expect(results.filter((r) => r.tokenApplied === 'ddb-1')).toHaveLength(1);
    expect(world.client.count('replaceStatus', 'inferenceservices')).toBe(1);
    expect(await pinColumns(world.admin, 'ddb')).toMatchObject({ pinned: REV_085, token: 'ddb-1' });

    await applyRuntime(world.admin, seedRuntime('0.9'));
    await annotateSync(world.admin, 'ddb', 'ddb-2');
    await world.driftCheck(runtimeChanged);
    expect(await pinColumns(world.admin, 'ddb')).toMatchObject({ pinned: REV_090, token: 'ddb-2' });

    await applyRuntime(world.admin, seedRuntime('0.85'));
    await world.driftCheck(runtimeChanged);
    await annotateSync(world.admin, 'ddb', 'ddb-1');
    expect(await world.pin('ddb')).toMatchObject({ tokenAlreadyUsed: 'ddb-1', drift: 'RevisionMismatch' });
    expect(await pinColumns(world.admin, 'ddb')).toMatchObject({ pinned: REV_090, token: 'ddb-2', reason: 'RevisionMismatch' });
  });

  it('DynamoDB unreachable: a retryable failure and no Kubernetes write', async () => {
    await world.admin.create(Resources.inferenceServices, seedIsvc('ddb-down'));
    const unreachable = createDynamoClient({ endpoint: `http://127.0.0.1:${await closedPort()}`, region: 'us-east-1', maxAttempts: 2, requestTimeoutMs: 500 });
    try {
      const down = createDynamoStores(unreachable, { tableName: 'unreachable', clock: systemClock });
      world.client.reset();
      await expect(pinInferenceService({ ...world.deps, leases: down.leases, idempotency: down.idempotency }, { namespace: NS, name: 'ddb-down' })).rejects.toMatchObject({ retryable: true });
      expect(world.client.writes()).toBe(0);
      expect(world.client.count('get', 'inferenceservices')).toBe(0);
      expect((await getIsvc(world.admin, 'ddb-down')).status).toBeUndefined();
    } finally {
      unreachable.destroy();
    }
  });
});
