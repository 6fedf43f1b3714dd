import { describe, expect, it } from 'vitest';
import { advanceCanary, advanceReplacement, canaryReplicasFor, effectiveReadyTimeout, gateOf, isCanaryFinished, type CanaryTick, type CanaryTickInput } from '../../shared/domain/rollout/canary';
import type { CanaryState, CanaryStep } from '../../shared/domain/rollout/types';
import { NOW } from './fixtures';
import type { AnalysisOutcome, AnalysisVerdict } from '../../shared/domain/rollout/analysis';

const ENTERED = '2026-08-31T18:00:00Z'; // 30 minutes before NOW
const manual: CanaryStep[] = [{ capacity: '25%', traffic: 10, pause: {} }, { capacity: '100%', traffic: 100 }];
const timed: CanaryStep[] = [{ capacity: '25%', traffic: 10, pause: { duration: '1h' } }, { capacity: '100%', traffic: 100 }];
const analysis: CanaryStep[] = [{ capacity: '25%', traffic: 10, analysis: { interval: '1m', failureLimit: 2, metrics: [] } }, { capacity: '100%', traffic: 100 }];
const sample = (outcome: AnalysisOutcome): AnalysisVerdict => ({ outcome, at: '2026-08-31T18:29:00Z' });
const state = (extra: Partial<CanaryState> = {}): CanaryState => ({
  canaryRevisionHash: 'bbbbbbbb',
  stableRevisionHash: 'aaaaaaaa',
  currentStep: 0,
  stepEnteredTime: ENTERED,
  observedTrafficWeight: 0,
  ...extra,
});
/** A canary past its final gate, as upstream marks it: one past the last step, all traffic, no stable hash. */
const finished = (extra: Partial<CanaryState> = {}): CanaryState => {
  const { stableRevisionHash: _cleared, ...rest } = state({ currentStep: manual.length, observedTrafficWeight: 100, ...extra });
  return rest;
};
const FINISHED: Partial<CanaryState> = { currentStep: 2, observedTrafficWeight: 100, stableRevisionHash: undefined };
const tick = (extra: Partial<CanaryTickInput>) =>
  advanceCanary({
    steps: manual,
    state: state(),
    desiredReplicas: 4,
    readyCanaryReplicas: 0,
    readyStableReplicas: 4,
    now: NOW,
    ...extra,
  });

describe('Function: canaryReplicasFor', () => {
  it.each([
    ['25%', 4, 1],
    ['25%', 3, 1],
    ['30%', 4, 2],
    ['1%', 10, 1],
    ['0%', 10, 0],
    ['100%', 4, 4],
    [2, 4, 2],
    ['9', 4, 4],
    [undefined, 4, 0],
    ['half', 4, 0],
    [-1, 4, 0],
  ])('capacity %j of %i desired -> %i', (capacity, desired, expected) => {
    expect(canaryReplicasFor(capacity, desired)).toBe(expected);
  });
});

describe('Function: gateOf', () => {
  it.each<[CanaryStep, string]>([
    [{ capacity: 1, traffic: 1 }, 'Immediate'],
    [{ capacity: 1, traffic: 1, pause: {} }, 'Manual'],
    [{ capacity: 1, traffic: 1, pause: { duration: '5m' } }, 'Timed'],
    [{ capacity: 1, traffic: 1, pause: {}, analysis: { interval: '1m', failureLimit: 1, metrics: [] } }, 'Analysis'],
  ])('%j -> %s', (step, gate) => {
    expect(gateOf(step)).toBe(gate);
  });
});

