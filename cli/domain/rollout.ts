/**
 * The rollout rules the plugin applies before it sends a repin or promote, expressed with
 * the pure rollout module: digests, topology and drift come from `shared/rollout`.
 */
import { digestGroupProgression, digestPlan, DEFAULT_GROUP_DIGEST, PORTABLE_DIGEST_PATTERN } from '../../shared/rollout/digest';
import { UNRESOLVABLE_DIGEST } from '../../shared/rollout/drift';
import { declaredKindOf, declaredSourceOf, sameTopology, topologyOf } from '../../shared/rollout/plan';
import type { RolloutGroup, StatusCondition } from '../../shared/rollout/types';
import { Annotation, ConditionType, Message, PlanDriftReason, PlanReadyReason } from '../../shared/vocabulary';
import { annotationOf, findCondition, type InferenceServiceObject } from '../isvc';

export const RepinRefusal = {
  idle: 'no active pinned run',
  emptyPlan: 'empty live plans are not supported by this command',
  evidence: 'controller plan evidence is missing, stale or inconsistent',
  inSync: 'the current plan is already pinned',
  topology: 'live and pinned rollout topology differ',
  multipleCanaries: 'this command supports at most one canary group',
  mailbox: 'a rollout action mailbox is already present',
} as const;

export interface RepinRequest {
  runID: string;
  pinnedPlanDigest: string;
  requestedPlanDigest: string;
  groupCount: number;
}

export type RepinEvaluation = { ok: true; request: RepinRequest } | { ok: false; refusal: string };

const MAILBOXES = [Annotation.rolloutRepin, Annotation.rolloutPromote, Annotation.rolloutRollback];
const MAX_GROUPS = 3;

/**
 * Decides whether `repin` may ask for the live plan, from the InferenceService alone. The
 * controller re-renders and checks the digest itself; these checks refuse what it would
 * reject or what the CLI cannot prove: the run, READY, DRIFT and each group's reported
 * digest must agree with the spec the CLI read.
 */
export function evaluateRepin(isvc: InferenceServiceObject, now: Date): RepinEvaluation {
  const refusal = checkRepinShape(isvc);
  if (refusal) return { ok: false, refusal };
  const run = isvc.status?.rollout?.activeRun;
  if (!run) return { ok: false, refusal: RepinRefusal.idle };
  const drift = checkPlanConditions(isvc, run.runID, run.openedAt, run.pinnedAt, now);
  if (drift === undefined) return { ok: false, refusal: RepinRefusal.evidence };
  if (drift.status !== 'True') return { ok: false, refusal: RepinRefusal.inSync };
  return compareDigests(isvc, run.runID, drift);
}

/** The checks that need no digest, in upstream's order: mailbox, run, plan, shape, groups. */
function checkRepinShape(isvc: InferenceServiceObject): string | undefined {
  if (MAILBOXES.some((key) => annotationOf(isvc, key) !== undefined)) return RepinRefusal.mailbox;
  const run = isvc.status?.rollout?.activeRun;
  if (!run) return RepinRefusal.idle;
  const live = isvc.spec?.rollout?.groups ?? [];
  if (live.length === 0) return RepinRefusal.emptyPlan;
  const pinned = run.plan?.groups ?? [];
  if (pinned.length === 0 || !run.runID) return RepinRefusal.evidence;
  if (!sameTopology(topologyOf(live), topologyOf(pinned.map((group) => group.group ?? {})))) return RepinRefusal.topology;
  if (live.length > MAX_GROUPS) return RepinRefusal.evidence;
  if (live.filter((group) => declaredKindOf(group) === 'canary').length > 1) return RepinRefusal.multipleCanaries;
  if ((isvc.status?.rollout?.groups ?? []).length !== live.length) return RepinRefusal.evidence;
  return undefined;
}

/** The live plan's digest from the spec and the reported resolutions, checked against DRIFT. */
function compareDigests(isvc: InferenceServiceObject, runID: string, drift: StatusCondition): RepinEvaluation {
  const live = isvc.spec?.rollout?.groups ?? [];
  const pinned = isvc.status?.rollout?.activeRun?.plan?.groups ?? [];
  const resolutions = isvc.status?.rollout?.groups ?? [];
  const pinnedDigests = pinned.map((group) => group.portableDigest ?? '');
  const currentDigests = live.map((group, index) => currentGroupDigest(group, resolutions[index], index));
  if (pinnedDigests.some((digest) => !PORTABLE_DIGEST_PATTERN.test(digest)) || currentDigests.includes(undefined)) {
    return { ok: false, refusal: RepinRefusal.evidence };
  }
  const firstChange = currentDigests.findIndex((digest, index) => digest !== pinnedDigests[index]);
  if (firstChange < 0) return { ok: false, refusal: RepinRefusal.inSync };
  const changed = resolutions[firstChange];
  const wantReason = changed?.source === 'Policy' ? PlanDriftReason.policyNewerThanRun : PlanDriftReason.specNewerThanRun;
  const wantMessage = Message.planDrift(firstChange, changed?.observedDigest || UNRESOLVABLE_DIGEST, pinnedDigests[firstChange] as string);
  if (drift.reason !== wantReason || drift.message !== wantMessage) return { ok: false, refusal: RepinRefusal.evidence };
  const pinnedPlanDigest = digestPlan(pinnedDigests);
  const requestedPlanDigest = digestPlan(currentDigests as string[]);
  if (pinnedPlanDigest === requestedPlanDigest) return { ok: false, refusal: RepinRefusal.inSync };
  return { ok: true, request: { runID, pinnedPlanDigest, requestedPlanDigest, groupCount: pinned.length } };
}

