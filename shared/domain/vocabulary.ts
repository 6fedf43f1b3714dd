/**
 * Every name a user types or reads: API group, annotations, labels, condition types and
 * reasons, event reasons and message templates. Spelled exactly as OME's documentation
 * and upstream controller spell them; change nothing here without changing the docs.
 */

export const OME_GROUP = 'ome.io';
export const OME_VERSION = 'v1beta1';
export const OME_API_VERSION = `${OME_GROUP}/${OME_VERSION}`;
export const DEFAULT_OME_NAMESPACE = 'ome';

/** The field manager our writes carry, so `managedFields` shows who wrote what. */
export const FIELD_MANAGER = 'ome-pinning-control-plane';

export const Annotation = {
  runtimeSync: 'ome.io/runtime-sync',
  rolloutRepin: 'ome.io/rollout-repin',
  rolloutPromote: 'ome.io/rollout-promote',
  rolloutRollback: 'ome.io/rollout-rollback',
  /** A duration that overrides every canary group's `readyTimeout`, as upstream's (zero or less is ignored). */
  rolloutReadyTimeout: 'ome.io/rollout-ready-timeout',
  inheritFrom: 'ome.io/inherit-from',
  deploymentMode: 'ome.io/deploymentMode',
  gcEligibleSince: 'ome.io/gc-eligible-since',
  createdBy: 'ome.io/created-by',
} as const;

export const CREATED_BY_OME = 'ome-controller';

export const Label = {
  runtimeOf: 'ome.io/runtime-of',
  runtimeOfKind: 'ome.io/runtime-of-kind',
  runtimeOfNamespace: 'ome.io/runtime-of-namespace',
  revisionHash: 'ome.io/revision-hash',
} as const;

export const RuntimeKind = {
  cluster: 'ClusterServingRuntime',
  namespaced: 'ServingRuntime',
} as const;
export type RuntimeKindName = (typeof RuntimeKind)[keyof typeof RuntimeKind];

export const ConditionType = {
  runtimeDrifted: 'RuntimeDrifted',
  rolloutPlanReady: 'RolloutPlanReady',
  rolloutPlanDrift: 'RolloutPlanDrift',
  /** Advisory, as upstream's: False while a runtime followed live cannot be found. */
  runtimeReady: 'RuntimeReady',
} as const;

export const RuntimeReadyReason = {
  runtimeNotFound: 'RuntimeNotFound',
  runtimeResolved: 'RuntimeResolved',
} as const;

export const DriftReason = {
  revisionMismatch: 'RevisionMismatch',
  revisionMissing: 'RevisionMissing',
  runtimeMismatch: 'RuntimeMismatch',
  sourceRuntimeMissing: 'SourceRuntimeMissing',
} as const;
export type DriftReasonName = (typeof DriftReason)[keyof typeof DriftReason];

export const PlanReadyReason = {
  pinned: 'Pinned',
  noActiveRun: 'NoActiveRun',
  policyNotFound: 'PolicyNotFound',
  policyNotReady: 'PolicyNotReady',
  progressionMismatch: 'ProgressionMismatch',
  planInvalid: 'PlanInvalid',
  providerUnbound: 'ProviderUnbound',
} as const;

export const PlanDriftReason = {
  inSync: 'InSync',
  specNewerThanRun: 'SpecNewerThanRun',
  policyNewerThanRun: 'PolicyNewerThanRun',
} as const;

export const EventReason = {
  runtimePinError: 'RuntimePinError',
  rolloutPlanRepinned: 'RolloutPlanRepinned',
  rolloutRepinRejected: 'RolloutRepinRejected',
  rolloutRunOpened: 'RolloutRunOpened',
  rolloutRunClosed: 'RolloutRunClosed',
  rolloutPlanParked: 'RolloutPlanParked',
  /** Warning: spec.rollout, or its canary group, was removed while a run is pinned (upstream's EventGroupRemoved). */
  rolloutGroupRemovedMidRun: 'RolloutGroupRemovedMidRun',
  /** Warning, with RuntimeReady False: the runtime an InferenceService follows live is missing. */
  runtimeNotFound: 'RuntimeNotFound',
  /** Ours: the Deployment the plane would render exists and is someone else's, so it was left alone. */
  deploymentNotOwned: 'DeploymentNotOwned',
} as const;

/** A runtime's kind and, for a ServingRuntime, its namespace, as a revision's labels give them. */
export interface RuntimeScope {
  kind: string;
  namespace: string;
}

function describeScope({ kind, namespace }: RuntimeScope): string {
  if (kind === RuntimeKind.cluster && namespace === '') return `${kind}, cluster-scoped`;
  return `${kind || 'unknown kind'} in namespace ${JSON.stringify(namespace)}`;
}

