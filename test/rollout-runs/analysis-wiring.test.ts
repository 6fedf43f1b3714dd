/**
 * The wiring of analysis into the rollout paths, through the embedded cluster: a run opens
 * (or parks) with the bindings of the cluster's `inferenceservice-config`, the same ones
 * the sweep resolves with; the configuration is read once per invocation; the sweep
 * samples in a standalone cluster and never in a delegate one (upstream samples there).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAppContext } from '../../shared/app/context';
import type { ControlPlaneConfig } from '../../shared/app/config';
import { Resources } from '../../shared/domain/model/resources';
import type { ClusterClient, KubeObject, ResourceType } from '../../shared/ports/cluster';
import type { ClusterRecord } from '../../shared/ports/store';
import { rolloutAwareWorkloadWriter } from '../../shared/app/engine-workload-writer';
import { sweepRolloutRuns } from '../../shared/app/rollout-hints';
import { prometheusAnalysisWiring, wiringPerInvocation } from '../../shared/app/analysis-wiring';
import { memoizeAnalysisWiring, metricsBindingReader, type AnalysisCluster, type AnalysisWiring } from '../../shared/app/metrics-binding';
import { findUnboundProvider, NO_METRICS } from '../../shared/domain/rollout/analysis';
import type { GroupCanary, RolloutGroup } from '../../shared/domain/rollout/types';
import { renderEngineDeployment } from '../../shared/domain/runtime/workload';
import { createMemoryStores } from '../../shared/adapters/memory';
import { CLUSTER_ID, condition, createPolicy, getIsvc, NAMESPACE, startBench, type Bench } from './harness';

const OME = 'ome';
const ConfigMaps: ResourceType = { group: '', version: 'v1', plural: 'configmaps', kind: 'ConfigMap', namespaced: true };

let bench: Bench;
beforeAll(async () => {
  bench = await startBench();
  // OME's namespace exists in the embedded cluster, as in an install.
  await bench.client.create(ConfigMaps, {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: 'inferenceservice-config', namespace: OME },
    // Port 9 (discard) on loopback: nothing answers, so every sample is inconclusive.
    data: { metricProviders: JSON.stringify({ 'cluster-prom': { serverAddress: 'http://127.0.0.1:9' } }) },
  } as KubeObject);
});
afterAll(async () => {
  await bench.stop();
});

const analysisStep = { capacity: '50%', traffic: 50, analysis: { interval: '1m', failureLimit: 2, metrics: [{ name: 'err', query: 'vector(0)', operator: 'LT' as const, threshold: '0.05' }] } };
const canaryNaming = (provider: string): RolloutGroup => ({
  components: ['engine'],
  canary: { steps: [analysisStep, { capacity: '100%', traffic: 100 }], prometheus: { providerRef: { name: provider } } },
});

/** The pin and drift-check functions' writer, reading the cluster's binding as they do. */
async function render(name: string, image: string): Promise<string> {
  const current = await getIsvc(bench, name);
  const desired = renderEngineDeployment({
    isvc: { namespace: NAMESPACE, name, uid: current.metadata.uid, engine: { minReplicas: 2 } },
    runtimeName: 'srt',
    spec: { containers: [{ name: 'ome-container', image }] },
  });
  const writer = rolloutAwareWorkloadWriter(bench.clock, metricsBindingReader({ id: CLUSTER_ID, omeNamespace: OME }))(bench.client);
  return writer.apply({ clusterId: CLUSTER_ID, isvc: current, desired, renderedFrom: 'live' });
}

async function createService(name: string, group: RolloutGroup): Promise<void> {
  await bench.client.create(Resources.inferenceServices, {
    apiVersion: 'ome.io/v1beta1',
    kind: 'InferenceService',
    metadata: { name, namespace: NAMESPACE },
    spec: { engine: { minReplicas: 2 }, model: { name: 'llama' }, runtime: { name: 'srt' }, rollout: { groups: [group] } },
  });
  await render(name, 'srt:v1');
  bench.clock.tick();
}

/** Counts the reads of the analysis ConfigMap made through it. */
function countingClient(client: ClusterClient): { client: ClusterClient; reads: () => number } {
  let reads = 0;
  const counted: ClusterClient = {
    ...client,
    get: (type, namespace, name) => {
      if (type.plural === 'configmaps') reads += 1;
      return client.get(type, namespace, name);
    },
  };
  return { client: counted, reads: () => reads };
}

describe('a run opens with the cluster\'s metric provider bindings', () => {
  it('opens for a providerRef bound in metricProviders, and parks one that is not (upstream\'s message)', async () => {
    await createService('bound', canaryNaming('cluster-prom'));
    expect(await render('bound', 'srt:v2')).toBe('run-opened');
    expect(condition(await getIsvc(bench, 'bound'), 'RolloutPlanReady')).toMatchObject({ status: 'True', reason: 'Pinned' });

    await createService('unbound', canaryNaming('elsewhere'));
    expect(await render('unbound', 'srt:v2')).not.toBe('run-opened');
    const parked = await getIsvc(bench, 'unbound');
    expect(parked.status?.rollout?.activeRun).toBeUndefined();
    expect(condition(parked, 'RolloutPlanReady')).toMatchObject({
      status: 'False',
      reason: 'ProviderUnbound',
      message: 'groups[0]: metric provider "elsewhere" is not bound in this cluster\'s metricProviders configuration',
    });
  });

  it.each([
    ['a canary with its own serverAddress, under the Prometheus executor', { serverAddress: 'http://prom:9090' }, { boundProviders: new Set<string>(), executor: false, addresses: true }, undefined],
    ['a canary with its own serverAddress, with nothing to sample it', { serverAddress: 'http://prom:9090' }, NO_METRICS, 'groups[0]: canary.steps[0] is an analysis step, and no metrics provider is bound in this cluster to evaluate it'],
    ['a canary naming no source, with a default source', undefined, { boundProviders: new Set<string>(), executor: true, addresses: true }, undefined],
    ['a canary naming no source, without one', undefined, { boundProviders: new Set<string>(), executor: false, addresses: true }, 'groups[0]: canary.steps[0] is an analysis step, and no metrics provider is bound in this cluster to evaluate it'],
  ] as const)('%s', (_name, prometheus, binding, problem) => {
    const canary: GroupCanary = { steps: [analysisStep], ...(prometheus ? { prometheus } : {}) };
    expect(findUnboundProvider(canary, binding, 0)).toBe(problem);
  });
});

