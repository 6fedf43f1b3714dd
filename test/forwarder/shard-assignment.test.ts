import { describe, expect, it } from 'vitest';
import { InvalidInputError } from '../../shared/domain/errors';
import { MAX_FORWARDER_SHARDS, assignShard, selectShardClusters, validateShard } from '../../shared/use-cases/forwarder';

const FLEET = Array.from({ length: 1_000 }, (_, index) => `cluster-${index}`);

describe('Function: assignShard', () => {
  it('gives every cluster one shard in range, the same on every call', () => {
    // Act
    const first = FLEET.map((id) => assignShard(id, 8));
    const second = FLEET.map((id) => assignShard(id, 8));

    // Assess
    expect(second).toEqual(first);
    expect(first.every((shard) => Number.isInteger(shard) && shard >= 0 && shard < 8)).toBe(true);
  });

  it('puts every cluster in shard 0 when there is one shard', () => {
    expect(new Set(FLEET.map((id) => assignShard(id, 1)))).toEqual(new Set([0]));
  });

  it('spreads 1,000 clusters evenly: each of 8 shards within a third of the mean', () => {
    // Act
    const sizes = Array.from({ length: 8 }, () => 0);
    for (const id of FLEET) sizes[assignShard(id, 8)] = (sizes[assignShard(id, 8)] ?? 0) + 1;

    // Assess
    for (const size of sizes) expect(Math.abs(size - 125)).toBeLessThan(125 / 3);
  });

  it('moves only the clusters the new shard wins when a shard is added, about 1/(N+1) of them', () => {
    // Act
    const moved = FLEET.filter((id) => assignShard(id, 8) !== assignShard(id, 9));

    // Assess: nobody moves between old shards; the new one takes its share.
    expect(moved.every((id) => assignShard(id, 9) === 8)).toBe(true);
    expect(moved.length).toBeGreaterThan(1_000 / 9 / 2);
    expect(moved.length).toBeLessThan((1_000 / 9) * 1.5);
  });

  it('moves only the removed shard’s clusters when a shard is taken away', () => {
    const moved = FLEET.filter((id) => assignShard(id, 9) !== assignShard(id, 8));
    expect(moved.every((id) => assignShard(id, 9) === 8)).toBe(true);
  });
});

describe('Function: selectShardClusters', () => {
  it('partitions the registry: every cluster in exactly one shard, registry order kept', () => {
    // Act
    const shards = Array.from({ length: 5 }, (_, shard) => selectShardClusters(FLEET, shard, 5));

    // Assess
    expect(shards.flat().sort()).toEqual([...FLEET].sort());
    for (const shard of shards) expect(shard).toEqual(FLEET.filter((id) => shard.includes(id)));
  });
});

describe('Function: validateShard', () => {
  it.each<[string, number, number, string]>([
    ['shard past the count', 4, 4, 'forwarder shard 4 does not exist: shards are numbered 0 to 3 (FORWARDER_SHARDS=4)'],
    ['negative shard', -1, 4, 'forwarder shard -1 does not exist: shards are numbered 0 to 3 (FORWARDER_SHARDS=4)'],
    ['fractional shard', 1.5, 4, 'forwarder shard 1.5 does not exist: shards are numbered 0 to 3 (FORWARDER_SHARDS=4)'],
    ['no shards', 0, 0, `the forwarder shard count must be a whole number from 1 to ${MAX_FORWARDER_SHARDS} (got 0)`],
    ['too many shards', 0, MAX_FORWARDER_SHARDS + 1, `the forwarder shard count must be a whole number from 1 to ${MAX_FORWARDER_SHARDS} (got ${MAX_FORWARDER_SHARDS + 1})`],
  ])('refuses a %s', (_name, shard, count, message) => {
    expect(() => validateShard(shard, count)).toThrow(new InvalidInputError(message));
    expect(() => validateShard(shard, count)).toThrow(InvalidInputError);
  });

  it('accepts every index below the count', () => {
    for (let shard = 0; shard < 4; shard += 1) expect(() => validateShard(shard, 4)).not.toThrow();
  });
});
