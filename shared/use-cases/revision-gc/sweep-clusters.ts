/**
 * The scheduled GC across clusters: each cluster is swept under its own lease, so the
 * five-minute schedule and a sweep triggered by a new revision never run one cluster
 * twice at once (both would be safe, thanks to the preconditions, but wasteful). A
 * cluster whose sweep fails does not stop the others.
 *
 * A sweep runs within the invocation's time budget. When the budget runs out first, the
 * cluster's continuation (`revision-gc`) keeps the plan time (and, for the record, the last
 * revision written); the next sweep of the cluster (the five-minute schedule or a new
 * revision's hint) plans again at that time from a fresh listing, which shows what the
 * earlier sweep wrote (a marked revision waits, a deleted one is gone, an unmarked one is
 * kept), so nothing is written twice; one that finishes deletes the continuation.
 */
import type { AppContext } from '../../ports/app-context';
import { runAsSweep } from '../sweep-priority';
import { ConflictError } from '../../domain/errors';
import type { Continuation } from '../../ports/store';
import { sweepRevisions, type RevisionGcSweepResult } from './sweep-revisions';

export function revisionGcLeaseKey(clusterId: string): string {
  return `revision-gc#${clusterId}`;
}

export const DEFAULT_GC_CLUSTER_CONCURRENCY = 4;
/** Longer than the function's 300 s timeout: a crashed sweep's lease expires on its own. */
export const GC_LEASE_TTL_MS = 330_000;
/** The continuation record's `work` for a cluster's sweep. */
export const REVISION_GC_WORK = 'revision-gc';
/** Time kept back from the invocation's remaining time for the last writes and the save. */
export const GC_TIME_MARGIN_MS = 30_000;

export type ClusterSweepOutcome =
  /** `continued`: the budget ran out; the next sweep of the cluster resumes from the saved place. */
  | { clusterId: string; outcome: 'swept'; result: RevisionGcSweepResult; continued?: boolean }
  | { clusterId: string; outcome: 'busy' }
  /** A delegate cluster: upstream OME's GC always runs there, and two collectors would race. */
  | { clusterId: string; outcome: 'delegated' }
  | { clusterId: string; outcome: 'failed'; error: Error };

export interface SweepClustersInput {
  app: AppContext;
  /** Sweep only this cluster; every registered cluster when absent. */
  clusterId?: string;
  dryRun?: boolean;
  /** Who holds the leases (the invocation's request id). */
  holder: string;
  concurrency?: number;
  /** Milliseconds the invocation has left; each cluster's sweep stops launching writes GC_TIME_MARGIN_MS before the end. */
  remainingTimeMs?: () => number;
  /** Overrides GC_TIME_MARGIN_MS (tests). */
  timeMarginMs?: number;
  /** Called as each cluster finishes, for logs and metrics. */
  onOutcome?: (outcome: ClusterSweepOutcome) => void;
}

async function sweepOne(input: SweepClustersInput, clusterId: string): Promise<ClusterSweepOutcome> {
  const { app } = input;
  try {
    const lease = await app.stores.leases.acquire(revisionGcLeaseKey(clusterId), input.holder, GC_LEASE_TTL_MS);
    if (!lease) return { clusterId, outcome: 'busy' };
    try {
      const cluster = await app.cluster(clusterId);
      if (cluster.mode === 'delegate') return { clusterId, outcome: 'delegated' };
      const dryRun = input.dryRun === true;
      // A dry run neither resumes nor leaves a continuation: it plans the whole sweep.
      const stored = dryRun ? undefined : await app.stores.continuations.loadContinuation(clusterId, REVISION_GC_WORK);
      const plannedAt = typeof stored?.state?.plannedAt === 'number' ? stored.state.plannedAt : app.clock.now();
      const margin = input.timeMarginMs ?? GC_TIME_MARGIN_MS;
      const result = await runAsSweep(() =>
        sweepRevisions(cluster.client, {
          omeNamespace: cluster.omeNamespace,
          retention: app.config.revisionRetention,
          graceMs: app.config.revisionGracePeriodMs,
          now: plannedAt,
          dryRun,
          ...(input.remainingTimeMs === undefined || dryRun ? {} : { hasTime: () => (input.remainingTimeMs as () => number)() > margin }),
        }),
      );
      if (dryRun) return { clusterId, outcome: 'swept', result };
      const continued = await keepPlace(app, clusterId, stored, plannedAt, result);
      return { clusterId, outcome: 'swept', result, ...(continued ? { continued } : {}) };
    } finally {
      await app.stores.leases.release(lease);
    }
  } catch (error) {
    return { clusterId, outcome: 'failed', error: error instanceof Error ? error : new Error(String(error)) };
  }
}

/** Saves where a cut-short sweep stopped, or drops the continuation of a finished one; true when saved. */
async function keepPlace(app: AppContext, clusterId: string, stored: Continuation | undefined, plannedAt: number, result: RevisionGcSweepResult): Promise<boolean> {
  try {
    if (result.cutShort) {
      await app.stores.continuations.saveContinuation({
        clusterId,
        work: REVISION_GC_WORK,
        subject: String(plannedAt),
        after: result.cutShort.after,
        state: { plannedAt },
        version: stored?.version ?? 0,
        updatedAt: app.clock.now(),
      });
      return true;
    }
    if (stored) await app.stores.continuations.deleteContinuation(clusterId, REVISION_GC_WORK, stored.version);
  } catch (error) {
    // The sweep's lease makes this rare (a sweep that outlived its lease): the other sweep's record stands.
    if (!(error instanceof ConflictError)) throw error;
  }
  return false;
}

/** Sweeps the named cluster or every registered one, a few at a time. */
export async function sweepClusters(input: SweepClustersInput): Promise<ClusterSweepOutcome[]> {
  const ids = input.clusterId ? [input.clusterId] : (await input.app.stores.clusters.listClusters()).map((record) => record.id);
  const outcomes: ClusterSweepOutcome[] = [];
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < ids.length) {
      const id = ids[next] as string;
      next += 1;
      const outcome = await sweepOne(input, id);
      input.onOutcome?.(outcome);
      outcomes.push(outcome);
    }
  };
  const concurrency = Math.max(1, Math.min(input.concurrency ?? DEFAULT_GC_CLUSTER_CONCURRENCY, ids.length));
  await Promise.all(Array.from({ length: concurrency }, worker));
  return outcomes;
}
