/**
 * A RolloutPolicy edit rolled out as a fleet wave: the wave asks each run pinned to the
 * policy's older plan for a repin (`ome.io/rollout-repin: now`, one guarded patch however
 * often it is advanced), the cluster's controller (here the plane's repin-apply, in a
 * standalone cluster) consumes it, and the wave counts the cluster acknowledged once no run
 * is left on the older plan. A repin the controller refuses halts the wave with its
 * RolloutRepinRejected message.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Resources } from '../../shared/domain/model/resources';
import { advanceSyncWave, startSyncWave, type FleetDeps } from '../../shared/use-cases/fleet/advance-sync-wave';
import type { RolloutPolicySpec } from '../../shared/domain/rollout/types';
import type { ClusterClient } from '../../shared/ports/cluster';
import {
  activeRunOf,
  advanceUntil,
  CLUSTER_ID,
  condition,
  createPolicy,
  deliverToRepinApply,
  getIsvc,
  NAMESPACE,
  openRunOn,
  requestHint,
  startBench,
  type Bench,
} from '../rollout-runs/harness';

let bench: Bench;
let deps: FleetDeps;
let patches = 0;

beforeAll(async () => {
  bench = await startBench();
  await bench.stores.clusters.putCluster({ id: CLUSTER_ID, server: bench.cluster.url, credentials: { kind: 'kubeconfig', kubeconfig: '' }, omeNamespace: 'ome', mode: 'standalone' });
  // The cluster's client, counting the InferenceService patches the wave sends.
  const client: ClusterClient = Object.assign(Object.create(bench.client) as ClusterClient, {
    patch: ((type, namespace, name, patch, options) => {
      if (type.plural === 'inferenceservices') patches += 1;
      return bench.client.patch(type, namespace, name, patch, options);
    }) as ClusterClient['patch'],
  });
  deps = { fleet: bench.stores.fleet, clusters: bench.stores.clusters, clock: bench.clock, cluster: async (id) => ({ id, client, omeNamespace: 'ome', mode: 'standalone' }) };
}, 60_000);

afterAll(async () => {
  await bench?.stop();
});

const canaryPolicy = (firstTraffic: number): RolloutPolicySpec => ({ canary: { steps: [{ capacity: '25%', traffic: firstTraffic, pause: {} }, { capacity: '100%', traffic: 100 }] } });

/** Opens a run on `policy`, then edits the policy and lets its hint report the drift. */
async function runLeftBehind(name: string, policy: string, edited: RolloutPolicySpec): Promise<void> {
  await createPolicy(bench, policy, canaryPolicy(10));
  const opened = await openRunOn(bench, name, [{ components: ['engine'], policyRef: { name: policy, progression: 'canary' } }]);
  await advanceUntil(bench, name, (result) => result.phase === 'Paused');
  const current = await bench.client.get(Resources.rolloutPolicies, NAMESPACE, policy);
  await bench.client.replace(Resources.rolloutPolicies, { ...current, spec: edited });
  await deliverToRepinApply(bench, { ...requestHint(opened, {}), kind: 'RolloutPolicy', apiVersion: 'ome.io/v1beta1', name: policy, change: 'modified' });
  expect(condition(await getIsvc(bench, name), 'RolloutPlanDrift')).toMatchObject({ status: 'True', reason: 'PolicyNewerThanRun' });
}

/** What the cluster's controller does with the request: repin-apply consumes the annotation. */
async function controllerConsumes(name: string) {
  return deliverToRepinApply(bench, requestHint(await getIsvc(bench, name), { rolloutRepin: true }));
}

describe('a RolloutPolicy wave', () => {
  it('asks each run left on the older plan for a repin, once, and completes when the controller repinned it', async () => {
    await runLeftBehind('chat', 'canary-policy', canaryPolicy(20));
    const wave = await startSyncWave(deps, { runtime: { kind: 'RolloutPolicy', namespace: NAMESPACE, name: 'canary-policy' } });
    expect(wave.clusters.map((step) => step.clusterId)).toEqual([CLUSTER_ID]);
    const before = patches;

    // Act 1: advanced three times (a duplicate delivery among them); the request is set once.
    await Promise.all([advanceSyncWave(deps, wave.id), advanceSyncWave(deps, wave.id)]);
    const waiting = await advanceSyncWave(deps, wave.id);
    expect(waiting.outcome).toBe('waiting');
    expect((await getIsvc(bench, 'chat')).metadata.annotations?.['ome.io/rollout-repin']).toBe('now');
    expect(patches - before).toBe(1);

    // Act 2: the controller repins; the next advance sees no run on the older plan.
    expect(await controllerConsumes('chat')).toMatchObject({ repin: { outcome: 'applied' } });
    const done = await advanceSyncWave(deps, wave.id);

    // Assess
    expect(done.outcome).toBe('completed');
    const isvc = await getIsvc(bench, 'chat');
    expect(condition(isvc, 'RolloutPlanDrift')).toMatchObject({ status: 'False', reason: 'InSync' });
    expect(activeRunOf(isvc).plan.groups?.[0]?.group.canary?.steps?.[0]?.traffic).toBe(20);
    expect(patches - before).toBe(1);
  });

  it('halts with the controller\'s refusal when the edited policy no longer renders the run\'s plan', async () => {
    // A canary run whose policy now holds a blue-green progression: its plan does not render.
    await runLeftBehind('mismatch', 'switched-policy', { blueGreen: {} } as RolloutPolicySpec);
    const wave = await startSyncWave(deps, { runtime: { kind: 'RolloutPolicy', namespace: NAMESPACE, name: 'switched-policy' } });
    await advanceSyncWave(deps, wave.id);

    expect(await controllerConsumes('mismatch')).toMatchObject({ repin: { outcome: 'rejected' } });
    bench.clock.tick();
    const halted = await advanceSyncWave(deps, wave.id);

    expect(halted.outcome).toBe('halted');
    const stored = await bench.stores.fleet.getWave(wave.id);
    expect(stored?.failure).toMatchObject({ clusterId: CLUSTER_ID, namespace: NAMESPACE, name: 'mismatch', reason: 'RolloutRepinRejected' });
    expect(stored?.failure?.message).toMatch(/^prod\/mismatch: RolloutRepinRejected: repin rejected: the current source does not render/);
  });

  it('refuses a policy without a namespace, naming the kinds a wave takes', async () => {
    const { parseWaveRuntime } = await import('../../shared/domain/fleet/sync-wave');
    expect(() => parseWaveRuntime('RolloutPolicy/canary-policy', undefined)).toThrow('RolloutPolicy/canary-policy needs a namespace (-n)');
    expect(() => parseWaveRuntime('Deployment/x', 'prod')).toThrow('unknown kind "Deployment": use ServingRuntime/<name>, ClusterServingRuntime/<name> or RolloutPolicy/<name>');
    expect(parseWaveRuntime('rolloutpolicy/canary-policy', 'prod')).toEqual({ kind: 'RolloutPolicy', namespace: 'prod', name: 'canary-policy' });
  });
});
