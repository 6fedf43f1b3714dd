/** The time floor of a sweep: its requests at the rate limit after a full burst, and never less than its round trips one after another. */
import { describe, expect, it } from 'vitest';
import { floorSecondsOf } from '../../scripts/simulate/sweeps';

describe('Method: floorSecondsOf', () => {
  it.each([
    // requests, round trips, qps, burst, latency ms → seconds
    { requests: 102, roundTrips: 3, qps: 20, burst: 30, latencyMs: 5, seconds: 3.6 },
    { requests: 10_002, roundTrips: 3, qps: 20, burst: 30, latencyMs: 5, seconds: 498.6 },
    { requests: 22, roundTrips: 3, qps: 20, burst: 30, latencyMs: 5, seconds: 0.015 },
    { requests: 32, roundTrips: 2, qps: 20, burst: 30, latencyMs: 5, seconds: 0.1 },
    { requests: 32, roundTrips: 2, qps: 20, burst: 30, latencyMs: 100, seconds: 0.2 },
    { requests: 1_000, roundTrips: 3, qps: Infinity, burst: 0, latencyMs: 5, seconds: 0.015 },
  ])('$requests requests, $roundTrips round trips at QPS $qps burst $burst, $latencyMs ms → $seconds s', ({ requests, roundTrips, qps, burst, latencyMs, seconds }) => {
    expect(floorSecondsOf(requests, roundTrips, { qps, burst, latencyMs })).toBeCloseTo(seconds, 6);
  });
});
