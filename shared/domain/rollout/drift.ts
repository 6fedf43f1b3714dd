/**
 * The plan conditions and the per-group resolution view: RolloutPlanReady,
 * RolloutPlanDrift and `status.rollout.groups[]`, computed from the live render and
 * the active run's pinned plan.
 */
import { ConditionType, Message, PlanDriftReason, PlanReadyReason } from '../vocabulary';
import { declaredKindOf, type LivePlanResult } from './plan';
import type { GroupResolutionStatus, PinnedGroup, PlanSource, RolloutRun, RunOutcome } from './types';

/** Shown in the drift message for a group whose live source does not render. */
export const UNRESOLVABLE_DIGEST = '(unresolvable)';
/** Shown in the drift message for a group that exists on one side only. */
export const ABSENT_GROUP_DIGEST = '(none)';

/** A condition to set, without its transition time (the writer stamps that). */
export interface PlanCondition {
  readonly type: string;
  readonly status: 'True' | 'False';
  readonly reason: string;
  readonly message: string;
}

/** The first group whose pinned and live digests differ, as the drift message names it. */
export interface DriftedGroup {
  readonly index: number;
  readonly live: string;
  readonly pinned: string;
  readonly source: PlanSource;
}

/**
 * `status.rollout.groups[]`: per spec group, the source a run opened now would pin and
 * the digest it would pin. A default group reports the blue-green digest, never blank;
 * a group whose policy does not render reports no digest.
 */
export function buildGroupResolutions(live: LivePlanResult): GroupResolutionStatus[] {
  return live.groups.map((outcome) => {
    const source: PlanSource = outcome.declaredSource === 'Policy' ? 'Policy' : 'Inline';
    const entry: GroupResolutionStatus = { index: outcome.index, source };
    if (outcome.policyRef) entry.policyRef = outcome.policyRef;
    if (outcome.ok) {
      entry.observedDigest = outcome.pinned.portableDigest;
      if (outcome.shadowed) entry.shadowedPolicyRef = outcome.shadowed;
    }
    return entry;
  });
}

/**
 * Finds the first group where the live render differs from the pinned plan. Only
 * progressions and the number of groups count: components, order, soak and
 * maintainRatio are shape, which `repin` refuses and the next run picks up.
 */
export function findDriftedGroup(
  pinnedGroups: readonly PinnedGroup[],
  resolutions: readonly GroupResolutionStatus[],
): DriftedGroup | undefined {
  const count = Math.max(pinnedGroups.length, resolutions.length);
  for (let index = 0; index < count; index += 1) {
    const pinned = pinnedGroups[index];
    const live = resolutions[index];
    const liveDigest = live ? live.observedDigest || UNRESOLVABLE_DIGEST : ABSENT_GROUP_DIGEST;
    const pinnedDigest = pinned?.portableDigest || ABSENT_GROUP_DIGEST;
    if (liveDigest !== pinnedDigest) {
      return { index, live: liveDigest, pinned: pinnedDigest, source: live?.source ?? pinned?.source ?? 'Inline' };
    }
  }
  return undefined;
}

/**
 * RolloutPlanDrift while a run is active: True with PolicyNewerThanRun when the first
 * changed group takes its progression from a policy, SpecNewerThanRun otherwise, or
 * False/InSync. Without an active run there is nothing to drift from: InSync. A change in
 * the number of groups is reported as upstream's run layer reports it, before any group:
 * spec.rollout removed, the canary group removed (`specHasCanary` false while the pinned
 * plan has one), or the shape changed.
 */
export function evaluatePlanDrift(
  run: RolloutRun | undefined,
  resolutions: readonly GroupResolutionStatus[],
  specHasCanary = false,
): PlanCondition {
  const inSync: PlanCondition = {
    type: ConditionType.rolloutPlanDrift,
    status: 'False',
    reason: PlanDriftReason.inSync,
    message: run ? `run ${run.runID} follows the live plan` : 'no active run',
  };
  if (!run) return inSync;
  const pinned = run.plan.groups ?? [];
  const shape = shapeDriftOf(pinned, resolutions.length, specHasCanary);
  if (shape) return { type: ConditionType.rolloutPlanDrift, status: 'True', reason: PlanDriftReason.specNewerThanRun, message: shape };
  const drifted = findDriftedGroup(pinned, resolutions);
  if (!drifted) return inSync;
  return {
    type: ConditionType.rolloutPlanDrift,
    status: 'True',
    reason: drifted.source === 'Policy' ? PlanDriftReason.policyNewerThanRun : PlanDriftReason.specNewerThanRun,
    message: Message.planDrift(drifted.index, drifted.live, drifted.pinned),
  };
}

/** Upstream's message for a group count that differs from the pinned plan's, or none. */
function shapeDriftOf(pinned: readonly PinnedGroup[], specGroups: number, specHasCanary: boolean): string | undefined {
  if (specGroups === pinned.length) return undefined;
  if (specGroups === 0) return Message.planDriftRolloutRemoved;
  const pinnedHasCanary = pinned.some((group) => declaredKindOf(group.group) === 'canary');
  return pinnedHasCanary && !specHasCanary ? Message.planDriftCanaryRemoved : Message.planDriftShapeChanged;
}

/**
 * RolloutPlanReady as upstream's run layer sets it (OP `.../omenative/rolloutrun/rolloutrun.go`
 * @227e4861): True/Pinned `run <id> pinned` for the whole of an active run, even when the
 * live plan stops rendering mid-run — the run keeps executing its pinned plan, and
 * RolloutPlanDrift reports the live side as `(unresolvable)`. Without a run: False with
 * the render's reason when the live plan does not render, else True/NoActiveRun, saying
 * `last run closed <outcome>` in the write that closes a run and `no rollout in progress`
 * otherwise.
 */
export function evaluatePlanReady(run: RolloutRun | undefined, live: LivePlanResult, closed?: RunOutcome): PlanCondition {
  if (run) {
    return {
      type: ConditionType.rolloutPlanReady,
      status: 'True',
      reason: PlanReadyReason.pinned,
      message: Message.planPinned(run.runID),
    };
  }
  if (!live.ok) {
    return { type: ConditionType.rolloutPlanReady, status: 'False', reason: live.reason, message: live.message };
  }
  return {
    type: ConditionType.rolloutPlanReady,
    status: 'True',
    reason: PlanReadyReason.noActiveRun,
    message: closed ? Message.lastRunClosed(closed) : Message.noRolloutInProgress,
  };
}
