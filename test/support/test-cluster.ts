/**
 * The cluster a suite runs against: the embedded API server (default), or the real
 * kube-apiserver of local/real-cluster when the suite runs in vitest's `real` project
 * (OME_TEST_CLUSTER=real; vitest.config.ts). A suite written against this interface runs
 * unchanged on both; what only the embedded server offers (fault injection, simulated
 * engine metrics, its pruning log) stays in suites that start it directly.
 */
import { request as httpsRequest } from 'node:https';
import { startEmbeddedCluster, type EmbeddedClusterOptions } from '../../local/cluster';
import { startRealCluster } from '../../local/real-cluster';
import type { AccessRecord } from '../../local/cluster';
import type { ClusterClient } from '../../shared/ports/cluster';

export type TestClusterKind = 'embedded' | 'real';

/** The server this run's suites use: `real` in the real project, else `embedded`. */
export const TEST_CLUSTER: TestClusterKind = process.env.OME_TEST_CLUSTER === 'real' ? 'real' : 'embedded';

/** ` (real kube-apiserver)` in the real project, so a failing case names its server. */
export const ON_SERVER = TEST_CLUSTER === 'real' ? ' (real kube-apiserver)' : '';

export interface TestCluster {
  kind: TestClusterKind;
  httpsUrl: string;
  /** The operator's kubeconfig (YAML). */
  kubeconfig: string;
  writeIdentityKubeconfig(path: string): Promise<void>;
  serviceAccountToken(namespace: string, name: string): Promise<string>;
  /** As the operator: in-process on the embedded server, over HTTPS on the real one. */
  client: ClusterClient;
  accessLog(): readonly AccessRecord[];
  /** A GET over HTTPS (trusting the server's CA), with a bearer token or none. */
  get(path: string, token?: string): Promise<{ status: number; body: string }>;
  stop(): Promise<void>;
}

export interface TestClusterOptions {
  /** Namespaces to create besides `ome` (the embedded server's defaults exist on both). */
  namespaces?: string[];
  /** Embedded only: its other options. */
  embedded?: Omit<EmbeddedClusterOptions, 'namespaces'>;
}

const NAMESPACE = { group: '', version: 'v1', plural: 'namespaces', kind: 'Namespace', namespaced: false } as const;

export async function startTestCluster(options: TestClusterOptions = {}, kind: TestClusterKind = TEST_CLUSTER): Promise<TestCluster> {
  if (kind === 'embedded') {
    const cluster = await startEmbeddedCluster({ ...options.embedded, namespaces: ['default', 'kube-system', 'kube-public', ...(options.namespaces ?? [])] });
    return {
      kind,
      httpsUrl: cluster.httpsUrl,
      kubeconfig: cluster.kubeconfig,
      writeIdentityKubeconfig: (path) => cluster.writeIdentityKubeconfig(path),
      serviceAccountToken: async (namespace, name) => cluster.serviceAccountToken(namespace, name),
      client: cluster.client,
      accessLog: () => cluster.accessLog(),
      get: (path, token) => httpsGet(cluster.httpsUrl, cluster.caData, path, token),
      stop: () => cluster.stop(),
    };
  }
  const cluster = await startRealCluster({ nodes: 1 });
  try {
    for (const name of options.namespaces ?? []) {
      await cluster.client.create(NAMESPACE, { apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
    }
  } catch (error) {
    await cluster.stop();
    throw error;
  }
  return {
    kind,
    httpsUrl: cluster.httpsUrl,
    kubeconfig: cluster.kubeconfig,
    writeIdentityKubeconfig: (path) => cluster.writeIdentityKubeconfig(path),
    serviceAccountToken: (namespace, name) => cluster.serviceAccountToken(namespace, name),
    client: cluster.client,
    accessLog: () => cluster.accessLog(),
    get: (path, token) => httpsGet(cluster.httpsUrl, cluster.caData, path, token),
    stop: () => cluster.stop(),
  };
}

function httpsGet(server: string, caData: string, path: string, token?: string): Promise<{ status: number; body: string }> {
  return new Promise((resolveGet, reject) => {
    const headers = token === undefined ? {} : { authorization: `Bearer ${token}` };
    const request = httpsRequest(`${server}${path}`, { ca: Buffer.from(caData, 'base64'), headers, timeout: 10_000 }, (response) => {
      let body = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => (body += chunk));
      response.on('end', () => resolveGet({ status: response.statusCode ?? 0, body }));
    });
    request.on('error', reject);
    request.on('timeout', () => request.destroy(new Error(`GET ${path}: no answer in 10 s`)));
    request.end();
  });
}
