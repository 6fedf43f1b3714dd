/**
 * The rows of `kubectl ome rollout explain`: the Declared, Live and Effective views of
 * the plan with READY, DRIFT, HOLD, PHASE, REVISIONS, TRAFFIC and ISSUES, in upstream's
 * VIEW / ITEM / DETAIL layout. Building rows is pure; the CLI only prints them.
 */
import { ConditionType, ROLLOUT_PAUSED_ANNOTATION } from '../vocabulary';
import { gateOf } from './canary';
import { normalizeGoDuration } from '../go-duration';
import { declaredKindOf, declaredSourceOf } from './plan';
import type {
  AnalysisMetricResult,
  CanaryState,
  CanaryStep,
  GroupResolutionStatus,
  PinnedGroup,
  RolloutGroup,
  RolloutHold,
  RolloutPolicyView,
  RolloutStatus,
  StatusCondition,
} from './types';

export type ExplainView = 'Declared' | 'Live' | 'Effective';

export interface ExplainRow {
  readonly view: ExplainView;
  readonly item: string;
  readonly detail: string;
}

/** Observed progress of one group, as the controller reports it. */
export interface ObservedGroup {
  readonly phase?: string;
  readonly canary?: CanaryState;
  readonly hold?: RolloutHold;
}

export interface ExplainInput {
  readonly specGroups?: readonly RolloutGroup[];
  readonly rollout?: RolloutStatus;
  readonly conditions?: readonly StatusCondition[];
  readonly annotations?: Readonly<Record<string, string>>;
  /** Observed progress by group index. */
  readonly observed?: ReadonlyMap<number, ObservedGroup>;
  /** Recorded traffic weights per revision. */
  readonly traffic?: readonly { component: string; revision: string; percent: number }[];
  /** Policies the CLI could read, to show a policy group's live steps. */
  readonly policiesByName?: ReadonlyMap<string, RolloutPolicyView>;
}

const STRATEGY: Readonly<Record<string, string>> = { canary: 'Canary', blueGreen: 'BlueGreen', rollingUpdate: 'RollingUpdate' };

/** Builds the explain rows, view by view. */
export function buildExplainRows(input: ExplainInput): ExplainRow[] {
  const specGroups = input.specGroups ?? [];
  const run = input.rollout?.activeRun;
  const rows: ExplainRow[] = [];
  const push = (view: ExplainView, item: string, detail: string): void => {
    rows.push({ view, item, detail });
  };

  push('Declared', 'PLAN', `groups=${specGroups.length}`);
  specGroups.forEach((group, index) => describeSpecGroup(group, index, 'Declared', input, push));

  push('Live', 'PLAN', `mode=Live; groups=${specGroups.length}`);
  specGroups.forEach((group, index) => describeSpecGroup(group, index, 'Live', input, push));

  const pinned = run?.plan.groups ?? [];
  push(
    'Effective',
    'PLAN',
    run ? `mode=Pinned; evidence=Reported; groups=${pinned.length}` : `mode=Live; evidence=Declared; groups=${specGroups.length}`,
  );
  push('Effective', 'READY', describeCondition(input.conditions, ConditionType.rolloutPlanReady));
  push('Effective', 'DRIFT', describeCondition(input.conditions, ConditionType.rolloutPlanDrift));
  const paused = input.annotations?.[ROLLOUT_PAUSED_ANNOTATION];
  if (paused === 'true' || paused === 'freeze') push('Effective', 'HOLD', 'GlobalPause; evidence=Declared');
  const ready = findCondition(input.conditions, ConditionType.rolloutPlanReady);
  if (ready?.status === 'False') push('Effective', 'HOLD', 'PlanParked; evidence=Reported');
  if (run) {
    pinned.forEach((group, index) => describePinnedGroup(group, index, input, push));
  } else {
    specGroups.forEach((group, index) => describeSpecGroup(group, index, 'Effective', input, push));
  }
  if (specGroups.length > 0 || run) push('Effective', 'ISSUES', 'EpochUnverifiable');
  return rows;
}

