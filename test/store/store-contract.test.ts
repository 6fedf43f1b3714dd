/**
 * One contract for every store, run against the in-memory stores and against DynamoDB Local.
 * Both take a fake clock, so expiry is exercised without waiting.
 */
import { randomUUID } from 'node:crypto';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConflictError, LeaseLostError } from '../../shared/domain/errors';
import { createDynamoClient, createDynamoStores } from '../../shared/adapters/dynamodb';
import type { ClusterRecord, Stores } from '../../shared/ports/store';
import { createSyncWave, haltWave, startCluster } from '../../shared/domain/fleet/sync-wave';
import type { SyncWave } from '../../shared/domain/fleet/sync-wave';
import { createMemoryStores } from '../../shared/adapters/memory';
import { ensureTable } from '../../local/dynamodb-local';
import { dynamoDbLocalForTests } from '../support/dynamodb-for-tests';
import { FakeClock } from './fake-clock';

let local: Awaited<ReturnType<typeof dynamoDbLocalForTests>> | undefined;
let client: DynamoDBDocumentClient | undefined;

beforeAll(async () => {
  local = await dynamoDbLocalForTests();
  client = createDynamoClient({ endpoint: local.endpoint, region: 'us-east-1' });
});

afterAll(async () => {
  client?.destroy();
  const pid = local?.pid;
  await local?.stop();
  // stop() resolves only once Java has exited (a shared instance has no pid here: it outlives the file).
  if (pid !== undefined) expect(() => process.kill(pid, 0)).toThrow();
});

interface Backend {
  name: string;
  /** Fresh stores; the DynamoDB ones get a table of their own so tests cannot see each other. */
  create(clock: FakeClock): Promise<Stores>;
}

const backends: Backend[] = [
  { name: 'memory', create: async (clock) => createMemoryStores(clock) },
  {
    name: 'DynamoDB Local',
    create: async (clock) => {
      if (client === undefined) throw new Error('DynamoDB Local did not start');
      const tableName = `store-${randomUUID()}`;
      await ensureTable(client, tableName);
      return createDynamoStores(client, { clock, tableName });
    },
  },
];

const claimOptions = { inProgressTtlMs: 30_000, recordTtlSeconds: 3_600 };

