/**
 * The step machine driver for one InferenceService: re-reads it and its engine
 * Deployments, advances the active run's engine group (the canary step machine, or the
 * wait for a replaced Deployment), scales the workloads, records the canary state, the
 * rollout phase and the plan conditions in one status write, consumes a promote, and
 * closes the run when it completes or rolls back.
 */
import { NotFoundError } from '../errors';
import { computeEngineDeploymentName } from '../runtime/workload';
import { Resources } from '../model/resources';
import type { Clock } from '../ports/clock';
import type { ClusterClient } from '../ports/cluster';
import { advanceCanary, advanceReplacement, isCanaryFinished, type CanaryTick } from '../rollout/canary';
import { declaredKindOf } from '../rollout/plan';
import { closeRun } from '../rollout/run';
import type { CanaryState, RolloutGroup, RolloutRun, RunOutcome } from '../rollout/types';
import { Annotation, EventReason } from '../vocabulary';
import { RolloutRunMessage } from './rollout-workload-writer';
import {
  applyPlanStatus,
  commitStatus,
  getRolloutIsvc,
  groupIndexFor,
  hasRolloutState,
  readCanaryStates,
  recordRolloutEvent,
  removeAnnotationIfUnchanged,
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
  /** Whether a metrics source answers analysis steps; without one they hold as inconclusive. */
  metricsSourceConfigured?: boolean;
}

export interface AdvanceRolloutRunResult {
  outcome: 'gone' | 'no-run' | 'advanced' | 'closed';
  runID?: string;
  phase?: string;
  closed?: RunOutcome;
  /** Look again after this long even without a hint (timed pauses). */
  requeueAfterSeconds?: number;
}

interface EngineStep {
  status: RolloutIsvcStatus;
  phase: string;
  closeAs?: RunOutcome;
  removePromote: boolean;
  requeueAfterSeconds?: number;
  /** Workload writes to make once the status is stored. */
  workloads: () => Promise<void>;
}

/** One pass over the ISVC's active run. Call under the object's lease. */
export async function advanceRolloutRun(
  deps: AdvanceRolloutRunDeps,
  key: { namespace: string; name: string; uid?: string },
): Promise<AdvanceRolloutRunResult> {
  const isvc = await getOptional<RolloutIsvc>(deps.client, key.namespace, key.name, Resources.inferenceServices);
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

  const step = await stepEngineGroup(deps, isvc, run, now);
  if (step.closeAs) {
    step.status.rollout = { ...step.status.rollout, lastRun: closeRun(run, step.closeAs, now) };
    delete step.status.rollout.activeRun;
  }
  applyPlanStatus(step.status, isvc, await renderLivePlan(deps.client, isvc), now);
  if (JSON.stringify(step.status) !== JSON.stringify(isvc.status ?? {})) {
    await commitStatus(deps.client, isvc, step.status);
  }
  await step.workloads();
  const promote = isvc.metadata.annotations?.[Annotation.rolloutPromote];
  if (step.removePromote && promote !== undefined) {
    const removed = await removeAnnotationIfUnchanged(deps.client, isvc, Annotation.rolloutPromote, promote);
    if (removed) await forgetAppliedPromote(deps.client, isvc);
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
  };
}

/**
 * The step machine records an applied promote in `promotedThrough` so that its
 * annotation, should removing it fail, is inert. Once the annotation is gone that record
 * must go too, or the next promote for the same revision (the hold release is followed
 * by the step's own gate) would be taken for the old one. Our own removal is not
 * forwarded back as a hint, so it is cleared here rather than on the next pass.
 */
async function forgetAppliedPromote(client: ClusterClient, basis: RolloutIsvc): Promise<void> {
  const isvc = await getRolloutIsvc(client, basis.metadata.namespace ?? '', basis.metadata.name);
  if (!isvc || isvc.metadata.annotations?.[Annotation.rolloutPromote] !== undefined) return;
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
  applyPlanStatus(status, isvc, await renderLivePlan(deps.client, isvc), now);
  if (JSON.stringify(status) !== JSON.stringify(isvc.status ?? {})) await commitStatus(deps.client, isvc, status);
}

async function stepEngineGroup(deps: AdvanceRolloutRunDeps, isvc: RolloutIsvc, run: RolloutRun, now: Date): Promise<EngineStep> {
  const status: RolloutIsvcStatus = structuredClone(isvc.status ?? {});
  const pinned = run.plan.groups ?? [];
  const engineIndex = groupIndexFor(pinned.map((group) => group.group), 'engine');
  const group = pinned[engineIndex]?.group;
  const target = run.targetRevisions?.find((entry) => entry.component === 'engine');
  if (!group || !target?.revision) {
    // Nothing of ours to roll (the engine left the groups mid-run): the run is done.
    return { status, phase: 'Stable', closeAs: 'Completed', removePromote: false, workloads: async () => undefined };
  }
  const namespace = isvc.metadata.namespace ?? '';
  const stableName = computeEngineDeploymentName(isvc.metadata.name);
  const stable = await getOptional<Deployment>(deps.client, namespace, stableName);
  // The renderer's replica count: the stable Deployment's own is scaled down mid-canary.
  const desiredReplicas = isvc.spec?.engine?.minReplicas ?? 1;
  const components = group.components ?? ['engine'];

  if (declaredKindOf(group) !== 'canary') {
    const atTarget = stable !== undefined && revisionOf(stable) === target.revision;
    const replacement = advanceReplacement({ desiredReplicas, readyNewReplicas: atTarget ? readyReplicasOf(stable) : 0 });
    setRolloutPhase(status, components, replacement.phase);
    return {
      status,
      phase: replacement.phase,
      ...(replacement.complete ? { closeAs: 'Completed' as const } : {}),
      removePromote: false,
      workloads: async () => undefined,
    };
  }

  return stepCanaryGroup(deps, isvc, { status, pinned, engineIndex, group, components, target: target.revision, stableRevision: target.stableRevision, stable, desiredReplicas, now });
}

