/**
 * The periodic resync: relist every registered cluster's watched objects and publish each
 * as a `relisted` hint, the same hint the forwarder sends after a `410 Gone`. It is the
 * safety net under the watch: a hint that was lost anyway (dead-lettered after its
 * retries, dropped by a forwarder fault) is replaced on the next run, and every handler
 * re-reads the object and does nothing when nothing is due, so a resync of a settled
 * cluster costs reads and invocations but writes nothing.
 *
 * Cost is bounded: lists are paged (`pageSize` objects per request), each page is published
 * before the next is read (the publisher packs at most 10 entries and 256 KB per
 * PutEvents), and ControllerRevisions are not relisted — no rule routes a relisted
 * revision (GC sweeps on its own schedule; drift-check cares only about deletes).
 *
 * From the InferenceService pages it lists anyway, each run also stores the cluster's
 * drift report (`shared/domain/fleet/fleet-drift.ts`) for `kubectl ome admin fleet drift`.
 */
import type { AppContext } from '../../ports/app-context';
import { toHintEvent } from '../../domain/hint-event';
import { DriftReportBuilder } from '../../domain/fleet/fleet-drift';
import { listWatchedResources } from '../../domain/watched-resources';
import type { WatchedResource } from '../../domain/watched-resources';
import type { InferenceService } from '../../domain/model/inference-service';
import { apiVersionOf, Resources } from '../../domain/model/resources';
import type { KubeObject } from '../../ports/cluster';
import type { EventPublisher } from '../../ports/event-publisher';

/** Objects per list request; a page is published before the next is read. */
export const RESYNC_PAGE_SIZE = 100;
export const DEFAULT_RESYNC_CLUSTER_CONCURRENCY = 4;

export interface ResyncStats {
  listed: number;
  published: number;
  /** Could never be sent (over the entry size limit); the publisher logged why. */
  skipped: number;
  /** Still failing after the publisher's retries; the next run sends them again. */
  failed: number;
}

export type ClusterResyncOutcome = ({ clusterId: string; outcome: 'resynced'; stats: ResyncStats } | { clusterId: string; outcome: 'failed'; error: Error; stats: ResyncStats }) & {
  /** Why the cluster's drift report could not be stored, when it could not. */
  driftReportError?: Error;
};

export interface ResyncClustersInput {
  app: AppContext;
  publisher: EventPublisher;
  /** Only this cluster; every registered cluster when absent. */
  clusterId?: string;
  pageSize?: number;
  concurrency?: number;
  onOutcome?: (outcome: ClusterResyncOutcome) => void;
}

/** The streams a resync relists: the watched ones whose relisted hints some rule routes. */
export function listResyncedResources(omeNamespace: string): WatchedResource[] {
  return listWatchedResources(omeNamespace).filter((resource) => resource.type.kind !== Resources.controllerRevisions.kind);
}

/** List items may come without `apiVersion` and `kind`; the hint needs both for routing. */
function withTypeOf(object: KubeObject, resource: WatchedResource): KubeObject {
  return { ...object, apiVersion: object.apiVersion || apiVersionOf(resource.type), kind: object.kind || resource.type.kind };
}

async function resyncCluster(input: ResyncClustersInput, clusterId: string): Promise<ClusterResyncOutcome> {
  const drift = new DriftReportBuilder(clusterId);
  const outcome = await relistCluster(input, clusterId, drift);
  try {
    await input.app.stores.fleet.putDriftReport(drift.build(input.app.clock.now(), outcome.outcome === 'failed' ? outcome.error.message : undefined));
    return outcome;
  } catch (error) {
    return { ...outcome, driftReportError: error instanceof Error ? error : new Error(String(error)) };
  }
}

async function relistCluster(input: ResyncClustersInput, clusterId: string, drift: DriftReportBuilder): Promise<ClusterResyncOutcome> {
  const stats: ResyncStats = { listed: 0, published: 0, skipped: 0, failed: 0 };
  try {
    const { client, omeNamespace } = await input.app.cluster(clusterId);
    for (const resource of listResyncedResources(omeNamespace)) {
      let continueToken: string | undefined;
      do {
        const page = await client.list(resource.type, {
          ...(resource.namespace ? { namespace: resource.namespace } : {}),
          ...(resource.labelSelector ? { labelSelector: resource.labelSelector } : {}),
          limit: input.pageSize ?? RESYNC_PAGE_SIZE,
          ...(continueToken ? { continue: continueToken } : {}),
        });
        stats.listed += page.items.length;
        if (resource.type.kind === Resources.inferenceServices.kind) drift.add(page.items as InferenceService[]);
        const observedAt = new Date(input.app.clock.now()).toISOString();
        const hints = page.items.map((object) => toHintEvent(clusterId, 'RELISTED', withTypeOf(object, resource), undefined, { observedAt }));
        if (hints.length > 0) {
          const result = await input.publisher.publish(hints);
          stats.published += result.published;
          stats.skipped += result.skipped.length;
          stats.failed += result.failed.length;
        }
        continueToken = page.continue;
      } while (continueToken);
    }
    return { clusterId, outcome: 'resynced', stats };
  } catch (error) {
    return { clusterId, outcome: 'failed', error: error instanceof Error ? error : new Error(String(error)), stats };
  }
}

/**
 * Relists the named cluster or every registered one, a few clusters at a time, and
 * publishes a `relisted` hint per object. A cluster that fails does not stop the others.
 */
export async function resyncClusters(input: ResyncClustersInput): Promise<ClusterResyncOutcome[]> {
  const ids = input.clusterId ? [input.clusterId] : (await input.app.stores.clusters.listClusters()).map((record) => record.id);
  const outcomes: ClusterResyncOutcome[] = [];
  const queue = [...ids];
  const workers = Array.from({ length: Math.min(input.concurrency ?? DEFAULT_RESYNC_CLUSTER_CONCURRENCY, queue.length) }, async () => {
    for (let clusterId = queue.shift(); clusterId !== undefined; clusterId = queue.shift()) {
      const outcome = await resyncCluster(input, clusterId);
      input.onOutcome?.(outcome);
      outcomes.push(outcome);
    }
  });
  await Promise.all(workers);
  return outcomes;
}
