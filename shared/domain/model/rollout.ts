import type { KubeObject } from './kube-object';
import type { ComponentType } from './component';
import type { MetaCondition } from './condition';
import type { IntOrString, SecretKeySelector } from './pod';

/*
 * spec.rollout and RolloutPolicy. Every interface lists its fields in upstream's
 * declaration order, the key order of the Go JSON that plan digests hash:
 *   group:  components, order, canary, blueGreen, rollingUpdate, policyRef, soak, maintainRatio
 *   canary: steps, prometheus, scaleDownDelaySeconds, readyTimeout
 *   step:   capacity, traffic, pause, analysis
 * Durations are Go duration strings (`10m0s` once a Go controller has written them).
 */

/** How a step holds: with `duration` a timed advance (or the bake of an analysis step); without, a manual gate. */
export interface RolloutPause {
  duration?: string;
}

export type ComparisonOperator = 'LT' | 'LTE' | 'GT' | 'GTE';

export interface AnalysisMetric {
  name: string;
  query: string;
  operator: ComparisonOperator;
  /** A float as a string, e.g. `"0.05"`. */
  threshold: string;
}

/**
 * What an analysis step does with a sample that cannot be read (no source, query error,
 * no data): `Hold` (the default) keeps the step and ends in Failed once the stall
 * timeout passes; `Rollback` rolls back on the first such sample; `RollbackOnStall`
 * holds like `Hold` but rolls back instead of failing when the stall timeout passes.
 */
export type OnInconclusive = 'Hold' | 'Rollback' | 'RollbackOnStall';

/** A step's metric gate: sampling cadence, warm-up, failure budget per step, and the checks (ANDed). */
export interface RolloutAnalysis {
  interval: string;
  initialDelay?: string;
  failureLimit: number;
  onInconclusive?: OnInconclusive;
  metrics: AnalysisMetric[];
}

export interface RolloutGroupStep {
  /** New-revision share of the desired replicas: `"25%"` or an absolute count. */
  capacity: IntOrString;
  /** Service-level traffic percentage (0-100); recorded in status. */
  traffic: number;
  pause?: RolloutPause;
  analysis?: RolloutAnalysis;
}

/** Names a metric provider the cluster's operator binds to an address and credentials. */
export interface MetricProviderRef {
  name: string;
}

/** The metrics source every analysis step of a canary queries: at most one of providerRef and serverAddress. */
export interface AnalysisPrometheus {
  providerRef?: MetricProviderRef;
  serverAddress?: string;
  authRef?: SecretKeySelector;
  headers?: Record<string, string>;
}

export interface GroupCanary {
  steps?: RolloutGroupStep[];
  prometheus?: AnalysisPrometheus;
  scaleDownDelaySeconds?: number;
  readyTimeout?: string;
}

/** Empty: blue-green has no options. Also the progression of a group that sets none. */
export type GroupBlueGreen = Record<string, never>;

export interface GroupRollingUpdate {
  maxSurge?: IntOrString;
  maxUnavailable?: IntOrString;
}

export interface MaintainRatio {
  tolerance?: number;
}

export type RolloutProgressionKind = 'canary' | 'blueGreen' | 'rollingUpdate';

/** Names a same-namespace RolloutPolicy; an inline progression on the same group wins. */
export interface RolloutPolicyRef {
  name: string;
  progression: RolloutProgressionKind;
  /** `RolloutPolicy` (the default); `ClusterRolloutPolicy` is reserved. */
  kind?: string;
}

/** One group: components that roll together through at most one progression (none means blueGreen). */
export interface RolloutGroup {
  components: ComponentType[];
  order?: ComponentType[];
  canary?: GroupCanary;
  blueGreen?: GroupBlueGreen;
  rollingUpdate?: GroupRollingUpdate;
  policyRef?: RolloutPolicyRef;
  soak?: string;
  maintainRatio?: MaintainRatio;
}

export interface RolloutSpec {
  groups?: RolloutGroup[];
  pairingProtocol?: unknown;
  [field: string]: unknown;
}

