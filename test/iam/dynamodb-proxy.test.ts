/**
 * Each function's real store calls (the DynamoDB adapters, as the function uses them) run
 * against DynamoDB Local through the IAM-enforcing proxy, signed with that function's key,
 * so the roles in serverless.yml decide. What a function does succeeds; everything else,
 * a registry write as pin, a checkpoint write as drift-check, any write as the admission
 * webhook, is refused with AccessDeniedException and leaves the table as it was.
 */
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDynamoStores, idempotencyItemKey } from '../../shared/adapters/dynamodb';
import type { ClusterRecord, Lease, Stores } from '../../shared/ports/store';
import { expectAccessDenied, startIamWorld } from './support';
import type { IamWorld } from './support';

const CLUSTER: ClusterRecord = { mode: 'standalone', id: 'c1', server: 'https://c1.example:6443', omeNamespace: 'ome', credentials: { kind: 'eks', clusterName: 'c1', region: 'eu-west-1' } };

interface Caller {
  name: string;
  stores: Stores;
  client: DynamoDBDocumentClient;
  tableName: string;
}

/** A lease value as the forwarder holds it; checkpoint writes are fenced by its token. */
const heldLease = (name: string): Lease => ({ key: `forwarder#c1#${name}`, holder: name, fencingToken: 1, expiresAt: Date.now() + 60_000 });

/** The store calls of the functions, grouped as the code makes them. */
const OPERATIONS: Record<string, (caller: Caller) => Promise<void>> = {
  async 'read a cluster record'({ stores }) {
    expect((await stores.clusters.getCluster('c1'))?.id).toBe('c1');
  },
  async 'list the registry'({ stores }) {
    expect((await stores.clusters.listClusters()).map((record) => record.id)).toContain('c1');
  },
  async 'register a cluster'({ stores, name }) {
    await stores.clusters.putCluster({ ...CLUSTER, id: `by-${name}` });
  },
  async 'take, renew and release a lease'({ stores, name }) {
    const lease = await stores.leases.acquire(`object#c1#InferenceService#ns#${name}`, name, 30_000);
    expect(lease?.fencingToken).toBeGreaterThan(0);
    const renewed = await stores.leases.renew(lease as Lease, 30_000);
    await stores.leases.release(renewed);
  },
  async 'claim, complete, abandon and read idempotency records'({ stores, client, tableName, name }) {
    const done = `runtime-sync#c1#uid-${name}#t1`;
    expect(await stores.idempotency.claim(done, { inProgressTtlMs: 30_000, recordTtlSeconds: 3_600 })).toEqual({ state: 'claimed' });
    // The duplicate's condition fails and returns the stored record (ALL_OLD).
    expect(await stores.idempotency.claim(done, { inProgressTtlMs: 30_000, recordTtlSeconds: 3_600 })).toEqual({ state: 'in-progress' });
    await stores.idempotency.complete(done, { pinnedRevisionName: 'cr-rt-0123abcd' });
    expect(await stores.idempotency.claim(done, { inProgressTtlMs: 30_000, recordTtlSeconds: 3_600 })).toEqual({ state: 'completed', result: { pinnedRevisionName: 'cr-rt-0123abcd' } });
    const dropped = `runtime-sync#c1#uid-${name}#t2`;
    await stores.idempotency.claim(dropped, { inProgressTtlMs: 30_000, recordTtlSeconds: 3_600 });
    await stores.idempotency.abandon(dropped);
    // The store's fallback read after a failed claim without the old item.
    const read = await client.send(new GetCommand({ TableName: tableName, Key: idempotencyItemKey(done), ConsistentRead: true }));
    expect(read.Item?.status).toBe('COMPLETED');
  },
  async 'save and load a checkpoint'({ stores, name }) {
    await stores.checkpoints.saveCheckpoints('c1', { [`inferenceservices-${name}`]: '42' }, heldLease(name));
    expect((await stores.checkpoints.loadCheckpoints('c1'))[`inferenceservices-${name}`]).toBe('42');
  },
};
type Operation = keyof typeof OPERATIONS;

/** What each function's code does (functions/<name>/handler.ts and the use-cases it calls). */
const ALLOWED: Record<string, Operation[]> = {
  'forward-watch-events': ['read a cluster record', 'list the registry', 'take, renew and release a lease', 'save and load a checkpoint'],
  pin: ['read a cluster record', 'take, renew and release a lease', 'claim, complete, abandon and read idempotency records'],
  'drift-check': ['read a cluster record', 'take, renew and release a lease', 'claim, complete, abandon and read idempotency records'],
  'repin-apply': ['read a cluster record', 'take, renew and release a lease', 'claim, complete, abandon and read idempotency records'],
  'rollout-run': ['read a cluster record', 'list the registry', 'take, renew and release a lease'],
  'revision-gc': ['read a cluster record', 'list the registry', 'take, renew and release a lease'],
  resync: ['read a cluster record', 'list the registry'],
  'admission-webhook': ['read a cluster record'],
};

