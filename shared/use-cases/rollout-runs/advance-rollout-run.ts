/**
 * The step machine driver for one InferenceService: re-reads it and the Deployments of
 * every component its run targets (engine, decoder, router), advances each pinned group
 * (the canary step machine, or the wait for a replaced Deployment), scales the
 * workloads, records the canary state, the rollout phase and the plan conditions in one
 * status write, consumes a promote, and closes the run when it completes or rolls back.
 */
import { NotFoundError } from '../../domain/errors';
import { computeComponentDeploymentName } from '../../domain/runtime/workload';
import { Resources } from '../../domain/model/resources';
import type { AnalysisExecutor } from '../../ports/analysis';
import type { Clock } from '../../ports/clock';
import type { ClusterClient } from '../../ports/cluster';
import type { StatusTransitions } from '../../ports/notifications';
import { isSampleDue, unboundSample, type AnalysisVerdict, type MetricsBindingSource } from '../../domain/rollout/analysis';
import { advanceCanary, advanceReplacement, canaryReplicasFor, effectiveReadyTimeout, isCanaryFinished } from '../../domain/rollout/canary';
import { declaredKindOf } from '../../domain/rollout/plan';
import { closeRun, formatKubeTime } from '../../domain/rollout/run';
import { passSequence, type CoordinationGroupStatus, type SequenceTurn } from '../../domain/rollout/sequence';
import type { CanaryState, RolloutGroup, RolloutRun, RunOutcome, RunTarget } from '../../domain/rollout/types';
import { Annotation, EventReason } from '../../domain/vocabulary';
import { RolloutRunMessage, sequenceGroupsOf } from './rollout-workload-writer';
import {
  applyPlanStatus,
  commitStatus,
  hasRolloutState,
  readCanaryStates,
  recordRolloutEvent,
  removeAnnotationIfUnchanged,
  removeAnnotationReturning,
  renderLivePlan,
  setRolloutPhase,
  writeCanaryStates,
  type RolloutIsvc,
  type RolloutIsvcStatus,
} from './rollout-status';
import {
  canaryDeploymentName,
  deleteIfPresent,
  getOptional,
  promoteCanaryTemplate,
  readyReplicasOf,
  revisionOf,
  scaleDeployment,
  type Deployment,
} from './workloads';

export interface AdvanceRolloutRunDeps {
  client: ClusterClient;
  clock: Clock;
  /**
   * Samples analysis steps (rollout-run's passes). Without one, a pass given `metrics`
   * samples nothing: it runs where another path samples (repin-apply's advance after a
   * promote or repin). With neither, nothing is wired to evaluate metrics, and each due
   * sample reads inconclusive (`unboundSample`) and follows onInconclusive.
   */
  analysis?: AnalysisExecutor;
  /** What the cluster binds for analysis (see shared/app/analysis-wiring.ts). Nothing by default. */
  metrics?: MetricsBindingSource;
  /** Hears of each status write committed, for the plane's notifications (shared/app/notifications.ts). */
  transitions?: StatusTransitions;
}

export interface AdvanceRolloutRunResult {
  outcome: 'gone' | 'no-run' | 'advanced' | 'closed';
  runID?: string;
  phase?: string;
  closed?: RunOutcome;
  /** Look again after this long even without a hint (timed pauses, soaks). */
  requeueAfterSeconds?: number;
  /**
   * Components of sequence groups whose turn began on this pass: their new workload was
   * held and is written by the next render of the InferenceService (a pin pass).
   */
  renderDue?: string[];
}

interface RunStep {
  status: RolloutIsvcStatus;
  phase: string;
  closeAs?: RunOutcome;
  removePromote: boolean;
  requeueAfterSeconds?: number;
  /** Workload writes to make once the status is stored. */
  workloads: () => Promise<void>;
  renderDue?: string[];
}

/**
 * One pass over the ISVC's active run. Call under the object's lease. `basis`: the ISVC
 * as a write under the same lease just returned it, which saves reading it again.
 */
