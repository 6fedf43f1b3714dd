import { describe, expect, it } from 'vitest';
import { CHANGE_FLOORS, createPrng, drawChangeKind, floorOfMix, parseMilliseconds, percentile } from '../../scripts/simulate/figures';

describe('Function: percentile', () => {
  it.each([
    [[], 50, undefined],
    [[7], 99, 7],
    [[1, 2, 3, 4], 50, 2],
    [[4, 3, 2, 1], 100, 4],
    [Array.from({ length: 100 }, (_, i) => i + 1), 99, 99],
  ])('of %j at p%s is %s (nearest rank)', (values, p, expected) => {
    expect(percentile(values, p)).toBe(expected);
  });
});

describe('Function: floorOfMix', () => {
  it('weights each kind floor by how many of it completed', () => {
    const floor = floorOfMix({ repin: 1, syncToken: 1 });
    expect(floor.kubernetesRequests).toBe((CHANGE_FLOORS.repin.kubernetesRequests + CHANGE_FLOORS.syncToken.kubernetesRequests) / 2);
    expect(floor.dynamoDbOperations).toBe(0.5);
    expect(floor.invocations).toBe(1);
    expect(floorOfMix({})).toEqual({ kubernetesRequests: 0, dynamoDbOperations: 0, invocations: 0 });
  });
});

describe('Function: drawChangeKind', () => {
  it('draws only allowed kinds, and the same sequence from the same seed', () => {
    const first = createPrng(7);
    const second = createPrng(7);
    const draws = Array.from({ length: 50 }, () => drawChangeKind(first, ['repin', 'syncToken']));
    expect(new Set(draws)).toEqual(new Set(['repin', 'syncToken']));
    expect(Array.from({ length: 50 }, () => drawChangeKind(second, ['repin', 'syncToken']))).toEqual(draws);
    expect(drawChangeKind(first, [])).toBeUndefined();
  });
});

describe('Function: parseMilliseconds', () => {
  it.each([
    ['5ms', 5],
    ['60s', 60_000],
    ['2m', 120_000],
    ['250', 250],
  ])('%s is %s ms', (text, expected) => {
    expect(parseMilliseconds('--latency', text)).toBe(expected);
  });

  it('refuses anything else with the flag named', () => {
    expect(() => parseMilliseconds('--duration', '1h')).toThrow('--duration must be a duration');
  });
});
