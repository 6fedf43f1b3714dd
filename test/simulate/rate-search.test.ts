/**
 * The rate search of `simulate --find-rate`: doubling while windows pass, halving while none
 * did, then bisecting the bracket to its precision, within a bounded number of windows.
 */
import { describe, expect, it } from 'vitest';
import { bracketOf, nextRate } from '../../scripts/simulate/rate-search';
import type { RateSearchLimits, RateTrial } from '../../scripts/simulate/rate-search';

const limits: RateSearchLimits = { start: 10, max: 400, min: 1, maxTrials: 8, precision: 0.1 };
const pass = (rate: number): RateTrial => ({ rate, passed: true });
const fail = (rate: number): RateTrial => ({ rate, passed: false });

describe('Function: nextRate', () => {
  it.each<[string, RateTrial[], number | undefined]>([
    ['starts at the start rate', [], 10],
    ['doubles while every window passed', [pass(10)], 20],
    ['keeps doubling', [pass(10), pass(20), pass(40)], 80],
    ['stops at the maximum', [pass(10), pass(20), pass(40), pass(80), pass(160), pass(320)], 400],
    ['ends when the maximum passed', [pass(100), pass(200), pass(400)], undefined],
    ['bisects once a window failed', [pass(10), pass(20), fail(40)], 30],
    ['bisects the bracket left', [pass(10), pass(20), fail(40), fail(30)], 25],
    ['bisects the bracket right', [pass(10), pass(20), fail(40), pass(30)], 35],
    ['bisects to whole changes per second', [pass(10), pass(20), fail(40), pass(30), fail(35)], 33],
    ['ends once the bracket is within the precision', [pass(10), pass(20), fail(40), pass(30), fail(35), pass(33)], undefined],
    ['ends when the bracket is within 10 %', [pass(30), fail(33)], undefined],
    ['halves while no window passed', [fail(10)], 5],
    ['keeps halving, in tenths below 10', [fail(10), fail(5)], 2.5],
    ['ends at the minimum', [fail(2), fail(1)], undefined],
    ['ends after the most windows', [pass(10), pass(20), pass(40), pass(80), pass(160), fail(320), pass(240), fail(280)], undefined],
    ['ignores a pass above a failure (noise): the bracket is below the failure', [pass(10), fail(20), pass(40)], 15],
  ])('%s', (_, trials, expected) => {
    expect(nextRate(trials, limits)).toBe(expected);
  });

  it('never offers the same rate twice', () => {
    // Prepare: a bracket that rounds onto a rate already tried.
    const trials = [pass(10), fail(11)];

    // Act / Assess
    expect(nextRate(trials, { ...limits, precision: 0.01 })).toBeUndefined();
  });
});

describe('Function: bracketOf', () => {
  it.each<[RateTrial[], { passed: number | undefined; failed: number | undefined }]>([
    [[], { passed: undefined, failed: undefined }],
    [[pass(10), pass(20)], { passed: 20, failed: undefined }],
    [[pass(10), fail(40), pass(30), fail(35)], { passed: 30, failed: 35 }],
    [[fail(10), pass(20)], { passed: undefined, failed: 10 }],
  ])('%j → %j', (trials, expected) => {
    expect(bracketOf(trials)).toEqual(expected);
  });
});
