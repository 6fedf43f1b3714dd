import { describe, expect, it } from 'vitest';
import { assignShard, runForwarderShard, runForwarderShardOnce } from '../../shared/use-cases/forwarder';

const SHARDS = 3;
const REGISTRY = Array.from({ length: 30 }, (_, index) => `cluster-${index}`);
const ofShard = (shard: number, ids: readonly string[] = REGISTRY): string[] => ids.filter((id) => assignShard(id, SHARDS) === shard);

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

  it('refuses a shard the count does not have', async () => {
    await expect(runForwarderShardOnce({ shard: 3, shardCount: SHARDS, listClusterIds: async () => REGISTRY, forwardCluster: async () => undefined })).rejects.toThrow(
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
    });
    await started.until(() => forwarded.length > 0);
    stop.abort();
    await worker;

    // Assess
    expect(failures).toBe(2);
    expect(forwarded).toEqual(['only']);
  });
});
