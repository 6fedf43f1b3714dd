import { describe, expect, it } from 'vitest';
import {
  decideAnalysisStep,
  findAnalysisProblem,
  findUnboundProvider,
  isSampleDue,
  NO_METRICS,
  unboundSample,
  type AnalysisDecision,
  type AnalysisStepInput,
  type AnalysisVerdict,
} from '../../shared/domain/rollout/analysis';
import { resolveLivePlan } from '../../shared/domain/rollout/plan';
import type { CanaryState, GroupCanary, OnInconclusive, RolloutAnalysis } from '../../shared/domain/rollout/types';

const metric = { name: 'err', query: 'rate(x[1m])', operator: 'LTE' as const, threshold: '0.05' };
const gate = (extra: Partial<RolloutAnalysis> = {}): RolloutAnalysis => ({ interval: '1m', failureLimit: 2, metrics: [metric], ...extra });
const canary = (analysis: Partial<RolloutAnalysis>, extra: Partial<GroupCanary> = {}): GroupCanary => ({
  steps: [{ capacity: '25%', traffic: 10, analysis: gate(analysis) }, { capacity: '100%', traffic: 100 }],
  ...extra,
});

describe('Function: findAnalysisProblem', () => {
  it.each<[string, GroupCanary, string | undefined]>([
    ['a well-formed gate', canary({}), undefined],
    ['every onInconclusive upstream accepts', canary({ onInconclusive: 'RollbackOnStall' }), undefined],
    ['a providerRef alone', canary({}, { prometheus: { providerRef: { name: 'mimir' } } }), undefined],
    ['a serverAddress alone', canary({}, { prometheus: { serverAddress: 'http://prom:9090' } }), undefined],
    ['exponent and signed thresholds', canary({ metrics: [{ ...metric, threshold: '-1.5e3' }] }), undefined],
    ['both sources', canary({}, { prometheus: { providerRef: { name: 'p' }, serverAddress: 'http://x' } }), 'canary.prometheus: at most one of providerRef and serverAddress may be set'],
    ['an empty provider name', canary({}, { prometheus: { providerRef: { name: '' } } }), 'canary.prometheus.providerRef.name must not be empty'],
    ['a zero interval', canary({ interval: '0s' }), 'canary.steps[0].analysis: interval must be > 0'],
    ['failureLimit 0', canary({ failureLimit: 0 }), 'canary.steps[0].analysis: failureLimit must be >= 1'],
    ['an unknown onInconclusive', canary({ onInconclusive: 'Pause' as OnInconclusive }), 'canary.steps[0].analysis: onInconclusive "Pause" must be one of Hold, Rollback, RollbackOnStall'],
    ['no metrics', canary({ metrics: [] }), 'canary.steps[0].analysis: at least one metric is required'],
    ['a nameless metric', canary({ metrics: [{ ...metric, name: '' }] }), 'canary.steps[0].analysis.metrics[0].name must not be empty'],
    ['a duplicate metric', canary({ metrics: [metric, metric] }), 'canary.steps[0].analysis.metrics[1]: duplicate metric name "err"'],
    ['a blank query', canary({ metrics: [{ ...metric, query: ' ' }] }), 'canary.steps[0].analysis.metrics[0] ("err"): query must not be empty'],
    ['a word threshold', canary({ metrics: [{ ...metric, threshold: 'five' }] }), 'canary.steps[0].analysis.metrics[0] ("err"): threshold "five" must be numeric'],
    ['a symbol operator', canary({ metrics: [{ ...metric, operator: '<' as 'LT' }] }), 'canary.steps[0].analysis.metrics[0] ("err"): operator "<" must be one of LT/LTE/GT/GTE'],
  ])('%s', (_name, body, problem) => {
    expect(findAnalysisProblem(body)).toBe(problem);
  });
});