type Push = (view: ExplainView, item: string, detail: string) => void;

function describeSpecGroup(group: RolloutGroup, index: number, view: ExplainView, input: ExplainInput, push: Push): void {
  const source = declaredSourceOf(group);
  const evidence = view === 'Live' && source === 'Policy' ? 'Reported' : 'Declared';
  push(view, `GROUP ${index}`, `${STRATEGY[declaredKindOf(group)] ?? 'Unknown'}; ${componentsOf(group)}; source=${evidence}/${source}`);
  const config: string[] = [];
  if (source === 'Defaulted') config.push('strategy=defaulted');
  if (group.policyRef) config.push(`${source === 'Policy' ? 'policy' : 'shadowed'}=RolloutPolicy/${group.policyRef.name}`);
  const resolution: GroupResolutionStatus | undefined = input.rollout?.groups?.[index];
  if (view !== 'Declared' && resolution?.observedDigest) config.push(`digest=${resolution.observedDigest}`);
  config.push(...shapeSettings(group, index, input.specGroups ?? []));
  pushConfig(view, config, push);

  let steps = group.canary?.steps;
  if (source === 'Policy') {
    const body = view === 'Declared' ? undefined : input.policiesByName?.get(group.policyRef?.name ?? '');
    steps = body?.spec.canary?.steps;
    if (view !== 'Declared' && !body) push(view, 'ISSUES', 'PolicyBodyUnavailable');
  }
  pushAnalysis(view, steps, input.observed?.get(index), push);
  pushSteps(view, steps, push);
}

function describePinnedGroup(pinned: PinnedGroup, index: number, input: ExplainInput, push: Push): void {
  const group = pinned.group;
  push('Effective', `GROUP ${index}`, `${STRATEGY[declaredKindOf(group)] ?? 'Unknown'}; ${componentsOf(group)}; source=Reported/${pinned.source}`);
  const config: string[] = [];
  if (pinned.source === 'Inline' && group.blueGreen) config.push('origin=Unknown');
  if (pinned.source === 'Policy' && pinned.policyRef) {
    const generation = pinned.policyGeneration ? `@${pinned.policyGeneration}` : '';
    config.push(`policy=RolloutPolicy/${pinned.policyRef.name}${generation}`);
  }
  if (pinned.portableDigest) config.push(`digest=${pinned.portableDigest}`);
  config.push(...shapeSettings(group, index, (input.rollout?.activeRun?.plan.groups ?? []).map((g) => g.group)));
  pushConfig('Effective', config, push);

  const observed = input.observed?.get(index);
  if (observed?.phase) push('Effective', 'PHASE', observed.phase);
  const hold = observed?.hold ?? (observed?.canary?.preStepHold ? 'CanaryPreStep' : undefined);
  if (hold) push('Effective', 'HOLD', `${hold}; evidence=Reported`);
  const revisions = describeRevisions(group, observed?.canary, input);
  if (revisions) push('Effective', 'REVISIONS', revisions);
  const traffic = (input.traffic ?? []).filter((entry) => (group.components ?? []).some((name) => name === entry.component));
  if (traffic.length > 0) {
    push('Effective', 'TRAFFIC', traffic.map((entry) => `${entry.component}:${entry.revision}=${entry.percent}%`).join(','));
  }
  const steps = group.canary?.steps;
  pushAnalysis('Effective', steps, observed, push);
  pushSteps('Effective', steps, push);
}

/** How the last judged sample reads, as upstream's promote preview names the states. */
export type AnalysisState = 'Unobserved' | 'Passing' | 'Failing' | 'Inconclusive';

/**
 * The state of a step's analysis from its record: Unobserved before any judged sample;
 * Failing when a metric breached its threshold (it has a value and did not pass);
 * Inconclusive when none breached but one could not be judged (no value), or the sample
 * carried no metrics; Passing when every metric passed.
 */
