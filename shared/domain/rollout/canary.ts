/**
 * Executing a pinned plan: the canary step machine and the all-at-once progressions.
 * Pure: the caller supplies observed replicas, the promote/rollback annotations and
 * the clock, and writes back the returned state and replica counts.
 */
import { parseGoDuration } from '../go-duration';
import { decideAnalysisStep, resetAnalysisRecord, type AnalysisVerdict } from './analysis';
import { parseCapacity } from './plan';
import type { CanaryState, CanaryStep, RolloutHold, RolloutPhase } from './types';
import { formatKubeTime } from './run';

export type StepGate = 'Immediate' | 'Timed' | 'Manual' | 'Analysis';

/** The traffic weight a finished canary records: all of it. */
export const FINISHED_TRAFFIC_WEIGHT = 100;

/**
 * Whether a canary passed its final gate. Upstream has no flag for it: its executor marks
 * a finished canary with `currentStep == len(steps)` (one past the last step), and that is
 * what this reads, so a status written by either side means the same.
 */
export function isCanaryFinished(state: Pick<CanaryState, 'currentStep'>, stepCount: number): boolean {
  return state.currentStep === stepCount;
}

/** How a step ends: analysis wins, then a timed pause, then a manual pause, else at once. */
export function gateOf(step: CanaryStep): StepGate {
  if (step.analysis) return 'Analysis';
  if (step.pause) return step.pause.duration ? 'Timed' : 'Manual';
  return 'Immediate';
}

/**
 * Canary replicas for a step: a percentage of desired rounded up, at least one when
 * the percentage is above zero; an absolute count capped at desired.
 */
export function canaryReplicasFor(capacity: number | string | undefined, desiredReplicas: number): number {
  const parsed = parseCapacity(capacity ?? 0);
  if (!parsed) return 0;
  if ('count' in parsed) return Math.min(parsed.count, desiredReplicas);
  if (parsed.percent === 0) return 0;
  return Math.min(desiredReplicas, Math.max(1, Math.ceil((desiredReplicas * parsed.percent) / 100)));
}

export interface CanaryTickInput {
  /** The pinned plan's steps for this group. */
  readonly steps: readonly CanaryStep[];
  /** The pinned canary's readyTimeout; unset means capacity may take as long as it takes. */
  readonly readyTimeout?: string;
  readonly state: CanaryState;
  readonly desiredReplicas: number;
  readonly readyCanaryReplicas: number;
  readonly readyStableReplicas: number;
  /** Value of `ome.io/rollout-promote`, if set. */
  readonly promoteAnnotation?: string;
  /** Value of `ome.io/rollout-rollback`, if set. */
  readonly rollbackAnnotation?: string;
  /**
   * The latest analysis sample for the current step (from the executor, or the
   * inconclusive one recorded when nothing can evaluate it); absent while none is ready.
   */
  readonly analysisSample?: AnalysisVerdict;
  readonly now: Date;
}

export interface CanaryTick {
  readonly state: CanaryState;
  readonly canaryReplicas: number;
  readonly stableReplicas: number;
  readonly phase: RolloutPhase;
  readonly hold?: RolloutHold;
  readonly gate?: StepGate;
  readonly analysis?: 'Inconclusive';
  /** Remove `ome.io/rollout-promote`: it was applied, or it names another revision. */
  readonly removePromoteAnnotation: boolean;
  /** When the caller should look again even if nothing changes (timed gates). */
  readonly requeueAfterSeconds?: number;
}

const NS_PER_SECOND = 1_000_000_000;

/**
 * One reconcile of a canary group: decides the next state, the replicas each
 * revision's workload should run, PHASE and HOLD. Stable capacity is released only as
 * canary capacity becomes ready, so serving capacity never dips below desired.
 */