export const Message = {
  revisionMismatch: (revision: string) =>
    `pinned ${revision}, live spec differs; bump ome.io/runtime-sync annotation to advance`,
  explicitPinNotFound: (revision: string, omeNamespace: string) =>
    `explicit pin ${revision} not found in namespace ${omeNamespace}`,
  pinnedRevisionMissing: (revision: string, omeNamespace: string) =>
    `pinned revision ${revision} missing from ${omeNamespace}`,
  runtimeMismatch: (revision: string, labelRuntime: string, runtimeName: string) =>
    `revision ${revision} belongs to runtime "${labelRuntime}" but ISVC references "${runtimeName}"`,
  /** Our addition: the runtime-of name matches but its kind or namespace label does not. */
  runtimeScopeMismatch: (revision: string, runtimeName: string, owner: RuntimeScope, wanted: RuntimeScope) =>
    `revision ${revision} belongs to runtime "${runtimeName}" (${describeScope(owner)}) but ISVC references "${runtimeName}" (${describeScope(wanted)})`,
  sourceRuntimeMissing: (runtimeName: string, revision: string) =>
    `runtime ${runtimeName} not found; serving from pinned revision ${revision}`,
  /** RuntimeReady False/RuntimeNotFound and its Warning event: upstream's RuntimeNotFoundError text. */
  runtimeNotFound: (runtimeName: string, namespace: string) => `runtime ${runtimeName} not found in namespace ${namespace} or at cluster scope`,
  planPinned: (runID: string) => `run ${runID} pinned`,
  /** RolloutPlanReady True/NoActiveRun in the status write that closes a run. */
  lastRunClosed: (outcome: string) => `last run closed ${outcome}`,
  /** RolloutPlanReady True/NoActiveRun otherwise. */
  noRolloutInProgress: 'no rollout in progress',
  /** RolloutRunOpened, with the whole-plan digest (the repin CAS value). */
  runOpened: (runID: string, planDigest: string) => `run ${runID} opened (${planDigest})`,
  /** RolloutRunClosed for a run that reached an outcome of its own. */
  runClosed: (runID: string, outcome: string) => `run ${runID} closed: ${outcome}`,
  /** RolloutRunClosed for a run a new target revision replaced. */
  runSuperseded: (runID: string) => `run ${runID} superseded by a new target revision; opening a fresh run`,
  /** RolloutPlanParked (Warning), when RolloutPlanReady turns False: no run opens. */
  planParked: (reason: string, message: string) =>
    `rollout parked (${reason}): ${message} — the new revision is held, the previous revision keeps serving`,
  /** RolloutPlanDrift True/SpecNewerThanRun when spec.rollout lost every group mid-run. */
  planDriftRolloutRemoved:
    'spec.rollout removed mid-run; the pinned plan continues — abort with ome.io/rollout-rollback, or repin to the empty plan with ome.io/rollout-repin',
  /** RolloutPlanDrift True/SpecNewerThanRun when the number of groups changed mid-run. */
  planDriftShapeChanged: 'spec.rollout group shape changed mid-run; the pinned plan continues until the next run or a repin',
  /** RolloutPlanDrift True/SpecNewerThanRun when the pinned plan's canary group is gone from the spec. */
  planDriftCanaryRemoved: 'the canary group was removed mid-run; the pinned canary continues — abort with ome.io/rollout-rollback, or repin with ome.io/rollout-repin',
  /** RolloutGroupRemovedMidRun (Warning), with planDriftRolloutRemoved. */
  rolloutRemovedEvent: (runID: string) =>
    `spec.rollout was removed while run ${runID} is pinned; the run continues on its pinned plan (use ome.io/rollout-rollback or ome.io/rollout-repin to abort)`,
  /** RolloutGroupRemovedMidRun (Warning), with planDriftCanaryRemoved. */
  canaryGroupRemovedEvent: (runID: string) =>
    `canary group removed while run ${runID} is pinned; deleting the group does not abort a pinned run — use ome.io/rollout-rollback or ome.io/rollout-repin`,
  planDrift: (index: number, live: string, pinned: string) =>
    `groups[${index}]: live render ${live} differs from pinned ${pinned}; the edit applies at the next run (or via ome.io/rollout-repin)`,
  repinned: (runID: string, from: string, to: string) => `run ${runID} repinned: ${from} -> ${to}`,
  repinDoesNotRender: (reason: string, message: string) =>
    `repin rejected: the current source does not render (${reason}): ${message}`,
  repinStaleDigest: (want: string, fresh: string) =>
    `repin rejected: expected render digest ${want} but the current render is ${fresh} (a concurrent edit landed; re-issue with the current digest)`,
} as const;

/**
 * Our `ome.io/runtime-sync` event messages (upstream has none: it acts on any new value).
 * The value arrives quoted and bounded (see previewAnnotationValue).
 */