export function analysisStateOf(canary: Pick<CanaryState, 'lastEvaluationTime' | 'metricResults'> | undefined): AnalysisState {
  if (!canary?.lastEvaluationTime) return 'Unobserved';
  const results = canary.metricResults ?? [];
  if (results.length === 0) return 'Inconclusive';
  if (results.some((result) => !result.passed && result.value !== undefined && !result.message)) return 'Failing';
  if (results.some((result) => !result.passed)) return 'Inconclusive';
  return 'Passing';
}

/**
 * ANALYSIS and METRIC rows for a canary's current step, when it is an analysis step or a
 * judged sample is on record (a rolled-back canary keeps the sample that rejected it):
 * the state, when it was last evaluated and last conclusive, failed checks against the
 * limit, the step's timing, then each metric of the last sample.
 */
function pushAnalysis(view: ExplainView, steps: readonly CanaryStep[] | undefined, observed: ObservedGroup | undefined, push: Push): void {
  const all = steps ?? [];
  const canary = observed?.canary;
  // Observed state belongs to the Effective view only.
  if (view !== 'Effective' || !canary || all.length === 0) return;
  const index = Math.min(Math.max(canary.currentStep, 0), all.length - 1);
  const step = all[index] as CanaryStep;
  const analysis = step.analysis;
  if (!analysis && !canary.lastEvaluationTime) return;
  const finished = canary.currentStep >= all.length ? '; finished' : '';
  push('Effective', 'ANALYSIS', `step=${index + 1}/${all.length}; state=${analysisStateOf(canary)}${finished}; evidence=Reported`);
  push('Effective', '', `evaluated=${canary.lastEvaluationTime ?? 'never'}; conclusive=${canary.lastConclusiveEvaluationTime ?? 'never'}`);
  push('Effective', '', `failedChecks=${canary.analysisFailedChecks ?? 0}/${analysis ? String(analysis.failureLimit) : '?'}`);
  if (analysis) push('Effective', '', describeAnalysisTiming(analysis, step));
  for (const result of canary.metricResults ?? []) push('Effective', 'METRIC', describeMetricResult(result));
}

function describeAnalysisTiming(analysis: NonNullable<CanaryStep['analysis']>, step: CanaryStep): string {
  return [
    `interval=${safeDuration(analysis.interval)}`,
    `warmUp=${analysis.initialDelay ? safeDuration(analysis.initialDelay) : 'none'}`,
    `bake=${step.pause?.duration ? safeDuration(step.pause.duration) : 'none'}`,
    `onInconclusive=${analysis.onInconclusive ?? 'Hold'}`,
  ].join('; ');
}

/** One `metricResults` entry: its value, comparison and verdict (a breach has a value and no message). */
function describeMetricResult(result: AnalysisMetricResult): string {
  const comparison = result.operator && result.threshold !== undefined ? `; ${result.operator} ${result.threshold}` : '';
  const value = result.value === undefined ? '' : `; value=${result.value}`;
  const verdict = result.passed ? 'passed' : result.value !== undefined && !result.message ? 'failed' : 'inconclusive';
  return `${result.name}${value}${comparison}; ${verdict}${result.message ? `; message=${result.message}` : ''}`;
}

function describeRevisions(group: RolloutGroup, canary: CanaryState | undefined, input: ExplainInput): string | undefined {
  if (!group.canary) return undefined;
  const target = input.rollout?.activeRun?.targetRevisions?.find((t) => (group.components ?? []).some((name) => name === t.component));
  const stable = canary?.stableRevisionHash ?? target?.stableRevision;
  const next = canary?.canaryRevisionHash ?? target?.revision;
  const parts = [stable ? `stable=${stable}` : '', next ? `target=${next}` : ''];
  if (canary?.rolledBackRevisionHash) parts.push(`rejected=${canary.rolledBackRevisionHash}`);
  const text = parts.filter(Boolean).join(',');
  return text || undefined;
}