export async function advanceRolloutRun(
  deps: AdvanceRolloutRunDeps,
  key: { namespace: string; name: string; uid?: string },
  basis?: RolloutIsvc,
): Promise<AdvanceRolloutRunResult> {
  const isvc = basis ?? (await getOptional<RolloutIsvc>(deps.client, key.namespace, key.name, Resources.inferenceServices));
  if (!isvc || (key.uid && isvc.metadata.uid !== key.uid)) return { outcome: 'gone' };
  const now = new Date(deps.clock.now());
  const run = isvc.status?.rollout?.activeRun;
  if (!run) {
    if (hasRolloutState(isvc)) await refreshPlanOnly(deps, isvc, now);
    // A promote with no run to act on is consumed without effect, as one for another revision is.
    const stalePromote = isvc.metadata.annotations?.[Annotation.rolloutPromote];
    if (stalePromote !== undefined) await removeAnnotationIfUnchanged(deps.client, isvc, Annotation.rolloutPromote, stalePromote);
    return { outcome: 'no-run' };
  }

  const step = await stepRun(deps, isvc, run, now);
  if (step.closeAs) {
    step.status.rollout = { ...step.status.rollout, lastRun: closeRun(run, step.closeAs, now) };
    delete step.status.rollout.activeRun;
  }
  applyPlanStatus(step.status, isvc, await renderLivePlan(deps.client, isvc, deps.metrics), now);
  if (JSON.stringify(step.status) !== JSON.stringify(isvc.status ?? {})) {
    await commitStatus(deps.client, isvc, step.status, deps.transitions);
  }
  await step.workloads();
  const promote = isvc.metadata.annotations?.[Annotation.rolloutPromote];
  if (step.removePromote && promote !== undefined) {
    const removed = await removeAnnotationReturning<RolloutIsvc>(deps.client, isvc, Annotation.rolloutPromote, promote);
    if (removed) await forgetAppliedPromote(deps.client, removed);
  }
  if (step.closeAs) {
    await recordRolloutEvent(deps.client, isvc, {
      type: 'Normal',
      reason: EventReason.rolloutRunClosed,
      message: RolloutRunMessage.closed(run.runID, step.closeAs),
    });
    return { outcome: 'closed', runID: run.runID, phase: step.phase, closed: step.closeAs };
  }
  return {
    outcome: 'advanced',
    runID: run.runID,
    phase: step.phase,
    ...(step.requeueAfterSeconds === undefined ? {} : { requeueAfterSeconds: step.requeueAfterSeconds }),
    ...(step.renderDue && step.renderDue.length > 0 ? { renderDue: step.renderDue } : {}),
  };
}

/**
 * The step machine records an applied promote in `promotedThrough` so that its
 * annotation, should removing it fail, is inert. Once the annotation is gone that record
 * must go too, or the next promote for the same revision (the hold release is followed
 * by the step's own gate) would be taken for the old one. Our own removal is not
 * forwarded back as a hint, so it is cleared here rather than on the next pass.
 */
async function forgetAppliedPromote(client: ClusterClient, isvc: RolloutIsvc): Promise<void> {
  // `isvc` is the object as the removal returned it: no second read is needed to see it gone.
  if (isvc.metadata.annotations?.[Annotation.rolloutPromote] !== undefined) return;
  const slots = [isvc.status?.canary, ...Object.values(isvc.status?.components ?? {}).map((entry) => entry.canary)];
  if (!slots.some((slot) => slot?.promotedThrough)) return;
  const status: RolloutIsvcStatus = structuredClone(isvc.status ?? {});
  // The alias and every unit's slot: the same promote is recorded in both.
  if (status.canary) delete status.canary.promotedThrough;
  for (const entry of Object.values(status.components ?? {})) if (entry.canary) delete entry.canary.promotedThrough;
  // A lost race here is harmless: the next pass clears it once it sees no annotation.
  await commitStatus(client, isvc, status).catch(() => undefined);
}