/** READY must be True/Pinned for this run and DRIFT a known state, both stamped within the run. */
function checkPlanConditions(
  isvc: InferenceServiceObject,
  runID: string,
  openedAt: string | undefined,
  pinnedAt: string | undefined,
  now: Date,
): StatusCondition | undefined {
  const ready = findCondition(isvc, ConditionType.rolloutPlanReady).condition;
  const drift = findCondition(isvc, ConditionType.rolloutPlanDrift).condition;
  const pinnedTime = parseTime(pinnedAt);
  if (!ready || !drift || pinnedTime === undefined || pinnedTime > now.getTime()) return undefined;
  if (ready.status !== 'True' || ready.reason !== PlanReadyReason.pinned || ready.message !== Message.planPinned(runID)) {
    return undefined;
  }
  if (!stampedWithin(ready.lastTransitionTime, parseTime(openedAt), now) || !stampedWithin(drift.lastTransitionTime, pinnedTime, now)) {
    return undefined;
  }
  if (drift.status === 'True') {
    return drift.reason === PlanDriftReason.specNewerThanRun || drift.reason === PlanDriftReason.policyNewerThanRun ? drift : undefined;
  }
  return drift.status === 'False' && drift.reason === PlanDriftReason.inSync ? drift : undefined;
}

function parseTime(value: string | undefined): number | undefined {
  if (!value) return undefined;
  const time = Date.parse(value);
  return Number.isNaN(time) ? undefined : time;
}

/** Condition times are whole seconds; a run's times may carry fractions. */
function stampedWithin(value: string | undefined, notBefore: number | undefined, now: Date): boolean {
  const time = parseTime(value);
  if (time === undefined || notBefore === undefined) return false;
  return time >= Math.floor(notBefore / 1000) * 1000 && time <= now.getTime();
}

/**
 * The digest a run opened now would pin for one group: computed from the spec for an
 * inline or default group (and it must match what the controller reports), taken from the
 * controller's report for a policy group, whose body the CLI does not read.
 */
function currentGroupDigest(
  group: RolloutGroup,
  resolution: { index?: number; source?: string; observedDigest?: string; policyRef?: unknown } | undefined,
  index: number,
): string | undefined {
  if (!resolution || resolution.index !== index) return undefined;
  const source = declaredSourceOf(group);
  const reported = resolution.observedDigest ?? '';
  if (source === 'Policy') {
    return resolution.source === 'Policy' && PORTABLE_DIGEST_PATTERN.test(reported) ? reported : undefined;
  }
  if (resolution.source !== 'Inline') return undefined;
  const computed = digestGroupProgression(group);
  if (computed === reported) return computed;
  // A controller that reports a default group's digest as blank still pins blue-green.
  if (source === 'Defaulted' && reported === '' && computed === DEFAULT_GROUP_DIGEST) return computed;
  return undefined;
}

export const PromoteRefusal = {
  noCanary: 'no applicable active rollout or lifecycle work was observed',
  notAtGate: 'promote requires an active indefinite manual gate; analysis requires explicit override',
  paused: 'globally paused canary cannot consume a request',
  mailbox: 'a rollout promote or rollback mailbox is present',
  evidence: 'controller safety evidence is stale or inconsistent',
} as const;

export type PromoteEvaluation =
  | { ok: true; canaryRevision: string; runID: string; step: number; stepCount: number }
  | { ok: false; refusal: string };

/**
 * Decides whether `promote` may release the canary: an active run with one canary group,
 * waiting at a manual gate (or holding before a step after a repin), no pending request.
 */
export function evaluatePromote(isvc: InferenceServiceObject): PromoteEvaluation {
  const refuse = (refusal: string): PromoteEvaluation => ({ ok: false, refusal });
  if ([Annotation.rolloutPromote, Annotation.rolloutRollback].some((key) => annotationOf(isvc, key) !== undefined)) {
    return refuse(PromoteRefusal.mailbox);
  }
  const paused = annotationOf(isvc, 'ome.io/rollout-paused');
  if (paused === 'true' || paused === 'freeze') return refuse(PromoteRefusal.paused);
  const run = isvc.status?.rollout?.activeRun;
  const canary = isvc.status?.canary;
  const canaryGroups = (run?.plan?.groups ?? []).filter((group) => declaredKindOf(group.group ?? {}) === 'canary');
  if (!run || canaryGroups.length === 0 || !canary || canary.rolledBackRevisionHash || canary.finished) {
    return refuse(PromoteRefusal.noCanary);
  }
  const steps = canaryGroups[0]?.group.canary?.steps ?? [];
  const step = canary.currentStep;
  if (canaryGroups.length > 1 || !canary.canaryRevisionHash || !Number.isInteger(step) || step < 0 || step >= steps.length) {
    return refuse(PromoteRefusal.evidence);
  }
  // A canary holding before a step after a repin is released with the annotation itself,
  // as the repin guide shows; the command only passes a manual gate it can see.
  if (canary.preStepHold || !isManualGate(steps[step])) return refuse(PromoteRefusal.notAtGate);
  return { ok: true, canaryRevision: canary.canaryRevisionHash, runID: run.runID, step, stepCount: steps.length };
}

/** A step that waits for a promote: a pause without a duration, and no analysis. */
function isManualGate(step: { pause?: { duration?: string }; analysis?: unknown } | undefined): boolean {
  return step !== undefined && step.analysis === undefined && step.pause !== undefined && !step.pause.duration;
}
