/**
 * Analysis steps: the plan rules upstream checks on a canary's metric gates, whether a
 * plan's metrics source is bound in this cluster, and what a step does with a recorded
 * sample (upstream's `consumeSample`: a failure counts toward `failureLimit`, a success
 * advances after the bake, an inconclusive sample follows `onInconclusive`). Pure: the
 * sample comes from an `AnalysisExecutor` port the caller holds, or is absent.
 */
import { parseGoDuration } from '../go-duration';
import type {
  AnalysisMetricResult,
  CanaryState,
  CanaryStep,
  ComparisonOperator,
  GroupCanary,
  OnInconclusive,
  RolloutAnalysis,
} from './types';
import { formatKubeTime } from './kube-time';

export const ON_INCONCLUSIVE_VALUES: readonly OnInconclusive[] = ['Hold', 'Rollback', 'RollbackOnStall'];
export const COMPARISON_OPERATORS: readonly ComparisonOperator[] = ['LT', 'LTE', 'GT', 'GTE'];

/** Upstream's CEL message on AnalysisPrometheus. */
export const PROVIDER_XOR_ADDRESS_MESSAGE = 'at most one of providerRef and serverAddress may be set';

/** The outcome of one analysis sample, as upstream's evaluator names them. */
export type AnalysisOutcome = 'Successful' | 'Failed' | 'Inconclusive';

/** One sample of a step's metrics: its outcome, when it was produced, and per-metric detail. */
export interface AnalysisVerdict {
  readonly outcome: AnalysisOutcome;
  /** RFC 3339: when the sample was produced; stamps lastEvaluationTime. */
  readonly at: string;
  readonly metrics?: readonly AnalysisMetricResult[];
}

/**
 * What this cluster can evaluate. Upstream binds provider names per cluster in its
 * operator configuration; the plane binds none yet, and has no evaluator unless one is
 * plugged in, so by default every analysis step parks its plan (see findUnboundProvider).
 */
export interface MetricsBinding {
  readonly boundProviders: ReadonlySet<string>;
  /** Whether an AnalysisExecutor is plugged in to sample steps with no providerRef. */
  readonly executor: boolean;
  /** Whether a canary's own `prometheus.serverAddress` can be sampled (a Prometheus executor is plugged in). */
  readonly addresses?: boolean;
}

export const NO_METRICS: MetricsBinding = { boundProviders: new Set(), executor: false };

/**
 * A binding, or a way to read it when a plan turns out to need one: reading it costs a
 * request (the cluster's inferenceservice-config), and only plans with analysis steps or a
 * providerRef depend on it (see renderLivePlan).
 */
export type MetricsBindingSource = MetricsBinding | (() => Promise<MetricsBinding>);

const NS_PER_SECOND = 1_000_000_000;

function seconds(duration: string | undefined): number {
  if (duration === undefined) return 0;
  try {
    return Number(parseGoDuration(duration)) / NS_PER_SECOND;
  } catch {
    return 0;
  }
}

/**
 * Upstream's analysis rules for one canary body (`validateCanaryAnalysis`, the CRD's
 * enums and AnalysisPrometheus's CEL rule); returns the first problem or nothing. `where`
 * prefixes field paths, e.g. `canary`.
 */
export function findAnalysisProblem(canary: GroupCanary | undefined, where = 'canary'): string | undefined {
  const prometheus = canary?.prometheus;
  if (prometheus?.providerRef && prometheus.serverAddress) return `${where}.prometheus: ${PROVIDER_XOR_ADDRESS_MESSAGE}`;
  if (prometheus?.providerRef && !prometheus.providerRef.name) return `${where}.prometheus.providerRef.name must not be empty`;
  for (const [si, step] of (canary?.steps ?? []).entries()) {
    const problem = step.analysis ? analysisProblem(step.analysis, `${where}.steps[${si}].analysis`) : undefined;
    if (problem) return problem;
  }
  return undefined;
}

