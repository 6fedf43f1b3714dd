/**
 * Notifications: the plane's domain events, for operators' rules (Slack, PagerDuty, a
 * ticket). Each is what one committed status write changed, so a status write that
 * loses its race (409) or finds nothing to change announces nothing: the write's own
 * resourceVersion is the idempotency, and a redelivered hint that re-reads a run already
 * closed has nothing to announce. See docs/events.md, "Notifications".
 *
 * Pure: derives the events from the status before and after the write.
 */
import type { KubeObject } from './model/kube-object';
import type { AnalysisMetricResult, RolloutRunOutcome } from './model/rollout';
import type { CanaryState, RolloutRun, RolloutRunRecord, StatusCondition } from './rollout/types';
import { digestPinnedPlan } from './rollout/repin';
import { ConditionType, EventReason, Message, OME_API_VERSION, RuntimeKind } from './vocabulary';
import { describeWaveRuntime, type SyncWave } from './fleet/sync-wave';

/** The source of every event the plane puts on its bus, hints and notifications alike. */
export const NOTIFICATION_SOURCE = 'ome.pinning';

/** One detail-type per notification. */
export const NotificationType = {
  rolloutRunOpened: 'RolloutRunOpened',
  rolloutRunPaused: 'RolloutRunPaused',
  rolloutRunFailed: 'RolloutRunFailed',
  rolloutRunClosed: 'RolloutRunClosed',
  analysisSampleFailed: 'AnalysisSampleFailed',
  driftReported: 'DriftReported',
  driftCleared: 'DriftCleared',
  waveStepAcknowledged: 'WaveStepAcknowledged',
  waveHalted: 'WaveHalted',
  revisionCollected: 'RevisionCollected',
} as const;
export type NotificationTypeName = (typeof NotificationType)[keyof typeof NotificationType];

/** The `detail` of a notification: the cluster, the object, the reason and the message. */
export interface NotificationDetail {
  clusterId: string;
  /** Absent for the plane's own records (a fleet sync wave, kind `SyncWave`). */
  apiVersion?: string;
  kind: string;
  namespace?: string;
  name: string;
  uid?: string;
  /** The object's resourceVersion after the write that made the change. */
  resourceVersion?: string;
  /** The Kubernetes Event reason of the change, where it has one. */
  reason: string;
  message: string;
  /** When the plane committed the change (RFC 3339). */
  observedAt: string;
  runID?: string;
  outcome?: RolloutRunOutcome;
  /** The component whose canary paused, failed or was sampled. */
  component?: string;
  /** The canary step (0-based, as `status.canary.currentStep`). */
  step?: number;
  /** The failed metrics of a failed analysis sample. */
  failedMetrics?: AnalysisMetricResult[];
  /** The drift condition reported or cleared: `RuntimeDrifted` or `RolloutPlanDrift`. */
  condition?: string;
  /** A wave's step (0-based, in the wave's cluster order) and how many it has. */
  waveStep?: number;
  waveSteps?: number;
  /** The InferenceService a halted wave names, when one failed (not the cluster as a whole). */
  target?: { namespace: string; name: string };
  /** How many of the runtime's revisions one sweep deleted, and the first of their names. */
  revisionCount?: number;
  revisions?: string[];
}

export interface NotificationEvent {
  source: typeof NOTIFICATION_SOURCE;
  detailType: NotificationTypeName;
  detail: NotificationDetail;
}

/** What a status write changed, before it is tied to a cluster and an object. */
export type StatusTransition = { type: NotificationTypeName } & Pick<
  NotificationDetail,
  'reason' | 'message' | 'runID' | 'outcome' | 'component' | 'step' | 'failedMetrics' | 'condition'
>;

/** The part of an InferenceService status the rollout notifications read. */
export interface RolloutStatusView {
  rollout?: { activeRun?: RolloutRun; lastRun?: RolloutRunRecord };
  components?: Record<string, { rolloutPhase?: string; canary?: CanaryState } | undefined>;
  canary?: CanaryState;
}

/** Phases a canary enters that an operator wants to hear about, and the notification each gives. */
const ANNOUNCED_PHASES: ReadonlyMap<string, NotificationTypeName> = new Map([
  ['Paused', NotificationType.rolloutRunPaused],
  ['Failed', NotificationType.rolloutRunFailed],
]);

