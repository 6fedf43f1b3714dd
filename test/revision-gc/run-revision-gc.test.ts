import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runRevisionGc } from '../../functions/revision-gc/handler';
import { startEmbeddedCluster, type EmbeddedCluster } from '../../local/cluster';
import { renderKubeconfig } from '../../local/cluster/kubeconfig';
import { createAppContext, type AppContext } from '../../shared/app/context';
import type { ControlPlaneConfig } from '../../shared/app/config';
import { revisionGcLeaseKey } from '../../shared/use-cases/revision-gc/sweep-clusters';
import { createMemoryStores } from '../../shared/adapters/memory';
import { DAY, T0, createNamespace, createRevisions, listRevisionNames } from './fixtures';
import type { NotificationEvent } from '../../shared/domain/notification';
import type { EventPublisher } from '../../shared/ports/event-publisher';

const config: ControlPlaneConfig = {
  tableName: 'unused',
  eventBusName: 'default',
  region: 'us-east-1',
  omeNamespace: 'ome',
  revisionRetention: 2,
  revisionGracePeriodMs: DAY,
  renderWorkloads: false,
  leaseTtlMs: 30_000,
  maxConflictRetries: 5,
};

describe('revision-gc function wiring', () => {
  let cluster: EmbeddedCluster;
  let app: AppContext;
  const stores = createMemoryStores();

  beforeAll(async () => {
    cluster = await startEmbeddedCluster();
    // The embedded cluster over HTTP, as a registered cluster is reached; and one that is down.
    await stores.clusters.putCluster({ mode: 'standalone', id: 'alpha', server: cluster.url, credentials: { kind: 'kubeconfig', kubeconfig: cluster.kubeconfig }, omeNamespace: 'revisions' });
    await stores.clusters.putCluster({ mode: 'standalone', id: 'down', server: 'http://127.0.0.1:9', credentials: { kind: 'kubeconfig', kubeconfig: renderKubeconfig('http://127.0.0.1:9') }, omeNamespace: 'ome' });
    app = createAppContext({ config, stores, clock: { now: () => T0 + 2 * DAY } });
    await createNamespace(cluster.client, 'revisions');
    await createRevisions(cluster.client, 'revisions', 4, { runtime: 'srt' });
  });

  afterAll(async () => {
    await cluster?.stop();
  });

  it('sweeps every registered cluster on the schedule; one cluster failing does not stop the others', async () => {
    const outcomes = await runRevisionGc({ 'detail-type': 'Scheduled Event', detail: {} }, 'test-1', app);

    const byId = new Map(outcomes.map((o) => [o.clusterId, o]));
    expect(byId.get('down')?.outcome).toBe('failed');
    const alpha = byId.get('alpha');
    expect(alpha?.outcome === 'swept' && alpha.result.stats).toMatchObject({ scanned: 4, kept: 2, marked: 2 });
  });

  it('sweeps only the cluster a revision hint names, plans only on a dry run, and skips a cluster another sweep holds', async () => {
    const before = await listRevisionNames(cluster.client, 'revisions');
    const dry = await runRevisionGc({ detail: { clusterId: 'alpha', dryRun: true } }, 'test-2', app);
    expect(dry).toHaveLength(1);
    expect(dry[0]?.outcome === 'swept' && dry[0].result.planned?.mark).toEqual([]);
    expect((await listRevisionNames(cluster.client, 'revisions')).size).toBe(before.size);

    const lease = await app.stores.leases.acquire(revisionGcLeaseKey('alpha'), 'other-sweep', 60_000);
    const busy = await runRevisionGc({ detail: { clusterId: 'alpha' } }, 'test-3', app);
    expect(busy).toEqual([{ clusterId: 'alpha', outcome: 'busy' }]);
    if (lease) await app.stores.leases.release(lease);
  });

  it('announces what a sweep deleted, one RevisionCollected per runtime, and nothing when a later sweep deletes nothing', async () => {
    // The first test marked the two oldest at T0 + 2 days; two days on, their grace (a day) is over.
    const later = createAppContext({ config, stores, clock: { now: () => T0 + 4 * DAY } });
    const published: NotificationEvent[] = [];
    const publisher: EventPublisher<NotificationEvent> = {
      async publish(events) {
        published.push(...events);
        return { published: events.length, skipped: [], failed: [] };
      },
    };

    const outcomes = await runRevisionGc({ detail: { clusterId: 'alpha' } }, 'test-4', later, undefined, publisher);
    await runRevisionGc({ detail: { clusterId: 'alpha' } }, 'test-5', later, undefined, publisher);

    expect(outcomes[0]?.outcome === 'swept' && outcomes[0].result.stats.deleted).toBe(2);
    expect(published.map((event) => [event.detailType, event.detail])).toEqual([
      [
        'RevisionCollected',
        {
          clusterId: 'alpha',
          apiVersion: 'ome.io/v1beta1',
          kind: 'ClusterServingRuntime',
          name: 'srt',
          observedAt: new Date(T0 + 4 * DAY).toISOString(),
          reason: 'RevisionCollected',
          message: 'collected 2 revisions of ClusterServingRuntime srt: cr-srt-00000000, cr-srt-00000001',
          revisionCount: 2,
          revisions: ['cr-srt-00000000', 'cr-srt-00000001'],
        },
      ],
    ]);
    expect([...(await listRevisionNames(cluster.client, 'revisions')).keys()].sort()).toEqual(['cr-srt-00000002', 'cr-srt-00000003']);
  });
});