export function advanceCanary(input: CanaryTickInput): CanaryTick {
  const state: CanaryState = { ...input.state };
  const mailbox = readPromoteMailbox(input.promoteAnnotation, state);

  const rolledBack = state.rolledBackRevisionHash !== undefined && state.rolledBackRevisionHash === state.canaryRevisionHash;
  const rollbackAsked = input.rollbackAnnotation !== undefined && input.rollbackAnnotation !== '';
  if (rolledBack || rollbackAsked) return rollBack(input, state, mailbox.remove);
  if (isCanaryFinished(state, input.steps.length)) return finish(input, state, mailbox.remove);

  state.stepEnteredTime ??= formatKubeTime(input.now);
  const index = Math.min(Math.max(state.currentStep, 0), input.steps.length - 1);
  state.currentStep = index;
  const step = input.steps[index] as CanaryStep;
  const target = canaryReplicasFor(step.capacity, input.desiredReplicas);
  const ready = input.readyCanaryReplicas >= target;
  const base = {
    canaryReplicas: target,
    stableReplicas: Math.max(0, input.desiredReplicas - Math.min(input.readyCanaryReplicas, target)),
    gate: gateOf(step),
  };

  if (state.preStepHold) {
    if (!mailbox.fresh) {
      // Held before the step after a repin raised its traffic: capacity still moves to
      // the new step, but the step's weight is not recorded until a promote.
      const phase = ready ? 'Paused' : 'Pending';
      return { ...base, state, phase, hold: 'CanaryPreStep', removePromoteAnnotation: mailbox.remove };
    }
    mailbox.consume();
    state.preStepHold = false;
    state.stepEnteredTime = formatKubeTime(input.now);
  }

  if (!ready) {
    const phase = readyTimedOut(input, state) ? 'Failed' : 'Pending';
    return { ...base, state, phase, removePromoteAnnotation: mailbox.remove };
  }
  state.observedTrafficWeight = step.traffic ?? 0;

  const wait = evaluateGate(input, state, step, mailbox);
  if (wait === 'rollback') return rollBack(input, state, mailbox.remove);
  if (wait === 'failed') return { ...base, state, phase: 'Failed', removePromoteAnnotation: mailbox.remove };
  if (wait) {
    return { ...base, state, phase: 'Paused', hold: 'ObservedPaused', removePromoteAnnotation: mailbox.remove, ...wait };
  }
  return advanceStep(input, state, mailbox.remove);
}

/** The promote mailbox as this reconcile sees it. */
interface PromoteMailbox {
  /** A promote for the canary revision not yet applied. */
  fresh: boolean;
  /** Whether the annotation should be removed after this reconcile. */
  remove: boolean;
  consume(): void;
}

/**
 * `promotedThrough` records the promote a step advance applied, in the same status
 * write: annotation and status cannot change atomically, so a lingering annotation
 * with that value is inert. It clears once the annotation is gone, re-arming promote.
 */
function readPromoteMailbox(promote: string | undefined, state: CanaryState): PromoteMailbox {
  if (promote === undefined && state.promotedThrough) delete state.promotedThrough;
  const fresh = promote !== undefined && promote === state.canaryRevisionHash && promote !== state.promotedThrough;
  const mailbox: PromoteMailbox = {
    fresh,
    // A promote for another revision, or one already applied, is consumed without effect.
    remove: promote !== undefined && !fresh,
    consume() {
      state.promotedThrough = promote;
      mailbox.fresh = false;
      mailbox.remove = true;
    },
  };
  return mailbox;
}

/**
 * Why the step waits at its gate, `rollback` when analysis says so, `failed` when
 * analysis stalled under `Hold`, or nothing to advance.
 */
function evaluateGate(
  input: CanaryTickInput,
  state: CanaryState,
  step: CanaryStep,
  mailbox: PromoteMailbox,
): Partial<CanaryTick> | 'rollback' | 'failed' | undefined {
  const elapsedSeconds = secondsSince(state.stepEnteredTime, input.now);
  const pauseSeconds = step.pause?.duration ? Number(parseGoDuration(step.pause.duration)) / NS_PER_SECOND : 0;
  const bake = (): Partial<CanaryTick> | undefined =>
    elapsedSeconds < pauseSeconds ? { requeueAfterSeconds: Math.ceil(pauseSeconds - elapsedSeconds) } : undefined;
  switch (gateOf(step)) {
    case 'Analysis': {
      // A promote for the canary revision overrides the gate, as upstream's does.
      if (mailbox.fresh) {
        mailbox.consume();
        return undefined;
      }
      const result = decideAnalysisStep({
        analysis: step.analysis as NonNullable<CanaryStep['analysis']>,
        step,
        state,
        ...(input.analysisSample ? { sample: input.analysisSample } : {}),
        ...(input.readyTimeout ? { stallTimeout: input.readyTimeout } : {}),
        now: input.now,
      });
      if (result.decision === 'advance') return undefined;
      // The sample that decided it is consumed: the rejection must outlive this pass.
      if (result.decision === 'rollback' && state.canaryRevisionHash) state.rolledBackRevisionHash = state.canaryRevisionHash;
      if (result.decision !== 'hold') return result.decision;
      const inconclusive = input.analysisSample?.outcome === 'Inconclusive' ? { analysis: 'Inconclusive' as const } : {};
      return { ...inconclusive, ...(result.requeueAfterSeconds === undefined ? {} : { requeueAfterSeconds: result.requeueAfterSeconds }) };
    }
    case 'Manual':
      if (!mailbox.fresh) return {};
      mailbox.consume();
      return undefined;
    case 'Timed':
      return bake();
    case 'Immediate':
      return undefined;
  }
}

