import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ISVC, START_TIMEOUT_MS, NS, REV_090, completed, deliveriesOf, distinctEvents, kubectl, kubectlApply, pinnedRevision, seedManifests, settle, startObservedControlPlane, waitFor } from './support';
import type { ObservedControlPlane } from './support';

const SECOND = `${ISVC}-b`;

describe('Control plane: the bus duplicates, reorders and delays deliveries', () => {
  let observed: ObservedControlPlane;
  let kubeconfig: string;

  beforeAll(async () => {
    // Every delivery made twice, shuffled in windows of four, each held up to 300 ms.
    observed = await startObservedControlPlane({ busFaults: { duplicate: 1, reorderWindow: 4, delayMs: [0, 300], seed: 7 } });
    kubeconfig = observed.plane.clusters[0]?.kubeconfigPath ?? '';
  }, START_TIMEOUT_MS);

  afterAll(async () => {
    await observed?.stop();
  });

  it('ends as a clean run does: each InferenceService pinned once to the one shared revision', async () => {
    // Act
    await kubectlApply(kubeconfig, seedManifests('0.9', [ISVC, SECOND]));
    const pinned = await Promise.all(
      [ISVC, SECOND].map((name) => waitFor(() => pinnedRevision(kubeconfig, name), (value) => value !== '')),
    );
    await settle(observed.plane, 2_000);

    // Assess
    expect(pinned).toEqual([REV_090, REV_090]);
    const revisions = await kubectl(kubeconfig, ['get', 'controllerrevisions', '-n', 'ome', '-l', 'ome.io/runtime-of', '-o', 'name']);
    expect(revisions.trim().split('\n')).toEqual([`controllerrevision.apps/${REV_090}`]);
    const drifted = await kubectl(kubeconfig, ['get', 'inferenceservices', '-n', NS, '-o', 'jsonpath={range .items[*]}{.status.conditions[?(@.type=="RuntimeDrifted")].status}{end}']);
    expect(drifted).toBe('');
    // One event per creation, and the faults did happen: each was handled twice.
    for (const name of [ISVC, SECOND]) {
      const toPin = deliveriesOf(observed, 'pin', name);
      expect(distinctEvents(toPin).map((d) => d.detail.change)).toEqual(['added']);
      expect(completed(toPin)).toHaveLength(2);
    }
    expect(observed.plane.bus.deadLetters).toEqual([]);
  });
});