function componentsOf(group: RolloutGroup): string {
  return `components=${(group.components ?? []).join(',')}`;
}

function pushConfig(view: ExplainView, config: readonly string[], push: Push): void {
  config.forEach((line, i) => push(view, i === 0 ? 'CONFIG' : '', line));
}

function pushSteps(view: ExplainView, steps: readonly CanaryStep[] | undefined, push: Push): void {
  (steps ?? []).forEach((step, i, all) => {
    push(view, `STEP ${i + 1}/${all.length}`, `capacity=${step.capacity ?? 0}; traffic=${step.traffic ?? 0}%; gate=${gateOf(step)}`);
  });
}

/** soak, surge, unavailable and ratio as `value(Source;Effect)`, per upstream's CONFIG keys. */
function shapeSettings(group: RolloutGroup, index: number, groups: readonly RolloutGroup[]): string[] {
  const out: string[] = [];
  const kind = declaredKindOf(group);
  const sequential = groups.length > 1 && groups.every((g) => declaredKindOf(g) === 'blueGreen' && (g.components ?? []).length === 1);
  if (group.soak !== undefined) {
    let effect = '';
    if (kind === 'canary' || !sequential) effect = ';IgnoredPlanShape';
    else if (index === groups.length - 1) effect = ';IgnoredFinalGroup';
    out.push(`soak=${safeDuration(group.soak)}(Configured${effect})`);
  }
  if (kind === 'rollingUpdate') {
    const budget = (value: unknown): string => (value === undefined ? '25%(Defaulted)' : `${String(value)}(Configured)`);
    out.push(`surge=${budget(group.rollingUpdate?.maxSurge)}`, `unavailable=${budget(group.rollingUpdate?.maxUnavailable)}`);
  }
  if (group.maintainRatio) {
    const tolerance = group.maintainRatio.tolerance;
    let effect = '';
    if (kind === 'canary') effect = ';IgnoredPlanShape';
    else if ((group.components ?? []).length === 1) effect = ';IgnoredSingleComponent';
    out.push(tolerance === undefined ? 'ratio=Unresolved' : `ratio=${tolerance}(Configured${effect})`);
  }
  return out;
}

function safeDuration(text: string): string {
  try {
    return normalizeGoDuration(text);
  } catch {
    return text;
  }
}

function findCondition(conditions: readonly StatusCondition[] | undefined, type: string): StatusCondition | undefined {
  const found = (conditions ?? []).filter((condition) => condition.type === type);
  return found.length === 1 ? found[0] : undefined;
}

function describeCondition(conditions: readonly StatusCondition[] | undefined, type: string): string {
  const matching = (conditions ?? []).filter((condition) => condition.type === type);
  if (matching.length === 0) return 'Unobserved; evidence=Unavailable';
  const condition = matching[0] as StatusCondition;
  if (matching.length > 1 || !condition.reason) return 'Invalid/Unknown; evidence=Reported';
  return `${condition.status}/${condition.reason}; evidence=Reported`;
}

/**
 * Prints rows as the kubectl-ome table: a header, each column padded to its widest
 * cell plus three spaces, and VIEW shown only on the first row of each view.
 */
export function formatExplainTable(rows: readonly ExplainRow[]): string {
  const cells = rows.map((row, i) => [row.view === rows[i - 1]?.view ? '' : row.view, row.item, row.detail]);
  const table = [['VIEW', 'ITEM', 'DETAIL'], ...cells];
  const widths = [0, 1].map((column) => Math.max(...table.map((line) => (line[column] ?? '').length)) + 3);
  return table
    .map((line) => `${(line[0] ?? '').padEnd(widths[0] ?? 0)}${(line[1] ?? '').padEnd(widths[1] ?? 0)}${line[2] ?? ''}`.trimEnd())
    .join('\n')
    .concat('\n');
}
