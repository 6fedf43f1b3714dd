/**
 * The structural shapes this module reads and writes: `spec.rollout.groups[]`, a
 * RolloutPolicy, and `status.rollout` / `status.canary`, spelled as the JSON the API
 * server stores. Optional fields are optional because users may leave them out; the
 * Go-JSON schema decides how absence serialises.
 */

export type ComponentName = 'router' | 'engine' | 'decoder';
export type ProgressionKind = 'canary' | 'blueGreen' | 'rollingUpdate';
export const PROGRESSION_KINDS: readonly ProgressionKind[] = ['canary', 'blueGreen', 'rollingUpdate'];

export type IntOrString = number | string;

export interface RolloutPause {
  duration?: string;
}

export interface AnalysisMetric {
  name?: string;
  query?: string;
  operator?: string;
  threshold?: string;
}

export interface RolloutAnalysis {
  interval?: string;
  initialDelay?: string;
  failureLimit?: number;
  onInconclusive?: string;
  metrics?: AnalysisMetric[];
}

export interface CanaryStep {
  capacity?: IntOrString;
  traffic?: number;
  pause?: RolloutPause;
  analysis?: RolloutAnalysis;
}

export interface AnalysisPrometheus {
  providerRef?: { name?: string };
  serverAddress?: string;
  authRef?: { name?: string; key?: string; optional?: boolean };
  headers?: Record<string, string>;
}

export interface GroupCanary {
  steps?: CanaryStep[];
  prometheus?: AnalysisPrometheus;
  scaleDownDelaySeconds?: number;
  readyTimeout?: string;
}

export type GroupBlueGreen = Record<string, never>;

export interface GroupRollingUpdate {
  maxSurge?: IntOrString;
  maxUnavailable?: IntOrString;
}

export interface RolloutPolicyRef {
  name: string;
  progression: string;
  kind?: string;
}

export interface MaintainRatio {
  tolerance?: number;
}

/** One entry of `spec.rollout.groups[]` (and, resolved, of a pinned plan). */
export interface RolloutGroup {
  components?: string[];
  order?: string[];
  canary?: GroupCanary;
  blueGreen?: GroupBlueGreen;
  rollingUpdate?: GroupRollingUpdate;
  policyRef?: RolloutPolicyRef;
  soak?: string;
  maintainRatio?: MaintainRatio;
}

/** A RolloutPolicy spec: exactly one progression body. */
export interface RolloutPolicySpec {
  canary?: GroupCanary;
  blueGreen?: GroupBlueGreen;
  rollingUpdate?: GroupRollingUpdate;
}

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

export type PlanSource = 'Inline' | 'Policy';

/** `status.rollout.activeRun.plan.groups[]`: one pinned group with its provenance. */
export interface PinnedGroup {
  source: PlanSource;
  policyRef?: RolloutPolicyRef;
  policyGeneration?: number;
  portableDigest?: string;
  group: RolloutGroup;
}

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

export type RunOutcome = 'Completed' | 'RolledBack' | 'Superseded';

/** `status.rollout.lastRun`: digests and provenance, never the plan bodies. */
export interface RolloutRunRecord {
  outcome: RunOutcome;
  runID?: string;
  openedAt?: string;
  closedAt?: string;
  targetRevisions?: RunTarget[];
  groups?: { source: PlanSource; policyRef?: RolloutPolicyRef; portableDigest?: string }[];
}

/** `status.rollout.groups[]`: what a run opened now would pin for each spec group. */
export interface GroupResolutionStatus {
  index: number;
  source: PlanSource;
  policyRef?: RolloutPolicyRef;
  observedDigest?: string;
  shadowedPolicyRef?: { name: string; wouldPinDigest?: string };
}

export interface RolloutStatus {
  activeRun?: RolloutRun;
  lastRun?: RolloutRunRecord;
  groups?: GroupResolutionStatus[];
}

/** `status.canary` for one canary group: the executor's persisted state machine. */
export interface CanaryState {
  canaryRevisionHash?: string;
  stableRevisionHash?: string;
  currentStep: number;
  stepEnteredTime?: string;
  observedTrafficWeight: number;
  /** Set by a repin that raised the step's traffic above the recorded weight. */
  preStepHold?: boolean;
  /** The final gate passed; the canary revision is the new stable one. */
  finished?: boolean;
  promotedThrough?: string;
  rolledBackRevisionHash?: string;
  analysisFailedChecks?: number;
}

/** A condition as the InferenceService status carries it (knative duck type). */
export interface StatusCondition {
  type: string;
  status: 'True' | 'False' | 'Unknown';
  reason?: string;
  message?: string;
  lastTransitionTime?: string;
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
