/**
 * Consuming `ome.io/rollout-repin`: under the object's lease, re-read the ISVC, render
 * the live plan from fresh policy reads, let `decideRepin` rule, and then, in ONE status
 * write, swap the run's plan, fit every canary group to its new steps, move pinnedAt
 * forward and restate the plan conditions. The annotation is removed whatever the
 * outcome, with a JSON patch that tests its value so that a newer request set meanwhile
 * survives for its own hint.
 */
import { ControlPlaneError } from '../../domain/errors';
import type { ClusterClient } from '../../ports/cluster';
import type { StatusTransitions } from '../../ports/notifications';
import { idempotencyKey, type IdempotencyStore } from '../../ports/store';
import { hashIdempotencyPayload } from '../../domain/idempotency-rules';
import { decideRepin, isValidRepinValue, type RepinDecision } from '../../domain/rollout/repin';
import type { MetricsBindingSource } from '../../domain/rollout/analysis';
import { previewAnnotationValue } from '../../domain/annotation-value';
import type { Clock } from '../../ports/clock';
import { Annotation, EventReason, RepinMessage, RepinOutcome } from '../../domain/vocabulary';
import {
  applyPlanStatus,
  commitStatus,
  getRolloutIsvc,
  readCanaryStates,
  recordRolloutEvent,
  removeAnnotationIfUnchanged,
  removeAnnotationReturning,
  renderLivePlan,
  writeCanaryStates,
  type RolloutIsvc,
  type RolloutIsvcStatus,
} from './rollout-status';

/** Counts repin outcomes: `ome_rollout_repin_total{namespace,outcome}`. */
export interface RepinMetrics {
  countRepin(namespace: string, outcome: (typeof RepinOutcome)[keyof typeof RepinOutcome]): void;
}

export interface ApplyRepinDeps {
  client: ClusterClient;
  /** Hears of each status write committed, for the plane's notifications (shared/app/notifications.ts). */
  transitions?: StatusTransitions;
  clusterId: string;
  clock: Clock;
  idempotency: IdempotencyStore;
  metrics: RepinMetrics;
  /** What the cluster binds for analysis steps (see renderLivePlan); nothing by default. */
  binding?: MetricsBindingSource;
  /** How long a claim stays in progress before a redelivery may take it over. */
  claimTtlMs: number;
  /** Who claims (the request id): only it abandons its claim, and its own retry may claim again. */
  holder?: string;
}

export interface RepinRequestKey {
  namespace: string;
  name: string;
  uid?: string;
  /**
   * The resourceVersion at which the request was seen set (the hint's). Absent when
   * called without a hint: the version read now stands for it.
   */
  requestVersion?: string;
}

export type ApplyRepinOutcome = 'gone' | 'none' | 'duplicate' | 'discarded' | 'rejected' | 'applied';

export interface ApplyRepinResult {
  outcome: ApplyRepinOutcome;
  message?: string;
  /** False when a newer request replaced the annotation before it could be removed. */
  annotationRemoved?: boolean;
}

/** A claim on this request is held by a worker that has not finished; redeliver later. */
export class RepinInProgressError extends ControlPlaneError {
  constructor(key: string) {
    super(`repin request ${key} is being applied by another worker`, { retryable: true });
    this.name = 'RepinInProgressError';
  }
}

const RECORD_TTL_SECONDS = 7 * 24 * 3600;

/** Applies or rejects the pending repin request of one ISVC. Call under the object's lease. */
export async function applyRepin(deps: ApplyRepinDeps, request: RepinRequestKey): Promise<ApplyRepinResult> {
  return (await applyRepinRequest(deps, request)).result;
}

/**
 * As {@link applyRepin}, also returning the InferenceService as the removal of an applied
 * request's annotation left it: the run's next pass, under the same lease, starts from it
 * instead of reading it again.
 */
