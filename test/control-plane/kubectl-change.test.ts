import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ISVC, START_TIMEOUT_MS, REV_090, completed, deliveriesOf, distinctEvents, kubectl, kubectlApply, pinnedRevision, seedManifests, settle, startObservedControlPlane, waitFor } from './support';
import type { ObservedControlPlane } from './support';

describe('Control plane: a kubectl change reaches its function', () => {
  let observed: ObservedControlPlane;
  let kubeconfig: string;

  beforeAll(async () => {
    observed = await startObservedControlPlane();
    kubeconfig = observed.plane.clusters[0]?.kubeconfigPath ?? '';
  }, START_TIMEOUT_MS);

  afterAll(async () => {
    await observed?.stop();
  });

  it('wires every function serverless.yml routes events to', () => {
    // Assess
    expect(observed.plane.functions).toEqual(expect.arrayContaining(['pin', 'drift-check', 'repin-apply', 'revision-gc']));
  });

  it('pins an InferenceService applied with kubectl, delivering its creation to pin exactly once', async () => {
    // Act
    await kubectlApply(kubeconfig, seedManifests('0.9'));
    const pinned = await waitFor(() => pinnedRevision(kubeconfig), (value) => value !== '');
    await settle(observed.plane);

    // Assess
    expect(pinned).toBe(REV_090);
    // One event for the creation, handled once; a delivery the handler threw on (a
    // retryable error, such as the object's lease held by drift-check) was retried.
    const toPin = deliveriesOf(observed, 'pin', ISVC);
    expect(distinctEvents(toPin).map((d) => d.detail.change)).toEqual(['added']);
    expect(completed(toPin)).toHaveLength(1);
    // The function's own status write came back through the watch and was not forwarded.
    expect(observed.plane.bus.deadLetters).toEqual([]);
  });

  it('delivers a later spec edit once more, and nothing for the writes it causes', async () => {
    // Act
    await kubectl(kubeconfig, ['label', 'inferenceservice', ISVC, '-n', 'llama-demo', 'team=a']);
    await waitFor(async () => completed(deliveriesOf(observed, 'pin', ISVC)).length, (n) => n >= 2, 15_000);
    await settle(observed.plane);

    // Assess
    const toPin = deliveriesOf(observed, 'pin', ISVC);
    expect(distinctEvents(toPin).map((d) => d.detail.change)).toEqual(['added', 'modified']);
    expect(completed(toPin).map((d) => d.detail.change)).toEqual(['added', 'modified']);
    expect(await pinnedRevision(kubeconfig)).toBe(REV_090);
  });
});