function analysisProblem(analysis: RolloutAnalysis, where: string): string | undefined {
  if (!(seconds(analysis.interval) > 0)) return `${where}: interval must be > 0`;
  if (!Number.isInteger(analysis.failureLimit) || analysis.failureLimit < 1) return `${where}: failureLimit must be >= 1`;
  if (analysis.onInconclusive !== undefined && !ON_INCONCLUSIVE_VALUES.includes(analysis.onInconclusive)) {
    return `${where}: onInconclusive "${String(analysis.onInconclusive)}" must be one of ${ON_INCONCLUSIVE_VALUES.join(', ')}`;
  }
  const metrics = analysis.metrics ?? [];
  if (metrics.length === 0) return `${where}: at least one metric is required`;
  const seen = new Set<string>();
  for (const [mi, metric] of metrics.entries()) {
    if (!metric.name) return `${where}.metrics[${mi}].name must not be empty`;
    if (seen.has(metric.name)) return `${where}.metrics[${mi}]: duplicate metric name "${metric.name}"`;
    seen.add(metric.name);
    if (!metric.query?.trim()) return `${where}.metrics[${mi}] ("${metric.name}"): query must not be empty`;
    if (!isGoFloat(metric.threshold)) return `${where}.metrics[${mi}] ("${metric.name}"): threshold "${metric.threshold}" must be numeric`;
    if (!COMPARISON_OPERATORS.includes(metric.operator)) {
      return `${where}.metrics[${mi}] ("${metric.name}"): operator "${metric.operator}" must be one of LT/LTE/GT/GTE`;
    }
  }
  return undefined;
}

/** What Go's strconv.ParseFloat accepts for the plain forms thresholds use (decimal, exponent, Inf, NaN). */
function isGoFloat(value: unknown): boolean {
  if (typeof value !== 'string') return false;
  return /^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$/.test(value) || /^[+-]?(inf|infinity|nan)$/i.test(value);
}

/**
 * Why a canary body's analysis cannot sample in this cluster, or nothing. A providerRef
 * not bound here gives upstream's message; analysis steps with no providerRef need an
 * evaluator, which the plane has only when one is plugged in (our addition: upstream
 * would read every such sample inconclusive and hold).
 */
export function findUnboundProvider(canary: GroupCanary | undefined, binding: MetricsBinding, groupIndex: number): string | undefined {
  const steps = canary?.steps ?? [];
  const ref = canary?.prometheus?.providerRef;
  if (ref && !binding.boundProviders.has(ref.name)) {
    return `groups[${groupIndex}]: metric provider "${ref.name}" is not bound in this cluster's metricProviders configuration`;
  }
  const gated = steps.findIndex((step) => step.analysis !== undefined && step.analysis !== null);
  const ownAddress = Boolean(canary?.prometheus?.serverAddress) && binding.addresses === true;
  if (gated >= 0 && !ref && !ownAddress && !binding.executor) {
    return `groups[${groupIndex}]: canary.steps[${gated}] is an analysis step, and no metrics provider is bound in this cluster to evaluate it`;
  }
  return undefined;
}

/** What an analysis step does on this reconcile. */
export type AnalysisDecision = 'hold' | 'advance' | 'rollback' | 'failed';

export interface AnalysisStepInput {
  readonly analysis: RolloutAnalysis;
  readonly step: CanaryStep;
  /** The step's state; updated in place with the evaluation times, results and failure count. */
  readonly state: CanaryState;
  /** A sample newer than `state.lastEvaluationTime`, when one is ready. */
  readonly sample?: AnalysisVerdict;
  /** How long analysis may stay unable to read health (upstream resolves it as the ready timeout); unset never stalls. */
  readonly stallTimeout?: string;
  readonly now: Date;
}

export interface AnalysisStepResult {
  readonly decision: AnalysisDecision;
  /** Look again after this long: the warm-up's end or the sampling interval. */
  readonly requeueAfterSeconds?: number;
}

/**
 * One reconcile of an analysis step (a promote for the canary revision is the caller's
 * override). Warm-up holds until `initialDelay` after the step was entered; sampling is
 * throttled to one per `interval`; a consumed sample is recorded in the state the way
 * upstream records it (`lastEvaluationTime`, `lastConclusiveEvaluationTime`,
 * `metricResults`, `analysisFailedChecks`). A stall, measured from the last conclusive
 * sample (or step entry), ends the step in Failed under `Hold` and rolls back under
 * `RollbackOnStall`; `Rollback` rolls back on the first inconclusive sample.
 */
export function decideAnalysisStep(input: AnalysisStepInput): AnalysisStepResult {
  const { analysis, state, now } = input;
  const interval = seconds(analysis.interval);
  const entered = timeOf(state.stepEnteredTime);
  const warmUpEnds = entered === undefined ? undefined : entered + seconds(analysis.initialDelay) * 1000;
  if (analysis.initialDelay && warmUpEnds !== undefined && now.getTime() < warmUpEnds) {
    return { decision: 'hold', requeueAfterSeconds: Math.ceil((warmUpEnds - now.getTime()) / 1000) };
  }
  const last = timeOf(state.lastEvaluationTime);
  const nextSampleAt = last === undefined ? now.getTime() : last + interval * 1000;
  const sample = input.sample;
  const fresh = sample !== undefined && (last === undefined || (timeOf(sample.at) ?? 0) > last);
  if (now.getTime() < nextSampleAt || !fresh) {
    // A gate that stopped reading health stays terminal until a conclusive sample lands.
    if (stalled(input)) return { decision: stallDecision(analysis.onInconclusive) };
    const wait = Math.ceil((nextSampleAt - now.getTime()) / 1000);
    return { decision: 'hold', requeueAfterSeconds: wait > 0 ? wait : Math.max(1, Math.ceil(interval)) };
  }
  return { decision: consume(input, sample), requeueAfterSeconds: Math.max(1, Math.ceil(interval)) };
}

