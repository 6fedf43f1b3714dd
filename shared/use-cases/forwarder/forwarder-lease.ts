/**
 * One forwarder per shard: a lease `forwarder-shard#<shardCount>/<shard>` with a heartbeat,
 * under which the shard forwards every cluster it is assigned (run-shard.ts). A forwarder
 * run on its own, without a shard (tests, benchmarks), takes `forwarder#<clusterId>`.
 *
 * Timeline: the holder renews every ttl/3, so two renewals may fail before the lease can
 * expire. A standby polls `acquire` and gets the lease (with a higher fencing token) only
 * once it has expired. When a renewal is refused (LeaseLostError) the holder stops at
 * once; when renewals fail or hang (store unreachable, process paused) it stops as soon as
 * its own copy of the lease says it has expired, since by then another forwarder may hold it. Either way
 * its checkpoint writes are fenced by the token, so a stalled holder cannot move them back.
 */
import { LeaseLostError } from '../../domain/errors';
import type { Clock } from '../../ports/clock';
import type { Lease, LeaseStore } from '../../ports/store';
import type { ForwarderLogger } from './logger';
import { describeError } from './hint-batcher';
import { sleep } from './timing';

export function forwarderLeaseKey(clusterId: string): string {
  return `forwarder#${clusterId}`;
}

/** The shard's lease: the shard count is part of the key, so a new layout never waits on an old one. */
export function shardLeaseKey(shard: number, shardCount: number): string {
  return `forwarder-shard#${shardCount}/${shard}`;
}

/**
 * A lease held, and renewed, by someone else: the shard that forwards a cluster. Its
 * forwarders fence their checkpoints with `current()` and stop at once when `lost` aborts.
 */
export interface SharedLease {
  current(): Lease;
  lost: AbortSignal;
}

/** Polls until the lease is ours; undefined when `signal` aborts first. */
export async function waitForLease(options: {
  leases: LeaseStore;
  key: string;
  holder: string;
  ttlMs: number;
  pollMs: number;
  signal: AbortSignal;
  logger?: ForwarderLogger;
}): Promise<Lease | undefined> {
  let announced = false;
  while (!options.signal.aborted) {
    try {
      const lease = await options.leases.acquire(options.key, options.holder, options.ttlMs);
      if (lease) return lease;
      if (!announced) options.logger?.info('another forwarder holds the lease; waiting for it to be released or to expire', { lease: options.key });
      announced = true;
    } catch (error) {
      options.logger?.warn('could not acquire the forwarder lease', { lease: options.key, error: describeError(error) });
    }
    await sleep(options.pollMs, options.signal);
  }
  return undefined;
}

export interface Heartbeat {
  /** The lease as last renewed. */
  current(): Lease;
  stop(): void;
}

/** Renews the lease every ttl/3 until stopped; calls `onLost` once when it is gone. */
export function startHeartbeat(options: {
  leases: LeaseStore;
  lease: Lease;
  ttlMs: number;
  clock: Clock;
  onLost: (error: Error) => void;
  logger?: ForwarderLogger;
}): Heartbeat {
  let lease = options.lease;
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let expiry: NodeJS.Timeout | undefined;
  const interval = Math.max(1, Math.floor(options.ttlMs / 3));
  const lose = (error: Error): void => {
    if (stopped) return;
    stopped = true;
    if (timer !== undefined) clearTimeout(timer);
    if (expiry !== undefined) clearTimeout(expiry);
    options.onLost(error);
  };
  // Even when a renewal hangs rather than fails, stop once our copy of the lease expires.
  const watchExpiry = (): void => {
    if (expiry !== undefined) clearTimeout(expiry);
    const remaining = Math.max(0, lease.expiresAt - options.clock.now());
    expiry = setTimeout(() => lose(new LeaseLostError(`lease ${lease.key} expired before it could be renewed`)), remaining);
  };
  const beat = async (): Promise<void> => {
    try {
      const renewed = await options.leases.renew(lease, options.ttlMs);
      if (!stopped) {
        lease = renewed;
        watchExpiry();
      }
    } catch (error) {
      if (error instanceof LeaseLostError) return lose(error);
      options.logger?.warn('could not renew the forwarder lease', { lease: lease.key, error: describeError(error) });
      if (options.clock.now() >= lease.expiresAt) {
        return lose(new LeaseLostError(`lease ${lease.key} expired while it could not be renewed`, { cause: error }));
      }
    }
    if (!stopped) timer = setTimeout(() => void beat(), interval);
  };
  timer = setTimeout(() => void beat(), interval);
  watchExpiry();
  return {
    current: () => lease,
    stop: () => {
      stopped = true;
      if (timer !== undefined) clearTimeout(timer);
      if (expiry !== undefined) clearTimeout(expiry);
    },
  };
}
