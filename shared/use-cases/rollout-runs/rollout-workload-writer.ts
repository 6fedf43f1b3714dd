/**
 * The rollout-aware engine workload writer. The pin use-case renders the engine
 * Deployment it wants and hands it here; for an InferenceService whose engine belongs to
 * a rollout group, a new revision does not replace the running one: a rollout run opens,
 * pins the live plan, and brings the revision up as that plan says. Everything else goes
 * straight to the direct writer. A pin pass hands its components over together
 * (`applyAll`), so one change opens one run for all of them; in a plan that collapses to a
 * sequence, a later group's workload is held until its turn (`heldBySequence`).
 */
import { Resources } from '../../domain/model/resources';
import { checkFence, withFence } from '../direct-workload-writer';
import type { Clock } from '../../ports/clock';
import type { ClusterClient } from '../../ports/cluster';
import type { StatusTransitions } from '../../ports/notifications';
import type { EngineWorkloadOutcome, EngineWorkloadRequest, EngineWorkloadWriter, WorkloadFence } from '../../ports/workloads';
import type { MetricsBinding } from '../../domain/rollout/analysis';
import { canaryReplicasFor } from '../../domain/rollout/canary';
import { declaredKindOf } from '../../domain/rollout/plan';
import { closeRun, formatKubeTime, openRun } from '../../domain/rollout/run';
import { collapsesToSequential, passSequence, recordedMembers, sequenceTurn, type CoordinationGroupStatus } from '../../domain/rollout/sequence';
import type { CanaryState, RolloutGroup, RolloutRun, RunTarget } from '../../domain/rollout/types';
import { EventReason, Message } from '../../domain/vocabulary';
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
  markRolloutGrouped,
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
  /** Hears of each status write committed, for the plane's notifications (shared/app/notifications.ts). */
  transitions?: StatusTransitions;
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
  return {
    apply: (request) => applyComponentWorkload(deps, request),
    applyAll: (requests) => applyComponentWorkloads(deps, requests),
  };
}

/** What one component's render asks of the writer, decided from one read of the ISVC. */
type Decision =
  | { kind: 'direct' }
  | { kind: 'unchanged' }
  | { kind: 'ensure'; run: RolloutRun }
  | { kind: 'revert'; run: RolloutRun }
  | { kind: 'open'; change: RunChange };

interface RunChange {
  component: string;
  desired: Deployment;
  desiredRevision: string;
  stableRevision: string;
}

async function decide(deps: RolloutWorkloadWriterDeps, isvc: RolloutIsvc, component: string, rendered: Deployment): Promise<Decision> {
  const desired = withWorkloadRevision(rendered);
  const run = isvc.status?.rollout?.activeRun;
  const grouped = groupIndexFor(specGroupsOf(isvc), component) >= 0;
  const target = run?.targetRevisions?.find((entry) => entry.component === component);
  if ((!grouped && !target) || !usesOmeNative(isvc)) return { kind: 'direct' };

  const namespace = desired.metadata.namespace ?? isvc.metadata.namespace ?? '';
  const stable = await getOptional<Deployment>(deps.client, namespace, desired.metadata.name);
  // A new service's first revision deploys directly: there is nothing to roll from.
  if (!stable) return { kind: 'direct' };

  const desiredRevision = computeWorkloadRevision(rendered);
  const stableRevision = revisionOf(stable, rendered);

  if (run && target?.revision === desiredRevision) return { kind: 'ensure', run };
  if (desiredRevision === stableRevision) return run && target ? { kind: 'revert', run } : { kind: 'direct' };
  // The revision was rolled back: it stays out until the spec renders another one.
  if (!run && wasRolledBack(isvc.status, desiredRevision)) return { kind: 'unchanged' };
  if (!grouped) return { kind: 'direct' };
  return { kind: 'open', change: { component, desired, desiredRevision, stableRevision } };
}