function consume(input: AnalysisStepInput, sample: AnalysisVerdict): AnalysisDecision {
  const { analysis, state } = input;
  state.lastEvaluationTime = sample.at;
  if (sample.metrics && sample.metrics.length > 0) state.metricResults = sample.metrics.map((metric) => ({ ...metric }));
  else delete state.metricResults;
  switch (sample.outcome) {
    case 'Failed':
      state.lastConclusiveEvaluationTime = sample.at;
      state.analysisFailedChecks = (state.analysisFailedChecks ?? 0) + 1;
      return state.analysisFailedChecks >= analysis.failureLimit ? 'rollback' : 'hold';
    case 'Successful': {
      state.lastConclusiveEvaluationTime = sample.at;
      const bake = seconds(input.step.pause?.duration);
      const entered = timeOf(state.stepEnteredTime) ?? input.now.getTime();
      return input.now.getTime() >= entered + bake * 1000 ? 'advance' : 'hold';
    }
    case 'Inconclusive':
      if (analysis.onInconclusive === 'Rollback') return 'rollback';
      return stalled(input) ? stallDecision(analysis.onInconclusive) : 'hold';
  }
}

function stallDecision(policy: OnInconclusive | undefined): AnalysisDecision {
  return policy === 'RollbackOnStall' ? 'rollback' : 'failed';
}

/** Upstream's analysisStalled: no timeout never stalls; the anchor is the last conclusive sample, else step entry. */
function stalled(input: AnalysisStepInput): boolean {
  const timeout = seconds(input.stallTimeout);
  if (timeout <= 0) return false;
  const anchor = timeOf(input.state.lastConclusiveEvaluationTime) ?? timeOf(input.state.stepEnteredTime);
  if (anchor === undefined) return false;
  return input.now.getTime() >= anchor + timeout * 1000;
}

/**
 * Whether a step's next sample is due: the warm-up (`initialDelay` from step entry) is
 * over and one `interval` has passed since the last consumed sample. Callers ask the
 * executor only then, so a reconcile inside the interval (a duplicate hint, a readiness
 * change, the sweep) queries nothing and records nothing: a sample is taken at most once
 * per (run, step, evaluation time), and `decideAnalysisStep` consumes it only when fresh.
 * A step not yet entered (no `stepEnteredTime`) with a warm-up is not due.
 */
export function isSampleDue(analysis: RolloutAnalysis, state: Pick<CanaryState, 'stepEnteredTime' | 'lastEvaluationTime'>, now: Date): boolean {
  const delay = seconds(analysis.initialDelay);
  if (delay > 0) {
    const entered = timeOf(state.stepEnteredTime);
    if (entered === undefined || now.getTime() < entered + delay * 1000) return false;
  }
  const last = timeOf(state.lastEvaluationTime);
  return last === undefined || now.getTime() >= last + seconds(analysis.interval) * 1000;
}

/** Clears the per-step analysis record when a step is entered (upstream's advanceStep). */
export function resetAnalysisRecord(state: CanaryState): void {
  state.analysisFailedChecks = 0;
  delete state.lastEvaluationTime;
  delete state.lastConclusiveEvaluationTime;
  delete state.metricResults;
}

/**
 * The sample the plane records when nothing can evaluate a step: inconclusive, with each
 * metric's result saying why, so status shows what the gate waits for.
 */
export function unboundSample(analysis: RolloutAnalysis, now: Date): AnalysisVerdict {
  const at = formatKubeTime(now);
  return {
    outcome: 'Inconclusive',
    at,
    metrics: (analysis.metrics ?? []).map((metric) => ({
      name: metric.name,
      threshold: metric.threshold,
      operator: metric.operator,
      passed: false,
      message: 'no metrics provider is bound in this cluster',
      time: at,
    })),
  };
}

function timeOf(value: string | undefined): number | undefined {
  if (!value) return undefined;
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : at;
}
