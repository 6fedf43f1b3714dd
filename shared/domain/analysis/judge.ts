/**
 * Judging one analysis sample as upstream's evaluator does (`analysis.Evaluate`): each
 * metric compares the WORST number of its query's result with its threshold (the highest
 * for LT/LTE, the lowest for GT/GTE, so a per-pod query passes only when every pod
 * does); a metric that cannot be judged is inconclusive with a message; the sample Fails
 * when any metric breached, else is Inconclusive when any metric could not be judged,
 * else Passes.
 */
import type { AnalysisVerdict } from '../rollout/analysis';
import type { AnalysisMetric, AnalysisMetricResult, ComparisonOperator } from '../rollout/types';
import { formatGoFloat, parseGoFloat } from './go-float';
import { INVALID_THRESHOLD_PREFIX, NO_DATA_MESSAGE, TEMPLATE_ERROR_PREFIX } from './messages';
import type { QueryReading } from './query-result';

/** The reading of a metric whose query template did not render. */
export function templateErrorReading(error: unknown): QueryReading {
  return { kind: 'error', message: TEMPLATE_ERROR_PREFIX + (error instanceof Error ? error.message : String(error)) };
}

/**
 * One metric's entry in `metricResults`: its worst value and whether it passed, or, when
 * it cannot be judged, `passed: false`, no value, and the cause in `message`. `at` is the
 * sample's time (RFC 3339).
 */
export function judgeMetric(metric: AnalysisMetric, reading: QueryReading, at: string): AnalysisMetricResult {
  const base = { name: metric.name, threshold: metric.threshold, operator: metric.operator };
  if (reading.kind !== 'values' || reading.values.length === 0) {
    const message = reading.kind === 'error' ? reading.message : NO_DATA_MESSAGE;
    return { ...base, passed: false, message, time: at };
  }
  const threshold = parseGoFloat(metric.threshold);
  if (threshold === undefined) {
    // Admission rejects a non-numeric threshold; one that slips through holds, never breaches.
    return { ...base, passed: false, message: INVALID_THRESHOLD_PREFIX + metric.threshold, time: at };
  }
  const value = worstValue(reading.values, metric.operator);
  return { name: metric.name, value: formatGoFloat(value), threshold: metric.threshold, operator: metric.operator, passed: compare(value, metric.operator, threshold), time: at };
}

/** A single-entry inconclusive sample: the sample failed before any metric was queried. */
export function setupFailureSample(entry: string, message: string, at: string): AnalysisVerdict {
  return { outcome: 'Inconclusive', at, metrics: [{ name: entry, passed: false, message, time: at }] };
}

/**
 * The sample's verdict from its metric results: Failed when a judged metric breached,
 * else Inconclusive when a metric could not be judged, else Successful.
 */
export function judgeSample(results: readonly AnalysisMetricResult[], at: string): AnalysisVerdict {
  const breached = results.some((result) => result.value !== undefined && !result.passed);
  const unjudged = results.some((result) => result.value === undefined);
  const outcome = breached ? 'Failed' : unjudged ? 'Inconclusive' : 'Successful';
  return { outcome, at, metrics: results.map((result) => ({ ...result })) };
}

/** The value hardest to pass: the maximum for upper bounds (LT/LTE), the minimum for lower bounds (GT/GTE). */
export function worstValue(values: readonly number[], operator: ComparisonOperator): number {
  const lowerBound = operator === 'GT' || operator === 'GTE';
  return lowerBound ? Math.min(...values) : Math.max(...values);
}

/** Whether `value <operator> threshold` holds; an unknown operator never passes. */
export function compare(value: number, operator: ComparisonOperator, threshold: number): boolean {
  switch (operator) {
    case 'LT':
      return value < threshold;
    case 'LTE':
      return value <= threshold;
    case 'GT':
      return value > threshold;
    case 'GTE':
      return value >= threshold;
    default:
      return false;
  }
}
