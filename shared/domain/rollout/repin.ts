/**
 * Repin: moving an active run onto the current plan while it keeps its progress.
 * `decideRepin` is the controller consuming `ome.io/rollout-repin`; `checkRepinRefusal`
 * is the CLI deciding whether it may set that annotation at all.
 */
import { previewAnnotationValue } from '../annotation-value';
import {
  Annotation,
  ConditionType,
  EventReason,
  Message,
  PlanDriftReason,
  PlanReadyReason,
  REPIN_NOW,
  RepinMessage,
  RepinOutcome,
  RepinRefusal,
  type RepinRefusalMessage,
} from '../vocabulary';
import { isCanaryFinished } from './canary';
import { PORTABLE_DIGEST_PATTERN, digestPlan } from './digest';
import { findDriftedGroup } from './drift';
import {
  declaredKindOf,
  declaredSourceOf,
  findGroupProblem,
  inlineKinds,
  resolveLivePlan,
  sameTopology,
  topologyOf,
  type LivePlanResult,
  type PlanTopology,
} from './plan';
import { nextPinnedAt } from './run';
import type {
  CanaryState,
  CanaryStep,
  PinnedGroup,
  RolloutGroup,
  RolloutPolicyView,
  RolloutRun,
  RolloutStatus,
  StatusCondition,
} from './types';

/** An event the caller records on the InferenceService. */
export interface RolloutEvent {
  readonly type: 'Normal' | 'Warning';
  readonly reason: string;
  readonly message: string;
}

export type RepinDecision =
  /** No annotation: nothing to do. */
  | { readonly action: 'none' }
  /** The run already follows the current plan: drop the annotation without an event. */
  | { readonly action: 'discard'; readonly removeAnnotation: true }
  | {
      readonly action: 'reject';
      readonly removeAnnotation: true;
      readonly outcome: typeof RepinOutcome.rejected;
      readonly event: RolloutEvent;
    }
  | {
      readonly action: 'apply';
      readonly removeAnnotation: true;
      readonly outcome: typeof RepinOutcome.applied;
      readonly event: RolloutEvent;
      readonly run: RolloutRun;
      /** Every canary group's state fitted to its new steps, by group index. */
      readonly canaries: ReadonlyMap<number, CanaryState>;
      readonly fromDigest: string;
      readonly toDigest: string;
    };

export interface RepinDecisionInput {
  /** The value of `ome.io/rollout-repin`, or undefined when absent. */
  readonly annotationValue: string | undefined;
  readonly run: RolloutRun | undefined;
  /** A fresh render of the live plan, from live policy reads. */
  readonly live: LivePlanResult;
  /** Canary state per canary group index (upstream keeps one; we fit every group). */
  readonly canaries: ReadonlyMap<number, CanaryState>;
  readonly now: Date;
}

/** The whole-plan digest a run is pinned to. */
export function digestPinnedPlan(run: RolloutRun): string {
  return digestPlan((run.plan.groups ?? []).map((group) => group.portableDigest ?? ''));
}

/** True for `now` or a portable digest (`rp1:` + 12 lowercase hex). */
export function isValidRepinValue(value: string): boolean {
  return value === REPIN_NOW || PORTABLE_DIGEST_PATTERN.test(value);
}

/**
 * Decides what to do with `ome.io/rollout-repin`. The annotation is removed whatever
 * the outcome, so a repin takes effect at most once; the value is a compare-and-swap
 * on the render digest, so an edit landing after the user's preview is rejected.
 * Checks, in order: a usable value, an active run, a render, an unchanged render (drop
 * quietly), the digest, the groups' shape; then the plan is swapped.
 */
