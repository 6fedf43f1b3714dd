/**
 * The scheduled GC across clusters: each cluster is swept under its own lease, so the
 * five-minute schedule and a sweep triggered by a new revision never run one cluster
 * twice at once (both would be safe, thanks to the preconditions, but wasteful). A
 * cluster whose sweep fails does not stop the others.
 */
import type { AppContext } from '../app/context';
import { sweepRevisions, type RevisionGcSweepResult } from './sweep-revisions';

export function revisionGcLeaseKey(clusterId: string): string {
  return `revision-gc#${clusterId}`;
}

export const DEFAULT_GC_CLUSTER_CONCURRENCY = 4;
/** Longer than the function's 300 s timeout: a crashed sweep's lease expires on its own. */
export const GC_LEASE_TTL_MS = 330_000;

export type ClusterSweepOutcome =
  | { clusterId: string; outcome: 'swept'; result: RevisionGcSweepResult }
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
      const result = await sweepRevisions(cluster.client, {
        omeNamespace: cluster.omeNamespace,
        retention: app.config.revisionRetention,
        graceMs: app.config.revisionGracePeriodMs,
        now: app.clock.now(),
        dryRun: input.dryRun === true,
      });
      return { clusterId, outcome: 'swept', result };
    } finally {
      await app.stores.leases.release(lease);
    }
  } catch (error) {
    return { clusterId, outcome: 'failed', error: error instanceof Error ? error : new Error(String(error)) };
  }
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