async function refreshPlanOnly(deps: AdvanceRolloutRunDeps, isvc: RolloutIsvc, now: Date): Promise<void> {
  const status: RolloutIsvcStatus = structuredClone(isvc.status ?? {});
  applyPlanStatus(status, isvc, await renderLivePlan(deps.client, isvc, deps.metrics), now);
  if (JSON.stringify(status) !== JSON.stringify(isvc.status ?? {})) await commitStatus(deps.client, isvc, status, deps.transitions);
}

/**
 * Steps every pinned group that holds a target of the run: engine, decoder and router
 * alike. The run completes when every such group has, and closes RolledBack when a
 * canary group rolled back. A run none of whose targets sits in a pinned group cannot
 * be executed: it stays open and says so with a RolloutPlanParked event, never closing
 * as Completed with nothing rolled.
 */
async function stepRun(deps: AdvanceRolloutRunDeps, isvc: RolloutIsvc, run: RolloutRun, now: Date): Promise<RunStep> {
  const status: RolloutIsvcStatus = structuredClone(isvc.status ?? {});
  const pinned = run.plan.groups ?? [];
  const targets = new Map((run.targetRevisions ?? []).filter((entry) => entry.revision).map((entry) => [entry.component, entry]));
  const outcomes: GroupOutcome[] = [];
  const byIndex = new Map<number, GroupOutcome>();
  for (const [index, { group }] of pinned.entries()) {
    const components = (group.components ?? []).filter((component) => targets.has(component));
    if (components.length === 0) continue;
    const input = { status, pinned, index, group, components, targets, now };
    const outcome = declaredKindOf(group) === 'canary' ? await stepCanaryGroup(deps, isvc, input) : await stepReplacementGroup(deps, isvc, input);
    setRolloutPhase(status, group.components ?? components, outcome.phase);
    outcomes.push(outcome);
    byIndex.set(index, outcome);
  }
  if (outcomes.length === 0) return parkUnexecutable(deps, isvc, run, status);
  const sequence = stepSequence(isvc, run, status, byIndex, now);
  const rolledBack = outcomes.find((outcome) => outcome.closeAs === 'RolledBack');
  const closeAs = rolledBack ? 'RolledBack' : outcomes.every((outcome) => outcome.closeAs === 'Completed') ? 'Completed' : undefined;
  const waiting = outcomes.find((outcome) => outcome.closeAs === undefined) ?? outcomes[outcomes.length - 1];
  const requeues = outcomes.flatMap((outcome) => (outcome.requeueAfterSeconds === undefined ? [] : [outcome.requeueAfterSeconds]));
  if (sequence?.turn.soakRemainingSeconds !== undefined) requeues.push(sequence.turn.soakRemainingSeconds);
  return {
    status,
    phase: rolledBack?.phase ?? waiting?.phase ?? 'Stable',
    ...(closeAs ? { closeAs } : {}),
    removePromote: outcomes.some((outcome) => outcome.removePromote),
    ...(requeues.length > 0 ? { requeueAfterSeconds: Math.min(...requeues) } : {}),
    workloads: async () => {
      for (const outcome of outcomes) await outcome.workloads();
    },
    ...(sequence && sequence.renderDue.length > 0 ? { renderDue: sequence.renderDue } : {}),
  };
}

/**
 * A run whose plan collapses to a sequence: records in `status.rolloutCoordination`
 * which group completed when and whose turn it is (see passSequence). A held group
 * shows PHASE `Pending` (its Deployment is not at the target yet). The components of a
 * group whose turn began are due to be rendered: the writer held their workload until now.
 */
function stepSequence(
  isvc: RolloutIsvc,
  run: RolloutRun,
  status: RolloutIsvcStatus,
  outcomes: ReadonlyMap<number, GroupOutcome>,
  now: Date,
): { turn: SequenceTurn; renderDue: string[] } | undefined {
  const groups = sequenceGroupsOf(isvc, run);
  if (!groups) return undefined;
  const observed = groups.map((group) => ({ ...group, complete: outcomes.get(group.index)?.closeAs === 'Completed' }));
  const recorded = (status.rolloutCoordination as { groups?: CoordinationGroupStatus[] } | undefined)?.groups;
  const pass = passSequence(observed, recorded, formatKubeTime(now), now);
  status.rolloutCoordination = { ...(status.rolloutCoordination as object | undefined), groups: pass.groups };
  const begun = new Set(pass.begun);
  return { turn: pass.turn, renderDue: groups.filter((group) => begun.has(group.index)).flatMap((group) => group.components) };
}