export function decideRepin(input: RepinDecisionInput): RepinDecision {
  const value = input.annotationValue;
  if (value === undefined) return { action: 'none' };
  const reject = (message: string): RepinDecision => ({
    action: 'reject',
    removeAnnotation: true,
    outcome: RepinOutcome.rejected,
    event: { type: 'Warning', reason: EventReason.rolloutRepinRejected, message },
  });
  if (!isValidRepinValue(value)) return reject(RepinMessage.invalidValue(previewAnnotationValue(value)));
  const run = input.run;
  if (!run) return reject(RepinMessage.noActiveRun);
  if (!input.live.ok) return reject(Message.repinDoesNotRender(input.live.reason, input.live.message));

  const fromDigest = digestPinnedPlan(run);
  const toDigest = input.live.plan.digest;
  if (fromDigest === toDigest) return { action: 'discard', removeAnnotation: true };
  if (value !== REPIN_NOW && value !== toDigest) return reject(Message.repinStaleDigest(value, toDigest));

  const pinnedGroups = run.plan.groups ?? [];
  const change = describeTopologyChange(
    topologyOf(pinnedGroups.map((group) => group.group)),
    topologyOf(input.live.plan.groups.map((group) => group.group)),
  );
  if (change) return reject(RepinMessage.topologyChanged(change));

  const newGroups = input.live.plan.groups.map((group) => structuredClone(group) as PinnedGroup);
  const canaries = new Map<number, CanaryState>();
  for (const [index, state] of input.canaries) {
    const steps = newGroups[index]?.group.canary?.steps;
    const pinnedStepCount = pinnedGroups[index]?.group.canary?.steps?.length ?? 0;
    if (steps) canaries.set(index, fitCanaryToSteps(state, steps, pinnedStepCount));
  }
  return {
    action: 'apply',
    removeAnnotation: true,
    outcome: RepinOutcome.applied,
    event: { type: 'Normal', reason: EventReason.rolloutPlanRepinned, message: Message.repinned(run.runID, fromDigest, toDigest) },
    run: { ...run, pinnedAt: nextPinnedAt(run.pinnedAt, input.now), plan: { groups: newGroups } },
    canaries,
    fromDigest,
    toDigest,
  };
}

/**
 * Fits a canary's progress to a new list of steps: a finished canary (one past the last
 * of the `pinnedStepCount` steps it ran) stays finished, one past the new last step; the
 * step index is kept, or clamped to the last step; and when that step's traffic is above
 * the weight recorded for the canary, it holds before the step until promoted.
 */
export function fitCanaryToSteps(state: CanaryState, steps: readonly CanaryStep[], pinnedStepCount: number): CanaryState {
  if (isCanaryFinished(state, pinnedStepCount)) return { ...state, currentStep: steps.length };
  const currentStep = Math.min(Math.max(state.currentStep, 0), Math.max(steps.length - 1, 0));
  const traffic = steps[currentStep]?.traffic ?? 0;
  return { ...state, currentStep, preStepHold: traffic > state.observedTrafficWeight };
}

/** Names the first shape difference between two plans, or nothing when they match. */
export function describeTopologyChange(pinned: PlanTopology, live: PlanTopology): string | undefined {
  if (sameTopology(pinned, live)) return undefined;
  if (pinned.groupCount !== live.groupCount) return `group count ${pinned.groupCount} -> ${live.groupCount}`;
  for (const [index, was] of pinned.groups.entries()) {
    const now = live.groups[index];
    if (!now) continue;
    for (const field of ['progression', 'components', 'order', 'soak', 'maintainRatio'] as const) {
      if (JSON.stringify(was[field]) !== JSON.stringify(now[field])) return `groups[${index}].${field} changed`;
    }
    if (was.hasMaintainRatio !== now.hasMaintainRatio) return `groups[${index}].maintainRatio changed`;
  }
  return 'groups changed';
}

/** What the CLI reads from one InferenceService (and, optionally, its policies). */
export interface RepinCheckInput {
  readonly annotations?: Readonly<Record<string, string>>;
  readonly generation?: number;
  readonly observedGeneration?: number;
  readonly specGroups?: readonly RolloutGroup[];
  readonly rollout?: RolloutStatus;
  readonly conditions?: readonly StatusCondition[];
  /** Policies the CLI could read; without them it trusts the reported policy digests. */
  readonly policiesByName?: ReadonlyMap<string, RolloutPolicyView>;
  readonly now: Date;
}