describe('Function: findUnboundProvider', () => {
  const bound = { boundProviders: new Set(['mimir']), executor: false };
  it.each<[string, GroupCanary, typeof NO_METRICS, string | undefined]>([
    ['no analysis step needs nothing', { steps: [{ capacity: '100%', traffic: 100, pause: {} }] }, NO_METRICS, undefined],
    ['a providerRef without analysis steps is still checked', { steps: [], prometheus: { providerRef: { name: 'thanos' } } }, NO_METRICS, 'groups[2]: metric provider "thanos" is not bound in this cluster\'s metricProviders configuration'],
    ['a bound providerRef', canary({}, { prometheus: { providerRef: { name: 'mimir' } } }), bound, undefined],
    ['an analysis step with no evaluator', canary({}), NO_METRICS, 'groups[2]: canary.steps[0] is an analysis step, and no metrics provider is bound in this cluster to evaluate it'],
    ['an analysis step with an evaluator', canary({}), { boundProviders: new Set(), executor: true }, undefined],
  ])('%s', (_name, body, binding, message) => {
    expect(findUnboundProvider(body, binding, 2)).toBe(message);
  });

  it('makes the live plan fail as ProviderUnbound, reported per group, and render once bound', () => {
    const groups = [{ components: ['decoder' as const] }, { components: ['engine' as const], canary: canary({}) }];
    const parked = resolveLivePlan(groups, new Map());
    expect(parked).toMatchObject({ ok: false, reason: 'ProviderUnbound' });
    expect(parked.groups.map((group) => group.ok)).toEqual([true, false]);
    expect(resolveLivePlan(groups, new Map(), { boundProviders: new Set(), executor: true }).ok).toBe(true);
  });
});

describe('Function: decideAnalysisStep', () => {
  const ENTERED = '2026-08-31T18:00:00Z';
  const at = (minute: number) => `2026-08-31T18:${String(minute).padStart(2, '0')}:00Z`;
  const sample = (outcome: AnalysisVerdict['outcome'], minute: number): AnalysisVerdict => ({ outcome, at: at(minute) });
  const state = (extra: Partial<CanaryState> = {}): CanaryState => ({ currentStep: 0, observedTrafficWeight: 10, stepEnteredTime: ENTERED, ...extra });
  const decide = (input: Partial<AnalysisStepInput> & { minute: number }) => {
    const analysis = input.analysis ?? gate();
    return decideAnalysisStep({
      analysis,
      step: input.step ?? { capacity: '25%', traffic: 10, analysis },
      state: input.state ?? state(),
      ...(input.sample ? { sample: input.sample } : {}),
      ...(input.stallTimeout ? { stallTimeout: input.stallTimeout } : {}),
      now: new Date(at(input.minute)),
    });
  };

  type Row = [string, Partial<AnalysisStepInput> & { minute: number }, AnalysisDecision, Partial<CanaryState>?];
  it.each<Row>([
    ['no sample yet holds', { minute: 5 }, 'hold'],
    ['warm-up holds even with a sample', { minute: 1, analysis: gate({ initialDelay: '2m' }), sample: sample('Failed', 1) }, 'hold', { analysisFailedChecks: undefined }],
    ['a success with no bake advances', { minute: 5, sample: sample('Successful', 5) }, 'advance', { lastEvaluationTime: at(5), lastConclusiveEvaluationTime: at(5) }],
    ['a success during the bake holds', { minute: 5, step: { capacity: '25%', traffic: 10, pause: { duration: '10m' }, analysis: gate() }, sample: sample('Successful', 5) }, 'hold', { lastConclusiveEvaluationTime: at(5) }],
    ['a failure under the limit holds and counts', { minute: 5, sample: sample('Failed', 5) }, 'hold', { analysisFailedChecks: 1, lastConclusiveEvaluationTime: at(5) }],
    ['a failure at the limit rolls back', { minute: 5, state: state({ analysisFailedChecks: 1, lastEvaluationTime: at(3) }), sample: sample('Failed', 5) }, 'rollback', { analysisFailedChecks: 2 }],
    ['a sample inside the interval is not consumed', { minute: 5, state: state({ lastEvaluationTime: at(5) }), sample: sample('Failed', 5) }, 'hold', { analysisFailedChecks: undefined }],
    ['an older sample is not consumed twice', { minute: 9, state: state({ lastEvaluationTime: at(5) }), sample: sample('Failed', 5) }, 'hold', { analysisFailedChecks: undefined }],
    ['inconclusive under Hold before the stall holds', { minute: 5, stallTimeout: '10m', sample: sample('Inconclusive', 5) }, 'hold', { lastEvaluationTime: at(5), lastConclusiveEvaluationTime: undefined }],
    ['inconclusive under Hold past the stall fails', { minute: 12, stallTimeout: '10m', sample: sample('Inconclusive', 12) }, 'failed'],
    ['inconclusive with no stall timeout never fails', { minute: 59, sample: sample('Inconclusive', 59) }, 'hold'],
    ['inconclusive under Rollback rolls back at once', { minute: 1, analysis: gate({ onInconclusive: 'Rollback' }), sample: sample('Inconclusive', 1) }, 'rollback'],
    ['inconclusive under RollbackOnStall before the stall holds', { minute: 5, stallTimeout: '10m', analysis: gate({ onInconclusive: 'RollbackOnStall' }), sample: sample('Inconclusive', 5) }, 'hold'],
    ['inconclusive under RollbackOnStall past the stall rolls back', { minute: 12, stallTimeout: '10m', analysis: gate({ onInconclusive: 'RollbackOnStall' }), sample: sample('Inconclusive', 12) }, 'rollback'],
    ['the stall counts from the last conclusive sample', { minute: 12, stallTimeout: '10m', state: state({ lastEvaluationTime: at(8), lastConclusiveEvaluationTime: at(8) }), sample: sample('Inconclusive', 12) }, 'hold'],
    ['a stalled gate stays Failed between samples', { minute: 12, stallTimeout: '10m', state: state({ lastEvaluationTime: at(12) }) }, 'failed'],
    ['a conclusive sample after a stall clears it', { minute: 13, stallTimeout: '10m', state: state({ lastEvaluationTime: at(12) }), sample: sample('Successful', 13) }, 'advance'],
  ])('%s', (_name, input, decision, expectedState) => {
    const given = input.state ?? state();
    expect(decide({ ...input, state: given }).decision).toBe(decision);
    for (const [key, value] of Object.entries(expectedState ?? {})) expect(given[key as keyof CanaryState], key).toEqual(value);
  });

  it('records metric results and drops them when a sample carries none', () => {
    const given = state();
    const metrics = [{ name: 'err', value: '0.2', threshold: '0.05', operator: 'LTE' as const, passed: false, time: at(5) }];
    decide({ minute: 5, state: given, sample: { outcome: 'Failed', at: at(5), metrics } });
    expect(given.metricResults).toEqual(metrics);
    decide({ minute: 7, state: given, sample: sample('Inconclusive', 7) });
    expect(given.metricResults).toBeUndefined();
  });

  it('asks to be woken at the end of the sampling interval', () => {
    expect(decide({ minute: 6, analysis: gate({ interval: '5m' }), state: state({ lastEvaluationTime: at(4) }) })).toEqual({ decision: 'hold', requeueAfterSeconds: 180 });
    // Due but no sample ready yet: look again an interval later.
    expect(decide({ minute: 9, analysis: gate({ interval: '5m' }), state: state({ lastEvaluationTime: at(4) }) })).toEqual({ decision: 'hold', requeueAfterSeconds: 300 });
  });
});