export const SyncTokenMessage = {
  reused: (quotedToken: string) =>
    `ome.io/runtime-sync ${quotedToken} already rolled this InferenceService forward once and takes effect only once: set a new value, such as a date or a ticket number, to roll forward`,
  unusable: (quotedToken: string, problem: string) =>
    `ome.io/runtime-sync value ${quotedToken} is ignored: ${problem}, so it cannot be recorded in status.lastRuntimeSyncToken as it is; set a plain-text value, such as a date or a ticket number, to roll forward`,
} as const;

/**
 * Our event for a same-named Deployment the plane does not own (upstream's controller
 * adopts nothing either, but says nothing). `problem` is deploymentOwnershipProblem's.
 */
export const WorkloadMessage = {
  notOwned: (namespace: string, name: string, problem: string) =>
    `Deployment ${namespace}/${name} is not owned by this InferenceService (${problem}), so it was left unchanged; ` +
    'delete or rename it to let the control plane render its own, or set RENDER_WORKLOADS=false where another controller renders workloads',
} as const;

export const WebhookName = {
  inferenceService: 'inferenceservice.ome-webhook-server.validator',
  controllerRevisionImmutability: 'controllerrevision-immutability.ome-webhook-server.validator',
} as const;

/** The value of `ome.io/rollout-repin` that skips the digest check. */
export const REPIN_NOW = 'now';

// ---------------------------------------------------------------------------------------
// Rollout plan pinning and repin: refusals, rejections, phases and holds.
// ---------------------------------------------------------------------------------------

/** Value of `ome.io/rollout-paused` that holds rollout work ("freeze" also stops repair). */
export const ROLLOUT_PAUSED_ANNOTATION = 'ome.io/rollout-paused';

/** Controller-side repin rejections beyond the upstream templates in `Message`. */
export const RepinMessage = {
  /** `value` arrives quoted and bounded (see previewAnnotationValue). */
  invalidValue: (quotedValue: string) =>
    `repin rejected: annotation value ${quotedValue} is neither "now" nor a plan digest (rp1: followed by 12 lowercase hex characters)`,
  noActiveRun: 'repin rejected: no active rollout run to repin',
  topologyChanged: (detail: string) =>
    `repin rejected: live and pinned rollout topology differ (${detail}); the edit applies at the next run`,
} as const;

/** `kubectl ome rollout repin` refusals, exactly as the CLI prints them. */
export const RepinRefusal = {
  noActiveRun: 'rollout repin refused: no active pinned run',
  emptyLivePlan: 'rollout repin refused: empty live plans are not supported by this command',
  evidence: 'rollout repin refused: controller plan evidence is missing, stale or inconsistent',
  alreadyPinned: 'rollout repin refused: the current plan is already pinned',
  topology: 'rollout repin refused: live and pinned rollout topology differ',
  multipleCanaries: 'rollout repin refused: this command supports at most one canary group',
  mailboxPresent: 'rollout repin refused: a rollout action mailbox is already present',
} as const;
export type RepinRefusalMessage = (typeof RepinRefusal)[keyof typeof RepinRefusal];

/** The repin counter and its `outcome` label values. */
export const REPIN_METRIC = 'ome_rollout_repin_total';
export const RepinOutcome = { applied: 'applied', rejected: 'rejected' } as const;

export const RolloutPhaseName = {
  stable: 'Stable',
  canarying: 'Canarying',
  pending: 'Pending',
  paused: 'Paused',
  promoting: 'Promoting',
  rollingBack: 'RollingBack',
  rolledBack: 'RolledBack',
  failed: 'Failed',
} as const;

export const RolloutHoldName = {
  globalPause: 'GlobalPause',
  planParked: 'PlanParked',
  canaryPreStep: 'CanaryPreStep',
  observedPaused: 'ObservedPaused',
} as const;

// --- Runtime revisions and the rendered engine workload ---

/** Labels and annotations on the engine Deployment rendered from a runtime or a revision. */
export const WorkloadLabel = {
  inferenceService: 'ome.io/inferenceservice',
  component: 'ome.io/component',
  /**
   * `"true"` on a rendered Deployment (stable or canary) whose component is in one of its
   * InferenceService's rollout groups: a run may wait on its readiness, so the forwarder
   * passes that on (docs/events.md). The plane's own label; OME's renders lack it.
   */
  rolloutGrouped: 'ome.io/rollout-grouped',
  servingRuntime: 'serving-runtime',
} as const;

export const WorkloadAnnotation = {
  /** The revision the pods were rendered from, or `live`. */
  renderedFrom: 'ome.io/rendered-from',
} as const;

export const RENDERED_FROM_LIVE = 'live';

/** The webhook's reason for a revision pin without `autoSync: false`. */
export const REVISION_REQUIRES_PINNING_MESSAGE =
  'spec.runtime.revision requires spec.runtime.autoSync=false; AutoSync=true would silently ignore the pin';
