/**
 * The scheduled sweeps pass delegate clusters by: upstream's GC always runs there, and its
 * controller advances its own rollout runs. The same cluster registered standalone is swept,
 * so the difference is the record's mode alone; a record without a mode fails its sweep.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runRevisionGc } from '../../functions/revision-gc/handler';
import { startEmbeddedCluster, type EmbeddedCluster } from '../../local/cluster';
import { createAppContext, type AppContext } from '../../shared/app/context';
import type { ControlPlaneConfig } from '../../shared/app/config';
import { Resources } from '../../shared/domain/model/resources';
import type { ClusterRecord } from '../../shared/ports/store';
import { sweepRolloutRuns } from '../../shared/app/rollout-hints';
import { createMemoryStores } from '../../shared/adapters/memory';
import { DAY, T0, createNamespace, createRevisions, listRevisionNames } from '../revision-gc/fixtures';

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

describe('scheduled sweeps by cluster mode', () => {
  let cluster: EmbeddedCluster;
  let app: AppContext;

  beforeAll(async () => {
    cluster = await startEmbeddedCluster();
    const stores = createMemoryStores();
    const reach = { server: cluster.url, credentials: { kind: 'kubeconfig', kubeconfig: cluster.kubeconfig }, omeNamespace: 'revisions' } as const;
    // One API server registered three times: only the records differ.
    await stores.clusters.putCluster({ id: 'upstream-runs-it', mode: 'delegate', ...reach });
    await stores.clusters.putCluster({ id: 'legacy', ...reach } as unknown as ClusterRecord);
    app = createAppContext({ config, stores, clock: { now: () => T0 + 2 * DAY } });
    await createNamespace(cluster.client, 'revisions');
    await createRevisions(cluster.client, 'revisions', 4, { runtime: 'srt' });
  });

  afterAll(async () => {
    await cluster?.stop();
  });

  it('the revision GC leaves a delegate cluster alone and fails a record without a mode', async () => {
    const before = await cluster.client.list(Resources.controllerRevisions, { namespace: 'revisions' });
    const outcomes = await runRevisionGc({ 'detail-type': 'Scheduled Event', detail: {} }, 'gc-1', app);
    const byId = new Map(outcomes.map((outcome) => [outcome.clusterId, outcome]));
    expect(byId.get('upstream-runs-it')).toEqual({ clusterId: 'upstream-runs-it', outcome: 'delegated' });
    const legacy = byId.get('legacy');
    expect(legacy?.outcome === 'failed' && legacy.error.name).toBe('ClusterModeError');
    const after = await cluster.client.list(Resources.controllerRevisions, { namespace: 'revisions' });
    // Nothing marked or deleted: every revision is as it was, resourceVersion included.
    expect(after.items.map((item) => item.metadata.resourceVersion)).toEqual(before.items.map((item) => item.metadata.resourceVersion));
    expect((await listRevisionNames(cluster.client, 'revisions')).size).toBe(4);
  });

  it('is swept once the same cluster is registered standalone', async () => {
    const record = await app.stores.clusters.getCluster('upstream-runs-it');
    await app.stores.clusters.putCluster({ ...(record as ClusterRecord), id: 'plane-runs-it', mode: 'standalone' });
    const [outcome] = await runRevisionGc({ detail: { clusterId: 'plane-runs-it' } }, 'gc-2', app);
    expect(outcome?.outcome === 'swept' && outcome.result.stats).toMatchObject({ scanned: 4, marked: 2 });
  });

  it('the rollout sweep passes a delegate cluster by', async () => {
    const stores = createMemoryStores();
    const record = await app.stores.clusters.getCluster('upstream-runs-it');
    await stores.clusters.putCluster(record as ClusterRecord);
    const only = createAppContext({ config, stores });
    expect(await sweepRolloutRuns(only, 'sweep-1')).toEqual([]);
  });
});