describe('Function: advanceCanary', () => {
  type Expected = Pick<CanaryTick, 'phase' | 'canaryReplicas' | 'stableReplicas'> & Partial<CanaryTick>;
  it.each<[string, Partial<CanaryTickInput>, Expected, Partial<CanaryState>]>([
    ['capacity coming up', {}, { phase: 'Pending', canaryReplicas: 1, stableReplicas: 4 }, { currentStep: 0, observedTrafficWeight: 0 }],
    ['manual gate waits', { readyCanaryReplicas: 1 }, { phase: 'Paused', hold: 'ObservedPaused', canaryReplicas: 1, stableReplicas: 3, gate: 'Manual' }, { observedTrafficWeight: 10 }],
    ['promote passes the manual gate', { readyCanaryReplicas: 1, promoteAnnotation: 'bbbbbbbb' }, { phase: 'Canarying', canaryReplicas: 4, stableReplicas: 3, removePromoteAnnotation: true }, { currentStep: 1, promotedThrough: 'bbbbbbbb', stepEnteredTime: '2026-08-31T18:30:00Z', analysisFailedChecks: 0 }],
    ['promote for another revision is dropped', { readyCanaryReplicas: 1, promoteAnnotation: 'cccccccc' }, { phase: 'Paused', hold: 'ObservedPaused', canaryReplicas: 1, stableReplicas: 3, removePromoteAnnotation: true }, { currentStep: 0, promotedThrough: undefined }],
    ['timed gate waits', { steps: timed, readyCanaryReplicas: 1 }, { phase: 'Paused', hold: 'ObservedPaused', canaryReplicas: 1, stableReplicas: 3, requeueAfterSeconds: 1800, gate: 'Timed' }, { currentStep: 0 }],
    ['timed gate elapses', { steps: timed, readyCanaryReplicas: 1, now: new Date('2026-08-31T19:00:00Z') }, { phase: 'Canarying', canaryReplicas: 4, stableReplicas: 3, gate: 'Immediate' }, { currentStep: 1, stepEnteredTime: '2026-08-31T19:00:00Z' }],
    ['analysis with no sample yet holds', { steps: analysis, readyCanaryReplicas: 1 }, { phase: 'Paused', hold: 'ObservedPaused', canaryReplicas: 1, stableReplicas: 3, gate: 'Analysis', requeueAfterSeconds: 60 }, { currentStep: 0 }],
    ['analysis pass advances', { steps: analysis, readyCanaryReplicas: 1, analysisSample: sample('Successful') }, { phase: 'Canarying', canaryReplicas: 4, stableReplicas: 3 }, { currentStep: 1 }],
    ['analysis failing under its limit waits a sampling interval', { steps: analysis, readyCanaryReplicas: 1, analysisSample: sample('Failed') }, { phase: 'Paused', hold: 'ObservedPaused', canaryReplicas: 1, stableReplicas: 3, requeueAfterSeconds: 60 }, { analysisFailedChecks: 1 }],
    ['analysis failing at its limit rolls back', { steps: analysis, state: state({ analysisFailedChecks: 1 }), readyCanaryReplicas: 1, analysisSample: sample('Failed') }, { phase: 'RolledBack', canaryReplicas: 0, stableReplicas: 4 }, { rolledBackRevisionHash: 'bbbbbbbb' }],
    ['immediate last step finishes', { state: state({ currentStep: 1 }), readyCanaryReplicas: 4, readyStableReplicas: 0 }, { phase: 'Stable', canaryReplicas: 4, stableReplicas: 0 }, FINISHED],
    ['finished stays finished while stable drains', { state: finished(), readyCanaryReplicas: 4, readyStableReplicas: 2 }, { phase: 'Promoting', canaryReplicas: 4, stableReplicas: 0 }, FINISHED],
    ['a promote after the final gate does not move a finished canary', { state: finished(), readyCanaryReplicas: 4, readyStableReplicas: 0, promoteAnnotation: 'bbbbbbbb' }, { phase: 'Stable', canaryReplicas: 4, stableReplicas: 0 }, FINISHED],
    ['the last step at 100% traffic is not finished before its gate passes', { state: state({ currentStep: 1, observedTrafficWeight: 100 }), steps: [manual[0]!, { capacity: '100%', traffic: 100, pause: {} }], readyCanaryReplicas: 4, readyStableReplicas: 0 }, { phase: 'Paused', hold: 'ObservedPaused', canaryReplicas: 4, stableReplicas: 0, gate: 'Manual' }, { currentStep: 1, stableRevisionHash: 'aaaaaaaa' }],
    ['ready timeout fails the canary', { readyTimeout: '10m' }, { phase: 'Failed', canaryReplicas: 1, stableReplicas: 4 }, {}],
    ['ready timeout not yet reached', { readyTimeout: '31m' }, { phase: 'Pending', canaryReplicas: 1, stableReplicas: 4 }, {}],
    ['rollback annotation rolls back', { rollbackAnnotation: 'bbbbbbbb', readyStableReplicas: 3 }, { phase: 'RollingBack', canaryReplicas: 0, stableReplicas: 4 }, {}],
    ['pre-step hold while capacity comes up', { state: state({ preStepHold: true }) }, { phase: 'Pending', hold: 'CanaryPreStep', canaryReplicas: 1, stableReplicas: 4 }, { observedTrafficWeight: 0, preStepHold: true }],
    ['pre-step hold at capacity', { state: state({ preStepHold: true }), readyCanaryReplicas: 1 }, { phase: 'Paused', hold: 'CanaryPreStep', canaryReplicas: 1, stableReplicas: 3 }, { observedTrafficWeight: 0, preStepHold: true }],
    ['promote releases the hold, then the manual gate applies', { state: state({ preStepHold: true }), readyCanaryReplicas: 1, promoteAnnotation: 'bbbbbbbb' }, { phase: 'Paused', hold: 'ObservedPaused', canaryReplicas: 1, stableReplicas: 3, removePromoteAnnotation: true }, { preStepHold: false, observedTrafficWeight: 10, currentStep: 0, stepEnteredTime: '2026-08-31T18:30:00Z' }],
    ['an applied promote is inert until removed', { state: state({ promotedThrough: 'bbbbbbbb' }), readyCanaryReplicas: 1, promoteAnnotation: 'bbbbbbbb' }, { phase: 'Paused', hold: 'ObservedPaused', canaryReplicas: 1, stableReplicas: 3, removePromoteAnnotation: true }, { currentStep: 0 }],
    ['a removed promote re-arms the gate', { state: state({ promotedThrough: 'bbbbbbbb' }), readyCanaryReplicas: 1 }, { phase: 'Paused', hold: 'ObservedPaused', canaryReplicas: 1, stableReplicas: 3 }, { promotedThrough: undefined }],
    ['a step advance releases stable only as far as canary capacity is ready', { desiredReplicas: 10, readyCanaryReplicas: 3, readyStableReplicas: 10, promoteAnnotation: 'bbbbbbbb' }, { phase: 'Canarying', canaryReplicas: 10, stableReplicas: 7, removePromoteAnnotation: true }, { currentStep: 1 }],
    ['finishing with stable still up is Promoting', { state: finished(), readyCanaryReplicas: 3, readyStableReplicas: 4 }, { phase: 'Promoting', canaryReplicas: 4, stableReplicas: 4 }, FINISHED],
    ['no steps finishes at once', { steps: [], readyCanaryReplicas: 0 }, { phase: 'Promoting', canaryReplicas: 4, stableReplicas: 4 }, { currentStep: 0, observedTrafficWeight: 100, stableRevisionHash: undefined }],
    ['a rolled-back revision stays rolled back', { state: state({ rolledBackRevisionHash: 'bbbbbbbb' }), readyCanaryReplicas: 1 }, { phase: 'RolledBack', canaryReplicas: 0, stableReplicas: 4 }, { rolledBackRevisionHash: 'bbbbbbbb' }],
    ['an empty rollback annotation is no rollback', { rollbackAnnotation: '', readyCanaryReplicas: 1 }, { phase: 'Paused', hold: 'ObservedPaused', canaryReplicas: 1, stableReplicas: 3 }, {}],
    ['a rollback before stable is ready is RollingBack and rejects nothing yet', { rollbackAnnotation: 'x', readyStableReplicas: 3 }, { phase: 'RollingBack', canaryReplicas: 0, stableReplicas: 4 }, { rolledBackRevisionHash: undefined }],
    ['a first reconcile stamps the step entry time', { state: state({ stepEnteredTime: undefined }) }, { phase: 'Pending', canaryReplicas: 1, stableReplicas: 4 }, { stepEnteredTime: '2026-08-31T18:30:00Z' }],
    ['a timed gate counts from the step entry', { steps: timed, readyCanaryReplicas: 1, now: new Date('2026-08-31T18:59:59Z') }, { phase: 'Paused', hold: 'ObservedPaused', canaryReplicas: 1, stableReplicas: 3, requeueAfterSeconds: 1 }, { currentStep: 0 }],
    ['analysis that passes still bakes for its pause', { steps: [{ capacity: '25%', traffic: 10, pause: { duration: '1h' }, analysis: { interval: '1m', failureLimit: 1, metrics: [] } }, { capacity: '100%', traffic: 100 }], readyCanaryReplicas: 1, analysisSample: sample('Successful') }, { phase: 'Paused', hold: 'ObservedPaused', canaryReplicas: 1, stableReplicas: 3, requeueAfterSeconds: 60 }, { currentStep: 0 }],
    ['an inconclusive sample holds by default', { steps: analysis, readyCanaryReplicas: 1, analysisSample: sample('Inconclusive') }, { phase: 'Paused', hold: 'ObservedPaused', analysis: 'Inconclusive', canaryReplicas: 1, stableReplicas: 3, requeueAfterSeconds: 60 }, { analysisFailedChecks: undefined }],
    ['a step advance resets failed analysis checks', { steps: analysis, state: state({ analysisFailedChecks: 1 }), readyCanaryReplicas: 1, analysisSample: sample('Successful') }, { phase: 'Canarying', canaryReplicas: 4, stableReplicas: 3 }, { analysisFailedChecks: 0 }],
    ['an inconclusive sample under Rollback rolls back', { steps: [{ capacity: '25%', traffic: 10, analysis: { interval: '1m', failureLimit: 2, onInconclusive: 'Rollback', metrics: [] } }, { capacity: '100%', traffic: 100 }], readyCanaryReplicas: 1, analysisSample: sample('Inconclusive') }, { phase: 'RolledBack', canaryReplicas: 0, stableReplicas: 4 }, { rolledBackRevisionHash: 'bbbbbbbb', lastEvaluationTime: '2026-08-31T18:29:00Z' }],
    ['an inconclusive sample past the stall timeout under Hold fails the canary', { steps: analysis, readyTimeout: '10m', readyCanaryReplicas: 1, analysisSample: sample('Inconclusive') }, { phase: 'Failed', canaryReplicas: 1, stableReplicas: 3 }, { currentStep: 0, rolledBackRevisionHash: undefined }],
    ['an inconclusive sample past the stall timeout under RollbackOnStall rolls back', { steps: [{ capacity: '25%', traffic: 10, analysis: { interval: '1m', failureLimit: 2, onInconclusive: 'RollbackOnStall', metrics: [] } }, { capacity: '100%', traffic: 100 }], readyTimeout: '10m', readyCanaryReplicas: 1, analysisSample: sample('Inconclusive') }, { phase: 'RolledBack', canaryReplicas: 0, stableReplicas: 4 }, { rolledBackRevisionHash: 'bbbbbbbb' }],
    ['a promote passes an analysis gate', { steps: analysis, readyCanaryReplicas: 1, promoteAnnotation: 'bbbbbbbb' }, { phase: 'Canarying', canaryReplicas: 4, stableReplicas: 3, removePromoteAnnotation: true }, { currentStep: 1, promotedThrough: 'bbbbbbbb' }],
    ['a step advance clears the analysis record', { steps: analysis, state: state({ lastEvaluationTime: '2026-08-31T18:20:00Z', lastConclusiveEvaluationTime: '2026-08-31T18:20:00Z', metricResults: [{ name: 'm', passed: true }] }), readyCanaryReplicas: 1, analysisSample: sample('Successful') }, { phase: 'Canarying', canaryReplicas: 4, stableReplicas: 3 }, { currentStep: 1, lastEvaluationTime: undefined, lastConclusiveEvaluationTime: undefined, metricResults: undefined }],
    ['an analysis rollback is recorded at once, so it holds while stable comes back', { steps: analysis, state: state({ analysisFailedChecks: 1 }), readyCanaryReplicas: 1, readyStableReplicas: 3, analysisSample: sample('Failed') }, { phase: 'RollingBack', canaryReplicas: 0, stableReplicas: 4 }, { rolledBackRevisionHash: 'bbbbbbbb' }],
    ['a canary without revision hashes is neither rolled back nor promoted', { state: state({ canaryRevisionHash: undefined }), readyCanaryReplicas: 1 }, { phase: 'Paused', hold: 'ObservedPaused', canaryReplicas: 1, stableReplicas: 3 }, { currentStep: 0, rolledBackRevisionHash: undefined }],
    ['a ready timeout reached exactly is not yet a failure', { readyTimeout: '30m' }, { phase: 'Pending', canaryReplicas: 1, stableReplicas: 4 }, {}],
    ['a step index past the end is clamped', { state: state({ currentStep: 7 }), readyCanaryReplicas: 1 }, { phase: 'Pending', canaryReplicas: 4, stableReplicas: 3 }, { currentStep: 1, stableRevisionHash: 'aaaaaaaa' }],
  ])('%s', (_name, input, expected, expectedState) => {
    const result = tick(input);
    expect(result).toMatchObject(expected);
    // Fields a row leaves out are absent (or false), not merely unchecked.
    expect(result.hold).toBe(expected.hold);
    expect(result.analysis).toBe(expected.analysis);
    expect(result.requeueAfterSeconds).toBe(expected.requeueAfterSeconds);
    expect(result.removePromoteAnnotation).toBe(expected.removePromoteAnnotation ?? false);
    for (const [key, value] of Object.entries(expectedState)) {
      expect(result.state[key as keyof CanaryState], key).toEqual(value);
    }
  });

  it('does not mutate the state it was given', () => {
    const given = state();
    advanceCanary({ steps: manual, state: given, desiredReplicas: 4, readyCanaryReplicas: 1, readyStableReplicas: 4, now: NOW, promoteAnnotation: 'bbbbbbbb' });
    expect(given).toEqual(state());
  });
});

