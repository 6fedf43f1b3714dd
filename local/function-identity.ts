/**
 * Each function acts in an embedded cluster under its own identity: the context named
 * after it in `<data-dir>/clusters/<cluster-id>.kubeconfig`, which holds its
 * ServiceAccount's token. The functions share one process locally, so the function being
 * run is carried in async context (set around each bus delivery, webhook call and the
 * forwarder) and the app context the handlers read hands each function clients built from
 * its own context. Outside any function (start-up, tests) the operator's context is used.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { connectionFromKubeconfigText } from '../shared/adapters/kubernetes/record-connection';
import { createAppContext, type AppContext, type AppContextOptions } from '../shared/app/context';
import { CONTEXT_NAME } from './cluster/kubeconfig';

const runningFunction = new AsyncLocalStorage<string>();

/** Runs `task` as function `name`: its cluster clients use that function's identity. */
export function runAsFunction<T>(name: string, task: () => T): T {
  return runningFunction.run(name, task);
}

/** `<dataDir>/clusters/<clusterId>.kubeconfig`: the identities of one embedded cluster (mode 0600). */
export function identityKubeconfigPathOf(dataDir: string, clusterId: string): string {
  return join(dataDir, 'clusters', `${clusterId}.kubeconfig`);
}

/**
 * An app context whose `cluster(id)` gives the running function a client under its own
 * context of the cluster's identity kubeconfig (clients cached per function), and anyone
 * else the operator's. `identityPaths` maps cluster ids to their identity kubeconfigs;
 * a cluster missing there is reached through `base`.
 */
export function createIdentityAppContext(base: AppContext, options: Omit<AppContextOptions, 'connectCluster'>, identityPaths: Map<string, string>): AppContext {
  const byFunction = new Map<string, AppContext>();
  const contextFor = (name: string): AppContext => {
    let context = byFunction.get(name);
    if (!context) {
      context = createAppContext({
        ...options,
        connectCluster: (record) => {
          const path = identityPaths.get(record.id);
          if (!path) throw new Error(`cluster ${record.id} has no identity kubeconfig`);
          return connectionFromKubeconfigText(record.id, readFileSync(path, 'utf8'), name);
        },
      });
      byFunction.set(name, context);
    }
    return context;
  };
  const operator = contextFor(CONTEXT_NAME);
  return {
    ...base,
    cluster(clusterId) {
      const name = runningFunction.getStore();
      if (!identityPaths.has(clusterId)) return base.cluster(clusterId);
      return (name === undefined ? operator : contextFor(name)).cluster(clusterId);
    },
  };
}