const CASES = Object.entries(ALLOWED).flatMap(([name, allowed]) =>
  (Object.keys(OPERATIONS) as Operation[]).map((operation) => [name, allowed.includes(operation) ? 'may' : 'may not', operation] as const),
);

describe('IAM proxy: each function under its own role', () => {
  let world: IamWorld;

  const callerFor = (name: string, accessKeyId?: string): Caller => {
    const client = world.clientAs(name, accessKeyId);
    return { name, client, tableName: world.roles.tableName, stores: createDynamoStores(client, { tableName: world.roles.tableName }) };
  };

  beforeAll(async () => {
    world = await startIamWorld();
    // The registry is written by registration, under an operator's identity, not by a function.
    await createDynamoStores(world.direct, { tableName: world.roles.tableName }).clusters.putCluster(CLUSTER);
  }, 120_000);

  afterAll(async () => {
    await world?.stop();
  });

  it('runs a case for every function serverless.yml declares', () => {
    expect(Object.keys(ALLOWED).sort()).toEqual([...world.roles.functions.keys()].sort());
  });

  it.each(CASES)('%s %s %s', async (name, verdict, operation) => {
    // Prepare
    const caller = callerFor(name);
    const before = world.proxy.decisions.length;

    // Act
    const outcome = await OPERATIONS[operation]?.(caller).then(
      () => undefined,
      (error: unknown) => error,
    );

    // Assess: the proxy judged the calls, and the verdict is the role's.
    const judged = world.decisionsOf(name, before);
    expect(judged.length).toBeGreaterThan(0);
    if (verdict === 'may') {
      expect(outcome).toBeUndefined();
      expect(judged.every((decision) => decision.allowed)).toBe(true);
    } else {
      expectAccessDenied(outcome, name);
    }
  }, 30_000);

  it('leaves the registry untouched when pin tries to register a cluster', async () => {
    // Act
    const error = await callerFor('pin').stores.clusters.putCluster({ ...CLUSTER, id: 'planted', server: 'https://attacker.example' }).catch((e: unknown) => e);

    // Assess
    expectAccessDenied(error, 'pin');
    expect((error as { cause?: { message?: string } }).cause?.message).toContain('dynamodb:PutItem');
    const planted = await world.direct.send(new GetCommand({ TableName: world.roles.tableName, Key: { pk: 'REGISTRY', sk: 'CLUSTER#planted' } }));
    expect(planted.Item).toBeUndefined();
  });

  it('leaves the checkpoint as it was when drift-check tries to move it', async () => {
    // Prepare
    const forwarder = callerFor('forward-watch-events');
    await forwarder.stores.checkpoints.saveCheckpoints('c1', { controllerrevisions: '100' }, heldLease('forward-watch-events'));

    // Act
    const error = await callerFor('drift-check').stores.checkpoints.saveCheckpoints('c1', { controllerrevisions: '1' }, heldLease('drift-check')).catch((e: unknown) => e);

    // Assess
    expectAccessDenied(error, 'drift-check');
    expect((await forwarder.stores.checkpoints.loadCheckpoints('c1')).controllerrevisions).toBe('100');
  });

  it('refuses every write of the admission webhook, whatever the item', async () => {
    const webhook = callerFor('admission-webhook');
    const writes: Array<() => Promise<unknown>> = [
      () => webhook.stores.leases.acquire('object#c1#InferenceService#ns#n', 'webhook', 30_000),
      () => webhook.stores.idempotency.claim('runtime-sync#c1#u#t', { inProgressTtlMs: 1_000, recordTtlSeconds: 60 }),
      () => webhook.stores.idempotency.abandon('runtime-sync#c1#u#t'),
      () => webhook.stores.checkpoints.saveCheckpoints('c1', { inferenceservices: '1' }, heldLease('admission-webhook')),
      () => webhook.stores.clusters.putCluster({ ...CLUSTER, id: 'webhook' }),
    ];
    for (const write of writes) expectAccessDenied(await write().catch((e: unknown) => e), 'admission-webhook');
  });

  it('does not know a key that belongs to no function', async () => {
    const error = await callerFor('pin', 'LOCALSOMEONEELSE').stores.clusters.getCluster('c1').catch((e: unknown) => e);
    expect((error as { cause?: { name?: string } }).cause?.name).toBe('UnrecognizedClientException');
  });
});
