import { describe, expect, it } from 'vitest';
import { judgeMetric, judgeSample, setupFailureSample, templateErrorReading, worstValue } from '../../shared/domain/analysis/judge';
import type { QueryReading } from '../../shared/domain/analysis/query-result';
import { QueryTemplateError } from '../../shared/domain/analysis/template';
import type { AnalysisMetric, AnalysisMetricResult, ComparisonOperator } from '../../shared/domain/rollout/types';

const at = '2026-12-01T20:00:00Z';
const metric = (operator: ComparisonOperator, threshold = '0.05'): AnalysisMetric => ({ name: 'err', query: 'q', operator, threshold });
const values = (...v: number[]): QueryReading => ({ kind: 'values', values: v });

describe('Function: judgeMetric', () => {
  it.each<[string, AnalysisMetric, QueryReading, Partial<AnalysisMetricResult>]>([
    ['LT passes below the threshold', metric('LT'), values(0.04), { value: '0.04', passed: true }],
    ['LT fails at the threshold', metric('LT'), values(0.05), { value: '0.05', passed: false }],
    ['LTE passes at the threshold', metric('LTE'), values(0.05), { value: '0.05', passed: true }],
    ['LTE fails above', metric('LTE'), values(0.051), { value: '0.051', passed: false }],
    ['GT passes above', metric('GT', '100'), values(101), { value: '101', passed: true }],
    ['GT fails at the threshold', metric('GT', '100'), values(100), { value: '100', passed: false }],
    ['GTE passes at the threshold', metric('GTE', '100'), values(100), { value: '100', passed: true }],
    ['GTE fails below', metric('GTE', '100'), values(99.5), { value: '99.5', passed: false }],
    ['LT judges the highest series: one bad pod fails', metric('LT'), values(0.01, 0.2, 0.03), { value: '0.2', passed: false }],
    ['LTE judges the highest series: all good passes', metric('LTE'), values(0.01, 0.04), { value: '0.04', passed: true }],
    ['GT judges the lowest series', metric('GT', '0.9'), values(0.99, 0.5, 0.95), { value: '0.5', passed: false }],
    ['GTE judges the lowest series', metric('GTE', '0.9'), values(0.99, 0.9), { value: '0.9', passed: true }],
    ['a value is written as Go writes it', metric('LT', '1e9'), values(1234567), { value: '1.23457e+06', passed: true }],
    ['an exponent threshold compares numerically', metric('LT', '5e-2'), values(0.04), { threshold: '5e-2', value: '0.04', passed: true }],
    ['no data is inconclusive with "no data"', metric('LT'), { kind: 'noData' }, { passed: false, message: 'no data' }],
    ['an empty value list is no data', metric('LT'), values(), { passed: false, message: 'no data' }],
    ['a query error is inconclusive with the error', metric('LT'), { kind: 'error', message: 'bad_data: parse error' }, { passed: false, message: 'bad_data: parse error' }],
    ['a non-numeric threshold is inconclusive', metric('LT', 'abc'), values(0.01), { passed: false, message: 'invalid threshold: abc' }],
  ])('%s', (_name, m, reading, want) => {
    const result = judgeMetric(m, reading, at);
    expect(result).toEqual({ name: 'err', threshold: m.threshold, operator: m.operator, time: at, ...want });
    if (want.message !== undefined) expect(result).not.toHaveProperty('value');
  });

  it('names a template error with upstream\'s prefix', () => {
    const reading = templateErrorReading(new QueryTemplateError('template: promql:1: unclosed action'));
    expect(judgeMetric(metric('LT'), reading, at)).toEqual({
      name: 'err',
      threshold: '0.05',
      operator: 'LT',
      passed: false,
      message: 'template error: template: promql:1: unclosed action',
      time: at,
    });
  });
});

describe('Function: worstValue', () => {
  it.each<[ComparisonOperator, number[], number]>([
    ['LT', [1, 3, 2], 3],
    ['LTE', [-1, -3], -1],
    ['GT', [1, 3, 2], 1],
    ['GTE', [5], 5],
  ])('%s of %j is %d', (operator, list, want) => {
    expect(worstValue(list, operator)).toBe(want);
  });
});

describe('Function: judgeSample', () => {
  const pass: AnalysisMetricResult = { name: 'a', value: '0.01', threshold: '0.05', operator: 'LT', passed: true, time: at };
  const fail: AnalysisMetricResult = { name: 'b', value: '0.5', threshold: '0.05', operator: 'LT', passed: false, time: at };
  const unknown: AnalysisMetricResult = { name: 'c', threshold: '0.05', operator: 'LT', passed: false, message: 'no data', time: at };

  it.each<[string, AnalysisMetricResult[], string]>([
    ['every metric passed', [pass, { ...pass, name: 'a2' }], 'Successful'],
    ['a breach wins over an inconclusive metric', [unknown, fail, pass], 'Failed'],
    ['one breach fails the sample', [pass, fail], 'Failed'],
    ['an inconclusive metric without a breach', [pass, unknown], 'Inconclusive'],
    ['only inconclusive metrics', [unknown], 'Inconclusive'],
  ])('%s → %s', (_name, results, outcome) => {
    const verdict = judgeSample(results, at);
    expect(verdict.outcome).toBe(outcome);
    expect(verdict.at).toBe(at);
    expect(verdict.metrics).toEqual(results);
  });

  it('builds a one-entry inconclusive sample for a failure before any query', () => {
    expect(setupFailureSample('auth', 'resolve bearer token: secret prod/t not found', at)).toEqual({
      outcome: 'Inconclusive',
      at,
      metrics: [{ name: 'auth', passed: false, message: 'resolve bearer token: secret prod/t not found', time: at }],
    });
  });
});
