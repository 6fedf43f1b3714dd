/**
 * The embedded Kubernetes API server: the local default cluster of `npm start` and the
 * integration-test cluster. Real `kubectl` and `@kubernetes/client-node` talk to it over
 * HTTP; `client` reaches the same storage in-process.
 */
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { FUNCTION_SERVICE_ACCOUNTS, isAccessManifest, SERVICE_ACCOUNT_NAMESPACE } from '../../infra/identities';
import { CLUSTER_MANIFEST_DIRECTORY } from '../../infra/paths';
import type { ClusterClient } from '../../shared/ports/cluster';
import { DEFAULT_OME_NAMESPACE } from '../../shared/domain/vocabulary';
import { AccessControl, type AccessRecord } from './access';
import { ClusterApi, type PruneRecord } from './api';
import { bootstrapPolicy } from './bootstrap-policy';
import { InProcessClusterClient } from './client';
import type { Faults } from './faults';
import { startEngineMetrics, type EngineMetrics } from './engine-metrics';
import { ApiHttpServer, type RequestCounts } from './http-server';
import { servingCertificate } from './serving-certificate';
import { CONTEXT_NAME, renderIdentityKubeconfig, renderKubeconfig, writeSecretFile, type ClusterKubeconfigs } from './kubeconfig';
import { applyManifestDirectory } from './manifests';

export type { FaultSpec, FaultStatus, Faults } from './faults';
export type { AccessRecord } from './access';
export type { PruneRecord } from './api';
export type { RequestCounts } from './http-server';
export type { EngineMetrics, RevisionSelector } from './engine-metrics';
export { SimulationAnnotation } from './engine-metrics';

export interface EmbeddedClusterOptions {
  /** 0 (default) picks a free port. */
  port?: number;
  /** Default 127.0.0.1. */
  host?: string;
  /** CRD manifests applied at start; default `infra/crds/` of this repository. Missing directory: none. */
  crdDir?: string;
  /** Delay before a Deployment reports its replicas ready (default 200 ms). */
  workloadReadyDelayMs?: number;
  /** Watch events kept for resuming watches; older resourceVersions get 410 Gone (default 1000). */
  watchWindow?: number;
  /** Interval of BOOKMARK events on watches that allow them (default 5000 ms). */
  bookmarkIntervalMs?: number;
  /** Namespaces created at start (default `default`, `kube-system`, `kube-public`, `ome`). */
  namespaces?: string[];
  /**
   * Where the access manifests are read at start: its `namespace.yaml`, `rbac-*.yaml` and
   * `policy-*.yaml` (default `infra/k8s/` of this repository). Their ServiceAccounts get tokens.
   */
  accessManifestDir?: string;
  /**
   * A write holding fields its CRD's structural schema does not declare: `prune` (default,
   * as a real API server does) or `refuse` (a 400, as `fieldValidation=Strict` gives).
   * Either way `prunedWrites()` lists what was dropped.
   */
  unknownFields?: 'prune' | 'refuse';
  /** Held before each HTTP request is served (default 0): a remote API server's round trip. */
  latencyMs?: number;
}

export interface EmbeddedCluster extends ClusterKubeconfigs {
  /** `http://127.0.0.1:<port>`: plain HTTP, for clients that send their token over it (kubectl does not). */
  url: string;
  /** A bearer token of the ServiceAccount (minted on first use; valid while it exists). Held in memory only. */
  serviceAccountToken(namespace: string, name: string): string;
  /** The operator's bearer token. Held in memory only. */
  adminToken: string;
  /** Who was allowed or denied what over HTTP (the latest 20,000 decisions), for tests. */
  accessLog(): readonly AccessRecord[];
  /** Writes whose objects lost fields to pruning (the latest 1,000), so tests can insist on none. */
  prunedWrites(): readonly PruneRecord[];
  /** Requests received over HTTP since start (the in-process `client` is not counted). */
  requestCounts(): RequestCounts;
  /**
   * The ClusterClient port over the server's storage, without HTTP. It is the server's own
   * channel: not authenticated, not subject to RBAC or admission policies for users.
   */
  client: ClusterClient;
  faults: Faults;
  /**
   * The simulated engine pods' metrics (local/cluster/engine-metrics.ts), served on their
   * own 127.0.0.1 port for a local Prometheus to scrape (`target`).
   */
  engineMetrics: EngineMetrics;
  stop(): Promise<void>;
}