interface CanaryGroupInput {
  status: RolloutIsvcStatus;
  pinned: NonNullable<RolloutRun['plan']['groups']>;
  engineIndex: number;
  group: RolloutGroup;
  components: string[];
  target: string;
  stableRevision: string | undefined;
  stable: Deployment | undefined;
  desiredReplicas: number;
  now: Date;
}

async function stepCanaryGroup(deps: AdvanceRolloutRunDeps, isvc: RolloutIsvc, input: CanaryGroupInput): Promise<EngineStep> {
  const { status, pinned, engineIndex, group, components, stable, desiredReplicas, now } = input;
  const namespace = isvc.metadata.namespace ?? '';
  const canary = await getOptional<Deployment>(deps.client, namespace, canaryDeploymentName(computeEngineDeploymentName(isvc.metadata.name)));
  const states = readCanaryStates(status, pinned);
  const state: CanaryState = states.get(engineIndex) ?? {
    canaryRevisionHash: input.target,
    ...(input.stableRevision ? { stableRevisionHash: input.stableRevision } : {}),
    currentStep: 0,
    observedTrafficWeight: 0,
  };
  const tick = advanceCanary({
    steps: group.canary?.steps ?? [],
    ...(group.canary?.readyTimeout ? { readyTimeout: group.canary.readyTimeout } : {}),
    state,
    desiredReplicas,
    readyCanaryReplicas: readyReplicasOf(canary),
    readyStableReplicas: readyReplicasOf(stable),
    ...optional('promoteAnnotation', isvc.metadata.annotations?.[Annotation.rolloutPromote]),
    ...optional('rollbackAnnotation', isvc.metadata.annotations?.[Annotation.rolloutRollback]),
    metricsSourceConfigured: deps.metricsSourceConfigured ?? false,
    now,
  });
  states.set(engineIndex, tick.state);
  writeCanaryStates(status, pinned, states);
  const outcome = isCanaryFinished(tick.state, group.canary?.steps?.length ?? 0)
    ? finishCanary(deps, { stable, canary, desiredReplicas, target: input.target })
    : driveCanary(deps, tick, { stable, canary });
  setRolloutPhase(status, components, outcome.phase);
  return {
    status,
    phase: outcome.phase,
    ...(outcome.closeAs ? { closeAs: outcome.closeAs } : {}),
    removePromote: tick.removePromoteAnnotation,
    ...(tick.requeueAfterSeconds === undefined ? {} : { requeueAfterSeconds: tick.requeueAfterSeconds }),
    workloads: outcome.workloads,
  };
}


interface Workloads {
  stable: Deployment | undefined;
  canary: Deployment | undefined;
}

/** A canary between its steps, or rolling back: scale both Deployments as the tick says. */
function driveCanary(deps: AdvanceRolloutRunDeps, tick: CanaryTick, workloads: Workloads): Omit<EngineStep, 'status' | 'removePromote'> {
  const rolledBack = tick.phase === 'RolledBack';
  return {
    phase: tick.phase,
    ...(rolledBack ? { closeAs: 'RolledBack' as const } : {}),
    workloads: async () => {
      await scaleDeployment(deps.client, workloads.stable, tick.stableReplicas);
      if (rolledBack && workloads.canary) {
        await deleteIfPresent(deps.client, workloads.canary.metadata.namespace ?? '', workloads.canary.metadata.name);
      } else {
        await scaleDeployment(deps.client, workloads.canary, tick.canaryReplicas);
      }
    },
  };
}

/**
 * After the last gate the canary takes every replica; once it is ready the stable
 * Deployment takes the canary's pods at full size; once that is ready the canary goes
 * and the run completes. Serving capacity never drops below desired on the way.
 */
function finishCanary(
  deps: AdvanceRolloutRunDeps,
  input: Workloads & { desiredReplicas: number; target: string },
): Omit<EngineStep, 'status' | 'removePromote'> {
  const { stable, canary, desiredReplicas } = input;
  const stableAtTarget = stable !== undefined && revisionOf(stable) === input.target;
  if (stableAtTarget && readyReplicasOf(stable) >= desiredReplicas) {
    return {
      phase: 'Stable',
      closeAs: 'Completed',
      workloads: async () => {
        await scaleDeployment(deps.client, stable, desiredReplicas);
        if (canary) await deleteIfPresent(deps.client, canary.metadata.namespace ?? '', canary.metadata.name);
      },
    };
  }
  return {
    phase: 'Promoting',
    workloads: async () => {
      if (!stable) throw new NotFoundError('the stable engine Deployment is gone; the next render recreates it');
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
