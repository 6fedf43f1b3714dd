/**
 * Entry point of `kubectl ome`: wires the real streams, clock and cluster client into the
 * command table. The Kubernetes client is loaded only for commands that reach the cluster.
 */
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { createInterface } from 'node:readline';

import type { ClusterAdminRegistry } from './admin/cluster-onboarding';
import { runApp, type Connection, type ConnectOptions } from './app';
import type { RegistryOptions } from './command';
import { readBuildInfo } from './build-info';
import type { PromptInput } from './env';
import { requestLogger } from './request-log';
import type { ClusterClient } from '../shared/ports/cluster';
import type { ClusterRecord } from '../shared/ports/store';

const closers: Array<() => void> = [];

function terminalInput(): PromptInput {
  return {
    isTTY: process.stdin.isTTY === true,
    readLine: () =>
      new Promise((resolve) => {
        const reader = createInterface({ input: process.stdin, terminal: false });
        let answered = false;
        reader.once('line', (line) => {
          answered = true;
          reader.close();
          resolve(line);
        });
        reader.once('close', () => {
          if (!answered) resolve(null);
        });
      }),
  };
}

async function connect(options: ConnectOptions): Promise<Connection> {
  const { loadKubeConfig, connectionFromKubeConfig, createClusterClient } = await import('../shared/adapters/kubernetes/index');
  const kubeConfig = loadKubeConfig({
    ...(options.kubeconfig ? { kubeconfigPath: options.kubeconfig } : {}),
    ...(options.context ? { context: options.context } : {}),
    overrides: {
      ...(options.cluster ? { cluster: options.cluster } : {}),
      ...(options.user ? { user: options.user } : {}),
      ...(options.server ? { server: options.server } : {}),
      ...(options.token ? { token: options.token } : {}),
      ...(options.certificateAuthority ? { certificateAuthority: options.certificateAuthority } : {}),
      ...(options.insecureSkipTlsVerify ? { insecureSkipTlsVerify: true } : {}),
    },
  });
  const impersonation = {
    ...(options.impersonateUser ? { user: options.impersonateUser } : {}),
    ...(options.impersonateGroups ? { groups: options.impersonateGroups } : {}),
  };
  const onResponse = requestLogger(options.verbosity, process.stderr, () => new Date());
  const client = createClusterClient(connectionFromKubeConfig(kubeConfig, impersonation), {
    userAgent: 'kubectl-ome',
    ...(options.requestTimeoutMs > 0 ? { requestTimeoutMs: options.requestTimeoutMs } : {}),
    ...(onResponse ? { onResponse } : {}),
  });
  closers.push(() => client.close());
  const contextName = kubeConfig.getCurrentContext();
  const contextNamespace = kubeConfig.getContextObject(contextName)?.namespace;
  const cluster = kubeConfig.getCurrentCluster();
  const caData = cluster?.caData ?? (cluster?.caFile ? readFileSync(cluster.caFile).toString('base64') : undefined);
  const kubeconfigPath = options.kubeconfig ?? (process.env.KUBECONFIG && !process.env.KUBECONFIG.includes(':') ? process.env.KUBECONFIG : undefined);
  return {
    client,
    admin: client,
    contextName,
    ...(contextNamespace ? { contextNamespace } : {}),
    ...(cluster ? { server: cluster.server } : {}),
    ...(caData ? { caData } : {}),
    ...(kubeconfigPath ? { kubeconfigPath } : {}),
  };
}

async function openRegistry(options: RegistryOptions): Promise<ClusterAdminRegistry> {
  const { createDynamoClient, DynamoClusterAdmin } = await import('../shared/adapters/dynamodb/index');
  const documents = createDynamoClient({ region: options.region, ...(options.endpoint ? { endpoint: options.endpoint } : {}) });
  closers.push(() => documents.destroy());
  return new DynamoClusterAdmin(documents, { tableName: options.tableName });
}

/** Reads a kubeconfig-file or kubeconfig record's cluster as the local plane connects to it. */
async function openRecordReader(record: ClusterRecord, requestTimeoutMs: number): Promise<Pick<ClusterClient, 'list'>> {
  const { connectLocalCluster, createClusterClient } = await import('../shared/adapters/kubernetes/index');
  const client = createClusterClient(connectLocalCluster(record, {}, { mode: 'local' }), { userAgent: 'kubectl-ome-dashboard', requestTimeoutMs });
  closers.push(() => client.close());
  return client;
}

const code = await runApp(process.argv.slice(2), {
  io: { stdout: process.stdout, stderr: process.stderr, stdin: terminalInput() },
  connect,
  now: () => new Date(),
  newRequestId: () => randomUUID(),
  sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
  openFleet: async () => (await import('./admin/fleet-access')).openFleetFromEnv(),
  buildInfo: readBuildInfo(),
  environment: process.env,
  openRegistry,
  readFile: (path) => readFile(path),
  openRecordReader,
});
for (const close of closers) close();
process.exitCode = code;
// A pending request abandoned at a deadline must not hold the process open.
setTimeout(() => process.exit(code), 50).unref();
