import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ISVC, START_TIMEOUT_MS, REV_085, REV_090, completed, deliveriesOf, distinctEvents, kubectlApply, pinnedRevision, seedManifests, settle, startObservedControlPlane, waitFor } from './support';
import type { ObservedControlPlane } from './support';

describe('Control plane: two clusters holding objects of the same name', () => {
  let observed: ObservedControlPlane;

  beforeAll(async () => {
    observed = await startObservedControlPlane({ clusters: 2 });
  }, START_TIMEOUT_MS);

  afterAll(async () => {
    await observed?.stop();
  });

  it('starts local and local-2, each with its own kubeconfig', () => {
    // Assess
    const clusters = observed.plane.clusters;
    expect(clusters.map((c) => c.id)).toEqual(['local', 'local-2']);
    expect(clusters.map((c) => c.kubeconfigPath.slice(observed.dataDir.length))).toEqual(['/kubeconfig', '/kubeconfig-local-2']);
    expect(clusters[0]?.url).not.toBe(clusters[1]?.url);
  });

  it('pins each cluster from its own runtime', async () => {
    // Prepare: the same names, different runtime specs.
    const [first, second] = observed.plane.clusters.map((c) => c.kubeconfigPath) as [string, string];

    // Act
    await Promise.all([kubectlApply(first, seedManifests('0.9')), kubectlApply(second, seedManifests('0.85'))]);
    const pinned = await Promise.all([first, second].map((kubeconfig) => waitFor(() => pinnedRevision(kubeconfig), (value) => value !== '')));
    await settle(observed.plane);

    // Assess
    expect(pinned).toEqual([REV_090, REV_085]);
    for (const clusterId of ['local', 'local-2']) {
      const toPin = deliveriesOf(observed, 'pin', ISVC, clusterId);
      expect(distinctEvents(toPin).map((d) => d.detail.change)).toEqual(['added']);
      expect(completed(toPin)).toHaveLength(1);
    }
    const [uidOne, uidTwo] = ['local', 'local-2'].map((id) => deliveriesOf(observed, 'pin', ISVC, id)[0]?.detail.uid);
    expect(uidOne).not.toBe(uidTwo);
  });
});
