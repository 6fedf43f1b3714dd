/**
 * The rollout rules the plugin applies before it sends a repin or promote, expressed with
 * the pure rollout module: digests, topology and drift come from `shared/domain/rollout`.
 */
import { isCanaryFinished } from '../../shared/domain/rollout/canary';
import { declaredKindOf } from '../../shared/domain/rollout/plan';
import { checkRepinRefusal } from '../../shared/domain/rollout/repin';
import { Annotation } from '../../shared/domain/vocabulary';
import { annotationOf, type InferenceServiceObject } from '../isvc';

export interface RepinRequest {
  runID: string;
  pinnedPlanDigest: string;
  requestedPlanDigest: string;
  groupCount: number;
}

/** A refusal carries the whole message users see, `rollout repin refused: <reason>`. */
export type RepinEvaluation = { ok: true; request: RepinRequest } | { ok: false; message: string };

/**
 * Decides whether `repin` may ask for the live plan, from the InferenceService alone (the
 * CLI reads no policies: a policy group's live digest is the one the controller reports).
 */
export function evaluateRepin(isvc: InferenceServiceObject, now: Date): RepinEvaluation {
  const check = checkRepinRefusal({
    annotations: isvc.metadata.annotations ?? {},
    generation: isvc.metadata.generation,
    observedGeneration: isvc.status?.observedGeneration,
    specGroups: isvc.spec?.rollout?.groups ?? [],
    rollout: isvc.status?.rollout ?? {},
    conditions: isvc.status?.conditions ?? [],
    now,
  });
  if (check.refused) return { ok: false, message: check.message };
  const { runID, pinnedPlanDigest, requestedPlanDigest, groupCount } = check;
  return { ok: true, request: { runID, pinnedPlanDigest, requestedPlanDigest, groupCount } };
}

export const PromoteRefusal = {
  noCanary: 'no applicable active rollout or lifecycle work was observed',
  notAtGate: 'promote requires an active indefinite manual gate; analysis requires explicit override',
  paused: 'globally paused canary cannot consume a request',
  mailbox: 'a rollout promote or rollback mailbox is present',
  evidence: 'controller safety evidence is stale or inconsistent',
} as const;

/** What the preview shows of an analysis gate that `--override-analysis` passes. */
export interface AnalysisGateView {
  failedChecks: number;
  failureLimit: number;
  interval: string;
  warmUp: string;
  bake: string;
}

export type PromoteEvaluation =
  | { ok: true; canaryRevision: string; runID: string; step: number; stepCount: number; gate: 'Manual' | 'Analysis'; analysis?: AnalysisGateView }
  | { ok: false; refusal: string };

/**
 * Decides whether `promote` may release the canary: an active run with one canary group,
 * waiting at a manual gate (or holding before a step after a repin), no pending request.
 * With `overrideAnalysis` the step must be an analysis gate instead, as upstream's CLI
 * has it: the promote then passes that gate for this step only, skipping its checks,
 * warm-up and bake (the step machine honours a promote at an analysis step).
 */
export function evaluatePromote(isvc: InferenceServiceObject, options: { overrideAnalysis?: boolean } = {}): PromoteEvaluation {
  const refuse = (refusal: string): PromoteEvaluation => ({ ok: false, refusal });
  const waiting = requestRefusalOf(isvc);
  if (waiting) return refuse(waiting);
  const run = isvc.status?.rollout?.activeRun;
  const canary = isvc.status?.canary;
  const canaryGroups = (run?.plan?.groups ?? []).filter((group) => declaredKindOf(group.group ?? {}) === 'canary');
  const steps = canaryGroups[0]?.group.canary?.steps ?? [];
  if (!run || canaryGroups.length === 0 || !canary || canary.rolledBackRevisionHash || isCanaryFinished(canary, steps.length)) {
    return refuse(PromoteRefusal.noCanary);
  }
  const step = canary.currentStep;
  if (canaryGroups.length > 1 || !canary.canaryRevisionHash || !Number.isInteger(step) || step < 0 || step >= steps.length) {
    return refuse(PromoteRefusal.evidence);
  }
  // A canary holding before a step after a repin is released with the annotation itself,
  // as the repin guide shows; the command only passes a manual gate it can see.
  const gate = canary.preStepHold ? undefined : gateOf(steps[step], canary.analysisFailedChecks, options.overrideAnalysis === true);
  if (!gate) return refuse(PromoteRefusal.notAtGate);
  return { ok: true, canaryRevision: canary.canaryRevisionHash, runID: run.runID, step, stepCount: steps.length, ...gate };
}

/** The gate the command may pass at this step: a manual one, or with the override an analysis one. */
function gateOf(
  step: StepView | undefined,
  failedChecks: number | undefined,
  overrideAnalysis: boolean,
): { gate: 'Manual' } | { gate: 'Analysis'; analysis: AnalysisGateView } | undefined {
  if (!overrideAnalysis) return isManualGate(step) ? { gate: 'Manual' } : undefined;
  const analysis = analysisGateOf(step, failedChecks);
  return analysis ? { gate: 'Analysis', analysis } : undefined;
}

/** A request already waiting, or a global pause: no promote can be consumed now. */
function requestRefusalOf(isvc: InferenceServiceObject): string | undefined {
  if ([Annotation.rolloutPromote, Annotation.rolloutRollback].some((key) => annotationOf(isvc, key) !== undefined)) return PromoteRefusal.mailbox;
  const paused = annotationOf(isvc, 'ome.io/rollout-paused');
  return paused === 'true' || paused === 'freeze' ? PromoteRefusal.paused : undefined;
}

type StepView = { pause?: { duration?: string }; analysis?: { failureLimit?: number; interval?: string; initialDelay?: string } };

/** What the preview shows of a step that gates on analysis; undefined for any other step. */
function analysisGateOf(step: StepView | undefined, failedChecks: number | undefined): AnalysisGateView | undefined {
  if (!step?.analysis) return undefined;
  const { analysis } = step;
  return {
    failedChecks: failedChecks ?? 0,
    failureLimit: analysis.failureLimit ?? 0,
    interval: analysis.interval ?? '',
    warmUp: analysis.initialDelay ?? '0s',
    bake: step.pause?.duration ?? '0s',
  };
}

/** A step that waits for a promote: a pause without a duration, and no analysis. */
function isManualGate(step: { pause?: { duration?: string }; analysis?: unknown } | undefined): boolean {
  return step !== undefined && step.analysis === undefined && step.pause !== undefined && !step.pause.duration;
}