export const NotificationMessage = {
  paused: (runID: string, component: string, step: number) =>
    `run ${runID}: ${component} paused at canary step ${step}; kubectl ome rollout promote releases it`,
  pausedForAnalysis: (runID: string, component: string, step: number) =>
    `run ${runID}: ${component} paused at canary step ${step}, waiting for its analysis (kubectl ome rollout promote --override-analysis --yes passes it)`,
  pausedForBake: (runID: string, component: string, step: number, duration: string) =>
    `run ${runID}: ${component} paused at canary step ${step} for its ${duration} bake; it moves on by itself`,
  failed: (runID: string, component: string, step: number) => `run ${runID}: ${component} failed at canary step ${step}`,
  analysisFailed: (component: string, step: number, failures: number, metrics: readonly AnalysisMetricResult[]) =>
    `${component} analysis at canary step ${step} failed (${failures} failed ${failures === 1 ? 'check' : 'checks'})${metrics.length > 0 ? `: ${metrics.map(describeMetric).join('; ')}` : ''}`,
} as const;

function describeMetric(result: AnalysisMetricResult): string {
  if (result.message) return `${result.name}: ${result.message}`;
  const value = result.value ?? 'no value';
  return result.operator && result.threshold !== undefined ? `${result.name} ${value}, wanted ${result.operator} ${result.threshold}` : `${result.name} ${value}`;
}

/**
 * What a rollout status write announced, in the order it happened: a run closed (its
 * outcome) before the run that replaced it opened; a canary entering Paused or Failed; a
 * canary's failed-check count rising. A status equal to the one before announces nothing.
 */
export function rolloutTransitionsOf(before: RolloutStatusView | undefined, after: RolloutStatusView | undefined): StatusTransition[] {
  const heldRun = before?.rollout?.activeRun;
  const run = after?.rollout?.activeRun;
  const lastRun = after?.rollout?.lastRun;
  const closed = heldRun !== undefined && run?.runID !== heldRun.runID && lastRun !== undefined && lastRun.closedAt !== before?.rollout?.lastRun?.closedAt;
  const opened = run !== undefined && run.runID !== heldRun?.runID;
  // The canaries' changes belong to the run open after the write, or to the one it closed.
  const canaryRun = run ?? (closed ? heldRun : undefined);
  const canaries = canaryRun ? canaryTransitionsOf(canaryRun, before, after) : [];
  return [
    ...(opened ? [] : canaries),
    ...(closed
      ? [
          {
            type: NotificationType.rolloutRunClosed,
            reason: EventReason.rolloutRunClosed,
            message: lastRun.outcome === 'Superseded' ? Message.runSuperseded(heldRun.runID) : Message.runClosed(heldRun.runID, lastRun.outcome),
            runID: heldRun.runID,
            outcome: lastRun.outcome,
          },
        ]
      : []),
    ...(opened ? [{ type: NotificationType.rolloutRunOpened, reason: EventReason.rolloutRunOpened, message: Message.runOpened(run.runID, digestPinnedPlan(run)), runID: run.runID }, ...canaries] : []),
  ];
}

interface CanarySlot {
  phase?: string;
  canary?: CanaryState;
}

/** Each component's phase and canary; a status without per-component entries has the engine's in `status.canary`. */
function canarySlotsOf(status: RolloutStatusView | undefined): Map<string, CanarySlot> {
  const slots = new Map<string, CanarySlot>();
  for (const [component, entry] of Object.entries(status?.components ?? {})) {
    if (entry) slots.set(component, { ...(entry.rolloutPhase ? { phase: entry.rolloutPhase } : {}), ...(entry.canary ? { canary: entry.canary } : {}) });
  }
  if (slots.size === 0 && status?.canary) slots.set('engine', { canary: status.canary });
  return slots;
}

function canaryTransitionsOf(run: RolloutRun, before: RolloutStatusView | undefined, after: RolloutStatusView | undefined): StatusTransition[] {
  const previous = canarySlotsOf(before);
  return [...canarySlotsOf(after)].flatMap(([component, slot]) => slotTransitionsOf(run, component, previous.get(component), slot));
}

/**
 * How the message says the pause ends, by the component's pinned step: its analysis (a
 * promote alone does not pass it), its timed bake (a promote does not cut it short), or a
 * promote at a manual gate.
 */
function pausedMessage(run: RolloutRun, component: string, step: number): string {
  const pinned = (run.plan.groups ?? []).find((entry) => entry.group.canary && (entry.group.components ?? []).some((name) => name === component));
  const current = pinned?.group.canary?.steps?.[step];
  if (current?.analysis !== undefined) return NotificationMessage.pausedForAnalysis(run.runID, component, step);
  if (current?.pause?.duration) return NotificationMessage.pausedForBake(run.runID, component, step, current.pause.duration);
  return NotificationMessage.paused(run.runID, component, step);
}