/** Exactly one of the three progressions. */
export interface RolloutPolicySpec {
  canary?: GroupCanary;
  blueGreen?: GroupBlueGreen;
  rollingUpdate?: GroupRollingUpdate;
}

export interface RolloutPolicyStatus {
  observedGeneration?: number;
  /** `rp1:` + 12 hex of the spec's digest. */
  portableDigest?: string;
  attachedGroups?: number;
  /** `Ready` (BodyValid, BodyInvalid, ProviderUnbound, PlanTooLarge) and `InUse` (Attached, NoConsumers). */
  conditions?: MetaCondition[];
}

export interface RolloutPolicy extends KubeObject {
  kind: 'RolloutPolicy';
  spec: RolloutPolicySpec;
  status?: RolloutPolicyStatus;
}

// status.rollout: the run model.

export type RolloutPlanSource = 'Inline' | 'Policy';
export type RolloutRunOutcome = 'Completed' | 'RolledBack' | 'Superseded';

/** One grouped component's target (and the stable revision it rolls from) for a run. */
export interface RolloutRunTarget {
  component: ComponentType;
  revision?: string;
  stableRevision?: string;
}

/** A pinned group: the resolved group (never carrying a policyRef) plus where its progression came from. */
export interface RolloutRunGroup {
  source: RolloutPlanSource;
  policyRef?: RolloutPolicyRef;
  policyGeneration?: number;
  portableDigest?: string;
  group: RolloutGroup;
}

export interface RolloutRunPlan {
  groups?: RolloutRunGroup[];
}

/** The open run. `pinnedAt` only moves forward: a write carrying an older one must not win. */
export interface RolloutRun {
  runID: string;
  openedAt: string;
  pinnedAt: string;
  targetRevisions?: RolloutRunTarget[];
  plan: RolloutRunPlan;
}

export interface RolloutRunProvenance {
  source: RolloutPlanSource;
  policyRef?: RolloutPolicyRef;
  portableDigest?: string;
}

/** The bounded record of the last closed run. */
export interface RolloutRunRecord {
  outcome: RolloutRunOutcome;
  openedAt?: string;
  closedAt?: string;
  targetRevisions?: RolloutRunTarget[];
  groups?: RolloutRunProvenance[];
}

export interface ShadowedRolloutPolicyRef {
  name: string;
  wouldPinDigest?: string;
}

/** What a run opened now would pin for spec group `index`: the live render. */
export interface RolloutGroupResolution {
  index: number;
  source: RolloutPlanSource;
  policyRef?: RolloutPolicyRef;
  observedDigest?: string;
  shadowedPolicyRef?: ShadowedRolloutPolicyRef;
}

export interface RolloutStatus {
  activeRun?: RolloutRun;
  lastRun?: RolloutRunRecord;
  groups?: RolloutGroupResolution[];
}

export interface AnalysisMetricResult {
  name: string;
  value?: string;
  threshold?: string;
  operator?: ComparisonOperator;
  passed: boolean;
  message?: string;
  time?: string;
}

/** status.canary: the canary executor's state. */
export interface CanaryStatus {
  canaryRevisionHash?: string;
  stableRevisionHash?: string;
  currentStep: number;
  stepEnteredTime?: string;
  observedTrafficWeight: number;
  promotedThrough?: string;
  rolledBackRevisionHash?: string;
  /** Set by a repin whose step asks for more traffic than observed: hold before the step until promoted. */
  preStepHold?: boolean;
  analysisFailedChecks?: number;
  lastEvaluationTime?: string;
  lastConclusiveEvaluationTime?: string;
  metricResults?: AnalysisMetricResult[];
}

export type RolloutPhase =
  | 'Stable'
  | 'Canarying'
  | 'Pending'
  | 'Paused'
  | 'Promoting'
  | 'RollingBack'
  | 'RolledBack'
  | 'Failed';

export type RolloutHold = 'GlobalPause' | 'PlanParked' | 'CanaryPreStep' | 'ObservedPaused';
