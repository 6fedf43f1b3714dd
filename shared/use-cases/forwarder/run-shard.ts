/**
 * A forwarder shard: the worker that forwards the clusters `assignShard` gives to one shard
 * index. It reads the registry itself, so a cluster registered after the deployment is
 * picked up by its shard's next run (or, long-running, by its next scan) without a redeploy.
 * Each cluster is still held by its own lease (forwarder-lease.ts): a cluster that moves
 * to another shard when the shard count changes, or a run that overlaps the next one, is
 * handed over by that lease, never forwarded by two workers at once.
 */
import type { ForwarderLogger } from './logger';
import { describeError } from './hint-batcher';
import { selectShardClusters, validateShard } from './shard-assignment';
import { sleep } from './timing';

export interface ShardSelection {
  shard: number;
  shardCount: number;
  /** The registered clusters' ids, read afresh on every call. */
  listClusterIds(): Promise<string[]>;
}

export interface ShardRunResult<T> {
  shard: number;
  shardCount: number;
  /** The clusters this shard forwarded, in registry order. */
  clusterIds: string[];
  results: T[];
}

/**
 * One bounded run of a shard (a scheduled invocation): lists the registry, forwards each
 * of this shard's clusters with `forwardCluster` (all at once; each one bounds its own
 * time) and returns their results in the same order.
 */
export async function runForwarderShardOnce<T>(input: ShardSelection & { forwardCluster(clusterId: string): Promise<T> }): Promise<ShardRunResult<T>> {
  validateShard(input.shard, input.shardCount);
  const clusterIds = selectShardClusters(await input.listClusterIds(), input.shard, input.shardCount);
  const results = await Promise.all(clusterIds.map((clusterId) => input.forwardCluster(clusterId)));
  return { shard: input.shard, shardCount: input.shardCount, clusterIds, results };
}

export interface LongRunningShardInput extends ShardSelection {
  /** Forwards one cluster until `signal` aborts; a rejection is logged and the cluster retried at the next scan. */
  forwardCluster(clusterId: string, signal: AbortSignal): Promise<unknown>;
  /** How often the registry is read for clusters registered or removed since. */
  rescanMs: number;
  /** Stops every cluster's forwarder and then the shard. */
  signal: AbortSignal;
  /** Called with the clusters whose forwarders were started by a scan. */
  onStarted?: (clusterIds: string[]) => void;
  logger?: ForwarderLogger;
}

/**
 * A shard that runs until `signal` aborts (`npm start`): scans the registry every
 * `rescanMs`, starts a forwarder for each cluster newly assigned to it and stops the
 * forwarders of clusters no longer registered. Resolves once every forwarder stopped.
 */
export async function runForwarderShard(input: LongRunningShardInput): Promise<void> {
  validateShard(input.shard, input.shardCount);
  const running = new Map<string, { stop: AbortController; done: Promise<void> }>();
  const start = (clusterId: string): void => {
    const stop = new AbortController();
    const done = input
      .forwardCluster(clusterId, stop.signal)
      .then(() => undefined)
      .catch((error: unknown) => input.logger?.error('forwarder stopped with an error; restarting it at the next scan', { cluster: clusterId, error: describeError(error) }))
      .finally(() => {
        if (running.get(clusterId)?.stop === stop) running.delete(clusterId);
      });
    running.set(clusterId, { stop, done });
  };
  // Starts the newly assigned clusters and stops those no longer registered.
  const reconcile = (assigned: string[]): void => {
    const wanted = new Set(assigned);
    for (const [clusterId, entry] of running) if (!wanted.has(clusterId)) entry.stop.abort();
    const added = assigned.filter((clusterId) => !running.has(clusterId));
    for (const clusterId of added) start(clusterId);
    if (added.length > 0) input.onStarted?.(added);
  };
  const onAbort = (): void => {
    for (const entry of running.values()) entry.stop.abort();
  };
  input.signal.addEventListener('abort', onAbort, { once: true });
  try {
    while (!input.signal.aborted) {
      try {
        const assigned = selectShardClusters(await input.listClusterIds(), input.shard, input.shardCount);
        if (!input.signal.aborted) reconcile(assigned);
      } catch (error) {
        input.logger?.warn('could not read the cluster registry; trying again at the next scan', { shard: input.shard, error: describeError(error) });
      }
      await sleep(input.rescanMs, input.signal);
    }
  } finally {
    input.signal.removeEventListener('abort', onAbort);
    onAbort();
    await Promise.all([...running.values()].map((entry) => entry.done));
  }
}
