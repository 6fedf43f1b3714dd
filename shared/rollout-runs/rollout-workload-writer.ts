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
import { canaryReplicasFor } from '../rollout/canary';
import { declaredKindOf } from '../rollout/plan';
import { closeRun, formatKubeTime, openRun } from '../rollout/run';
import type { RolloutGroup, RolloutRun } from '../rollout/types';
import { EventReason } from '../vocabulary';
import {
  applyPlanStatus,
  clearCanaryStates,
  commitStatus,
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
}

export const RolloutRunMessage = {
  opened: (run: RolloutRun, digest: string) =>
    `run ${run.runID} opened for ${(run.targetRevisions ?? []).map((t) => `${t.component}=${t.revision} (stable ${t.stableRevision})`).join(', ')}; plan ${digest}`,
  closed: (runID: string, outcome: string) => `run ${runID} closed: ${outcome}`,
  parked: (revision: string, reason: string, message: string) =>
    `rollout of engine revision ${revision} waits: the plan does not render (${reason}): ${message}`,
} as const;

/** Builds the writer; `direct` is the plain create-or-replace writer it wraps. */
export function createRolloutWorkloadWriter(deps: RolloutWorkloadWriterDeps): EngineWorkloadWriter {
  return { apply: (request) => applyEngineWorkload(deps, request) };
}

async function applyEngineWorkload(deps: RolloutWorkloadWriterDeps, request: EngineWorkloadRequest): Promise<EngineWorkloadOutcome> {
  const isvc = request.isvc as RolloutIsvc;
  const desired = withWorkloadRevision(request.desired as Deployment);
  const direct = (): Promise<EngineWorkloadOutcome> => deps.direct.apply({ ...request, desired });
  const run = isvc.status?.rollout?.activeRun;
  const grouped = groupIndexFor(specGroupsOf(isvc), 'engine') >= 0;
  if ((!grouped && !run) || !usesOmeNative(isvc)) return direct();

  const namespace = desired.metadata.namespace ?? isvc.metadata.namespace ?? '';
  const stable = await getOptional<Deployment>(deps.client, namespace, desired.metadata.name);
  // A new service's first revision deploys directly: there is nothing to roll from.
  if (!stable) return direct();

  const desiredRevision = computeWorkloadRevision(request.desired as Deployment);
  const stableRevision = revisionOf(stable, request.desired as Deployment);
  const target = run?.targetRevisions?.find((entry) => entry.component === 'engine');

  if (run && target?.revision === desiredRevision) {
    await ensureRunWorkloads(deps, run, desired, direct, request.fence);
    return 'run-in-progress';
  }
  if (desiredRevision === stableRevision) {
    if (run) await closeReverted(deps, isvc, run, desired);
    return direct();
  }
  if (!run && isvc.status?.canary?.rolledBackRevisionHash === desiredRevision) {
    // The revision was rolled back: it stays out until the spec renders another one.
    return 'unchanged';
  }
  if (!grouped) return direct();
  return openRunFor(deps, isvc, desired, { desiredRevision, stableRevision }, direct, request.fence);
}