async function parkUnexecutable(deps: AdvanceRolloutRunDeps, isvc: RolloutIsvc, run: RolloutRun, status: RolloutIsvcStatus): Promise<RunStep> {
  await recordRolloutEvent(deps.client, isvc, {
    type: 'Warning',
    reason: EventReason.rolloutPlanParked,
    message: RolloutRunMessage.unexecutable(run),
  });
  return { status, phase: 'Pending', removePromote: false, workloads: async () => undefined };
}

interface GroupInput {
  status: RolloutIsvcStatus;
  pinned: NonNullable<RolloutRun['plan']['groups']>;
  index: number;
  group: RolloutGroup;
  /** The group's components that the run targets, in the group's order. */
  components: string[];
  targets: ReadonlyMap<string, RunTarget>;
  now: Date;
}

interface GroupOutcome {
  phase: string;
  closeAs?: RunOutcome;
  removePromote: boolean;
  requeueAfterSeconds?: number;
  workloads: () => Promise<void>;
}

/** One component's workloads as a group step sees them. */
interface ComponentWorkloads {
  component: string;
  target: string;
  desiredReplicas: number;
  stable: Deployment | undefined;
  canary: Deployment | undefined;
}

/** The component's replica count as the renderer sets it (the stable Deployment's own is scaled down mid-canary). */
function desiredReplicasOf(isvc: RolloutIsvc, component: string): number {
  const spec = (isvc.spec ?? {}) as Record<string, { minReplicas?: number } | undefined>;
  return spec[component]?.minReplicas ?? 1;
}

async function readComponentWorkloads(
  deps: AdvanceRolloutRunDeps,
  isvc: RolloutIsvc,
  input: GroupInput,
  withCanary: boolean,
): Promise<ComponentWorkloads[]> {
  const namespace = isvc.metadata.namespace ?? '';
  return Promise.all(
    input.components.map(async (component) => {
      // Named as upstream names each component's workload, so its readiness is read the same way.
      const stableName = computeComponentDeploymentName(isvc.metadata.name, component);
      return {
        component,
        target: input.targets.get(component)?.revision ?? '',
        desiredReplicas: desiredReplicasOf(isvc, component),
        stable: await getOptional<Deployment>(deps.client, namespace, stableName),
        canary: withCanary ? await getOptional<Deployment>(deps.client, namespace, canaryDeploymentName(stableName)) : undefined,
      };
    }),
  );
}

/** blueGreen and rollingUpdate: every component's replaced workload at its target and ready completes the group. */
async function stepReplacementGroup(deps: AdvanceRolloutRunDeps, isvc: RolloutIsvc, input: GroupInput): Promise<GroupOutcome> {
  const workloads = await readComponentWorkloads(deps, isvc, input, false);
  const steps = workloads.map(({ stable, target, desiredReplicas }) => {
    const atTarget = stable !== undefined && revisionOf(stable) === target;
    return advanceReplacement({ desiredReplicas, readyNewReplicas: atTarget ? readyReplicasOf(stable) : 0 });
  });
  const complete = steps.every((step) => step.complete);
  return {
    phase: complete ? 'Stable' : 'Pending',
    ...(complete ? { closeAs: 'Completed' as const } : {}),
    removePromote: false,
    workloads: async () => undefined,
  };
}

/**
 * A canary group: one step machine for the group, driven by its first targeted
 * component; the other components follow the same steps at their own replica counts,
 * and a step counts as ready only once every component's canary capacity is ready.
 */
