/**
 * Entry point of `kubectl ome`: wires the real streams, clock and cluster client into the
 * command table. The Kubernetes client is loaded only for commands that reach the cluster.
 */
import { randomUUID } from 'node:crypto';
import { createInterface } from 'node:readline';

import { runApp, type Connection, type ConnectOptions } from './app';
import { readBuildInfo } from './build-info';
import type { PromptInput } from './env';
import { requestLogger } from './request-log';

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
  return { client, contextName, ...(contextNamespace ? { contextNamespace } : {}) };
}

const code = await runApp(process.argv.slice(2), {
  io: { stdout: process.stdout, stderr: process.stderr, stdin: terminalInput() },
  connect,
  now: () => new Date(),
  newRequestId: () => randomUUID(),
  sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
  buildInfo: readBuildInfo(),
  environment: process.env,
});
for (const close of closers) close();
process.exitCode = code;
// A pending request abandoned at a deadline must not hold the process open.
setTimeout(() => process.exit(code), 50).unref();