export type RepinCheck =
  | { readonly refused: true; readonly message: RepinRefusalMessage }
  | {
      readonly refused: false;
      readonly runID: string;
      readonly pinnedPlanDigest: string;
      readonly requestedPlanDigest: string;
      readonly groupCount: number;
    };

/**
 * The CLI's safety checks before it sets `ome.io/rollout-repin`, in upstream's order:
 * a waiting mailbox, no run, an empty live plan, a malformed run, a shape change, an
 * invalid live spec or several canaries, then the controller's evidence (conditions,
 * per-group resolutions, generation) and whether there is anything to repin at all.
 */
export function checkRepinRefusal(input: RepinCheckInput): RepinCheck {
  const shapeRefusal = findPlanShapeRefusal(input);
  if (shapeRefusal) return { refused: true, message: shapeRefusal };
  // findPlanShapeRefusal guarantees an active run with pinned groups from here on.
  const run = input.rollout?.activeRun as RolloutRun;
  const pinnedGroups = run.plan.groups ?? [];
  const specGroups = input.specGroups ?? [];
  const refuse = (message: RepinRefusalMessage): RepinCheck => ({ refused: true, message });

  const resolutions = input.rollout?.groups ?? [];
  if (resolutions.length !== specGroups.length) return refuse(RepinRefusal.evidence);
  if (input.generation === undefined || input.observedGeneration !== input.generation) {
    return refuse(RepinRefusal.evidence);
  }
  const conditions = readPlanConditions(input.conditions ?? [], run, input.now);
  if (!conditions) return refuse(RepinRefusal.evidence);
  if (conditions.drift.status !== 'True') return refuse(RepinRefusal.alreadyPinned);

  const currentDigests = computeCurrentDigests(specGroups, input.rollout ?? {}, input.policiesByName);
  if (!currentDigests || pinnedGroups.some((group) => !PORTABLE_DIGEST_PATTERN.test(group.portableDigest ?? ''))) {
    return refuse(RepinRefusal.evidence);
  }
  const pinnedPlanDigest = digestPinnedPlan(run);
  const requestedPlanDigest = digestPlan(currentDigests);
  if (pinnedPlanDigest === requestedPlanDigest) return refuse(RepinRefusal.alreadyPinned);

  // The DRIFT condition must say exactly what this snapshot implies, or it is stale.
  const drifted = findDriftedGroup(pinnedGroups, resolutions);
  if (!drifted) return refuse(RepinRefusal.evidence);
  const wantReason = drifted.source === 'Policy' ? PlanDriftReason.policyNewerThanRun : PlanDriftReason.specNewerThanRun;
  const wantMessage = Message.planDrift(drifted.index, drifted.live, drifted.pinned);
  if (conditions.drift.reason !== wantReason || conditions.drift.message !== wantMessage) {
    return refuse(RepinRefusal.evidence);
  }
  return { refused: false, runID: run.runID, pinnedPlanDigest, requestedPlanDigest, groupCount: pinnedGroups.length };
}

/** The refusals that need only the spec and the pinned run, in upstream's order. */
function findPlanShapeRefusal(input: RepinCheckInput): RepinRefusalMessage | undefined {
  const annotations = input.annotations ?? {};
  const mailboxes = [Annotation.rolloutRepin, Annotation.rolloutPromote, Annotation.rolloutRollback];
  if (mailboxes.some((key) => Object.hasOwn(annotations, key))) return RepinRefusal.mailboxPresent;
  const run = input.rollout?.activeRun;
  if (!run) return RepinRefusal.noActiveRun;
  const specGroups = input.specGroups ?? [];
  if (specGroups.length === 0) return RepinRefusal.emptyLivePlan;
  const pinnedGroups = run.plan.groups ?? [];
  if (pinnedGroups.length === 0 || !isWellFormedRun(run)) return RepinRefusal.evidence;
  if (!sameTopology(topologyOf(specGroups), topologyOf(pinnedGroups.map((group) => group.group)))) {
    return RepinRefusal.topology;
  }
  if (specGroups.length > 3 || specGroups.some((group) => findGroupProblem(group) !== undefined)) {
    return RepinRefusal.evidence;
  }
  if (specGroups.filter((group) => declaredKindOf(group) === 'canary').length > 1) return RepinRefusal.multipleCanaries;
  return undefined;
}

