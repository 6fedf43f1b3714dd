/**
 * The rollout-aware engine workload writer. The pin use-case renders the engine
 * Deployment it wants and hands it here; for an InferenceService whose engine belongs to
 * a rollout group, a new revision does not replace the running one: a rollout run opens,
 * pins the live plan, and brings the revision up as that plan says. Everything else goes
 * straight to the direct writer.
 */
import { Resources } from '../model/resources';
import { checkFence, withFence } from '../pinning/direct-workload-writer';
import type { Clock } from '../ports/clock';
import type { ClusterClient } from '../ports/cluster';
import type { EngineWorkloadOutcome, EngineWorkloadRequest, EngineWorkloadWriter, WorkloadFence } from '../ports/workloads';
import type { MetricsBinding } from '../rollout/analysis';
import { canaryReplicasFor } from '../rollout/canary';
import { declaredKindOf } from '../rollout/plan';
import { closeRun, formatKubeTime, openRun } from '../rollout/run';
import type { CanaryState, RolloutGroup, RolloutRun, RunTarget } from '../rollout/types';
import { EventReason, Message } from '../vocabulary';
import {
  applyPlanStatus,
  clearCanaryStates,
  commitStatus,
  getRolloutIsvc,
  groupIndexFor,
  recordRolloutEvent,
  renderLivePlan,
  setRolloutPhase,
  specGroupsOf,
  writeCanaryStates,
  type RolloutIsvc,
  type RolloutIsvcStatus,
} from './rollout-status';
import {
  canaryDeploymentName,
  computeWorkloadRevision,
  containsJson,
  deleteIfPresent,
  getOptional,
  renderCanaryDeployment,
  revisionOf,
  usesOmeNative,
  withWorkloadRevision,
  type Deployment,
} from './workloads';

export interface RolloutWorkloadWriterDeps {
  client: ClusterClient;
  /** Writes a Deployment as rendered (create or replace): first revisions and services without rollout groups. */
  direct: EngineWorkloadWriter;
  clock: Clock;
  /** What the cluster binds for analysis steps (see renderLivePlan); nothing by default. */
  metrics?: MetricsBinding;
}

/** The run events' messages, as upstream's run layer words them (see `Message` in vocabulary). */
export const RolloutRunMessage = {
  opened: (run: RolloutRun, digest: string) => Message.runOpened(run.runID, digest),
  closed: (runID: string, outcome: string) => Message.runClosed(runID, outcome),
  superseded: (runID: string) => Message.runSuperseded(runID),
  parked: (reason: string, message: string) => Message.planParked(reason, message),
  unexecutable: (run: RolloutRun) =>
    `run ${run.runID} cannot be executed: none of its targets (${(run.targetRevisions ?? []).map((t) => t.component).join(', ') || 'none'}) is in a pinned group`,
} as const;

/** Builds the writer; `direct` is the plain create-or-replace writer it wraps. */
export function createRolloutWorkloadWriter(deps: RolloutWorkloadWriterDeps): EngineWorkloadWriter {
  return { apply: (request) => applyComponentWorkload(deps, request) };
}

async function applyComponentWorkload(deps: RolloutWorkloadWriterDeps, request: EngineWorkloadRequest): Promise<EngineWorkloadOutcome> {
  const component = request.component ?? 'engine';
  // The engine's write may have opened a run a moment ago: a later component reads the ISVC afresh.
  const basis = component === 'engine' ? undefined : await getRolloutIsvc(deps.client, request.isvc.metadata.namespace ?? '', request.isvc.metadata.name);
  const isvc = (basis ?? request.isvc) as RolloutIsvc;
  const desired = withWorkloadRevision(request.desired as Deployment);
  const direct = (): Promise<EngineWorkloadOutcome> => deps.direct.apply({ ...request, desired });
  const run = isvc.status?.rollout?.activeRun;
  const grouped = groupIndexFor(specGroupsOf(isvc), component) >= 0;
  const target = run?.targetRevisions?.find((entry) => entry.component === component);
  if ((!grouped && !target) || !usesOmeNative(isvc)) return direct();

  const namespace = desired.metadata.namespace ?? isvc.metadata.namespace ?? '';
  const stable = await getOptional<Deployment>(deps.client, namespace, desired.metadata.name);
  // A new service's first revision deploys directly: there is nothing to roll from.
  if (!stable) return direct();

  const desiredRevision = computeWorkloadRevision(request.desired as Deployment);
  const stableRevision = revisionOf(stable, request.desired as Deployment);

  if (run && target?.revision === desiredRevision) {
    await ensureRunWorkloads(deps, run, component, desired, direct, request.fence);
    return 'run-in-progress';
  }
  if (desiredRevision === stableRevision) {
    if (run && target) await closeReverted(deps, isvc, run, component, desired);
    return direct();
  }
  if (!run && wasRolledBack(isvc.status, desiredRevision)) {
    // The revision was rolled back: it stays out until the spec renders another one.
    return 'unchanged';
  }
  if (!grouped) return direct();
  return openRunFor(deps, isvc, { component, desired, desiredRevision, stableRevision }, direct, request.fence);
}

