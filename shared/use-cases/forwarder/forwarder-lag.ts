/**
 * The forwarder's lag: how long a change waited before its hint reached the bus. A change's
 * time is the newest `managedFields[].time` of the object, the API server's own record of
 * its last write, so a change made while no forwarder was watching (between invocations,
 * while a lease was changing hands) counts from when it was made, not from when a
 * forwarder caught up with it. Those times have a resolution of one second; a server that
 * keeps no managed fields leaves only the moment the forwarder observed the change.
 */
import type { ObservedChange } from '../../domain/hint-event';
import type { KubeObject } from '../../ports/cluster';

interface ManagedFieldsEntry {
  time?: unknown;
}

/**
 * When `object`'s change was made, in epoch ms, never later than `observedAt`. A relisted
 * object says nothing about when it changed (the list only shows it exists), and a delete
 * is dated by `deletionTimestamp`; both fall back to `observedAt`.
 */
export function computeChangeTime(change: ObservedChange, object: KubeObject, observedAt: number): number {
  if (change === 'RELISTED') return observedAt;
  if (change === 'DELETED') return earliest(parseTime(object.metadata.deletionTimestamp), observedAt);
  const managed = (object.metadata as { managedFields?: unknown }).managedFields;
  if (!Array.isArray(managed)) return observedAt;
  let newest: number | undefined;
  for (const entry of managed as ManagedFieldsEntry[]) {
    const time = parseTime(entry?.time);
    if (time !== undefined && (newest === undefined || time > newest)) newest = time;
  }
  return earliest(newest, observedAt);
}

function parseTime(value: unknown): number | undefined {
  if (typeof value !== 'string' || value === '') return undefined;
  const time = Date.parse(value);
  return Number.isNaN(time) ? undefined : time;
}

/** A clock ahead of ours must not make a lag negative. */
function earliest(changedAt: number | undefined, observedAt: number): number {
  return changedAt === undefined ? observedAt : Math.min(changedAt, observedAt);
}

/** Keeps the largest lag seen; `record` is called as each hint settles and for those left pending. */
export interface LagCounter {
  maxLagMs: number;
}

export function recordLag(counter: LagCounter, changedAt: number, now: number): void {
  const lag = Math.max(0, now - changedAt);
  if (lag > counter.maxLagMs) counter.maxLagMs = lag;
}
