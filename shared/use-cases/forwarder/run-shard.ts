/**
 * A forwarder shard: the worker that forwards the clusters `assignShard` gives to one shard
 * index. It reads the registry itself, so a cluster registered after the deployment is
 * picked up by its shard's next run (or, long-running, by its next scan) without a redeploy.
 *
 * The shard holds one lease, `forwarder-shard#<count>/<shard>`, renewed by one heartbeat
 * whatever the number of its clusters; its clusters' forwarders fence their checkpoints with
 * it and stop when it is lost. A run that overlaps the next one hands the whole shard over
 * by that lease. When the shard count changes, a cluster that moves to another shard may be
 * forwarded by its old and its new shard for the length of one run (their leases differ):
 * its hints may come twice, which handlers absorb, and each forwarder's checkpoint only ever
 * passes hints it published itself, so none is lost (docs/events.md, "Shards").
 */
import { setMaxListeners } from 'node:events';
import type { Clock } from '../../ports/clock';
import type { Lease, LeaseStore } from '../../ports/store';
import type { ForwarderLogger } from './logger';
import { describeError } from './hint-batcher';
import { shardLeaseKey, startHeartbeat, waitForLease, type SharedLease } from './forwarder-lease';
import { selectShardClusters, validateShard } from './shard-assignment';
import { anySignal, sleep } from './timing';

export interface ShardSelection {
  shard: number;
  shardCount: number;
  /** The registered clusters' ids, read afresh on every call. */
  listClusterIds(): Promise<string[]>;
}

/** How the shard holds its lease. */
export interface ShardLeaseOptions {
  leases: LeaseStore;
  /** Who holds the lease; unique per invocation or process. */
  holderId: string;
  /** Lease time to live; renewed every third of it. */
  leaseTtlMs: number;
  /** How often a waiting shard tries the lease. */
  leasePollMs: number;
  clock: Clock;
  logger?: ForwarderLogger;
}

export interface ShardRunResult<T> {
  shard: number;
  shardCount: number;
  /** Whether the shard's lease was held; false when the wait for it ran out. */
  leaseAcquired: boolean;
  /** The clusters this shard forwarded, in registry order. */
  clusterIds: string[];
  results: T[];
}

/** Holds the shard's lease with a heartbeat; `lost` aborts when a renewal is refused or it expires. */
function holdShardLease(options: ShardLeaseOptions, lease: Lease): SharedLease & { stop(): void } {
  const lost = new AbortController();
  // Every forwarder of the shard listens on it; that is not a leak.
  setMaxListeners(0, lost.signal);
  const heartbeat = startHeartbeat({
    leases: options.leases,
    lease,
    ttlMs: options.leaseTtlMs,
    clock: options.clock,
    onLost: (error) => {
      options.logger?.warn('forwarder shard lease lost; its forwarders stop at once', { lease: lease.key, error: describeError(error) });
      lost.abort(error);
    },
    ...(options.logger ? { logger: options.logger } : {}),
  });
  return { current: heartbeat.current, lost: lost.signal, stop: heartbeat.stop };
}

async function releaseShardLease(options: ShardLeaseOptions, held: SharedLease & { stop(): void }): Promise<void> {
  held.stop();
  if (held.lost.aborted) return;
  try {
    await options.leases.release(held.current());
  } catch (error) {
    options.logger?.warn('could not release the forwarder shard lease; it will expire', { lease: held.current().key, error: describeError(error) });
  }
}

/**
 * One bounded run of a shard (a scheduled invocation): waits for the shard's lease until
 * `signal` aborts, then lists the registry, forwards each of this shard's clusters with
 * `forwardCluster` under that lease (all at once; each one bounds its own time), releases
 * the lease and returns their results in the same order.
 */