describe.each(backends)('store contract: $name', (backend) => {
  let clock: FakeClock;
  let stores: Stores;

  beforeAll(async () => {
    clock = new FakeClock();
    stores = await backend.create(clock);
  });

  const key = (): string => `key-${randomUUID()}`;

  describe('LeaseStore', () => {
    it('grants a free lease once and refuses a second holder while it is held', async () => {
      const k = key();
      const first = await stores.leases.acquire(k, 'a', 10_000);
      expect(first).toEqual({ key: k, holder: 'a', fencingToken: 1, expiresAt: clock.now() + 10_000 });
      expect(await stores.leases.acquire(k, 'b', 10_000)).toBeUndefined();
    });

    it('renews a held lease and rejects renewal after a takeover', async () => {
      const k = key();
      const lease = await stores.leases.acquire(k, 'a', 1_000);
      clock.advance(800);
      const renewed = await stores.leases.renew(lease!, 1_000);
      expect(renewed.expiresAt).toBe(clock.now() + 1_000);
      clock.advance(800);
      expect(await stores.leases.acquire(k, 'b', 1_000)).toBeUndefined();
      clock.advance(300);
      const taken = await stores.leases.acquire(k, 'b', 1_000);
      expect(taken?.fencingToken).toBe(2);
      await expect(stores.leases.renew(renewed, 1_000)).rejects.toBeInstanceOf(LeaseLostError);
    });

    it('releases a lease so another holder takes it with a higher token; releasing a lost lease is ignored', async () => {
      const k = key();
      const a = await stores.leases.acquire(k, 'a', 60_000);
      await stores.leases.release(a!);
      const b = await stores.leases.acquire(k, 'b', 60_000);
      expect(b?.fencingToken).toBe(2);
      await stores.leases.release(a!);
      expect(await stores.leases.acquire(k, 'c', 60_000)).toBeUndefined();
      await expect(stores.leases.renew(b!, 60_000)).resolves.toMatchObject({ holder: 'b', fencingToken: 2 });
    });

    it('increases the fencing token on every acquisition, also by the same holder', async () => {
      const k = key();
      const tokens: number[] = [];
      for (const holder of ['a', 'a', 'b']) {
        clock.advance(2_000);
        const lease = await stores.leases.acquire(k, holder, 1_000);
        tokens.push(lease!.fencingToken);
      }
      expect(tokens).toEqual([1, 2, 3]);
    });

    it('calls a lease taken from a holder that never released it a takeover, and nothing else', async () => {
      const k = key();
      const first = await stores.leases.acquire(k, 'a', 1_000);
      expect(first?.takenOver).toBeUndefined();
      const again = await stores.leases.acquire(k, 'a', 1_000);
      expect(again).toEqual({ key: k, holder: 'a', fencingToken: 2, expiresAt: clock.now() + 1_000 });
      clock.advance(1_001);
      expect(await stores.leases.acquire(k, 'b', 1_000)).toMatchObject({ holder: 'b', fencingToken: 3, takenOver: true });
      await stores.leases.release((await stores.leases.acquire(k, 'b', 1_000))!);
      expect((await stores.leases.acquire(k, 'c', 1_000))?.takenOver).toBeUndefined();
    });

    it('says which lease was lost when a renewal comes too late, and the holder cannot renew a released lease', async () => {
      const k = key();
      const lease = (await stores.leases.acquire(k, 'a', 1_000))!;
      clock.advance(1_001);
      await stores.leases.acquire(k, 'b', 1_000);
      await expect(stores.leases.renew(lease, 1_000)).rejects.toThrow(`lease ${k} (token 1) is no longer held by a`);
      const mine = (await stores.leases.acquire(key(), 'a', 1_000))!;
      await stores.leases.release(mine);
      await expect(stores.leases.renew(mine, 1_000)).rejects.toBeInstanceOf(LeaseLostError);
    });

    // Only DynamoDB's store answers a refusal with the holder's expiry (waiters time their retry by it).
    it.runIf(backend.name === 'DynamoDB Local')('tells a refused acquirer until when the lease is held', async () => {
      const k = key();
      const held = (await stores.leases.acquire(k, 'a', 7_000))!;
      expect(stores.leases.tryAcquire).toBeDefined();
      await expect(stores.leases.tryAcquire!(k, 'b', 1_000)).resolves.toEqual({ heldUntil: held.expiresAt });
      await expect(stores.leases.tryAcquire!(k, 'a', 1_000)).resolves.toMatchObject({ lease: { holder: 'a', fencingToken: 2 } });
    });

    it('holds a lease through its expiry instant and frees it the millisecond after', async () => {
      const k = key();
      await stores.leases.acquire(k, 'a', 1_000);
      clock.advance(1_000);
      expect(await stores.leases.acquire(k, 'b', 1_000)).toBeUndefined();
      clock.advance(1);
      expect(await stores.leases.acquire(k, 'b', 1_000)).toMatchObject({ holder: 'b', fencingToken: 2 });
    });

    it('neither renews nor releases with a lease value its holder has since replaced', async () => {
      const k = key();
      const first = (await stores.leases.acquire(k, 'a', 10_000))!;
      const second = (await stores.leases.acquire(k, 'a', 10_000))!;
      await expect(stores.leases.renew(first, 10_000)).rejects.toBeInstanceOf(LeaseLostError);
      await stores.leases.release(first);
      expect(await stores.leases.acquire(k, 'b', 10_000)).toBeUndefined();
      await expect(stores.leases.renew(second, 10_000)).resolves.toMatchObject({ fencingToken: 2 });
    });

    it('refuses to renew a lease it never granted, and ignores its release', async () => {
      const never = { key: key(), holder: 'a', fencingToken: 1, expiresAt: clock.now() + 1_000 };
      await expect(stores.leases.renew(never, 1_000)).rejects.toBeInstanceOf(LeaseLostError);
      await expect(stores.leases.release(never)).resolves.toBeUndefined();
      expect(await stores.leases.acquire(never.key, 'b', 1_000)).toMatchObject({ holder: 'b', fencingToken: 1 });
    });

    it('lets exactly one of 20 concurrent acquirers win', async () => {
      const k = key();
      const results = await Promise.all(Array.from({ length: 20 }, (_, i) => stores.leases.acquire(k, `holder-${i}`, 60_000)));
      const winners = results.filter((lease) => lease !== undefined);
      expect(winners).toHaveLength(1);
      expect(winners[0]?.fencingToken).toBe(1);
    });
  });

  describe('IdempotencyStore', () => {
    it('grants exactly one of 20 concurrent claims; the rest see it in progress', async () => {
      const k = key();
      const claims = await Promise.all(Array.from({ length: 20 }, () => stores.idempotency.claim(k, claimOptions)));
      expect(claims.filter((c) => c.state === 'claimed')).toHaveLength(1);
      expect(claims.filter((c) => c.state === 'in-progress')).toHaveLength(19);
    });

    it('answers a duplicate after completion with the stored result', async () => {
      const k = key();
      expect(await stores.idempotency.claim(k, claimOptions)).toEqual({ state: 'claimed' });
      await stores.idempotency.complete(k, { revision: 'cr-vllm-1a2b3c4d', steps: [1, 2] });
      expect(await stores.idempotency.claim(k, claimOptions)).toEqual({
        state: 'completed',
        result: { revision: 'cr-vllm-1a2b3c4d', steps: [1, 2] },
      });
      await stores.idempotency.abandon(k);
      expect((await stores.idempotency.claim(k, claimOptions)).state).toBe('completed');
    });

    it.each([null, undefined, '', 0, false])('round-trips the result %j', async (result) => {
      const k = key();
      await stores.idempotency.claim(k, claimOptions);
      await stores.idempotency.complete(k, result);
      const claim = await stores.idempotency.claim(k, claimOptions);
      expect(claim.state).toBe('completed');
      expect(claim.state === 'completed' ? claim.result : 'not completed').toBe(result);
    });

    it('keeps an unexpired in-progress claim and hands an expired one to the next worker', async () => {
      const k = key();
      await stores.idempotency.claim(k, claimOptions);
      clock.advance(claimOptions.inProgressTtlMs - 1);
      expect(await stores.idempotency.claim(k, claimOptions)).toEqual({ state: 'in-progress' });
      clock.advance(2);
      expect(await stores.idempotency.claim(k, claimOptions)).toEqual({ state: 'claimed' });
    });

    it('holds an in-progress claim through its expiry instant and frees it the millisecond after', async () => {
      const k = key();
      await stores.idempotency.claim(k, claimOptions);
      clock.advance(claimOptions.inProgressTtlMs);
      expect(await stores.idempotency.claim(k, claimOptions)).toEqual({ state: 'in-progress' });
      clock.advance(1);
      expect(await stores.idempotency.claim(k, claimOptions)).toEqual({ state: 'claimed' });
    });

    it('keeps a completed record through the second its TTL ends, and forgets it the second after', async () => {
      const k = key();
      await stores.idempotency.claim(k, { inProgressTtlMs: 1_000, recordTtlSeconds: 60 });
      await stores.idempotency.complete(k, 'done');
      // The record expires at a whole second (epoch seconds, as the table's TTL attribute).
      const lastSecond = (Math.floor(clock.now() / 1000) + 60) * 1000;
      clock.advance(lastSecond + 999 - clock.now());
      expect(await stores.idempotency.claim(k, claimOptions)).toEqual({ state: 'completed', result: 'done' });
      clock.advance(1);
      expect(await stores.idempotency.claim(k, claimOptions)).toEqual({ state: 'claimed' });
    });

    it('keeps the first outcome when a second worker completes the same key', async () => {
      const k = key();
      await stores.idempotency.claim(k, claimOptions);
      await stores.idempotency.complete(k, 'first');
      await stores.idempotency.complete(k, 'second');
      expect(await stores.idempotency.claim(k, claimOptions)).toEqual({ state: 'completed', result: 'first' });
    });

    it('compares payloads only when the claim and the record both carry one', async () => {
      const withHash = key();
      await stores.idempotency.claim(withHash, { ...claimOptions, payloadHash: 'a' });
      await stores.idempotency.complete(withHash, 'done');
      expect(await stores.idempotency.claim(withHash, claimOptions)).toEqual({ state: 'completed', result: 'done' });
      const withoutHash = key();
      await stores.idempotency.claim(withoutHash, claimOptions);
      expect(await stores.idempotency.claim(withoutHash, { ...claimOptions, payloadHash: 'b' })).toEqual({ state: 'in-progress' });
    });

    it('drops an in-progress claim on abandon without an owner, whoever holds it; an unknown key is left alone', async () => {
      const k = key();
      await stores.idempotency.claim(k, { ...claimOptions, owner: 'worker-1' });
      await stores.idempotency.abandon(k);
      expect(await stores.idempotency.claim(k, claimOptions)).toEqual({ state: 'claimed' });
      const unknown = key();
      await expect(stores.idempotency.abandon(unknown)).resolves.toBeUndefined();
      expect(await stores.idempotency.claim(unknown, claimOptions)).toEqual({ state: 'claimed' });
    });

    it('lets a redelivery claim again after abandon', async () => {
      const k = key();
      await stores.idempotency.claim(k, claimOptions);
      await stores.idempotency.abandon(k);
      expect(await stores.idempotency.claim(k, claimOptions)).toEqual({ state: 'claimed' });
    });

    it('forgets a completed record after its TTL and refuses to complete an unclaimed key', async () => {
      const k = key();
      await stores.idempotency.claim(k, { inProgressTtlMs: 1_000, recordTtlSeconds: 60 });
      await stores.idempotency.complete(k, 'done');
      clock.advance(59_000);
      expect(await stores.idempotency.claim(k, claimOptions)).toEqual({ state: 'completed', result: 'done' });
      clock.advance(2_000);
      expect(await stores.idempotency.claim(k, claimOptions)).toEqual({ state: 'claimed' });
      const unclaimed = key();
      await expect(stores.idempotency.complete(unclaimed, 'x')).rejects.toThrow(new ConflictError(`idempotency key ${unclaimed} has no claim to complete`));
    });
  });

  describe('CheckpointStore', () => {
    it('stores every resource\'s latest resourceVersion in one write and rejects a write under a lease that expired', async () => {
      const cluster = key();
      expect(await stores.checkpoints.loadCheckpoints(cluster)).toEqual({});
      const old = await stores.leases.acquire(`forwarder/${cluster}`, 'a', 1_000);
      await stores.checkpoints.saveCheckpoints(cluster, { inferenceservices: '100', servingruntimes: '90' }, old!);
      await stores.checkpoints.saveCheckpoints(cluster, { inferenceservices: '101', servingruntimes: '90' }, old!);
      clock.advance(1_001);
      const next = await stores.leases.acquire(`forwarder/${cluster}`, 'b', 1_000);
      await stores.checkpoints.saveCheckpoints(cluster, { inferenceservices: '150' }, next!);
      await expect(stores.checkpoints.saveCheckpoints(cluster, { inferenceservices: '120' }, old!)).rejects.toBeInstanceOf(LeaseLostError);
      expect(await stores.checkpoints.loadCheckpoints(cluster)).toEqual({ inferenceservices: '150' });
      expect(await stores.checkpoints.loadCheckpoints(key())).toEqual({});
    });

    it('keeps the forwarder\'s latest error per cluster, beside its checkpoints', async () => {
      const cluster = key();
      expect(await stores.checkpoints.loadForwarderError(cluster)).toBeUndefined();
      await stores.checkpoints.recordForwarderError(cluster, 'list or watch failed; retrying: 403 Forbidden');
      clock.advance(5_000);
      await stores.checkpoints.recordForwarderError(cluster, 'forwarder session failed: connection refused');
      expect(await stores.checkpoints.loadForwarderError(cluster)).toEqual({ message: 'forwarder session failed: connection refused', at: clock.now() });
      expect(await stores.checkpoints.loadForwarderError(key())).toBeUndefined();
      // Not a checkpoint: no resource reads it as one.
      expect(await stores.checkpoints.loadCheckpoints(cluster)).toEqual({});
    });
  });

  describe('ClusterRegistry', () => {
    it('puts, replaces, gets and lists clusters in id order', async () => {
      const east: ClusterRecord = {
        mode: 'standalone', id: 'east',
        server: 'https://east.example:6443',
        caData: 'Q0E=',
        credentials: { kind: 'eks', clusterName: 'east', region: 'us-east-1' },
        omeNamespace: 'ome',
      };
      const dev: ClusterRecord = { mode: 'standalone', id: 'dev', server: 'https://127.0.0.1:6443', credentials: { kind: 'kubeconfig', kubeconfig: 'apiVersion: v1' }, omeNamespace: 'ome' };
      await stores.clusters.putCluster(east);
      await stores.clusters.putCluster(dev);
      await stores.clusters.putCluster({ ...dev, omeNamespace: 'ome-system' });
      expect(await stores.clusters.getCluster('east')).toEqual(east);
      expect(await stores.clusters.getCluster('missing')).toBeUndefined();
      expect(await stores.clusters.listClusters()).toEqual([{ ...dev, omeNamespace: 'ome-system' }, east]);
    });
  });

  describe('FleetStore', () => {
    const wave = (id: string): SyncWave =>
      createSyncWave({ id, runtime: { kind: 'ServingRuntime', namespace: 'ns', name: 'rt' }, clusterIds: ['a', 'b'], ackTimeout: '30m', ackTimeoutMs: 1_800_000, now: clock.now() });

    it('creates a wave once; a second create of the id is a conflict', async () => {
      const id = `w-${randomUUID()}`;
      await stores.fleet.createWave(wave(id));
      await expect(stores.fleet.createWave(wave(id))).rejects.toBeInstanceOf(ConflictError);
      expect(await stores.fleet.getWave(id)).toEqual(wave(id));
      expect(await stores.fleet.getWave(`w-${randomUUID()}`)).toBeUndefined();
    });

    it('saves a wave only over the version it was read at, bumping it', async () => {
      const id = `w-${randomUUID()}`;
      await stores.fleet.createWave(wave(id));
      const read = (await stores.fleet.getWave(id))!;
      const saved = await stores.fleet.saveWave(startCluster(read, 0, [], clock.now()));
      expect(saved.version).toBe(1);
      expect((await stores.fleet.getWave(id))?.clusters[0]?.state).toBe('Acknowledged');
      // A writer still holding version 0 is refused, and the stored wave is unchanged.
      await expect(stores.fleet.saveWave(haltWave(read, 0, { reason: 'ClusterUnreachable', message: 'x' }, clock.now()))).rejects.toBeInstanceOf(ConflictError);
      expect(await stores.fleet.getWave(id)).toEqual(saved);
    });

    it('lets exactly one of 10 concurrent saves of the same version win', async () => {
      const id = `w-${randomUUID()}`;
      await stores.fleet.createWave(wave(id));
      const read = (await stores.fleet.getWave(id))!;
      const results = await Promise.allSettled(Array.from({ length: 10 }, () => stores.fleet.saveWave(startCluster(read, 0, [], clock.now()))));
      expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
      expect(results.filter((r) => r.status === 'rejected' && r.reason instanceof ConflictError)).toHaveLength(9);
      expect((await stores.fleet.getWave(id))?.version).toBe(1);
    });

    it('lists waves in id order and replaces drift reports per cluster', async () => {
      const prefix = `z-${randomUUID()}`;
      for (const suffix of ['2', '1']) await stores.fleet.createWave(wave(`${prefix}-${suffix}`));
      const ids = (await stores.fleet.listWaves()).map((w) => w.id).filter((id) => id.startsWith(prefix));
      expect(ids).toEqual([`${prefix}-1`, `${prefix}-2`]);
      const report = { clusterId: `c-${randomUUID()}`, observedAt: clock.now(), inferenceServices: 2, drifted: 1, rows: [{ namespace: 'ns', name: 'i', runtimeKind: 'ServingRuntime', runtime: 'rt', pinnedRevision: 'r', reason: 'RevisionMismatch', message: 'm' }] };
      await stores.fleet.putDriftReport(report);
      await stores.fleet.putDriftReport({ ...report, drifted: 0, rows: [] });
      expect((await stores.fleet.listDriftReports()).filter((r) => r.clusterId === report.clusterId)).toEqual([{ ...report, drifted: 0, rows: [] }]);
    });
  });
  describe('ContinuationStore', () => {
    const record = (clusterId: string, work = 'drift#ServingRuntime/ns/rt') => ({ clusterId, work, subject: 'sha-1', after: 'ns/a', pageToken: 'tok', state: { plannedAt: 5 }, version: 0, updatedAt: clock.now() });

    it('creates, advances and deletes one record per cluster and work, each write conditional on the version read', async () => {
      const clusterId = `c-${randomUUID()}`;
      expect(await stores.continuations.loadContinuation(clusterId, 'revision-gc')).toBeUndefined();
      const first = await stores.continuations.saveContinuation(record(clusterId));
      expect(first.version).toBe(1);
      expect(await stores.continuations.loadContinuation(clusterId, first.work)).toEqual(first);
      // Another work of the same cluster is another record.
      expect(await stores.continuations.loadContinuation(clusterId, 'revision-gc')).toBeUndefined();
      await expect(stores.continuations.saveContinuation(record(clusterId))).rejects.toBeInstanceOf(ConflictError);
      const second = await stores.continuations.saveContinuation({ ...first, after: 'ns/b' });
      expect(second).toMatchObject({ version: 2, after: 'ns/b' });
      await expect(stores.continuations.saveContinuation({ ...first, after: 'ns/stale' })).rejects.toBeInstanceOf(ConflictError);
      await expect(stores.continuations.deleteContinuation(clusterId, first.work, 1)).rejects.toBeInstanceOf(ConflictError);
      await stores.continuations.deleteContinuation(clusterId, first.work, 2);
      expect(await stores.continuations.loadContinuation(clusterId, first.work)).toBeUndefined();
    });

    it('lets exactly one of many concurrent resumers take a step', async () => {
      const read = await stores.continuations.saveContinuation(record(`c-${randomUUID()}`));
      const results = await Promise.allSettled(Array.from({ length: 8 }, (_, i) => stores.continuations.saveContinuation({ ...read, after: `ns/${i}` })));
      expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
      expect(results.filter((r) => r.status === 'rejected' && r.reason instanceof ConflictError)).toHaveLength(7);
    });
  });
});