function slotTransitionsOf(run: RolloutRun, component: string, before: CanarySlot | undefined, after: CanarySlot): StatusTransition[] {
  const { runID } = run;
  const transitions: StatusTransition[] = [];
  const step = after.canary?.currentStep ?? 0;
  const failures = after.canary?.analysisFailedChecks ?? 0;
  const sameCanary = before?.canary?.canaryRevisionHash === after.canary?.canaryRevisionHash;
  const failuresBefore = sameCanary ? (before?.canary?.analysisFailedChecks ?? 0) : 0;
  if (failures > failuresBefore) {
    const failedMetrics = (after.canary?.metricResults ?? []).filter((result) => !result.passed);
    transitions.push({
      type: NotificationType.analysisSampleFailed,
      reason: NotificationType.analysisSampleFailed,
      message: NotificationMessage.analysisFailed(component, step, failures, failedMetrics),
      runID,
      component,
      step,
      failedMetrics,
    });
  }
  const announced = after.phase === undefined ? undefined : ANNOUNCED_PHASES.get(after.phase);
  if (announced && before?.phase !== after.phase) {
    const message = announced === NotificationType.rolloutRunPaused ? pausedMessage(run, component, step) : NotificationMessage.failed(runID, component, step);
    transitions.push({ type: announced, reason: announced, message, runID, component, step });
  }
  return transitions;
}

/** The conditions whose turning True is drift an operator hears about. */
const DRIFT_CONDITIONS: readonly string[] = [ConditionType.runtimeDrifted, ConditionType.rolloutPlanDrift];

/**
 * Drift reported (a drift condition turned True, or stayed True for a new reason) or
 * cleared (it was True and is no longer: RuntimeDrifted is removed then, as upstream
 * removes it), with the condition's own reason and message, upstream's texts. A condition that stays as it was announces nothing.
 */
export function driftTransitionsOf(before: { conditions?: StatusCondition[] } | undefined, after: { conditions?: StatusCondition[] } | undefined): StatusTransition[] {
  return DRIFT_CONDITIONS.flatMap((type): StatusTransition[] => {
    const was = before?.conditions?.find((condition) => condition.type === type);
    const now = after?.conditions?.find((condition) => condition.type === type);
    const drifted = now?.status === 'True';
    if (drifted && (was?.status !== 'True' || was.reason !== now.reason)) {
      return [{ type: NotificationType.driftReported, condition: type, reason: now.reason ?? '', message: now.message ?? '' }];
    }
    if (!drifted && was?.status === 'True') {
      return [{ type: NotificationType.driftCleared, condition: type, reason: now?.reason ?? '', message: now?.message ?? `${type} cleared` }];
    }
    return [];
  });
}

/** Everything a status write of an InferenceService announces: its drift, then its rollout. */
export function statusTransitionsOf(
  before: (RolloutStatusView & { conditions?: StatusCondition[] }) | undefined,
  after: (RolloutStatusView & { conditions?: StatusCondition[] }) | undefined,
): StatusTransition[] {
  return [...driftTransitionsOf(before, after), ...rolloutTransitionsOf(before, after)];
}

export const WaveNotificationMessage = {
  acknowledged: (wave: SyncWave, index: number) =>
    `sync wave ${wave.id}: cluster ${wave.clusters[index]?.clusterId ?? ''} acknowledged ${describeWaveRuntime(wave.runtime)} (${index + 1} of ${wave.clusters.length})`,
  halted: (wave: SyncWave, message: string) => `sync wave ${wave.id} halted: ${message}`,
} as const;

/**
 * What one saved write of a fleet sync wave announced: each cluster it newly records as
 * acknowledged, and the halt it records. Every wave write is conditional on the version it
 * read, so only the writer that took the step announces it.
 */
export function waveNotificationsOf(before: SyncWave, after: SyncWave, observedAt: string): NotificationEvent[] {
  const about = (clusterId: string) => ({ clusterId, kind: 'SyncWave', name: after.id, observedAt, waveSteps: after.clusters.length });
  const events: NotificationEvent[] = after.clusters.flatMap((step, index): NotificationEvent[] =>
    step.state === 'Acknowledged' && before.clusters[index]?.state !== 'Acknowledged'
      ? [
          {
            source: NOTIFICATION_SOURCE,
            detailType: NotificationType.waveStepAcknowledged,
            detail: { ...about(step.clusterId), reason: 'Acknowledged', message: WaveNotificationMessage.acknowledged(after, index), waveStep: index },
          },
        ]
      : [],
  );
  const failure = after.failure;
  if (after.state === 'Halted' && before.state !== 'Halted' && failure) {
    const index = after.clusters.findIndex((step) => step.clusterId === failure.clusterId);
    events.push({
      source: NOTIFICATION_SOURCE,
      detailType: NotificationType.waveHalted,
      detail: {
        ...about(failure.clusterId),
        reason: failure.reason,
        message: WaveNotificationMessage.halted(after, failure.message),
        ...(index >= 0 ? { waveStep: index } : {}),
        ...(failure.namespace && failure.name ? { target: { namespace: failure.namespace, name: failure.name } } : {}),
      },
    });
  }
  return events;
}

