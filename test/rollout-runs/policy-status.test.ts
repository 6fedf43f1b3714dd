/**
 * RolloutPolicy status written through the embedded API server's status subresource, as
 * the rollout-run schedule writes it: digest, attached groups, Ready and InUse; only a
 * change is written; and a consumer of a policy reported not Ready parks on it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAppContext } from '../../shared/app/context';
import type { ControlPlaneConfig } from '../../shared/app/config';
import { NotFoundError } from '../../shared/domain/errors';
import type { ClusterClient } from '../../shared/ports/cluster';
import type { ClusterRecord } from '../../shared/ports/store';
import { createMemoryStores } from '../../shared/adapters/memory';
import { Resources } from '../../shared/domain/model/resources';
import type { KubeObject } from '../../shared/ports/cluster';
import { policyConsumerOf, refreshPolicyStatuses } from '../../shared/use-cases/rollout-runs';
import { sweepRolloutRuns } from '../../shared/app/rollout-hints';
import { renderLivePlan, type RolloutIsvc } from '../../shared/use-cases/rollout-runs/rollout-status';
import { digestPolicySpec } from '../../shared/domain/rollout/digest';
import type { PolicyStatus } from '../../shared/domain/rollout/policy-status';
import type { RolloutPolicySpec } from '../../shared/domain/rollout/types';
import { condition, createIsvc, createPolicy, deliverToRepinApply, getIsvc, NAMESPACE, requestHint, startBench, type Bench } from './harness';

let bench: Bench;
beforeAll(async () => {
  bench = await startBench();
});
afterAll(async () => {
  await bench.stop();
});

const guarded: RolloutPolicySpec = { canary: { steps: [{ capacity: '50%', traffic: 50, pause: {} }, { capacity: '100%', traffic: 100 }] } };
const broken: RolloutPolicySpec = { canary: { steps: [{ capacity: '50%', traffic: 50, pause: {} }] } };

async function statusOf(name: string): Promise<PolicyStatus | undefined> {
  return (await bench.client.get<KubeObject & { status?: PolicyStatus }>(Resources.rolloutPolicies, NAMESPACE, name)).status;
}

async function refresh() {
  const isvcs = await bench.client.list<RolloutIsvc>(Resources.inferenceServices, {});
  return refreshPolicyStatuses({ client: bench.client, clock: bench.clock }, isvcs.items.map(policyConsumerOf));
}

describe('RolloutPolicy status', () => {
  it('writes digest, attached groups and the Ready and InUse conditions, then only what changes', async () => {
    await createPolicy(bench, 'guarded', guarded);
    await createPolicy(bench, 'broken', broken);
    await createIsvc(bench, 'two-refs', [
      { components: ['engine'], policyRef: { name: 'guarded', progression: 'canary' } },
      { components: ['router'], policyRef: { name: 'guarded', progression: 'canary' } },
    ]);

    expect(await refresh()).toEqual({ updated: 2, unchanged: 0, skipped: 0 });
    const written = await statusOf('guarded');
    expect(written).toMatchObject({ observedGeneration: 1, portableDigest: digestPolicySpec(guarded), attachedGroups: 2 });
    expect(written?.conditions?.map((c) => [c.type, c.status, c.reason, c.message])).toEqual([
      ['Ready', 'True', 'BodyValid', 'progression body passes plan validation'],
      ['InUse', 'True', 'Attached', '2 rollout group(s) reference this policy'],
    ]);
    const brokenStatus = await statusOf('broken');
    expect(brokenStatus).not.toHaveProperty('attachedGroups');
    expect(brokenStatus?.conditions?.[0]).toMatchObject({ type: 'Ready', status: 'False', reason: 'BodyInvalid', message: 'spec.canary final step traffic must be 100, got 50 (CanaryInvalid)' });

    bench.clock.tick();
    expect(await refresh()).toEqual({ updated: 0, unchanged: 2, skipped: 0 });

    await bench.client.delete(Resources.inferenceServices, NAMESPACE, 'two-refs');
    bench.clock.tick();
    expect(await refresh()).toMatchObject({ updated: 1, unchanged: 1 });
    const detached = await statusOf('guarded');
    expect(detached).not.toHaveProperty('attachedGroups');
    expect(detached?.conditions?.[1]).toMatchObject({ type: 'InUse', status: 'False', reason: 'NoConsumers' });
    // Ready did not change status, so its transition time stayed.
    expect(detached?.conditions?.[0]?.lastTransitionTime).toBe(written?.conditions?.[0]?.lastTransitionTime);
  });

  it('parks a consumer of a policy whose status says it is not Ready', async () => {
    await createIsvc(bench, 'on-broken', [{ components: ['engine'], policyRef: { name: 'broken', progression: 'canary' } }]);
    await refresh();
    const live = await renderLivePlan(bench.client, await getIsvc(bench, 'on-broken'));
    expect(live).toMatchObject({
      ok: false,
      reason: 'PolicyNotReady',
      message: 'groups[0]: RolloutPolicy "broken" is not Ready: spec.canary final step traffic must be 100, got 50 (CanaryInvalid)',
    });
  });
});

describe('a RolloutPolicy change', () => {
  it('writes the policy status before its consumers read it, so an edit that breaks the body parks them at once', async () => {
    await createPolicy(bench, 'edited', guarded);
    const consumer = await createIsvc(bench, 'on-edited', [{ components: ['engine'], policyRef: { name: 'edited', progression: 'canary' } }]);
    await bench.client.patch(Resources.rolloutPolicies, NAMESPACE, 'edited', { spec: broken }, { type: 'merge' });
    const hint = { ...requestHint(consumer, {}), kind: 'RolloutPolicy', apiVersion: 'ome.io/v1beta1', name: 'edited', change: 'modified' as const };

    const result = await deliverToRepinApply(bench, hint);

    expect(result).toEqual({ refreshed: [{ name: 'on-edited', result: 'updated' }], policyStatus: 'updated' });
    expect((await statusOf('edited'))?.conditions?.[0]).toMatchObject({ type: 'Ready', status: 'False', reason: 'BodyInvalid', observedGeneration: 2 });
    expect(condition(await getIsvc(bench, 'on-edited'), 'RolloutPlanReady')).toMatchObject({
      status: 'False',
      reason: 'PolicyNotReady',
      message: 'groups[0]: RolloutPolicy "edited" is not Ready: spec.canary final step traffic must be 100, got 50 (CanaryInvalid)',
    });
  });
});

describe('the rollout-run schedule', () => {
  const config: ControlPlaneConfig = {
    tableName: 'test',
    eventBusName: 'test',
    region: 'eu-west-1',
    omeNamespace: 'ome',
    revisionRetention: 10,
    revisionGracePeriodMs: 86_400_000,
    renderWorkloads: true,
    leaseTtlMs: 10_000,
    maxConflictRetries: 5,
  };

  it('writes policy status in each cluster it controls, and none in a cluster where upstream\'s controller runs', async () => {
    await createPolicy(bench, 'swept', guarded);
    const stores = createMemoryStores(bench.clock);
    const record: ClusterRecord = { id: 'alpha', server: bench.cluster.url, credentials: { kind: 'kubeconfig', kubeconfig: bench.cluster.kubeconfig }, omeNamespace: 'ome', mode: 'standalone' };
    await stores.clusters.putCluster(record);
    // A record naming the delegate mode (upstream OME renders and writes status there).
    await stores.clusters.putCluster({ ...record, id: 'beside-upstream', mode: 'delegate' });
    const app = createAppContext({ config, stores, clock: bench.clock });

    const summary = await sweepRolloutRuns(app, 'sweep-test');

    expect(summary.find((entry) => entry.cluster === 'beside-upstream')).toBeUndefined();
    expect(summary.find((entry) => entry.cluster === 'alpha')?.policies).toMatchObject({ updated: 1, skipped: 0 });
    expect((await statusOf('swept'))?.conditions?.[0]).toMatchObject({ type: 'Ready', status: 'True', reason: 'BodyValid' });
  });
});

describe('a cluster without the RolloutPolicy API', () => {
  it('has no policy status to write, and says so without failing', async () => {
    // Upstream installs the RolloutPolicy CRD only with ome.rolloutPolicy.enabled.
    const client = { list: async () => Promise.reject(new NotFoundError('the server could not find the requested resource')) } as unknown as ClusterClient;
    expect(await refreshPolicyStatuses({ client, clock: bench.clock }, [])).toEqual({ updated: 0, unchanged: 0, skipped: 0 });
  });
});