describe('Function: unboundSample', () => {
  it('is inconclusive and says why for every metric', () => {
    const verdict = unboundSample(gate({ metrics: [metric, { ...metric, name: 'p99' }] }), new Date('2026-08-31T18:30:00Z'));
    expect(verdict.outcome).toBe('Inconclusive');
    expect(verdict.metrics?.map((m) => [m.name, m.passed, m.message])).toEqual([
      ['err', false, 'no metrics provider is bound in this cluster'],
      ['p99', false, 'no metrics provider is bound in this cluster'],
    ]);
  });
});

describe('Function: isSampleDue', () => {
  const entered = '2026-12-01T20:00:00Z';
  const at = (seconds: number) => new Date(Date.parse(entered) + seconds * 1000);
  it.each([
    ['the first sample of a step without warm-up', gate(), {}, 0, true],
    ['inside the warm-up', gate({ initialDelay: '2m' }), { stepEnteredTime: entered }, 119, false],
    ['at the warm-up end', gate({ initialDelay: '2m' }), { stepEnteredTime: entered }, 120, true],
    ['a warm-up and no step entry yet', gate({ initialDelay: '2m' }), {}, 600, false],
    ['inside the interval after a sample', gate(), { stepEnteredTime: entered, lastEvaluationTime: '2026-12-01T20:01:00Z' }, 119, false],
    ['one interval after a sample', gate(), { stepEnteredTime: entered, lastEvaluationTime: '2026-12-01T20:01:00Z' }, 120, true],
    ['a sub-second interval', gate({ interval: '500ms' }), { lastEvaluationTime: '2026-12-01T20:00:00Z' }, 1, true],
  ] as const)('%s: %s', (_name, analysis, state, seconds, due) => {
    expect(isSampleDue(analysis, state, at(seconds))).toBe(due);
  });
});