/** A transition as the event the bus carries, tied to the cluster and the object as written. */
export function toNotificationEvent(clusterId: string, object: KubeObject, transition: StatusTransition, observedAt: string): NotificationEvent {
  const { metadata } = object;
  const { type, ...fields } = transition;
  return {
    source: NOTIFICATION_SOURCE,
    detailType: type,
    detail: {
      clusterId,
      apiVersion: object.apiVersion,
      kind: object.kind,
      ...(metadata.namespace ? { namespace: metadata.namespace } : {}),
      name: metadata.name,
      ...(metadata.uid ? { uid: metadata.uid } : {}),
      ...(metadata.resourceVersion ? { resourceVersion: metadata.resourceVersion } : {}),
      observedAt,
      ...fields,
    },
  };
}

/** The revisions one sweep deleted of one runtime, as its revisions' labels name it. */
export interface CollectedRevisions {
  /** `ome.io/runtime-of-kind`. */
  kind: string;
  /** `ome.io/runtime-of-namespace`: "" for a ClusterServingRuntime. */
  namespace: string;
  /** `ome.io/runtime-of`. */
  name: string;
  count: number;
  /** The first MAX_NAMED_REVISIONS deleted, in name order. */
  names: string[];
}

/** Revision names one notification lists; the count says how many more there were. */
export const MAX_NAMED_REVISIONS = 10;

/** The runtime's kind: its label, or (for a revision labelled without one) as its namespace implies. */
function runtimeKindOf(entry: Pick<CollectedRevisions, 'kind' | 'namespace'>): string {
  return entry.kind || (entry.namespace ? RuntimeKind.namespaced : RuntimeKind.cluster);
}

export const RevisionNotificationMessage = {
  collected: (collected: CollectedRevisions) => {
    const runtime = `${runtimeKindOf(collected)} ${collected.namespace ? `${collected.namespace}/` : ''}${collected.name}`;
    const more = collected.count - collected.names.length;
    return `collected ${collected.count} ${collected.count === 1 ? 'revision' : 'revisions'} of ${runtime}: ${collected.names.join(', ')}${more > 0 ? ` and ${more} more` : ''}`;
  },
} as const;

/**
 * Counts a sweep's deletes per runtime, keeping a bounded list of names: its memory is one
 * small record per runtime, whatever the number of revisions deleted.
 */
export class CollectedRevisionTally {
  private readonly byRuntime = new Map<string, CollectedRevisions>();

  /** One revision deleted: `runtime` as its labels name it. */
  add(runtime: Pick<CollectedRevisions, 'kind' | 'namespace' | 'name'>, revision: string): void {
    const key = `${runtime.kind}/${runtime.namespace}/${runtime.name}`;
    let entry = this.byRuntime.get(key);
    if (!entry) {
      entry = { ...runtime, count: 0, names: [] };
      this.byRuntime.set(key, entry);
    }
    entry.count += 1;
    if (entry.names.length < MAX_NAMED_REVISIONS) entry.names.push(revision);
  }

  /** Each runtime's deletes, in the order of its first. */
  get collected(): CollectedRevisions[] {
    return [...this.byRuntime.values()].map((entry) => ({ ...entry, names: [...entry.names].sort() }));
  }
}

/**
 * What one cluster's sweep announced: one `RevisionCollected` per runtime it deleted
 * revisions of. A delete carries the uid and resourceVersion the sweep listed, so of two
 * sweeps only one deletes a revision, and only that one counts it.
 */
export function revisionNotificationsOf(clusterId: string, collected: readonly CollectedRevisions[], observedAt: string): NotificationEvent[] {
  return collected
    .filter((entry) => entry.count > 0)
    .map((entry) => ({
      source: NOTIFICATION_SOURCE,
      detailType: NotificationType.revisionCollected,
      detail: {
        clusterId,
        apiVersion: OME_API_VERSION,
        kind: runtimeKindOf(entry),
        ...(entry.namespace ? { namespace: entry.namespace } : {}),
        name: entry.name,
        observedAt,
        reason: NotificationType.revisionCollected,
        message: RevisionNotificationMessage.collected(entry),
        revisionCount: entry.count,
        revisions: entry.names,
      },
    }));
}
