/**
 * Which forwarder shard watches which cluster. Rendezvous (highest random weight) hashing:
 * each cluster goes to the shard whose hash of `<clusterId>#<shard>` is highest. The
 * assignment needs no table and no coordination (every worker computes it from the
 * registry's ids alone), it is stable while the shard count stays, and when the count
 * changes from N to M only the clusters whose winning shard changed move — about
 * |M−N|/max(M,N) of them — instead of nearly all of them as with `hash mod N`.
 * A cluster that moves is handed over by its lease like any other (docs/events.md).
 */
import { createHash } from 'node:crypto';
import { InvalidInputError } from '../../domain/errors';

/** More shards than this is a configuration mistake, not a fleet (each is a schedule rule). */
export const MAX_FORWARDER_SHARDS = 256;

function weightOf(clusterId: string, shard: number): bigint {
  return createHash('sha256').update(`${clusterId}#${shard}`, 'utf8').digest().readBigUInt64BE(0);
}

/** Throws InvalidInputError unless `shardCount` is a whole number from 1 to MAX_FORWARDER_SHARDS. */
export function validateShardCount(shardCount: number): void {
  if (!Number.isInteger(shardCount) || shardCount < 1 || shardCount > MAX_FORWARDER_SHARDS) {
    throw new InvalidInputError(`the forwarder shard count must be a whole number from 1 to ${MAX_FORWARDER_SHARDS} (got ${shardCount})`);
  }
}

/** Throws InvalidInputError unless `shard` is a valid index for `shardCount` shards. */
export function validateShard(shard: number, shardCount: number): void {
  validateShardCount(shardCount);
  if (!Number.isInteger(shard) || shard < 0 || shard >= shardCount) {
    throw new InvalidInputError(`forwarder shard ${shard} does not exist: shards are numbered 0 to ${shardCount - 1} (FORWARDER_SHARDS=${shardCount})`);
  }
}

/**
 * The shard (0 … shardCount−1) whose worker forwards `clusterId`'s changes. Depends on the
 * id and the count only, so every process agrees without talking to the others.
 */
export function assignShard(clusterId: string, shardCount: number): number {
  validateShardCount(shardCount);
  let best = 0;
  let bestWeight = -1n;
  for (let shard = 0; shard < shardCount; shard += 1) {
    const weight = weightOf(clusterId, shard);
    // Ties (astronomically unlikely) go to the lower index, so the answer stays deterministic.
    if (weight > bestWeight) {
      best = shard;
      bestWeight = weight;
    }
  }
  return best;
}

/** The ids among `clusterIds` that shard `shard` of `shardCount` forwards, in their given order. */
export function selectShardClusters(clusterIds: readonly string[], shard: number, shardCount: number): string[] {
  validateShard(shard, shardCount);
  return clusterIds.filter((clusterId) => assignShard(clusterId, shardCount) === shard);
}
