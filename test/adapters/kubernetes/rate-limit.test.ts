import { describe, expect, it } from 'vitest';
import { DEFAULT_RETRY_AFTER_MS, TokenBucket, parseRetryAfter } from '../../../shared/adapters/kubernetes/rate-limit';

/** A clock that moves only when told. */
function fakeClock(start = 1_000_000): { now: () => number; advance: (ms: number) => void } {
  let time = start;
  return { now: () => time, advance: (ms) => void (time += ms) };
}

describe('Class: TokenBucket', () => {
  it('lets sweeps take tokens only above the user reserve, and never ahead of waiting user requests', () => {
    // Prepare: burst 30 keeps 10 tokens for user work
    const clock = fakeClock();
    const bucket = new TokenBucket({ qps: 20, burst: 30 }, clock.now);

    // Act: sweeps drain the bucket down to the reserve; users then get the reserve at once
    const sweeps = Array.from({ length: 21 }, () => bucket.tryTakeForSweep());
    const users = Array.from({ length: 10 }, () => bucket.reserve());
    const queuedUser = bucket.reserve();
    const sweepBehindUser = bucket.tryTakeForSweep();
    clock.advance(50);
    const stillBehind = bucket.tryTakeForSweep();

    // Assess
    expect(sweeps.slice(0, 20)).toEqual(Array.from({ length: 20 }, () => 0));
    expect(sweeps[20]).toBe(50);
    expect(users).toEqual(Array.from({ length: 10 }, () => 0));
    expect(queuedUser).toBe(50);
    // The sweep waits until the user's debt is paid and the reserve refilled: 12 tokens at 20 QPS.
    expect(sweepBehindUser).toBe(600);
    expect(stillBehind).toBe(550);
  });


  it('lets a burst through at once, then spaces requests 1/qps apart', () => {
    // Prepare
    const clock = fakeClock();
    const bucket = new TokenBucket({ qps: 20, burst: 30 }, clock.now);

    // Act: 33 requests at the same instant
    const waits = Array.from({ length: 33 }, () => bucket.reserve());

    // Assess
    expect(waits.slice(0, 30)).toEqual(Array.from({ length: 30 }, () => 0));
    expect(waits.slice(30)).toEqual([50, 100, 150]);
  });

  it('refills at qps up to the burst, never beyond', () => {
    // Prepare
    const clock = fakeClock();
    const bucket = new TokenBucket({ qps: 10, burst: 3 }, clock.now);
    for (let index = 0; index < 3; index += 1) bucket.reserve();

    // Act: a long quiet spell refills to the burst only
    clock.advance(60_000);
    const waits = Array.from({ length: 4 }, () => bucket.reserve());

    // Assess
    expect(waits).toEqual([0, 0, 0, 100]);
  });

  it('queues each caller behind the ones that reserved before it, as time passes', () => {
    // Prepare
    const clock = fakeClock();
    const bucket = new TokenBucket({ qps: 10, burst: 1 }, clock.now);

    // Act
    const first = bucket.reserve();
    const second = bucket.reserve();
    clock.advance(50);
    const third = bucket.reserve();

    // Assess: the third waits for the second's slot (100 ms) and its own (another 100), less the 50 passed
    expect([first, second, third]).toEqual([0, 100, 150]);
  });

  it('gives a cancelled reservation back to the next caller', () => {
    const clock = fakeClock();
    const bucket = new TokenBucket({ qps: 1, burst: 1 }, clock.now);
    expect(bucket.reserve()).toBe(0);
    expect(bucket.reserve()).toBe(1_000);
    bucket.cancel();
    expect(bucket.reserve()).toBe(1_000);
  });

  it('holds every request back until a pause (a 429’s Retry-After) is over, tokens or not', () => {
    // Prepare
    const clock = fakeClock();
    const bucket = new TokenBucket({ qps: 20, burst: 30 }, clock.now);

    // Act
    bucket.pauseUntil(clock.now() + 2_000);
    const during = bucket.reserve();
    clock.advance(1_500);
    const later = bucket.reserve();
    bucket.pauseUntil(clock.now() - 10_000);
    clock.advance(600);
    const after = bucket.reserve();

    // Assess: an earlier pause never shortens a later one
    expect([during, later, after]).toEqual([2_000, 500, 0]);
  });

  it.each<[string, number, number]>([
    ['a qps of zero', 0, 1],
    ['a negative qps', -5, 1],
    ['an infinite qps', Infinity, 1],
    ['a burst of zero', 5, 0],
    ['a fractional burst', 5, 1.5],
  ])('refuses %s', (_name, qps, burst) => {
    expect(() => new TokenBucket({ qps, burst }, () => 0)).toThrow(RangeError);
  });
});

describe('Function: parseRetryAfter', () => {
  const NOW = Date.parse('2026-12-01T12:00:00Z');

  it.each<[string, string | string[] | undefined, unknown, number]>([
    ['seconds in the header', '3', undefined, 3_000],
    ['the header before the Status', '2', { retryAfterSeconds: 9 }, 2_000],
    ['an HTTP date in the header', 'Tue, 01 Dec 2026 12:00:05 GMT', undefined, 5_000],
    ['an HTTP date already past', 'Tue, 01 Dec 2026 11:59:00 GMT', undefined, 0],
    ['the first of repeated headers', ['4', '8'], undefined, 4_000],
    ['the Status when the header is absent', undefined, { retryAfterSeconds: 7 }, 7_000],
    ['the Status when the header is garbage', 'soon', { retryAfterSeconds: 1 }, 1_000],
    ['the default when neither says', undefined, {}, DEFAULT_RETRY_AFTER_MS],
    ['the default for a negative Status value', undefined, { retryAfterSeconds: -1 }, DEFAULT_RETRY_AFTER_MS],
  ])('reads %s', (_name, header, details, expected) => {
    expect(parseRetryAfter(header, details === undefined ? undefined : { details }, NOW)).toBe(expected);
  });
});
