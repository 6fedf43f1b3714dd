/**
 * Sequential rollout groups: when a run's pinned plan collapses to a sequence, its
 * coordination groups roll one after another, group N completing (and its `soak`
 * elapsing) before group N+1 begins. Pure rules; the writer and the executor apply them.
 */
import { parseGoDuration } from '../go-duration';
import { declaredKindOf } from './plan';
import type { RolloutGroup } from './types';

/** `spec.rollout.groupOrdering`: Sequential unless declared Concurrent. */
export const GroupOrdering = { sequential: 'Sequential', concurrent: 'Concurrent' } as const;

const NANOS_PER_MILLISECOND = 1_000_000n;

/**
 * Upstream's `rolloutCollapsesToSequential`, under Sequential ordering: the non-canary
 * groups fold into one sequence exactly when there are two or more of them and every one
 * is a single-component blueGreen group (a group with no progression is blueGreen).
 * Canary groups stay outside the sequence and step on their own. `groupOrdering:
 * Concurrent` runs every group at once.
 */
export function collapsesToSequential(groups: readonly Partial<RolloutGroup>[], ordering?: string): boolean {
  if (ordering === GroupOrdering.concurrent) return false;
  let members = 0;
  for (const group of groups) {
    const kind = declaredKindOf(group);
    if (kind === 'canary') continue;
    members += 1;
    if ((group.components ?? []).length !== 1 || kind !== 'blueGreen') return false;
  }
  return members >= 2;
}

/** One sequence group as the turn rule reads it. */
export interface SequenceMember {
  /** The group's index in the pinned plan. */
  index: number;
  /** Whether the run targets the group's component (an untargeted group has nothing to roll). */
  targeted: boolean;
  /** Whether the group has completed: its component runs the target revision, ready. */
  complete: boolean;
  /** When the group was recorded complete (RFC 3339); the soak counts from here. */
  completedAt?: string;
  /** The group's `soak` (a Go duration): the wait after it completes before the next group begins. */
  soak?: string;
}

export interface SequenceTurn {
  /** The group that may roll now, if any. */
  active?: number;
  /** Targeted groups waiting for their turn (their new workload is held). */
  held: number[];
  /** Whole seconds until the soak that holds the next group ends. */
  soakRemainingSeconds?: number;
}

/**
 * Whose turn it is. Walking the sequence in plan order, untargeted groups are passed
 * over; the first targeted group that has not completed is active; every targeted group
 * after it is held. A completed group whose soak has not elapsed holds every targeted
 * group after it (its soak counts from `completedAt`, or has not started when that is
 * not recorded yet). Soak after the last targeted group holds nothing, and a group
 * already at its target is never held.
 */
export function sequenceTurn(members: readonly SequenceMember[], now: Date): SequenceTurn {
  const held: number[] = [];
  let active: number | undefined;
  let blocked = false;
  let soakRemainingSeconds: number | undefined;
  let pendingSoak: number | undefined;
  for (const member of members) {
    if (!member.targeted) continue;
    if (active !== undefined || blocked) {
      // A later group already at its target has nothing left to hold.
      if (!member.complete) held.push(member.index);
      continue;
    }
    if (pendingSoak !== undefined && !member.complete) {
      // The previous group's soak has not elapsed: this group and all after it wait.
      blocked = true;
      soakRemainingSeconds = pendingSoak;
      held.push(member.index);
      continue;
    }
    if (!member.complete) {
      active = member.index;
      continue;
    }
    const remaining = soakRemaining(member, now);
    if (remaining > 0) pendingSoak = remaining;
  }
  return { ...(active === undefined ? {} : { active }), held, ...(soakRemainingSeconds === undefined ? {} : { soakRemainingSeconds }) };
}

function soakRemaining(member: SequenceMember, now: Date): number {
  if (!member.soak) return 0;
  const soakMs = Number(parseGoDuration(member.soak) / NANOS_PER_MILLISECOND);
  if (soakMs <= 0) return 0;
  const started = member.completedAt === undefined ? Number.NaN : Date.parse(member.completedAt);
  const elapsedMs = Number.isNaN(started) ? 0 : Math.max(0, now.getTime() - started);
  return Math.max(0, Math.ceil((soakMs - elapsedMs) / 1000));
}

