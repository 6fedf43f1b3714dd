/**
 * A real Prometheus (Debian's package) scraping the embedded cluster's simulated engine
 * pods: an instant query for a revision's error ratio answers the simulated 0.001, a raised
 * ratio shows within seconds on that revision only, and pause()/resume() take the API away
 * and bring it back on the same address with its data.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SimulationAnnotation, startEmbeddedCluster, type EmbeddedCluster } from '../../local/cluster';
import { findPrometheusBinary, startPrometheus, type LocalPrometheus } from '../../local/prometheus';
import { Resources } from '../../shared/domain/model/resources';
import type { KubeObject } from '../../shared/ports/cluster';
import { renderCanaryDeployment, withWorkloadRevision, WORKLOAD_REVISION_ANNOTATION, type Deployment } from '../../shared/use-cases/rollout-runs/workloads';
import { renderEngineDeployment } from '../../shared/domain/runtime/workload';

const NAMESPACE = 'prod';
const ISVC = 'chat';
const binary = findPrometheusBinary();

interface QueryAnswer {
  status: string;
  data?: { resultType: string; result: Array<{ metric: Record<string, string>; value: [number, string] }> };
}

async function instantQuery(prometheus: LocalPrometheus, query: string): Promise<QueryAnswer> {
  const response = await fetch(`${prometheus.address}/api/v1/query?${new URLSearchParams({ query })}`, { signal: AbortSignal.timeout(2_000) });
  return (await response.json()) as QueryAnswer;
}

/** The upstream example's error ratio for one revision, over a range a 1 s scrape fills quickly. */
function errorRatioQuery(revision: string): string {
  const selector = `namespace="${NAMESPACE}", inferenceservice="${ISVC}", revision_hash="${revision}"`;
  return `sum(rate(request_errors_total{${selector}}[10s])) / sum(rate(requests_total{${selector}}[10s]))`;
}

