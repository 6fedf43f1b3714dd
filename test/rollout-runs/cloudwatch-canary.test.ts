/**
 * A canary gated by CloudWatch, end to end through the rollout run: the cluster's
 * `inferenceservice-config` binds a `cloudwatch` provider, rollout-run's wiring builds the
 * executor from it with the function's role and region, and each sample is a signed
 * GetMetricData call to the local peer. The healthy canary completes; the one whose error
 * ratio breaches the threshold rolls back at failureLimit.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Resources } from '../../shared/domain/model/resources';
import type { KubeObject, ResourceType } from '../../shared/ports/cluster';
import { prometheusAnalysisWiring } from '../../shared/app/analysis-wiring';
import type { ClusterAnalysis } from '../../shared/app/metrics-binding';
import { createDirectWorkloadWriter } from '../../shared/use-cases/direct-workload-writer';
import { createRolloutWorkloadWriter } from '../../shared/use-cases/rollout-runs';
import { renderEngineDeployment } from '../../shared/domain/runtime/workload';
import { startCloudWatchPeer, type AwsMetricsPeer } from '../support/aws-metrics-peer';
import { viaTls } from '../support/http-peer';
import { advanceUntil, CLUSTER_ID, getIsvc, NAMESPACE, startBench, type Bench } from './harness';

const OME = 'ome';
const ConfigMaps: ResourceType = { group: '', version: 'v1', plural: 'configmaps', kind: 'ConfigMap', namespaced: true };
const role = { accessKeyId: 'AKIAROLLOUTRUN', secretAccessKey: 'rollout-run-secret', sessionToken: 'session-of-rollout-run' };

let bench: Bench;
let peer: AwsMetricsPeer;
let analysis: ClusterAnalysis;
/** The error ratio each canary's Service reports, by Service name. */
const errorRatio = new Map<string, number>();

beforeAll(async () => {
  bench = await startBench();
  const seconds = () => Math.floor(bench.clock.now() / 1000);
  peer = await startCloudWatchPeer({
    credentials: role,
    region: 'eu-west-1',
    now: () => new Date(bench.clock.now()),
    series: (expression) => {
      const service = /Service = '([^']+)'/.exec(expression)?.[1] ?? '';
      const ratio = errorRatio.get(service);
      return ratio === undefined ? [] : [{ label: service, points: [[seconds() - 30, ratio]] }];
    },
  });
  const tls = viaTls(peer as never);
  await bench.client.create(ConfigMaps, {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: 'inferenceservice-config', namespace: OME },
    data: { metricProviders: JSON.stringify({ 'cloudwatch-eu': { type: 'cloudwatch', serverAddress: tls.address, region: 'eu-west-1' } }) },
  } as KubeObject);
  const wiring = prometheusAnalysisWiring({
    sampling: true,
    fence: { mode: 'local', allowlist: { origins: [], ranges: ['127.0.0.1/32'] } },
    fetch: tls.fetch,
    awsCredentials: async () => role,
    awsRegion: 'eu-west-1',
    now: () => new Date(bench.clock.now()),
  });
  analysis = await wiring({ id: CLUSTER_ID, client: bench.client, omeNamespace: OME });
});
afterAll(async () => {
  await peer?.close();
  await bench?.stop();
});

async function render(name: string, image: string): Promise<string> {
  const current = await getIsvc(bench, name);
  const desired = renderEngineDeployment({
    isvc: { namespace: NAMESPACE, name, uid: current.metadata.uid, engine: { minReplicas: 2 } },
    runtimeName: 'srt',
    spec: { containers: [{ name: 'ome-container', image }] },
  });
  const writer = createRolloutWorkloadWriter({ client: bench.client, direct: createDirectWorkloadWriter(bench.client), clock: bench.clock, metrics: analysis.metrics });
  return writer.apply({ clusterId: CLUSTER_ID, isvc: current, desired, renderedFrom: 'live' });
}

/** Opens a run whose one analysis step asks CloudWatch for the canary Service's error ratio. */
async function openCloudWatchRun(name: string): Promise<void> {
  const metrics = [{ name: 'error-ratio', query: `SELECT AVG(ErrorRatio) FROM SCHEMA("OME/Serving", Service) WHERE Service = '{{.CanaryService}}'`, operator: 'LT', threshold: '0.05' }];
  await bench.client.create(Resources.inferenceServices, {
    apiVersion: 'ome.io/v1beta1',
    kind: 'InferenceService',
    metadata: { name, namespace: NAMESPACE },
    spec: {
      engine: { minReplicas: 2 },
      model: { name: 'llama' },
      runtime: { name: 'srt' },
      rollout: {
        groups: [
          {
            components: ['engine'],
            canary: {
              steps: [{ capacity: '50%', traffic: 20, analysis: { interval: '1m', failureLimit: 2, onInconclusive: 'Hold', metrics } }, { capacity: '100%', traffic: 100 }],
              prometheus: { providerRef: { name: 'cloudwatch-eu' } },
              readyTimeout: '5m',
            },
          },
        ],
      },
    },
  });
  await render(name, 'srt:v1');
  bench.clock.tick();
  expect(await render(name, 'srt:v2')).toBe('run-opened');
}

describe('a CloudWatch-gated canary', () => {
  it('completes when its error ratio in CloudWatch stays under the threshold', async () => {
    await openCloudWatchRun('healthy');
    const service = `healthy-engine-rev-${(await getIsvc(bench, 'healthy')).status?.canary?.canaryRevisionHash}`;
    errorRatio.set(service, 0.01);

    const done = await advanceUntil(bench, 'healthy', (result) => result.outcome === 'closed', 10_000, analysis);

    expect(done.status?.rollout?.lastRun?.outcome).toBe('Completed');
    // The step passed on a signed GetMetricData call for the canary's own Service.
    const asked = peer.requests.filter((request) => request.body.includes(`Service = '${service}'`));
    expect(asked.length).toBeGreaterThan(0);
    expect(asked.every((request) => request.signatureValid)).toBe(true);
  });

  it('rolls back when its error ratio in CloudWatch breaches the threshold failureLimit times', async () => {
    await openCloudWatchRun('failing');
    errorRatio.set(`failing-engine-rev-${(await getIsvc(bench, 'failing')).status?.canary?.canaryRevisionHash}`, 0.2);

    const once = await advanceUntil(bench, 'failing', (_result, isvc) => isvc.status?.canary?.analysisFailedChecks === 1, 10_000, analysis);
    expect(once.status?.canary?.metricResults).toEqual([expect.objectContaining({ name: 'error-ratio', value: '0.2', passed: false })]);
    bench.clock.tick(60);
    const rolledBack = await advanceUntil(bench, 'failing', (result) => result.outcome === 'closed', 10_000, analysis);

    expect(rolledBack.status?.rollout?.lastRun?.outcome).toBe('RolledBack');
  });
});