/** Opens a run for the new revision (superseding an older one) and starts bringing it up. */
async function openRunFor(
  deps: RolloutWorkloadWriterDeps,
  isvc: RolloutIsvc,
  desired: Deployment,
  revisions: { desiredRevision: string; stableRevision: string },
  direct: () => Promise<EngineWorkloadOutcome>,
  fence: WorkloadFence | undefined,
): Promise<EngineWorkloadOutcome> {
  const now = new Date(deps.clock.now());
  const live = await renderLivePlan(deps.client, isvc);
  const status: RolloutIsvcStatus = structuredClone(isvc.status ?? {});
  const previous = status.rollout?.activeRun;
  if (!live.ok) {
    // No run opens on a plan that does not render: the stable revision keeps serving.
    applyPlanStatus(status, isvc, live, now);
    await commitStatus(deps.client, isvc, status);
    await recordRolloutEvent(deps.client, isvc, {
      type: 'Warning',
      reason: EventReason.rolloutPlanParked,
      message: RolloutRunMessage.parked(revisions.desiredRevision, live.reason, live.message),
    });
    return 'unchanged';
  }
  // A superseded canary rolls from the same stable Deployment, which it never replaced.
  const run = openRun({
    isvcName: isvc.metadata.name,
    targetRevisions: [{ component: 'engine', revision: revisions.desiredRevision, stableRevision: revisions.stableRevision }],
    plan: live.plan,
    now,
  });
  status.rollout = { ...status.rollout, activeRun: run };
  if (previous) status.rollout.lastRun = closeRun(previous, 'Superseded', now);
  const pinned = run.plan.groups ?? [];
  const engineIndex = groupIndexFor(pinned.map((group) => group.group), 'engine');
  const engineGroup: Partial<RolloutGroup> = pinned[engineIndex]?.group ?? {};
  clearCanaryStates(status);
  if (declaredKindOf(engineGroup) === 'canary') {
    const states = new Map([[engineIndex, {
      canaryRevisionHash: revisions.desiredRevision,
      stableRevisionHash: revisions.stableRevision,
      currentStep: 0,
      stepEnteredTime: formatKubeTime(now),
      observedTrafficWeight: 0,
    }]]);
    writeCanaryStates(status, pinned, states);
  }
  setRolloutPhase(status, engineGroup.components ?? ['engine'], 'Pending');
  applyPlanStatus(status, isvc, live, now);
  await commitStatus(deps.client, isvc, status);
  if (previous) {
    await recordRolloutEvent(deps.client, isvc, {
      type: 'Normal',
      reason: EventReason.rolloutRunClosed,
      message: RolloutRunMessage.closed(previous.runID, 'Superseded'),
    });
  }
  await recordRolloutEvent(deps.client, isvc, {
    type: 'Normal',
    reason: EventReason.rolloutRunOpened,
    message: RolloutRunMessage.opened(run, live.plan.digest),
  });
  await ensureRunWorkloads(deps, run, desired, direct, fence);
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
  desired: Deployment,
  direct: () => Promise<EngineWorkloadOutcome>,
  fence: WorkloadFence | undefined,
): Promise<void> {
  const pinned = run.plan.groups ?? [];
  const engineGroup: Partial<RolloutGroup> = pinned[groupIndexFor(pinned.map((group) => group.group), 'engine')]?.group ?? {};
  const namespace = desired.metadata.namespace ?? '';
  const canaryName = canaryDeploymentName(desired.metadata.name);
  if (declaredKindOf(engineGroup) !== 'canary') {
    await deleteIfPresent(deps.client, namespace, canaryName);
    await direct();
    return;
  }
  const existing = await getOptional<Deployment>(deps.client, namespace, canaryName);
  const firstStep = engineGroup.canary?.steps?.[0];
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
async function closeReverted(deps: RolloutWorkloadWriterDeps, isvc: RolloutIsvc, run: RolloutRun, desired: Deployment): Promise<void> {
  const now = new Date(deps.clock.now());
  const status: RolloutIsvcStatus = structuredClone(isvc.status ?? {});
  status.rollout = { ...status.rollout, lastRun: closeRun(run, 'Superseded', now) };
  delete status.rollout.activeRun;
  clearCanaryStates(status);
  setRolloutPhase(status, ['engine'], 'Stable');
  applyPlanStatus(status, isvc, await renderLivePlan(deps.client, isvc), now);
  await commitStatus(deps.client, isvc, status);
  await recordRolloutEvent(deps.client, isvc, {
    type: 'Normal',
    reason: EventReason.rolloutRunClosed,
    message: RolloutRunMessage.closed(run.runID, 'Superseded'),
  });
  await deleteIfPresent(deps.client, desired.metadata.namespace ?? '', canaryDeploymentName(desired.metadata.name));
}
