/**
 * The shapes the pure rollout rules read and write. The API types of `spec.rollout` and
 * RolloutPolicy (and the run-model pieces that only repeat them) have one definition,
 * in `../model/rollout`, and are re-exported here under the names these rules use. What
 * stays here is the rules' own view: the policy as plan resolution sees it, and the
 * status-side records whose stored form the CRD leaves unvalidated.
 */

import type {
  AnalysisMetricResult,
  ComponentType,
  RolloutGroupResolution,
  RolloutGroupStep,
  RolloutPlanSource,
  RolloutPolicySpec,
  RolloutProgressionKind,
  RolloutRunGroup,
  RolloutRunOutcome,
  RolloutRunProvenance,
} from '../model';

export type {
  AnalysisMetric,
  AnalysisMetricResult,
  AnalysisPrometheus,
  ComparisonOperator,
  MetricProviderRef,
  OnInconclusive,
  GroupBlueGreen,
  GroupCanary,
  GroupRollingUpdate,
  IntOrString,
  MaintainRatio,
  RolloutAnalysis,
  RolloutGroup,
  RolloutHold,
  RolloutPause,
  RolloutPhase,
  RolloutPolicyRef,
  RolloutPolicySpec,
} from '../model';

export type ComponentName = ComponentType;
export type ProgressionKind = RolloutProgressionKind;
export const PROGRESSION_KINDS: readonly ProgressionKind[] = ['canary', 'blueGreen', 'rollingUpdate'];
export type CanaryStep = RolloutGroupStep;
export type PlanSource = RolloutPlanSource;
export type RunOutcome = RolloutRunOutcome;
/** `status.rollout.activeRun.plan.groups[]`: one pinned group with its provenance. */
export type PinnedGroup = RolloutRunGroup;
/** `status.rollout.groups[]`: what a run opened now would pin for each spec group. */
export type GroupResolutionStatus = RolloutGroupResolution;

/** What plan resolution needs to know about one RolloutPolicy in the namespace. */
export interface RolloutPolicyView {
  name: string;
  generation?: number;
  spec: RolloutPolicySpec;
  /** The policy's Ready condition: false parks consumers; undefined means not yet reported. */
  ready?: boolean;
  /** The Ready condition's message, quoted when a consumer parks on it. */
  readyMessage?: string;
}

/**
 * One run target as the rules read it back from status. `component` stays a string:
 * the CRD stores `targetRevisions[].component` without an enum (and the run model with
 * x-kubernetes-preserve-unknown-fields), so a stored value is not known to be a ComponentType.
 */
export interface RunTarget {
  component: string;
  revision?: string;
  stableRevision?: string;
}

/** `status.rollout.activeRun`. */
export interface RolloutRun {
  runID: string;
  openedAt: string;
  pinnedAt: string;
  targetRevisions?: RunTarget[];
  plan: { groups?: PinnedGroup[] };
}

/**
 * `status.rollout.lastRun`: digests and provenance, never the plan bodies. Upstream keeps
 * no run ID here; `recordedRunID` recomputes it from the targets, digests and openedAt.
 */
export interface RolloutRunRecord {
  outcome: RunOutcome;
  openedAt?: string;
  closedAt?: string;
  targetRevisions?: RunTarget[];
  groups?: RolloutRunProvenance[];
}

export interface RolloutStatus {
  activeRun?: RolloutRun;
  lastRun?: RolloutRunRecord;
  groups?: GroupResolutionStatus[];
}

/**
 * One canary group's step machine, as upstream's CanaryStatus stores it: on the status of
 * the group's entrypoint component (`status.components.<c>.canary`), with `status.canary`
 * as the alias upstream keeps. A finished canary is marked as upstream marks it:
 * `currentStep` equal to the number of steps, `observedTrafficWeight` 100 and no stable
 * hash (see `isCanaryFinished`).
 */
export interface CanaryState {
  canaryRevisionHash?: string;
  stableRevisionHash?: string;
  currentStep: number;
  stepEnteredTime?: string;
  observedTrafficWeight: number;
  /** Set by a repin that raised the step's traffic above the recorded weight. */
  preStepHold?: boolean;
  promotedThrough?: string;
  rolledBackRevisionHash?: string;
  analysisFailedChecks?: number;
  lastEvaluationTime?: string;
  lastConclusiveEvaluationTime?: string;
  metricResults?: AnalysisMetricResult[];
}

/** A condition as the InferenceService status carries it (knative duck type). */
export interface StatusCondition {
  type: string;
  status: 'True' | 'False' | 'Unknown';
  reason?: string;
  message?: string;
  lastTransitionTime?: string;
}