function advanceStep(input: CanaryTickInput, state: CanaryState, removePromote: boolean): CanaryTick {
  if (state.currentStep >= input.steps.length - 1) return finish(input, state, removePromote);
  state.currentStep += 1;
  state.stepEnteredTime = formatKubeTime(input.now);
  resetAnalysisRecord(state);
  const next = input.steps[state.currentStep] as CanaryStep;
  const target = canaryReplicasFor(next.capacity, input.desiredReplicas);
  return {
    state,
    canaryReplicas: target,
    stableReplicas: Math.max(0, input.desiredReplicas - Math.min(input.readyCanaryReplicas, target)),
    phase: 'Canarying',
    gate: gateOf(next),
    removePromoteAnnotation: removePromote,
  };
}

/**
 * After the final gate: the canary takes all replicas; stable drains once it is ready.
 * The state is marked finished as upstream marks it: the step one past the last, all
 * traffic observed, and no stable hash (the canary revision is the new stable one).
 */
function finish(input: CanaryTickInput, state: CanaryState, removePromote: boolean): CanaryTick {
  state.currentStep = input.steps.length;
  state.observedTrafficWeight = FINISHED_TRAFFIC_WEIGHT;
  delete state.stableRevisionHash;
  const converged = input.readyCanaryReplicas >= input.desiredReplicas;
  return {
    state,
    canaryReplicas: input.desiredReplicas,
    stableReplicas: converged ? 0 : input.desiredReplicas,
    phase: converged && input.readyStableReplicas === 0 ? 'Stable' : 'Promoting',
    removePromoteAnnotation: removePromote,
  };
}

/**
 * Back to stable: the canary scales to zero; once stable is ready the revision is rejected.
 * The canary's recorded weight drops to 0 at once, as upstream's rollback applies weight 0.
 */
function rollBack(input: CanaryTickInput, state: CanaryState, removePromote: boolean): CanaryTick {
  state.observedTrafficWeight = 0;
  const stableReady = input.readyStableReplicas >= input.desiredReplicas;
  if (stableReady && state.canaryRevisionHash) state.rolledBackRevisionHash = state.canaryRevisionHash;
  return {
    state,
    canaryReplicas: 0,
    stableReplicas: input.desiredReplicas,
    phase: stableReady ? 'RolledBack' : 'RollingBack',
    removePromoteAnnotation: removePromote,
  };
}

/**
 * The ready timeout a canary group runs under, in upstream's order: the InferenceService's
 * `ome.io/rollout-ready-timeout` when it is a Go duration above zero (any other value is
 * ignored, as upstream ignores it), else the group's `canary.readyTimeout`.
 */
export function effectiveReadyTimeout(annotation: string | undefined, groupReadyTimeout: string | undefined): string | undefined {
  if (annotation !== undefined) {
    try {
      if (parseGoDuration(annotation) > 0n) return annotation;
    } catch {
      // Not a duration: the group's own timeout applies.
    }
  }
  return groupReadyTimeout;
}

function readyTimedOut(input: CanaryTickInput, state: CanaryState): boolean {
  if (!input.readyTimeout || !state.stepEnteredTime) return false;
  const limitSeconds = Number(parseGoDuration(input.readyTimeout)) / NS_PER_SECOND;
  return secondsSince(state.stepEnteredTime, input.now) > limitSeconds;
}

function secondsSince(time: string | undefined, now: Date): number {
  if (!time) return 0;
  const at = Date.parse(time);
  return Number.isNaN(at) ? 0 : (now.getTime() - at) / 1000;
}

/**
 * One reconcile of a blueGreen or rollingUpdate group: the new revision comes up in
 * full beside the old one, and the group completes once the new revision is ready.
 */
export function advanceReplacement(input: {
  desiredReplicas: number;
  readyNewReplicas: number;
}): { newReplicas: number; oldReplicas: number; phase: RolloutPhase; complete: boolean } {
  const complete = input.readyNewReplicas >= input.desiredReplicas;
  return {
    newReplicas: input.desiredReplicas,
    oldReplicas: complete ? 0 : input.desiredReplicas,
    phase: complete ? 'Stable' : 'Pending',
    complete,
  };
}

/**
 * The component whose status holds a canary group's state: upstream writes it on the
 * unit's entrypoint, the router when the group has it, else the engine (a decoder rolls
 * with the engine's unit); a group of neither keeps it on its first component.
 */
export function canaryEntrypointOf(group: { readonly components?: readonly string[] }): string {
  const components: readonly string[] = group.components ?? [];
  if (components.includes('router')) return 'router';
  if (components.includes('engine')) return 'engine';
  return components[0] ?? 'engine';
}