function isWellFormedRun(run: RolloutRun): boolean {
  if (!run.runID || Number.isNaN(Date.parse(run.openedAt)) || Number.isNaN(Date.parse(run.pinnedAt))) return false;
  return (run.plan.groups ?? []).every(
    (pinned) =>
      (pinned.source === 'Inline' || pinned.source === 'Policy') &&
      (pinned.source === 'Inline' || pinned.policyRef !== undefined) &&
      inlineKinds(pinned.group).length === 1 &&
      (pinned.group.components ?? []).length > 0,
  );
}

/** The unique RolloutPlanReady and RolloutPlanDrift conditions, if they prove a pinned run. */
function readPlanConditions(
  conditions: readonly StatusCondition[],
  run: RolloutRun,
  now: Date,
): { ready: StatusCondition; drift: StatusCondition } | undefined {
  const ready = uniqueCondition(conditions, ConditionType.rolloutPlanReady);
  const drift = uniqueCondition(conditions, ConditionType.rolloutPlanDrift);
  if (!ready || !drift) return undefined;
  // A pinnedAt in the future (or unparsable) leaves no time DRIFT could have been stamped in.
  const pinnedAt = Date.parse(run.pinnedAt);
  const readyValid =
    ready.status === 'True' &&
    ready.reason === PlanReadyReason.pinned &&
    ready.message === Message.planPinned(run.runID) &&
    withinWindow(ready.lastTransitionTime, Date.parse(run.openedAt), now);
  if (!readyValid || !withinWindow(drift.lastTransitionTime, pinnedAt, now)) return undefined;
  const driftValid =
    drift.status === 'True'
      ? drift.reason === PlanDriftReason.specNewerThanRun || drift.reason === PlanDriftReason.policyNewerThanRun
      : drift.status === 'False' && drift.reason === PlanDriftReason.inSync;
  return driftValid ? { ready, drift } : undefined;
}

function uniqueCondition(conditions: readonly StatusCondition[], type: string): StatusCondition | undefined {
  const found = conditions.filter((condition) => condition.type === type);
  return found.length === 1 ? found[0] : undefined;
}

/** A condition stamped after `notBefore` and not in the future: it describes this run. */
function withinWindow(time: string | undefined, notBefore: number, now: Date): boolean {
  const at = Date.parse(time ?? '');
  return !Number.isNaN(at) && at >= notBefore && at <= now.getTime();
}

/**
 * Each spec group's current digest, as the CLI can prove it: computed from the spec for
 * inline and default groups, from the policy when the CLI could read it, else the
 * controller's reported digest. Undefined when the report disagrees with the spec.
 */
function computeCurrentDigests(
  specGroups: readonly RolloutGroup[],
  rollout: RolloutStatus,
  policiesByName: ReadonlyMap<string, RolloutPolicyView> | undefined,
): string[] | undefined {
  const rendered = resolveLivePlan(specGroups, policiesByName ?? new Map());
  const digests: string[] = [];
  for (const [index, group] of specGroups.entries()) {
    const resolution = rollout.groups?.[index];
    const source = declaredSourceOf(group);
    const expectedSource = source === 'Policy' ? 'Policy' : 'Inline';
    if (!resolution || resolution.index !== index || resolution.source !== expectedSource) return undefined;
    if (JSON.stringify(resolution.policyRef ?? null) !== JSON.stringify(group.policyRef ?? null)) return undefined;
    const shadowOk = source === 'Inline' && group.policyRef
      ? resolution.shadowedPolicyRef?.name === group.policyRef.name
      : resolution.shadowedPolicyRef === undefined;
    const outcome = rendered.groups[index];
    const observed = resolution.observedDigest ?? '';
    if (!shadowOk || !PORTABLE_DIGEST_PATTERN.test(observed)) return undefined;
    const computable = source !== 'Policy' || policiesByName !== undefined;
    if (computable && (!outcome?.ok || outcome.pinned.portableDigest !== observed)) return undefined;
    digests.push(observed);
  }
  return digests;
}
