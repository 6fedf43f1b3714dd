import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmbeddedCluster, type EmbeddedCluster } from '../../local/cluster';
import { clusterMetricsConfigReader, clusterSecretReader, ConfigMaps, createPrometheusExecutor, Secrets } from '../../shared/adapters/prometheus';
import { metricsBinding } from '../../shared/domain/analysis/metrics-config';
import { NotFoundError } from '../../shared/domain/errors';
import type { KubeObject } from '../../shared/ports/cluster';
import { startHttpPeer, vectorAnswer, viaTls, type HttpPeer } from '../support/http-peer';

const omeNamespace = 'ome';
const namespace = 'default';

interface DataObject extends KubeObject {
  data?: Record<string, string>;
}

const configMap = (data: Record<string, string>): DataObject => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name: 'inferenceservice-config', namespace: omeNamespace },
  data,
});

describe('Analysis configuration and tokens read from the embedded API server', () => {
  let cluster: EmbeddedCluster;
  let peer: HttpPeer;
  beforeAll(async () => {
    cluster = await startEmbeddedCluster();
    peer = await startHttpPeer(vectorAnswer('0.02'));
    await cluster.client.create<DataObject>(Secrets, {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'prom-bearer', namespace },
      data: { token: Buffer.from('t0ken').toString('base64') },
    });
  });
  afterAll(async () => {
    await peer?.close();
    await cluster?.stop();
  });

  it('reads no ConfigMap as an empty one, with PROMETHEUS_ADDRESS as the bundled source', async () => {
    const config = await clusterMetricsConfigReader(cluster.client, omeNamespace, 'http://local:9090')();
    expect(config).toEqual({ bundledPrometheusAddress: 'http://local:9090', providers: {}, queryTimeoutMs: 5_000 });
    expect(metricsBinding(config)).toEqual({ boundProviders: new Set(), executor: true });
  });

  it('reads a Secret key decoded, no key as undefined, and no Secret as NotFoundError', async () => {
    const read = clusterSecretReader(cluster.client);
    expect(await read(namespace, 'prom-bearer', 'token')).toBe('t0ken');
    expect(await read(namespace, 'prom-bearer', 'other')).toBeUndefined();
    await expect(read(namespace, 'missing', 'token')).rejects.toBeInstanceOf(NotFoundError);
  });

  it('samples through a binding from the ConfigMap with the token from the Secret, and sees edits at the next sample', async () => {
    await cluster.client.create<DataObject>(
      ConfigMaps,
      configMap({
        canaryAnalysis: JSON.stringify({ queryTimeout: '3s' }),
        metricProviders: JSON.stringify({ 'cluster-prometheus': { serverAddress: viaTls(peer).address, authSecretRef: { name: 'prom-bearer', key: 'token' } } }),
      }),
    );
    const readConfig = clusterMetricsConfigReader(cluster.client, omeNamespace);
    expect(metricsBinding(await readConfig())).toEqual({ boundProviders: new Set(['cluster-prometheus']), executor: false });
    const fence = { mode: 'local' as const, allowlist: { origins: [], ranges: ['127.0.0.1/32'] } };
    const executor = createPrometheusExecutor({ fence, readConfig, readSecret: clusterSecretReader(cluster.client), fetch: viaTls(peer).fetch });
    const sampleRequest = {
      namespace,
      isvcName: 'chat',
      component: 'engine',
      canaryRevision: 'b2',
      step: 0,
      analysis: { interval: '1m', failureLimit: 1, metrics: [{ name: 'err', query: 'errors', operator: 'LT' as const, threshold: '0.05' }] },
      prometheus: { providerRef: { name: 'cluster-prometheus' } },
    };
    const before = peer.requests.length;
    const verdict = await executor.sample(sampleRequest);
    expect(verdict?.outcome).toBe('Successful');
    expect(peer.requests[before]?.headers.authorization).toBe('Bearer t0ken');

    // The binding is removed: the next sample says so instead of querying anything.
    const current = await cluster.client.get<DataObject>(ConfigMaps, omeNamespace, 'inferenceservice-config');
    await cluster.client.replace<DataObject>(ConfigMaps, { ...current, data: { metricProviders: '{}' } });
    const after = await executor.sample(sampleRequest);
    expect(after?.metrics).toEqual([
      expect.objectContaining({ name: 'prometheus', message: 'metric provider "cluster-prometheus" is not bound in this cluster\'s metricProviders configuration' }),
    ]);
  });
});
