export { runForwarder, runForwarderFor } from './run-forwarder';
export type {
  BoundedForwarderInput,
  ForwarderDependencies,
  ForwarderOptions,
  ForwarderStats,
  LongRunningForwarderInput,
} from './run-forwarder';
export { forwarderLeaseKey, shardLeaseKey } from './forwarder-lease';
export type { SharedLease } from './forwarder-lease';
export { listWatchedResources, RENDERED_WORKLOAD_SELECTOR } from '../../domain/watched-resources';
export type { WatchedResource } from '../../domain/watched-resources';
export { recordingLogger } from './logger';
export type { ForwarderLogger } from './logger';
export { assignShard, selectShardClusters, validateShard, validateShardCount, MAX_FORWARDER_SHARDS } from './shard-assignment';
export { runForwarderShard, runForwarderShardOnce } from './run-shard';
export type { LongRunningShardInput, ShardLeaseOptions, ShardRunResult, ShardSelection } from './run-shard';
export { ConcurrencyLimit } from './concurrency';
