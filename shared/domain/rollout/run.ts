/**
 * Rollout runs: identity, open and close, and the stale-write guard on the pinned plan.
 */
import { hashShort } from './digest';
import type { RenderedPlan } from './plan';
import type { PinnedGroup, RolloutRun, RolloutRunRecord, RunOutcome, RunTarget } from './types';
import { formatKubeTime } from './kube-time';

export { formatKubeTime } from './kube-time';

/**
 * `<isvc>-` + 12 hex of sha256 over `<component>=<revision>;` for each target in the
 * order given, then the group digests joined by `,`, then openedAt — upstream's `runID`
 * (OP `.../omenative/rolloutrun/observe.go`@227e4861). Callers pass the targets in plan
 * order (see `orderTargetsByPlan`), as upstream pins them.
 */
export function computeRunID(
  isvcName: string,
  targetRevisions: readonly Pick<RunTarget, 'component' | 'revision'>[],
  groupDigests: readonly string[],
  openedAt: string,
): string {
  const targets = targetRevisions.map((target) => `${target.component}=${target.revision ?? ''};`).join('');
  return `${isvcName}-${hashShort(targets + groupDigests.join(',') + openedAt)}`;
}

/**
 * The targets in upstream's pin order: the plan's groups in order, each group's
 * components in their listed order, every component once (OP `.../rolloutrun/rolloutrun.go`
 * `openRun`@227e4861). A target whose component no group names keeps its place after them.
 */
export function orderTargetsByPlan<T extends Pick<RunTarget, 'component'>>(
  targets: readonly T[],
  groups: readonly Pick<PinnedGroup, 'group'>[],
): T[] {
  const byComponent = new Map(targets.map((target) => [target.component, target] as const));
  const placed = new Set<string>();
  const ordered: T[] = [];
  for (const { group } of groups) {
    for (const component of group.components ?? []) {
      const target = byComponent.get(component);
      if (placed.has(component) || !target) continue;
      placed.add(component);
      ordered.push(target);
    }
  }
  return [...ordered, ...targets.filter((target) => !placed.has(target.component))];
}

/** Opens a run pinned to `plan`: openedAt and pinnedAt are both `now`, targets in plan order. */
export function openRun(input: {
  isvcName: string;
  targetRevisions: readonly RunTarget[];
  plan: RenderedPlan;
  now: Date;
}): RolloutRun {
  const openedAt = formatKubeTime(input.now);
  const targets = orderTargetsByPlan(input.targetRevisions, input.plan.groups);
  return {
    runID: computeRunID(input.isvcName, targets, input.plan.groupDigests, openedAt),
    openedAt,
    pinnedAt: openedAt,
    targetRevisions: targets.map((target) => ({ ...target })),
    plan: { groups: input.plan.groups.map((group) => structuredClone(group)) },
  };
}

/**
 * Closes a run into the bounded `lastRun` record: outcome, times, targets, provenance.
 * Upstream's record has no run ID; `recordedRunID` recomputes it.
 */
export function closeRun(run: RolloutRun, outcome: RunOutcome, now: Date): RolloutRunRecord {
  return {
    outcome,
    openedAt: run.openedAt,
    closedAt: formatKubeTime(now),
    ...(run.targetRevisions ? { targetRevisions: run.targetRevisions.map((target) => ({ ...target })) } : {}),
    groups: (run.plan.groups ?? []).map((group) => ({
      source: group.source,
      ...(group.policyRef ? { policyRef: { ...group.policyRef } } : {}),
      ...(group.portableDigest ? { portableDigest: group.portableDigest } : {}),
    })),
  };
}

/**
 * Of two copies of the same run (one from a fresh read, one about to be written),
 * keeps the one pinned later. A repin is one-shot — its annotation is consumed — so a
 * status write built from a stale read must never put the older plan back.
 */
export function keepNewerPin(current: RolloutRun | undefined, incoming: RolloutRun | undefined): RolloutRun | undefined {
  if (!current || !incoming || current.runID !== incoming.runID) return incoming;
  return Date.parse(current.pinnedAt) > Date.parse(incoming.pinnedAt) ? current : incoming;
}

/** pinnedAt for a new pin at `now`, never earlier than the previous pin. */
export function nextPinnedAt(previous: string, now: Date): string {
  const candidate = formatKubeTime(now);
  return Date.parse(candidate) >= Date.parse(previous) ? candidate : previous;
}

/**
 * The ID of the run a `lastRun` record closed, recomputed from what upstream keeps there
 * (targets, the groups' portable digests, openedAt), or undefined when openedAt is gone.
 * A repin changes the digests a record carries, so for a repinned run this names the
 * run as its last plan would have opened it, not the ID it carried.
 */
export function recordedRunID(isvcName: string, record: RolloutRunRecord): string | undefined {
  if (!record.openedAt) return undefined;
  const digests = (record.groups ?? []).map((group) => group.portableDigest ?? '');
  return computeRunID(isvcName, record.targetRevisions ?? [], digests, record.openedAt);
}