describe('Function: isCanaryFinished', () => {
  it.each([
    [0, 2, false],
    [1, 2, false],
    [2, 2, true],
    [0, 0, true],
    [7, 2, false],
  ])('step %i of %i steps -> %s', (currentStep, stepCount, expected) => {
    expect(isCanaryFinished({ currentStep }, stepCount)).toBe(expected);
  });
});

describe('Function: advanceReplacement', () => {
  it.each([
    [0, { newReplicas: 3, oldReplicas: 3, phase: 'Pending', complete: false }],
    [2, { newReplicas: 3, oldReplicas: 3, phase: 'Pending', complete: false }],
    [3, { newReplicas: 3, oldReplicas: 0, phase: 'Stable', complete: true }],
  ])('%i of 3 new replicas ready', (ready, expected) => {
    expect(advanceReplacement({ desiredReplicas: 3, readyNewReplicas: ready })).toEqual(expected);
  });
});

describe('Function: effectiveReadyTimeout', () => {
  it.each<[string, string | undefined, string | undefined, string | undefined]>([
    ['the annotation wins over the group', '30m', '10m', '30m'],
    ['the group alone', undefined, '10m', '10m'],
    ['neither', undefined, undefined, undefined],
    ['the annotation alone', '1h30m', undefined, '1h30m'],
    ['zero is ignored', '0s', '10m', '10m'],
    ['a negative duration is ignored', '-5m', '10m', '10m'],
    ['a value that is no duration is ignored', 'soon', '10m', '10m'],
    ['an empty value is ignored', '', undefined, undefined],
    ['surrounding space is not a duration, as Go reads it', ' 30m', '10m', '10m'],
  ])('%s', (_name, annotation, group, expected) => {
    expect(effectiveReadyTimeout(annotation, group)).toBe(expected);
  });
});