/**
 * The superseded run's other targets that still have to roll: a component whose group
 * the run already completed (PHASE `Stable`, set only by the executor) is not rolled again.
 */
function unfinishedTargets(status: RolloutIsvcStatus | undefined, previous: RolloutRun | undefined, changed: string): RunTarget[] {
  return (previous?.targetRevisions ?? []).filter(
    (entry) => entry.component !== changed && entry.revision && status?.components?.[entry.component]?.rolloutPhase !== 'Stable',
  );
}

/** Whether any canary group's record rejects `revision` (each group records its first component's revision). */
function wasRolledBack(status: RolloutIsvcStatus | undefined, revision: string): boolean {
  const states = [status?.canary, ...Object.values(status?.components ?? {}).map((entry) => entry.canary)];
  return states.some((state) => state?.rolledBackRevisionHash === revision);
}

/**
 * Opens a run for the component's new revision. A run already open is superseded by one
 * that keeps its other targets, so a runtime change that renders engine and decoder anew
 * ends in one run targeting both.
 */
async function openRunFor(
  deps: RolloutWorkloadWriterDeps,
  isvc: RolloutIsvc,
  change: { component: string; desired: Deployment; desiredRevision: string; stableRevision: string },
  direct: () => Promise<EngineWorkloadOutcome>,
  fence: WorkloadFence | undefined,
): Promise<EngineWorkloadOutcome> {
  const now = new Date(deps.clock.now());
  const live = await renderLivePlan(deps.client, isvc, deps.metrics);
  const status: RolloutIsvcStatus = structuredClone(isvc.status ?? {});
  const previous = status.rollout?.activeRun;
  if (!live.ok) {
    // No run opens on a plan that does not render: the stable revision keeps serving.
    applyPlanStatus(status, isvc, live, now);
    await commitStatus(deps.client, isvc, status);
    // Recorded on every parked render (the recorder folds repeats into one Event's count):
    // RolloutPlanReady may already be False from a spec or policy change, so its
    // transition, which upstream records on, is not a reliable moment here.
    await recordRolloutEvent(deps.client, isvc, {
      type: 'Warning',
      reason: EventReason.rolloutPlanParked,
      message: RolloutRunMessage.parked(live.reason, live.message),
    });
    return 'unchanged';
  }
  // A superseded canary rolls from the same stable Deployment, which it never replaced.
  const kept = unfinishedTargets(isvc.status, previous, change.component);
  const run = openRun({
    isvcName: isvc.metadata.name,
    targetRevisions: [...kept, { component: change.component, revision: change.desiredRevision, stableRevision: change.stableRevision }],
    plan: live.plan,
    now,
  });
  status.rollout = { ...status.rollout, activeRun: run };
  if (previous) status.rollout.lastRun = closeRun(previous, 'Superseded', now);
  const pinned = run.plan.groups ?? [];
  clearCanaryStates(status);
  const states = new Map<number, CanaryState>();
  for (const [index, { group }] of pinned.entries()) {
    const first = (group.components ?? []).map((name) => run.targetRevisions?.find((entry) => entry.component === name)).find((entry) => entry?.revision);
    if (!first) continue;
    if (declaredKindOf(group) === 'canary') {
      states.set(index, {
        canaryRevisionHash: first.revision as string,
        ...(first.stableRevision ? { stableRevisionHash: first.stableRevision } : {}),
        currentStep: 0,
        stepEnteredTime: formatKubeTime(now),
        observedTrafficWeight: 0,
      });
    }
    setRolloutPhase(status, group.components ?? [], 'Pending');
  }
  writeCanaryStates(status, pinned, states);
  applyPlanStatus(status, isvc, live, now);
  await commitStatus(deps.client, isvc, status);
  if (previous) {
    await recordRolloutEvent(deps.client, isvc, {
      type: 'Normal',
      reason: EventReason.rolloutRunClosed,
      message: RolloutRunMessage.superseded(previous.runID),
    });
  }
  await recordRolloutEvent(deps.client, isvc, {
    type: 'Normal',
    reason: EventReason.rolloutRunOpened,
    message: RolloutRunMessage.opened(run, live.plan.digest),
  });
  await ensureRunWorkloads(deps, run, change.component, change.desired, direct, fence);
  return 'run-opened';
}