async function applyComponentWorkload(deps: RolloutWorkloadWriterDeps, request: EngineWorkloadRequest): Promise<EngineWorkloadOutcome> {
  const component = request.component ?? 'engine';
  // The engine's write may have opened a run a moment ago: a later component reads the ISVC afresh.
  const basis = component === 'engine' ? undefined : await getRolloutIsvc(deps.client, request.isvc.metadata.namespace ?? '', request.isvc.metadata.name);
  const isvc = (basis ?? request.isvc) as RolloutIsvc;
  // In a rollout group, or still a target of the run in progress: a run may wait on its readiness.
  const inRollout = groupIndexFor(specGroupsOf(isvc), component) >= 0 || (isvc.status?.rollout?.activeRun?.targetRevisions ?? []).some((entry) => entry.component === component);
  const rendered = markRolloutGrouped(request.desired as Deployment, inRollout);
  const desired = withWorkloadRevision(rendered);
  const direct = (): Promise<EngineWorkloadOutcome> => deps.direct.apply({ ...request, desired });
  const decision = await decide(deps, isvc, component, rendered);
  switch (decision.kind) {
    case 'direct':
      return direct();
    case 'unchanged':
      return 'unchanged';
    case 'ensure':
      await ensureRunWorkloads(deps, isvc, decision.run, component, desired, direct, request.fence);
      return 'run-in-progress';
    case 'revert':
      await closeReverted(deps, isvc, decision.run, component, desired);
      return direct();
    case 'open':
      return openRunFor(deps, isvc, [decision.change], request.fence, new Map([[component, direct]]));
  }
}

/**
 * One pin pass's renders together: every grouped component whose revision changed opens
 * one run that targets them all (a runtime change that renders engine and decoder anew
 * opens one run, not one per component); then each component is applied as alone, now
 * finding the run open for it.
 */
async function applyComponentWorkloads(deps: RolloutWorkloadWriterDeps, requests: readonly EngineWorkloadRequest[]): Promise<EngineWorkloadOutcome[]> {
  const first = requests[0];
  if (!first) return [];
  // The caller's object, as read (or written) under the lease a moment ago: a write of ours
  // carries its resourceVersion, so anything that moved it since turns into a 409 and a retry.
  const isvc = first.isvc as RolloutIsvc;
  const changes: RunChange[] = [];
  for (const request of requests) {
    const decision = await decide(deps, isvc, request.component ?? 'engine', request.desired as Deployment);
    if (decision.kind === 'open') changes.push(decision.change);
  }
  const opened = new Set<string>();
  const parked = new Set<string>();
  if (changes.length > 1) {
    const outcome = await openRunFor(deps, isvc, changes, first.fence, new Map());
    // A plan that does not render parks every change at once (one event), leaving each stable Deployment serving.
    for (const change of changes) (outcome === 'run-opened' ? opened : parked).add(change.component);
  }
  const outcomes: EngineWorkloadOutcome[] = [];
  // Until something here writes (a run opened above, an earlier component's apply), the object read is current.
  let written = changes.length > 1;
  for (const request of requests) {
    if (parked.has(request.component ?? 'engine')) {
      outcomes.push('unchanged');
      continue;
    }
    // Read afresh after a write: the run just opened, and each component's writes move the ISVC on.
    const current = written ? ((await getRolloutIsvc(deps.client, first.isvc.metadata.namespace ?? '', first.isvc.metadata.name)) ?? request.isvc) : isvc;
    written = true;
    const outcome = await applyComponentWorkload(deps, { ...request, isvc: current });
    outcomes.push(opened.has(request.component ?? 'engine') && outcome === 'run-in-progress' ? 'run-opened' : outcome);
  }
  return outcomes;
}

/**
 * The superseded run's other targets that still have to roll: a component whose group
 * the run already completed (PHASE `Stable`, set only by the executor) is not rolled again.
 */
function unfinishedTargets(status: RolloutIsvcStatus | undefined, previous: RolloutRun | undefined, changed: readonly string[]): RunTarget[] {
  return (previous?.targetRevisions ?? []).filter(
    (entry) => !changed.includes(entry.component) && entry.revision && status?.components?.[entry.component]?.rolloutPhase !== 'Stable',
  );
}

/** Whether any canary group's record rejects `revision` (each group records its first component's revision). */
function wasRolledBack(status: RolloutIsvcStatus | undefined, revision: string): boolean {
  const states = [status?.canary, ...Object.values(status?.components ?? {}).map((entry) => entry.canary)];
  return states.some((state) => state?.rolledBackRevisionHash === revision);
}

/**
 * Opens one run for the components' new revisions. A run already open is superseded by
 * one that keeps its other unfinished targets. The workloads of the components given a
 * direct writer are brought up at once; the others are brought up by their own apply.
 */
