import { InvalidInputError } from '../domain/errors';

/** The schedule's shard index; absent only when there is a single shard. */
export function forwarderShardOf(event: { shard?: unknown } | undefined, shardCount: number): number {
  const raw = event?.shard;
  if (raw === undefined) {
    if (shardCount === 1) return 0;
    throw new InvalidInputError(`the forwarder runs in ${shardCount} shards (FORWARDER_SHARDS); the event must name one as {"shard": 0..${shardCount - 1}}`);
  }
  if (typeof raw !== 'number') throw new InvalidInputError(`"shard" must be a number (got ${JSON.stringify(raw)})`);
  return raw;
}
