import { describe, expect, it } from 'vitest';
import { LeaseLostError } from '../../shared/domain/errors';
import { MemoryLeaseStore } from '../../shared/adapters/memory/lease-store';
import { systemClock } from '../../shared/ports/clock';
import type { LeaseStore } from '../../shared/ports/store';
import { assignShard, runForwarderShard, runForwarderShardOnce, type ShardLeaseOptions } from '../../shared/use-cases/forwarder';

const SHARDS = 3;
const REGISTRY = Array.from({ length: 30 }, (_, index) => `cluster-${index}`);
const ofShard = (shard: number, ids: readonly string[] = REGISTRY): string[] => ids.filter((id) => assignShard(id, SHARDS) === shard);

/** How a shard in these tests holds its lease: a memory store, short TTL and poll. */
function leaseOptions(leases: LeaseStore = new MemoryLeaseStore(), holderId = 'worker-a'): ShardLeaseOptions {
  return { leases, holderId, leaseTtlMs: 300, leasePollMs: 5, clock: systemClock };
}

/** Resolves when `check` holds, re-checked on every `notify()`. */
class Signal {
  private waiters: Array<() => void> = [];
  notify(): void {
    const waiters = this.waiters;
    this.waiters = [];
    for (const waiter of waiters) waiter();
  }
  async until(check: () => boolean): Promise<void> {
    while (!check()) await new Promise<void>((resolve) => this.waiters.push(resolve));
  }
}

describe('Function: runForwarderShardOnce', () => {
  it('forwards exactly the clusters assigned to its shard, reading the registry at each run', async () => {
    // Prepare
    const registry = [...REGISTRY];
    const forwarded: string[][] = [];
    const run = async (): Promise<string[]> => {
      const seen: string[] = [];
      const result = await runForwarderShardOnce({
        shard: 1,
        shardCount: SHARDS,
        listClusterIds: async () => [...registry],
        forwardCluster: async (clusterId) => (seen.push(clusterId), `${clusterId}:done`),
        ...leaseOptions(),
        signal: AbortSignal.timeout(5_000),
      });
      forwarded.push(seen);
      expect(result.results).toEqual(result.clusterIds.map((id) => `${id}:done`));
      return result.clusterIds;
    };

    // Act: a cluster registered between two runs
    const first = await run();
    const late = Array.from({ length: 20 }, (_, index) => `late-${index}`).find((id) => assignShard(id, SHARDS) === 1) ?? '';
    registry.push(late);
    const second = await run();

    // Assess
    expect(first).toEqual(ofShard(1));
    expect(second).toEqual([...ofShard(1), late]);
    expect(forwarded.map((ids) => [...ids].sort())).toEqual([first, second].map((ids) => [...ids].sort()));
  });

  it('holds one lease for the whole shard, shared by its clusters, and releases it at the end', async () => {
    // Prepare
    const leases = new MemoryLeaseStore();
    const seen: Array<{ clusterId: string; key: string; token: number }> = [];

    // Act
    const result = await runForwarderShardOnce({
      shard: 2,
      shardCount: SHARDS,
      listClusterIds: async () => REGISTRY,
      forwardCluster: async (clusterId, lease) => {
        seen.push({ clusterId, key: lease.current().key, token: lease.current().fencingToken });
      },
      ...leaseOptions(leases),
      signal: AbortSignal.timeout(5_000),
    });
    const next = await leases.acquire('forwarder-shard#3/2', 'worker-b', 300);

    // Assess
    expect(result.leaseAcquired).toBe(true);
    expect(seen.map((entry) => entry.clusterId)).toEqual(ofShard(2));
    expect(new Set(seen.map((entry) => `${entry.key}@${entry.token}`))).toEqual(new Set(['forwarder-shard#3/2@1']));
    expect(next?.fencingToken).toBe(2);
  });

  it('forwards nothing while another worker holds the shard, and gives up when its wait ends', async () => {
    // Prepare
    const leases = new MemoryLeaseStore();
    await leases.acquire('forwarder-shard#3/0', 'worker-b', 60_000);
    const forwarded: string[] = [];

    // Act
    const result = await runForwarderShardOnce({
      shard: 0,
      shardCount: SHARDS,
      listClusterIds: async () => REGISTRY,
      forwardCluster: async (clusterId) => void forwarded.push(clusterId),
      ...leaseOptions(leases),
      signal: AbortSignal.timeout(50),
    });

    // Assess
    expect(result).toMatchObject({ leaseAcquired: false, clusterIds: [] });
    expect(forwarded).toEqual([]);
  });

  it('forwards a cluster named to it, under the lease of its shard', async () => {
    // Prepare
    const named = ofShard(1)[1] ?? '';
    const seen: string[] = [];

    // Act
    const result = await runForwarderShardOnce({
      shard: 1,
      shardCount: SHARDS,
      listClusterIds: async () => [named],
      forwardCluster: async (clusterId, lease) => void seen.push(`${clusterId} ${lease.current().key}`),
      ...leaseOptions(),
      signal: AbortSignal.timeout(5_000),
    });

    // Assess
    expect(result.clusterIds).toEqual([named]);
    expect(seen).toEqual([`${named} forwarder-shard#3/1`]);
  });

  it('refuses a shard the count does not have', async () => {
    await expect(
      runForwarderShardOnce({ shard: 3, shardCount: SHARDS, listClusterIds: async () => REGISTRY, forwardCluster: async () => undefined, ...leaseOptions(), signal: AbortSignal.timeout(5_000) }),
    ).rejects.toThrow(
      'forwarder shard 3 does not exist',
    );
  });
});