/**
 * Makes the run's workloads exist: the canary Deployment (at the first step's capacity
 * when new; the step machine scales it after) or, for blueGreen and rollingUpdate, the
 * replaced stable Deployment. Called again on every render, so a write lost after the
 * status write is redone.
 */
async function ensureRunWorkloads(
  deps: RolloutWorkloadWriterDeps,
  run: RolloutRun,
  component: string,
  desired: Deployment,
  direct: () => Promise<EngineWorkloadOutcome>,
  fence: WorkloadFence | undefined,
): Promise<void> {
  const pinned = run.plan.groups ?? [];
  const group: Partial<RolloutGroup> = pinned[groupIndexFor(pinned.map((group) => group.group), component)]?.group ?? {};
  const namespace = desired.metadata.namespace ?? '';
  const canaryName = canaryDeploymentName(desired.metadata.name);
  if (declaredKindOf(group) !== 'canary') {
    await deleteIfPresent(deps.client, namespace, canaryName);
    await direct();
    return;
  }
  const existing = await getOptional<Deployment>(deps.client, namespace, canaryName);
  const firstStep = group.canary?.steps?.[0];
  const replicas = existing?.spec?.replicas ?? canaryReplicasFor(firstStep?.capacity, desired.spec?.replicas ?? 1);
  const canary = renderCanaryDeployment(desired, replicas);
  // Fenced like the stable Deployment: a worker that lost its lease cannot bring back an older canary.
  checkFence(existing, fence);
  if (!existing) {
    await deps.client.create(Resources.deployments, withFence(canary, fence));
    return;
  }
  if (containsJson(existing, { metadata: { annotations: canary.metadata.annotations }, spec: canary.spec })) return;
  await deps.client.replace(Resources.deployments, withFence({
    ...canary,
    metadata: { ...canary.metadata, resourceVersion: existing.metadata.resourceVersion },
  }, fence));
}

/**
 * The spec went back to the stable revision while a run was rolling another one: the
 * run is superseded, the canary goes, and the direct write restores stable capacity.
 */
async function closeReverted(deps: RolloutWorkloadWriterDeps, isvc: RolloutIsvc, run: RolloutRun, component: string, desired: Deployment): Promise<void> {
  const now = new Date(deps.clock.now());
  const status: RolloutIsvcStatus = structuredClone(isvc.status ?? {});
  status.rollout = { ...status.rollout, lastRun: closeRun(run, 'Superseded', now) };
  delete status.rollout.activeRun;
  clearCanaryStates(status);
  setRolloutPhase(status, [component], 'Stable');
  applyPlanStatus(status, isvc, await renderLivePlan(deps.client, isvc, deps.metrics), now);
  await commitStatus(deps.client, isvc, status);
  await recordRolloutEvent(deps.client, isvc, {
    type: 'Normal',
    reason: EventReason.rolloutRunClosed,
    message: RolloutRunMessage.superseded(run.runID),
  });
  await deleteIfPresent(deps.client, desired.metadata.namespace ?? '', canaryDeploymentName(desired.metadata.name));
}