export async function runForwarderShardOnce<T>(
  input: ShardSelection &
    ShardLeaseOptions & {
      signal: AbortSignal;
      forwardCluster(clusterId: string, lease: SharedLease): Promise<T>;
    },
): Promise<ShardRunResult<T>> {
  validateShard(input.shard, input.shardCount);
  const { shard, shardCount } = input;
  const key = shardLeaseKey(shard, shardCount);
  const lease = await waitForLease({ leases: input.leases, key, holder: input.holderId, ttlMs: input.leaseTtlMs, pollMs: input.leasePollMs, signal: input.signal, ...(input.logger ? { logger: input.logger } : {}) });
  if (lease === undefined) return { shard, shardCount, leaseAcquired: false, clusterIds: [], results: [] };
  input.logger?.info('forwarder shard lease acquired', { lease: key, fencingToken: lease.fencingToken });
  const held = holdShardLease(input, lease);
  try {
    const clusterIds = selectShardClusters(await input.listClusterIds(), shard, shardCount);
    const results = await Promise.all(clusterIds.map((clusterId) => input.forwardCluster(clusterId, held)));
    return { shard, shardCount, leaseAcquired: true, clusterIds, results };
  } finally {
    await releaseShardLease(input, held);
  }
}

export interface LongRunningShardInput extends ShardSelection, ShardLeaseOptions {
  /**
   * Forwards one cluster under the shard's lease until `signal` aborts (the shard stops, the
   * cluster left the registry or the lease was lost); a rejection is logged and the cluster
   * retried at the next scan.
   */
  forwardCluster(clusterId: string, signal: AbortSignal, lease: SharedLease): Promise<unknown>;
  /** How often the registry is read for clusters registered or removed since. */
  rescanMs: number;
  /** Stops every cluster's forwarder and then the shard. */
  signal: AbortSignal;
  /** Called with the clusters whose forwarders were started by a scan. */
  onStarted?: (clusterIds: string[]) => void;
}

/**
 * A shard that runs until `signal` aborts (`npm start`): waits for the shard's lease, then
 * scans the registry every `rescanMs`, starts a forwarder for each cluster newly assigned to
 * it and stops the forwarders of clusters no longer registered. When the lease is lost every
 * forwarder stops, and the shard waits a TTL before it contends again. Resolves once every
 * forwarder stopped and the lease is released.
 */
export async function runForwarderShard(input: LongRunningShardInput): Promise<void> {
  validateShard(input.shard, input.shardCount);
  const key = shardLeaseKey(input.shard, input.shardCount);
  for (let tenure = 1; !input.signal.aborted; tenure += 1) {
    // A new holder name per tenure: a lost lease is never taken back as "already ours".
    const holder = tenure === 1 ? input.holderId : `${input.holderId}#${tenure}`;
    const lease = await waitForLease({ leases: input.leases, key, holder, ttlMs: input.leaseTtlMs, pollMs: input.leasePollMs, signal: input.signal, ...(input.logger ? { logger: input.logger } : {}) });
    if (lease === undefined) break;
    input.logger?.info('forwarder shard lease acquired', { lease: key, fencingToken: lease.fencingToken });
    const held = holdShardLease(input, lease);
    try {
      await scanUnderLease(input, held, anySignal(input.signal, held.lost));
    } finally {
      await releaseShardLease(input, held);
    }
    if (held.lost.aborted) await sleep(input.leaseTtlMs, input.signal);
  }
}

/** The shard's scans for one tenure of its lease, until `signal` aborts. */
async function scanUnderLease(input: LongRunningShardInput, lease: SharedLease, signal: AbortSignal): Promise<void> {
  const running = new Map<string, { stop: AbortController; done: Promise<void> }>();
  const start = (clusterId: string): void => {
    const stop = new AbortController();
    const done = input
      .forwardCluster(clusterId, stop.signal, lease)
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
  signal.addEventListener('abort', onAbort, { once: true });
  try {
    while (!signal.aborted) {
      try {
        const assigned = selectShardClusters(await input.listClusterIds(), input.shard, input.shardCount);
        if (!signal.aborted) reconcile(assigned);
      } catch (error) {
        input.logger?.warn('could not read the cluster registry; trying again at the next scan', { shard: input.shard, error: describeError(error) });
      }
      await sleep(input.rescanMs, signal);
    }
  } finally {
    signal.removeEventListener('abort', onAbort);
    onAbort();
    await Promise.all([...running.values()].map((entry) => entry.done));
  }
}