export const DEFAULT_NAMESPACES = ['default', 'kube-system', 'kube-public', 'ome'];

const repositoryRoot = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
export const DEFAULT_CRD_DIR = join(repositoryRoot, 'infra', 'crds');

export async function startEmbeddedCluster(options: EmbeddedClusterOptions = {}): Promise<EmbeddedCluster> {
  const api = new ClusterApi({
    watchWindow: options.watchWindow ?? 1000,
    bookmarkIntervalMs: options.bookmarkIntervalMs ?? 5000,
    workloadReadyDelayMs: options.workloadReadyDelayMs ?? 200,
    ...(options.unknownFields ? { unknownFields: options.unknownFields } : {}),
  });
  // The access manifests' Roles live in OME's namespace, which therefore always exists; the
  // plane's own namespace, of its ServiceAccounts, comes with those manifests (namespace.yaml).
  await api.bootstrapNamespaces([...new Set([...(options.namespaces ?? DEFAULT_NAMESPACES), DEFAULT_OME_NAMESPACE])]);
  await applyManifestDirectory(api, options.crdDir ?? DEFAULT_CRD_DIR);
  for (const object of bootstrapPolicy()) await api.applyInternal(object);
  const access = new AccessControl(api.store);
  const applied = await applyManifestDirectory(api, options.accessManifestDir ?? CLUSTER_MANIFEST_DIRECTORY, isAccessManifest);
  for (const object of applied) {
    if (object.kind === 'ServiceAccount') access.tokens.serviceAccountToken(object.metadata.namespace ?? 'default', object.metadata.name ?? '');
  }
  const tls = await servingCertificate();
  const server = new ApiHttpServer(api, access, tls, options.latencyMs ?? 0);
  const url = await server.listen(options.port ?? 0, options.host ?? '127.0.0.1');
  const engineMetrics = await startEngineMetrics({
    deployments: () => api.store.list('apps/deployments').map(([, object]) => object),
    inferenceService: (namespace, name) => api.store.get('ome.io/inferenceservices', namespace, name),
  });
  const httpsUrl = url.replace(/^http:/, 'https:');
  const adminToken = access.tokens.adminToken;
  const endpoint = { server: httpsUrl, caData: tls.cert.toString('base64') };
  const kubeconfig = renderKubeconfig(endpoint, 'default', adminToken);
  const identityKubeconfig = renderIdentityKubeconfig(
    endpoint,
    { context: CONTEXT_NAME, token: adminToken },
    Object.entries(FUNCTION_SERVICE_ACCOUNTS).map(([fn, account]) => ({
      context: fn,
      token: access.tokens.serviceAccountToken(SERVICE_ACCOUNT_NAMESPACE, account),
    })),
  );
  let stopped = false;
  return {
    url,
    httpsUrl,
    caData: endpoint.caData,
    kubeconfig,
    writeKubeconfig: (path) => writeSecretFile(path, kubeconfig),
    identityKubeconfig,
    writeIdentityKubeconfig: (path) => writeSecretFile(path, identityKubeconfig),
    serviceAccountToken: (namespace, name) => access.tokens.serviceAccountToken(namespace, name),
    adminToken,
    accessLog: () => access.accessLog(),
    prunedWrites: () => api.prunedWrites(),
    requestCounts: () => server.requestCounts(),
    client: new InProcessClusterClient(api),
    faults: api.faults,
    engineMetrics,
    async stop(): Promise<void> {
      if (stopped) return;
      stopped = true;
      api.stop();
      await Promise.all([server.close(), engineMetrics.stop()]);
    },
  };
}
