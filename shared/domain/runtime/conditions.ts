/**
 * Immutable edits of a knative-style `status.conditions` array. OME sets `RuntimeDrifted`
 * only ever to True and deletes it when the reason clears, so there is a set and a
 * remove, and never a False.
 */

export interface StatusCondition {
  type: string;
  status: string;
  reason?: string;
  message?: string;
  severity?: string;
  lastTransitionTime?: string;
}

/** Returns the condition of that type, if present. */
export function findCondition(conditions: readonly StatusCondition[] | undefined, type: string): StatusCondition | undefined {
  return conditions?.find((c) => c.type === type);
}

/**
 * Returns a copy of `conditions` with `next` set. `lastTransitionTime` moves whenever the
 * status, reason or message changes, as upstream's `setRuntimeDriftedCondition` does
 * (SG `pkg/controller/v1beta1/inferenceservice/pinning.go`@078c923f), so a drift that
 * changes cause (RevisionMismatch, then RevisionMissing) reads as a new transition. An
 * unchanged condition returns the same array, so a caller can skip the write by
 * comparing references.
 */
export function setCondition(
  conditions: readonly StatusCondition[] | undefined,
  next: { type: string; status: string; reason: string; message: string },
  now: string,
): StatusCondition[] {
  const list = conditions ?? [];
  const existing = findCondition(list, next.type);
  if (!existing) return [...list, { ...next, lastTransitionTime: now }];
  if (existing.status === next.status && existing.reason === next.reason && existing.message === next.message) {
    return list as StatusCondition[];
  }
  return list.map((c) => (c.type === next.type ? { ...c, ...next, lastTransitionTime: now } : c));
}

/** Returns a copy without the condition of that type, or the same array when it is absent. */
export function removeCondition(conditions: readonly StatusCondition[] | undefined, type: string): StatusCondition[] {
  const list = conditions ?? [];
  return findCondition(list, type) ? list.filter((c) => c.type !== type) : (list as StatusCondition[]);
}