async function openRunFor(
  deps: RolloutWorkloadWriterDeps,
  isvc: RolloutIsvc,
  changes: readonly RunChange[],
  fence: WorkloadFence | undefined,
  directs: ReadonlyMap<string, () => Promise<EngineWorkloadOutcome>>,
): Promise<EngineWorkloadOutcome> {
  const now = new Date(deps.clock.now());
  const live = await renderLivePlan(deps.client, isvc, deps.metrics);
  const status: RolloutIsvcStatus = structuredClone(isvc.status ?? {});
  const previous = status.rollout?.activeRun;
  if (!live.ok) {
    // No run opens on a plan that does not render: the stable revision keeps serving.
    applyPlanStatus(status, isvc, live, now);
    await commitStatus(deps.client, isvc, status, deps.transitions);
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
  const kept = unfinishedTargets(isvc.status, previous, changes.map((change) => change.component));
  const run = openRun({
    isvcName: isvc.metadata.name,
    targetRevisions: [
      ...kept,
      ...changes.map((change) => ({ component: change.component, revision: change.desiredRevision, stableRevision: change.stableRevision })),
    ],
    plan: live.plan,
    now,
  });
  status.rollout = { ...status.rollout, activeRun: run };
  if (previous) status.rollout.lastRun = closeRun(previous, 'Superseded', now);
  const pinned = run.plan.groups ?? [];
  clearCanaryStates(status);
  // A new run starts its sequence afresh: its first targeted group's turn begins now.
  delete status.rolloutCoordination;
  const sequence = sequenceGroupsOf({ ...isvc, status }, run);
  if (sequence) {
    status.rolloutCoordination = { groups: passSequence(sequence.map((group) => ({ ...group, complete: false })), undefined, run.openedAt, now).groups };
  }
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
  await commitStatus(deps.client, isvc, status, deps.transitions);
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
  const opened = (await getRolloutIsvc(deps.client, isvc.metadata.namespace ?? '', isvc.metadata.name)) ?? isvc;
  for (const change of changes) {
    const direct = directs.get(change.component);
    if (direct) await ensureRunWorkloads(deps, opened, run, change.component, change.desired, direct, fence);
  }
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
  isvc: RolloutIsvc,
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
    // A sequence group waiting for its turn: the stable Deployment keeps serving until then.
    if (heldBySequence(isvc, run, component, new Date(deps.clock.now()))) return;
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
 * Whether the component's group is a sequence group whose turn has not come: the run's
 * pinned plan collapses to a sequence (see collapsesToSequential) and an earlier targeted
 * group has not completed, or its soak has not elapsed (as the executor recorded them in
 * `status.rolloutCoordination`).
 */
export function heldBySequence(isvc: RolloutIsvc, run: RolloutRun, component: string, now: Date): boolean {
  const sequence = sequenceGroupsOf(isvc, run);
  const index = groupIndexFor((run.plan.groups ?? []).map((pinned) => pinned.group), component);
  if (!sequence || !sequence.some((group) => group.index === index)) return false;
  const recorded = (isvc.status?.rolloutCoordination as { groups?: CoordinationGroupStatus[] } | undefined)?.groups;
  return sequenceTurn(recordedMembers(sequence, recorded), now).held.includes(index);
}

/**
 * The run's sequence groups (its pinned non-canary groups, in plan order) when its plan
 * collapses to a sequence under the spec's `groupOrdering`; undefined otherwise.
 */
export function sequenceGroupsOf(isvc: RolloutIsvc, run: RolloutRun): { index: number; components: string[]; targeted: boolean; soak?: string }[] | undefined {
  const pinned = run.plan.groups ?? [];
  const ordering = (isvc.spec?.rollout as { groupOrdering?: string } | undefined)?.groupOrdering;
  if (!collapsesToSequential(pinned.map((entry) => entry.group), ordering)) return undefined;
  const targeted = new Set((run.targetRevisions ?? []).filter((entry) => entry.revision).map((entry) => entry.component));
  return pinned.flatMap(({ group }, index) =>
    declaredKindOf(group) === 'canary'
      ? []
      : [{ index, components: [...(group.components ?? [])], targeted: (group.components ?? []).some((name) => targeted.has(name)), ...(group.soak ? { soak: group.soak } : {}) }],
  );
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
  await commitStatus(deps.client, isvc, status, deps.transitions);
  await recordRolloutEvent(deps.client, isvc, {
    type: 'Normal',
    reason: EventReason.rolloutRunClosed,
    message: RolloutRunMessage.superseded(run.runID),
  });
  await deleteIfPresent(deps.client, desired.metadata.namespace ?? '', canaryDeploymentName(desired.metadata.name));
}