async function stepCanaryGroup(deps: AdvanceRolloutRunDeps, isvc: RolloutIsvc, input: GroupInput): Promise<GroupOutcome> {
  const { status, pinned, index, group, now } = input;
  const workloads = await readComponentWorkloads(deps, isvc, input, true);
  const primary = workloads[0] as ComponentWorkloads;
  const steps = group.canary?.steps ?? [];
  const states = readCanaryStates(status, pinned);
  const state: CanaryState = states.get(index) ?? {
    canaryRevisionHash: primary.target,
    ...(input.targets.get(primary.component)?.stableRevision ? { stableRevisionHash: input.targets.get(primary.component)?.stableRevision } : {}),
    currentStep: 0,
    observedTrafficWeight: 0,
  };
  const capacityAt = (step: number) => steps[Math.min(Math.max(step, 0), steps.length - 1)]?.capacity;
  const othersReady = workloads
    .slice(1)
    .every((entry) => readyReplicasOf(entry.canary) >= canaryReplicasFor(capacityAt(state.currentStep), entry.desiredReplicas));
  const stepReady = othersReady && readyReplicasOf(primary.canary) >= canaryReplicasFor(capacityAt(state.currentStep), primary.desiredReplicas);
  const sample = await sampleAnalysis(deps, isvc, { state, steps, prometheus: group.canary?.prometheus, component: primary.component, stepReady, now });
  const readyTimeout = effectiveReadyTimeout(isvc.metadata.annotations?.[Annotation.rolloutReadyTimeout], group.canary?.readyTimeout);
  const tick = advanceCanary({
    steps,
    ...(readyTimeout ? { readyTimeout } : {}),
    state,
    desiredReplicas: primary.desiredReplicas,
    readyCanaryReplicas: othersReady ? readyReplicasOf(primary.canary) : 0,
    readyStableReplicas: readyReplicasOf(primary.stable),
    ...optional('promoteAnnotation', isvc.metadata.annotations?.[Annotation.rolloutPromote]),
    ...optional('rollbackAnnotation', isvc.metadata.annotations?.[Annotation.rolloutRollback]),
    ...(sample ? { analysisSample: sample } : {}),
    now,
  });
  states.set(index, tick.state);
  writeCanaryStates(status, pinned, states);
  const base = { removePromote: tick.removePromoteAnnotation, ...(tick.requeueAfterSeconds === undefined ? {} : { requeueAfterSeconds: tick.requeueAfterSeconds }) };
  if (isCanaryFinished(tick.state, steps.length)) {
    const finishes = workloads.map((entry) => finishCanary(deps, entry));
    const complete = finishes.every((finish) => finish.closeAs === 'Completed');
    return {
      ...base,
      phase: complete ? 'Stable' : 'Promoting',
      ...(complete ? { closeAs: 'Completed' as const } : {}),
      workloads: async () => {
        for (const finish of finishes) await finish.workloads();
      },
    };
  }
  const rolledBack = tick.phase === 'RolledBack';
  const rollingBack = rolledBack || tick.phase === 'RollingBack';
  const capacity = capacityAt(tick.state.currentStep);
  return {
    ...base,
    phase: tick.phase,
    ...(rolledBack ? { closeAs: 'RolledBack' as const } : {}),
    workloads: async () => {
      for (const entry of workloads) {
        await driveCanary(deps, entry, { ...replicasFor(entry), remove: rolledBack });
      }
    },
  };

  /** The primary follows the tick; the others take the same step at their own size, stable released as their canary is ready. */
  function replicasFor(entry: ComponentWorkloads): { canaryReplicas: number; stableReplicas: number } {
    if (entry === primary) return { canaryReplicas: tick.canaryReplicas, stableReplicas: tick.stableReplicas };
    if (rollingBack) return { canaryReplicas: 0, stableReplicas: entry.desiredReplicas };
    const canaryReplicas = canaryReplicasFor(capacity, entry.desiredReplicas);
    return { canaryReplicas, stableReplicas: Math.max(0, entry.desiredReplicas - Math.min(readyReplicasOf(entry.canary), canaryReplicas)) };
  }
}

/**
 * The current step's analysis sample, taken only when one is due (see isSampleDue): the
 * step's capacity is ready, its warm-up is over and an interval has passed since the last
 * consumed sample. Anything else (a duplicate hint, a readiness change, the sweep inside
 * the interval) queries nothing. Without an executor: none when a binding is given (the
 * pass is not the sampling path), else the inconclusive sample of an unwired gate.
 */