export async function applyRepinRequest(deps: ApplyRepinDeps, request: RepinRequestKey): Promise<{ result: ApplyRepinResult; latest?: RolloutIsvc }> {
  const isvc = await getRolloutIsvc(deps.client, request.namespace, request.name);
  if (!isvc || (request.uid && isvc.metadata.uid !== request.uid)) return { result: { outcome: 'gone' } };
  const value = isvc.metadata.annotations?.[Annotation.rolloutRepin];
  if (value === undefined) return { result: { outcome: 'none' } };
  // A value that is neither `now` nor a digest can never apply: reject it before anything
  // is claimed, so it leaves no record behind, and consume it like any other outcome.
  if (!isValidRepinValue(value)) return { result: await rejectUnusableValue(deps, isvc, value) };
  const run = isvc.status?.rollout?.activeRun;

  // The key names one request: its value, the run it targets, and the resourceVersion at
  // which it was set. A redelivered hint (or ten) carries the same version, so the
  // request applies at most once even if a crash left its annotation behind; the same
  // digest asked for again later is a new annotation write with a new version, so it is
  // honoured. The run ID keeps a request from carrying over to a run that opened since.
  const token = `${value}@${run?.runID ?? 'no-run'}@${request.requestVersion ?? isvc.metadata.resourceVersion ?? ''}`;
  const key = idempotencyKey(deps.clusterId, isvc.metadata.uid ?? '', 'rollout-repin', token);
  const claim = await deps.idempotency.claim(key, {
    inProgressTtlMs: deps.claimTtlMs,
    recordTtlSeconds: RECORD_TTL_SECONDS,
    payloadHash: hashIdempotencyPayload({ scope: 'rollout-repin', token }),
    ...(deps.holder === undefined ? {} : { owner: deps.holder }),
  });
  if (claim.state === 'in-progress') throw new RepinInProgressError(key);
  if (claim.state === 'completed') {
    const removed = await removeAnnotationIfUnchanged(deps.client, isvc, Annotation.rolloutRepin, value);
    return { result: { outcome: 'duplicate', annotationRemoved: removed } };
  }

  let result: ApplyRepinResult;
  try {
    result = await decideAndWrite(deps, isvc, value);
    await deps.idempotency.complete(key, result);
  } catch (error) {
    await deps.idempotency.abandon(key, deps.holder).catch(() => undefined);
    throw error;
  }
  const latest = await removeAnnotationReturning<RolloutIsvc>(deps.client, isvc, Annotation.rolloutRepin, value);
  return { result: { ...result, annotationRemoved: latest !== undefined }, ...(latest ? { latest } : {}) };
}

async function rejectUnusableValue(deps: ApplyRepinDeps, isvc: NonNullable<Awaited<ReturnType<typeof getRolloutIsvc>>>, value: string): Promise<ApplyRepinResult> {
  const message = RepinMessage.invalidValue(previewAnnotationValue(value));
  await recordRolloutEvent(deps.client, isvc, { type: 'Warning', reason: EventReason.rolloutRepinRejected, message });
  deps.metrics.countRepin(isvc.metadata.namespace ?? '', RepinOutcome.rejected);
  const removed = await removeAnnotationIfUnchanged(deps.client, isvc, Annotation.rolloutRepin, value);
  return { outcome: 'rejected', message, annotationRemoved: removed };
}

async function decideAndWrite(
  deps: ApplyRepinDeps,
  isvc: NonNullable<Awaited<ReturnType<typeof getRolloutIsvc>>>,
  value: string,
): Promise<ApplyRepinResult> {
  const now = new Date(deps.clock.now());
  const run = isvc.status?.rollout?.activeRun;
  const live = await renderLivePlan(deps.client, isvc, deps.binding);
  const canaries = readCanaryStates(isvc.status, run?.plan.groups ?? []);
  const decision: RepinDecision = decideRepin({ annotationValue: value, run, live, canaries, now });
  const namespace = isvc.metadata.namespace ?? '';
  switch (decision.action) {
    case 'none':
      return { outcome: 'none' };
    case 'discard':
      return { outcome: 'discarded' };
    case 'reject':
      await recordRolloutEvent(deps.client, isvc, decision.event);
      deps.metrics.countRepin(namespace, RepinOutcome.rejected);
      return { outcome: 'rejected', message: decision.event.message };
    case 'apply': {
      const status: RolloutIsvcStatus = structuredClone(isvc.status ?? {});
      status.rollout = { ...status.rollout, activeRun: decision.run };
      writeCanaryStates(status, decision.run.plan.groups ?? [], new Map([...canaries, ...decision.canaries]));
      applyPlanStatus(status, isvc, live, now);
      await commitStatus(deps.client, isvc, status, deps.transitions);
      await recordRolloutEvent(deps.client, isvc, decision.event);
      deps.metrics.countRepin(namespace, RepinOutcome.applied);
      return { outcome: 'applied', message: decision.event.message };
    }
  }
}