/** The query's single value once `accept` holds for it; fails with the last answer at the deadline. */
async function waitForValue(prometheus: LocalPrometheus, query: string, accept: (value: number) => boolean, timeoutMs = 45_000): Promise<number> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const answer = await instantQuery(prometheus, query);
      last = answer;
      const sample = answer.data?.result;
      if (answer.status === 'success' && sample?.length === 1) {
        const value = Number(sample[0]?.value[1]);
        if (accept(value)) return value;
      }
    } catch (error) {
      last = error;
    }
    if (Date.now() > deadline) throw new Error(`no accepted value for ${query} within ${timeoutMs} ms; last answer: ${JSON.stringify(last)}`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

async function waitUntilReady(cluster: EmbeddedCluster, name: string, replicas: number): Promise<Deployment> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const deployment = await cluster.client.get<Deployment>(Resources.deployments, NAMESPACE, name);
    if (deployment.status?.readyReplicas === replicas && deployment.status.observedGeneration === deployment.metadata.generation) return deployment;
    if (Date.now() > deadline) throw new Error(`${name} not ready: ${JSON.stringify(deployment.status)}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe.skipIf(binary === undefined)(`local Prometheus scraping simulated engine pods${binary === undefined ? ' (skipped: no prometheus binary; `apt-get install prometheus`)' : ''}`, () => {
  let cluster: EmbeddedCluster;
  let prometheus: LocalPrometheus;
  let stableRevision: string;
  let canaryRevision: string;

  beforeAll(async () => {
    cluster = await startEmbeddedCluster({ namespaces: ['default', NAMESPACE], workloadReadyDelayMs: 10 });
    const isvc = await cluster.client.create<KubeObject>(Resources.inferenceServices, {
      apiVersion: 'ome.io/v1beta1',
      kind: 'InferenceService',
      metadata: { name: ISVC, namespace: NAMESPACE },
      spec: { engine: { minReplicas: 2 }, model: { name: 'llama' }, runtime: { name: 'srt' } },
    });
    const render = (image: string): Deployment =>
      renderEngineDeployment({
        isvc: { namespace: NAMESPACE, name: ISVC, uid: isvc.metadata.uid, engine: { minReplicas: 2 } },
        runtimeName: 'srt',
        spec: { containers: [{ name: 'ome-container', image }] },
      }) as Deployment;
    const stable = withWorkloadRevision(render('engine:1'));
    const canary = renderCanaryDeployment(render('engine:2'), 1);
    stableRevision = stable.metadata.annotations?.[WORKLOAD_REVISION_ANNOTATION] ?? '';
    canaryRevision = canary.metadata.annotations?.[WORKLOAD_REVISION_ANNOTATION] ?? '';
    await cluster.client.create(Resources.deployments, stable);
    await cluster.client.create(Resources.deployments, canary);
    await waitUntilReady(cluster, stable.metadata.name, 2);
    await waitUntilReady(cluster, canary.metadata.name, 1);
    prometheus = await startPrometheus({ scrapeTargets: [cluster.engineMetrics.target] });
  });

  afterAll(async () => {
    await prometheus?.stop();
    await cluster?.stop();
  });

  it('labels each ready pod as the bundled Prometheus does', async () => {
    const answer = await instantQuery(prometheus, `requests_total{namespace="${NAMESPACE}"}`);
    const deadline = Date.now() + 30_000;
    let series = answer.data?.result ?? [];
    while (series.length < 3 && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 250));
      series = (await instantQuery(prometheus, `requests_total{namespace="${NAMESPACE}"}`)).data?.result ?? [];
    }
    const labels = series.map(({ metric }) => [metric.inferenceservice, metric.component, metric.revision_hash, metric.pod]).sort();
    expect(labels).toEqual(
      [
        [ISVC, 'engine', stableRevision, 'chat-engine-0'],
        [ISVC, 'engine', stableRevision, 'chat-engine-1'],
        [ISVC, 'engine', canaryRevision, 'chat-engine-canary-0'],
      ].sort(),
    );
  });

  it('answers the simulated error ratio, and a raised ratio on the canary revision only', async () => {
    const healthy = await waitForValue(prometheus, errorRatioQuery(canaryRevision), (value) => Number.isFinite(value));
    expect(healthy).toBeCloseTo(0.001, 6);

    // As an operator would with `kubectl annotate inferenceservice chat simulation.ome.io/error-ratio=canary=0.2`.
    await cluster.client.patch(Resources.inferenceServices, NAMESPACE, ISVC, { metadata: { annotations: { [SimulationAnnotation.errorRatio]: 'canary=0.2' } } }, { type: 'merge' });
    await waitForValue(prometheus, errorRatioQuery(canaryRevision), (value) => value > 0.1);
    expect(await waitForValue(prometheus, errorRatioQuery(stableRevision), (value) => Number.isFinite(value))).toBeCloseTo(0.001, 6);

    // In-process, by revision: wins over the annotation.
    cluster.engineMetrics.setErrorRatio({ namespace: NAMESPACE, inferenceservice: ISVC, revisionHash: stableRevision }, 0.5);
    await waitForValue(prometheus, errorRatioQuery(stableRevision), (value) => value > 0.3);
  });

  it('is unreachable while paused and answers with its data after resume', async () => {
    const address = prometheus.address;
    await prometheus.pause();
    expect(prometheus.pid).toBeUndefined();
    await expect(fetch(`${address}/-/ready`, { signal: AbortSignal.timeout(2_000) })).rejects.toThrow();

    await prometheus.resume();
    expect(prometheus.address).toBe(address);
    expect(prometheus.pid).toBeTypeOf('number');
    // Samples from before the pause are still there: the series is answered at once.
    const before = await instantQuery(prometheus, `count(count_over_time(requests_total{namespace="${NAMESPACE}"}[1h]))`);
    expect(before.status).toBe('success');
    expect(Number(before.data?.result[0]?.value[1])).toBe(3);
    await waitForValue(prometheus, errorRatioQuery(canaryRevision), (value) => value > 0.1);
  });
});
