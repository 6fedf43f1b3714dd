/**
 * The status a pin decision leads to, and the decision's inputs taken from an
 * InferenceService. Pure: both the pin use-case and the drift fan-out use these, so one
 * InferenceService gets the same status whichever path evaluates it.
 */
import type { Condition } from '../../domain/model/condition';
import type { InferenceService, InferenceServiceStatus } from '../../domain/model/inference-service';
import { findCondition, removeCondition, setCondition, type PinDecision, type PinningSubject, type StatusCondition } from '../../domain/runtime';
import { Annotation, ConditionType, DriftReason, RuntimeReadyReason } from '../../domain/vocabulary';

/** The decision's view of an InferenceService. */
export function toPinningSubject(isvc: InferenceService): PinningSubject {
  const token = isvc.metadata.annotations?.[Annotation.runtimeSync];
  return {
    namespace: isvc.metadata.namespace ?? '',
    name: isvc.metadata.name,
    runtime: isvc.spec?.runtime,
    ...(token === undefined ? {} : { syncToken: token }),
    ...(isvc.status?.pinnedRevisionName ? { pinnedRevisionName: isvc.status.pinnedRevisionName } : {}),
    ...(isvc.status?.lastRuntimeSyncToken ? { lastRuntimeSyncToken: isvc.status.lastRuntimeSyncToken } : {}),
  };
}

/** Kubernetes condition times: RFC 3339 with second precision. */
export function formatConditionTime(epochMs: number): string {
  return new Date(epochMs).toISOString().replace(/\.\d{3}Z$/, 'Z');
}

const PAUSING_REASONS: ReadonlySet<string> = new Set([DriftReason.revisionMismatch, DriftReason.revisionMissing, DriftReason.runtimeMismatch]);

/** True while the InferenceService's status says drift pauses its workload. */
export function isPausedByDrift(status: InferenceServiceStatus | undefined): boolean {
  const condition = findCondition(status?.conditions as StatusCondition[] | undefined, ConditionType.runtimeDrifted);
  return condition?.status === 'True' && PAUSING_REASONS.has(condition.reason ?? '');
}

/**
 * Applies the decision to a status: pinned revision, last token and `RuntimeDrifted`,
 * and, when given, the generation the decision was made for (`observedGeneration`, which
 * `kubectl ome runtime effective` reads to tell current status from stale). Returns
 * undefined when nothing changes, so the caller writes nothing: a no-op status write
 * still reaches every watcher.
 */
export function computeNextStatus(
  status: InferenceServiceStatus | undefined,
  decision: PinDecision,
  nowMs: number,
  observedGeneration?: number,
): InferenceServiceStatus | undefined {
  const before = (status?.conditions ?? []) as StatusCondition[];
  const now = formatConditionTime(nowMs);
  let conditions = before;
  if (decision.drift.action === 'set') {
    conditions = setCondition(before, { type: ConditionType.runtimeDrifted, status: 'True', reason: decision.drift.reason, message: decision.drift.message }, now);
  } else if (decision.drift.action === 'remove') {
    conditions = removeCondition(before, ConditionType.runtimeDrifted);
  }
  conditions = applyRuntimeReady(conditions, decision.runtimeReady, now);
  const fields = decision.status;
  const fieldsChange =
    fields !== undefined &&
    (fields.pinnedRevisionName !== (status?.pinnedRevisionName ?? '') || fields.lastRuntimeSyncToken !== (status?.lastRuntimeSyncToken ?? ''));
  const generationChange = observedGeneration !== undefined && status?.observedGeneration !== observedGeneration;
  if (conditions === before && !fieldsChange && !generationChange) return undefined;

  const next: InferenceServiceStatus = { ...(status ?? {}) };
  if (generationChange) next.observedGeneration = observedGeneration;
  if (conditions !== before) {
    if (conditions.length > 0) next.conditions = conditions as Condition[];
    else delete next.conditions;
  }
  if (fields !== undefined) {
    next.pinnedRevisionName = fields.pinnedRevisionName;
    // Go omits an empty token (omitempty): absent and "" mean the same.
    if (fields.lastRuntimeSyncToken === '') delete next.lastRuntimeSyncToken;
    else next.lastRuntimeSyncToken = fields.lastRuntimeSyncToken;
  }
  return next;
}

/**
 * RuntimeReady as upstream writes it: False/RuntimeNotFound with the lookup's message while
 * unresolved; True/RuntimeResolved, without a message, once resolved, but only where the
 * condition is already set, so a service that never missed its runtime gains none.
 */
function applyRuntimeReady(conditions: StatusCondition[], ready: PinDecision['runtimeReady'], now: string): StatusCondition[] {
  if (ready?.state === 'unresolved') {
    return setCondition(conditions, { type: ConditionType.runtimeReady, status: 'False', reason: RuntimeReadyReason.runtimeNotFound, message: ready.message }, now);
  }
  const existing = findCondition(conditions, ConditionType.runtimeReady);
  if (ready?.state !== 'resolved' || !existing || (existing.status === 'True' && existing.reason === RuntimeReadyReason.runtimeResolved)) return conditions;
  return conditions.map((condition) =>
    condition.type === ConditionType.runtimeReady ? { type: condition.type, status: 'True', reason: RuntimeReadyReason.runtimeResolved, lastTransitionTime: now } : condition,
  );
}

/** True when the decision changes what the InferenceService is pinned to or which token it recorded. */
export function changesPin(status: InferenceServiceStatus | undefined, decision: PinDecision): boolean {
  const fields = decision.status;
  return (
    decision.createRevision !== undefined ||
    decision.tokenConsumed ||
    (fields !== undefined &&
      (fields.pinnedRevisionName !== (status?.pinnedRevisionName ?? '') || fields.lastRuntimeSyncToken !== (status?.lastRuntimeSyncToken ?? '')))
  );
}