async function sampleAnalysis(
  deps: AdvanceRolloutRunDeps,
  isvc: RolloutIsvc,
  input: {
    state: CanaryState;
    steps: NonNullable<RolloutGroup['canary']>['steps'];
    /** The pinned canary's metrics source: a repin may change it, so it comes from the pinned plan. */
    prometheus: NonNullable<RolloutGroup['canary']>['prometheus'];
    component: string;
    stepReady: boolean;
    now: Date;
  },
): Promise<AnalysisVerdict | undefined> {
  const steps = input.steps ?? [];
  const { state } = input;
  if (isCanaryFinished(state, steps.length) || state.preStepHold || !input.stepReady) return undefined;
  if (state.rolledBackRevisionHash !== undefined && state.rolledBackRevisionHash === state.canaryRevisionHash) return undefined;
  const index = Math.min(Math.max(state.currentStep, 0), steps.length - 1);
  const analysis = steps[index]?.analysis;
  if (!analysis || !isSampleDue(analysis, state, input.now)) return undefined;
  if (!deps.analysis) return deps.metrics ? undefined : unboundSample(analysis, input.now);
  return deps.analysis.sample({
    namespace: isvc.metadata.namespace ?? '',
    isvcName: isvc.metadata.name,
    component: input.component,
    canaryRevision: state.canaryRevisionHash ?? '',
    ...(state.stableRevisionHash ? { stableRevision: state.stableRevisionHash } : {}),
    step: index,
    analysis,
    ...(input.prometheus ? { prometheus: input.prometheus } : {}),
    ...(state.lastEvaluationTime ? { since: state.lastEvaluationTime } : {}),
  });
}

/** A canary between its steps, or rolling back: scale both Deployments; a finished rollback removes the canary. */
async function driveCanary(
  deps: AdvanceRolloutRunDeps,
  entry: ComponentWorkloads,
  replicas: { canaryReplicas: number; stableReplicas: number; remove: boolean },
): Promise<void> {
  await scaleDeployment(deps.client, entry.stable, replicas.stableReplicas);
  if (replicas.remove && entry.canary) {
    await deleteIfPresent(deps.client, entry.canary.metadata.namespace ?? '', entry.canary.metadata.name);
  } else {
    await scaleDeployment(deps.client, entry.canary, replicas.canaryReplicas);
  }
}

/**
 * After the last gate the canary takes every replica; once it is ready the stable
 * Deployment takes the canary's pods at full size; once that is ready the canary goes
 * and the component is done. Serving capacity never drops below desired on the way.
 */
function finishCanary(deps: AdvanceRolloutRunDeps, entry: ComponentWorkloads): { closeAs?: 'Completed'; workloads: () => Promise<void> } {
  const { stable, canary, desiredReplicas, component } = entry;
  const stableAtTarget = stable !== undefined && revisionOf(stable) === entry.target;
  if (stableAtTarget && readyReplicasOf(stable) >= desiredReplicas) {
    return {
      closeAs: 'Completed',
      workloads: async () => {
        await scaleDeployment(deps.client, stable, desiredReplicas);
        if (canary) await deleteIfPresent(deps.client, canary.metadata.namespace ?? '', canary.metadata.name);
      },
    };
  }
  return {
    workloads: async () => {
      if (!stable) throw new NotFoundError(`the stable ${component} Deployment is gone; the next render recreates it`);
      if (stableAtTarget) return scaleDeployment(deps.client, stable, desiredReplicas);
      if (!canary) return undefined;
      if (readyReplicasOf(canary) < desiredReplicas) return scaleDeployment(deps.client, canary, desiredReplicas);
      await deps.client.replace(Resources.deployments, promoteCanaryTemplate(stable, canary, desiredReplicas));
    },
  };
}

function optional<K extends string>(key: K, value: string | undefined): { [P in K]?: string } {
  return (value === undefined ? {} : { [key]: value }) as { [P in K]?: string };
}
