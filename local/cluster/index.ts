/**
 * The embedded Kubernetes API server: the local default cluster of `npm start` and the
 * integration-test cluster. Real `kubectl` and `@kubernetes/client-node` talk to it over
 * HTTP; `client` reaches the same storage in-process.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ClusterClient } from '../../shared/ports/cluster';
import { ClusterApi } from './api';
import { InProcessClusterClient } from './client';
import type { Faults } from './faults';
import { ApiHttpServer } from './http-server';
import { renderKubeconfig } from './kubeconfig';
import { applyManifestDirectory } from './manifests';

export type { FaultSpec, FaultStatus, Faults } from './faults';

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
}

export interface EmbeddedCluster {
  /** `http://127.0.0.1:<port>` */
  url: string;
  /** A kubeconfig (YAML) whose cluster, user and context are named `embedded`. */
  kubeconfig: string;
  writeKubeconfig(path: string): Promise<void>;
  /** The ClusterClient port over the server's storage, without HTTP. */
  client: ClusterClient;
  faults: Faults;
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
  });
  await api.bootstrapNamespaces(options.namespaces ?? DEFAULT_NAMESPACES);
  await applyManifestDirectory(api, options.crdDir ?? DEFAULT_CRD_DIR);
  const server = new ApiHttpServer(api);
  const url = await server.listen(options.port ?? 0, options.host ?? '127.0.0.1');
  const kubeconfig = renderKubeconfig(url);
  let stopped = false;
  return {
    url,
    kubeconfig,
    async writeKubeconfig(path: string): Promise<void> {
      await mkdir(dirname(path), { recursive: true });
      await writeFile(path, kubeconfig, { mode: 0o600 });
    },
    client: new InProcessClusterClient(api),
    faults: api.faults,
    async stop(): Promise<void> {
      if (stopped) return;
      stopped = true;
      api.stop();
      await server.close();
    },
  };
}
