import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { assignShard } from '../../shared/use-cases/forwarder';
import { ISVC, START_TIMEOUT_MS, REV_090, completed, deliveriesOf, distinctEvents, kubectlApply, pinnedRevision, seedManifests, startObservedControlPlane, waitFor } from './support';
import type { ObservedControlPlane } from './support';

const CLUSTERS = 20;
const SHARDS = 4;

describe('Control plane: twenty clusters over four forwarder shards', () => {
  let observed: ObservedControlPlane;

  beforeAll(async () => {
    observed = await startObservedControlPlane({ clusters: CLUSTERS, forwarderShards: SHARDS });
  }, START_TIMEOUT_MS);

  afterAll(async () => {
    await observed?.stop();
  });

  it('spreads the clusters over every shard by their ids', () => {
    // Assess
    const clusters = observed.plane.clusters;
    expect(clusters).toHaveLength(CLUSTERS);
    expect(clusters.map((cluster) => cluster.shard)).toEqual(clusters.map((cluster) => assignShard(cluster.id, SHARDS)));
    expect(new Set(clusters.map((cluster) => cluster.shard))).toEqual(new Set([0, 1, 2, 3]));
  });

  it('serves the twentieth cluster through its shard: a change applied there is pinned, delivered once', async () => {
    // Prepare
    const last = observed.plane.clusters[CLUSTERS - 1];
    expect(last?.id).toBe('local-20');
    const kubeconfig = last?.kubeconfigPath ?? '';

    // Act
    await kubectlApply(kubeconfig, seedManifests('0.9'));
    const pinned = await waitFor(() => pinnedRevision(kubeconfig), (value) => value !== '');

    // Assess
    expect(pinned).toBe(REV_090);
    // The status can show the pin before the delivery that wrote it is recorded as handled.
    const toPin = await waitFor(
      async () => deliveriesOf(observed, 'pin', ISVC, 'local-20'),
      (deliveries) => completed(deliveries).length >= 1,
    );
    expect(distinctEvents(toPin).map((d) => d.detail.change)).toEqual(['added']);
    expect(completed(toPin).length).toBeGreaterThanOrEqual(1);
    // No other cluster saw anything.
    expect(observed.deliveries.filter((d) => d.detail.clusterId !== 'local-20')).toEqual([]);
  });
});