describe('Function: runForwarderShard', () => {
  it('starts its clusters, picks up one registered later at a scan, stops one removed, and stops all when aborted', async () => {
    // Prepare
    const registry = REGISTRY.slice(0, 10);
    const running = new Set<string>();
    const startedOnce: string[] = [];
    const changed = new Signal();
    let scans = 0;
    const stop = new AbortController();
    const shard = 0;

    // Act
    const worker = runForwarderShard({
      shard,
      shardCount: SHARDS,
      listClusterIds: async () => {
        scans += 1;
        changed.notify();
        return [...registry];
      },
      forwardCluster: async (clusterId, signal) => {
        running.add(clusterId);
        startedOnce.push(clusterId);
        changed.notify();
        await new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
        running.delete(clusterId);
        changed.notify();
      },
      rescanMs: 5,
      signal: stop.signal,
      ...leaseOptions(),
    });
    await changed.until(() => running.size === ofShard(shard, registry).length);
    const atStart = [...running].sort();

    const added = REGISTRY.slice(10).find((id) => assignShard(id, SHARDS) === shard) ?? '';
    const removed = atStart[0] ?? '';
    registry.push(added);
    registry.splice(registry.indexOf(removed), 1);
    await changed.until(() => running.has(added) && !running.has(removed));
    const afterChange = [...running].sort();
    const scansBeforeStop = scans;

    stop.abort();
    await worker;

    // Assess
    expect(atStart).toEqual([...ofShard(shard, REGISTRY.slice(0, 10))].sort());
    expect(afterChange).toEqual([...ofShard(shard, registry)].sort());
    expect(startedOnce.filter((id) => id === atStart[1])).toHaveLength(1);
    expect(scansBeforeStop).toBeGreaterThanOrEqual(2);
    expect(running.size).toBe(0);
  });

  it('stops every forwarder of the shard at once when the shard lease is lost, and contends again after a TTL', async () => {
    // Prepare: renewals are refused from the second one on, as when another worker took the lease over
    const inner = new MemoryLeaseStore();
    let renewals = 0;
    const leases: LeaseStore = {
      acquire: (...args) => inner.acquire(...args),
      release: (...args) => inner.release(...args),
      renew: async (lease, ttlMs) => {
        renewals += 1;
        if (renewals >= 2) throw new LeaseLostError(`lease ${lease.key} is no longer held`);
        return inner.renew(lease, ttlMs);
      },
    };
    const stop = new AbortController();
    const changed = new Signal();
    const tenures: number[] = [];
    let running = 0;
    let stoppedByLoss = 0;

    // Act
    const worker = runForwarderShard({
      shard: 0,
      shardCount: 1,
      listClusterIds: async () => ['a', 'b', 'c'],
      forwardCluster: async (_clusterId, signal, lease) => {
        tenures.push(lease.current().fencingToken);
        running += 1;
        changed.notify();
        await new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
        running -= 1;
        if (lease.lost.aborted) stoppedByLoss += 1;
        changed.notify();
      },
      rescanMs: 1,
      signal: stop.signal,
      ...leaseOptions(leases),
      leaseTtlMs: 60,
    });
    await changed.until(() => stoppedByLoss === 3 && running === 3);
    stop.abort();
    await worker;

    // Assess: three forwarders under token 1, all stopped by the loss, three again under a later token
    expect(tenures.slice(0, 3)).toEqual([1, 1, 1]);
    expect(Math.min(...tenures.slice(3, 6))).toBeGreaterThan(1);
    expect(running).toBe(0);
  });

  it('keeps scanning when the registry cannot be read', async () => {
    // Prepare
    const stop = new AbortController();
    const started = new Signal();
    let failures = 0;
    const forwarded: string[] = [];

    // Act
    const worker = runForwarderShard({
      shard: 0,
      shardCount: 1,
      listClusterIds: async () => {
        if (failures < 2) {
          failures += 1;
          throw new Error('table unreachable');
        }
        return ['only'];
      },
      forwardCluster: async (clusterId, signal) => {
        forwarded.push(clusterId);
        started.notify();
        await new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
      },
      rescanMs: 1,
      signal: stop.signal,
      ...leaseOptions(),
    });
    await started.until(() => forwarded.length > 0);
    stop.abort();
    await worker;

    // Assess
    expect(failures).toBe(2);
    expect(forwarded).toEqual(['only']);
  });
});
