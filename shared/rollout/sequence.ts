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