describe('the configuration is read once per invocation', () => {
  it('shares one read among the hints of an invocation, and reads afresh for the next', async () => {
    const { client, reads } = countingClient(bench.client);
    const cluster: AnalysisCluster = { id: CLUSTER_ID, client, omeNamespace: OME };
    const wiringOf = wiringPerInvocation(() => prometheusAnalysisWiring({ sampling: true }));
    const first = await Promise.all([wiringOf('request-1')(cluster), wiringOf('request-1')(cluster), wiringOf('request-1')(cluster)]);
    expect(reads()).toBe(1);
    expect([...first[0].metrics.boundProviders]).toEqual(['cluster-prom']);
    expect(first[0].analysis).toBeDefined();
    await wiringOf('request-2')(cluster);
    expect(reads()).toBe(2);
  });

  it('does not keep a failed read', async () => {
    let calls = 0;
    const flaky = memoizeAnalysisWiring(async () => {
      calls += 1;
      if (calls === 1) throw new Error('the API server is unavailable');
      return { metrics: NO_METRICS };
    });
    const cluster: AnalysisCluster = { id: CLUSTER_ID, client: bench.client, omeNamespace: OME };
    await expect(flaky(cluster)).rejects.toThrow('unavailable');
    await expect(flaky(cluster)).resolves.toEqual({ metrics: NO_METRICS });
  });
});

describe('the sweep samples where the plane runs the rollouts, and only there', () => {
  const config: ControlPlaneConfig = {
    tableName: 'test',
    eventBusName: 'test',
    region: 'eu-west-1',
    omeNamespace: OME,
    revisionRetention: 10,
    revisionGracePeriodMs: 86_400_000,
    renderWorkloads: true,
    leaseTtlMs: 10_000,
    maxConflictRetries: 5,
  };

  it('records an inconclusive sample saying why for the standalone cluster, and never builds analysis for the delegate one', async () => {
    const stores = createMemoryStores(bench.clock);
    const record: ClusterRecord = { id: 'alpha', server: bench.cluster.url, credentials: { kind: 'kubeconfig', kubeconfig: bench.cluster.kubeconfig }, omeNamespace: OME, mode: 'standalone' };
    await stores.clusters.putCluster(record);
    await stores.clusters.putCluster({ ...record, id: 'beside-upstream', mode: 'delegate' });
    const app = createAppContext({ config, stores, clock: bench.clock });
    for (const [name, provider] of [['bound-policy', 'cluster-prom'], ['unbound-policy', 'elsewhere']] as const) {
      await createPolicy(bench, name, { canary: { steps: [analysisStep, { capacity: '100%', traffic: 100 }], prometheus: { providerRef: { name: provider } } } });
    }
    const built: string[] = [];
    // The binding's loopback address is allowed, so the sample reaches it and finds nothing listening.
    const fence = { mode: 'local' as const, allowlist: { origins: [], ranges: ['127.0.0.1/32'] } };
    const real = prometheusAnalysisWiring({ sampling: true, fence, now: () => new Date(bench.clock.now()) });
    const wiring: AnalysisWiring = (cluster) => {
      built.push(cluster.id);
      return real(cluster);
    };

    const deadline = Date.now() + 10_000;
    let canary = (await getIsvc(bench, 'bound')).status?.canary;
    while (canary?.lastEvaluationTime === undefined && Date.now() < deadline) {
      await sweepRolloutRuns(app, 'sweep', undefined, wiring);
      await new Promise((resolve) => setTimeout(resolve, 20));
      canary = (await getIsvc(bench, 'bound')).status?.canary;
    }

    expect([...new Set(built)]).toEqual(['alpha']);
    // The same sweep wrote policy status with the providers the cluster binds.
    expect((await bench.client.get<KubeObject & { status?: { conditions?: { type: string; reason?: string }[] } }>(Resources.rolloutPolicies, NAMESPACE, 'bound-policy')).status?.conditions).toContainEqual(
      expect.objectContaining({ type: 'Ready', reason: 'BodyValid' }),
    );
    expect((await bench.client.get<KubeObject & { status?: { conditions?: { type: string; reason?: string }[] } }>(Resources.rolloutPolicies, NAMESPACE, 'unbound-policy')).status?.conditions).toContainEqual(
      expect.objectContaining({ type: 'Ready', reason: 'ProviderUnbound' }),
    );
    expect(canary?.analysisFailedChecks ?? 0).toBe(0);
    const [result] = canary?.metricResults ?? [];
    expect(result).toMatchObject({ name: 'err', passed: false });
    expect(result?.value).toBeUndefined();
    expect(result?.message).toBeTruthy();
  });
});