/**
 * One entry of `status.rolloutCoordination.groups[]`, in upstream's field names: `name`
 * is the group's index as a string; `phase` is `Waiting` while the group's new revision
 * comes up and `Idle` once it completed, `lastTransitionTime` when that phase began (so
 * an Idle entry records when the group completed, from which its soak counts), and
 * `compositePhase` is `Sequential.AwaitingNextComponent` during its soak.
 */
export interface CoordinationGroupStatus {
  name: string;
  components?: string[];
  phase?: string;
  compositePhase?: string;
  lastTransitionTime?: string;
  [field: string]: unknown;
}

export const CoordinationPhase = { waiting: 'Waiting', idle: 'Idle' } as const;
export const SEQUENTIAL_AWAITING_NEXT = 'Sequential.AwaitingNextComponent';

/** A sequence group as the executor sees it on one pass. */
export interface SequenceGroupObservation {
  index: number;
  components: readonly string[];
  targeted: boolean;
  complete: boolean;
  soak?: string;
}

/** The members as recorded: a group is complete once its entry is Idle, from that entry's time. */
export function recordedMembers(
  groups: readonly Omit<SequenceGroupObservation, 'complete'>[],
  recorded: readonly CoordinationGroupStatus[] | undefined,
): SequenceMember[] {
  return groups.map((group) => {
    const entry = recorded?.find((candidate) => candidate.name === String(group.index));
    const complete = entry?.phase === CoordinationPhase.idle;
    return {
      index: group.index,
      targeted: group.targeted,
      complete,
      ...(complete && entry?.lastTransitionTime ? { completedAt: entry.lastTransitionTime } : {}),
      ...(group.soak ? { soak: group.soak } : {}),
    };
  });
}

export interface SequencePass {
  /** The entries to store in `status.rolloutCoordination.groups`. */
  groups: CoordinationGroupStatus[];
  turn: SequenceTurn;
  /** Groups whose turn began on this pass: their held workload is now due to be written. */
  begun: number[];
}

/**
 * One executor pass over the sequence: a group seen complete is recorded Idle at `now`
 * (kept at its earlier time when already recorded); the group whose turn it is is
 * recorded Waiting; the turn follows from the recorded completions, so a soak counts
 * from the pass that first saw its group complete.
 */
export function passSequence(
  observed: readonly SequenceGroupObservation[],
  recorded: readonly CoordinationGroupStatus[] | undefined,
  at: string,
  now: Date,
): SequencePass {
  const entries = new Map<string, CoordinationGroupStatus>((recorded ?? []).map((entry) => [entry.name, { ...entry }]));
  for (const group of observed) {
    const name = String(group.index);
    const entry = entries.get(name);
    if (group.targeted && group.complete && entry?.phase !== CoordinationPhase.idle) {
      entries.set(name, { name, components: [...group.components], phase: CoordinationPhase.idle, lastTransitionTime: at });
    }
  }
  const members = recordedMembers(observed, [...entries.values()]);
  const turn = sequenceTurn(members, now);
  const begun: number[] = [];
  if (turn.active !== undefined) {
    const name = String(turn.active);
    const entry = entries.get(name);
    if (entry?.phase !== CoordinationPhase.waiting) {
      const components = observed.find((group) => group.index === turn.active)?.components ?? [];
      entries.set(name, { name, components: [...components], phase: CoordinationPhase.waiting, lastTransitionTime: at });
      begun.push(turn.active);
    }
  }
  for (const entry of entries.values()) {
    delete entry.compositePhase;
  }
  if (turn.soakRemainingSeconds !== undefined) {
    // The soaking group is the last completed one before the first held group.
    const firstHeld = turn.held[0] ?? Number.POSITIVE_INFINITY;
    const soaking = members.filter((member) => member.targeted && member.complete && member.index < firstHeld).pop();
    const entry = soaking ? entries.get(String(soaking.index)) : undefined;
    if (entry) entry.compositePhase = SEQUENTIAL_AWAITING_NEXT;
  }
  const groups = [...entries.values()].sort((a, b) => Number(a.name) - Number(b.name));
  return { groups, turn, begun };
}
