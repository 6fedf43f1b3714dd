import { existsSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { KubeConfig } from '@kubernetes/client-node';
import type { Cluster, Context, User } from '@kubernetes/client-node';
import { InvalidInputError } from '../../domain/errors';
import type { ClusterRecord } from '../../ports/store';
import type { ClusterConnection, ResolvedCredentials } from './connection';
import { assertRecordAllowed, connectionFromRecord, kubeconfigFileContextFor } from './record-connection';
import type { ConnectionPolicy } from './record-connection';

export type { ResolvedCredentials } from './connection';

export interface LoadKubeConfigOptions {
  /** `--kubeconfig FILE`: this file only, as kubectl does. */
  kubeconfigPath?: string;
  /** `--context NAME`: overrides the current context. */
  context?: string;
  /** The environment to read KUBECONFIG and HOME from; read once by the caller at start. */
  env?: Record<string, string | undefined>;
  /** kubectl's connection flags, applied over the selected context. */
  overrides?: ConnectionOverrides;
}

/** kubectl's connection flags (`--cluster`, `--user`, `--server`, `--token`, …). */
export interface ConnectionOverrides {
  cluster?: string;
  user?: string;
  server?: string;
  token?: string;
  certificateAuthority?: string;
  insecureSkipTlsVerify?: boolean;
}

/** The names a kubeconfig built from flags alone gets (no file, `--server` given). */
const FLAGS_ONLY = 'command-line';

/**
 * Loads a kubeconfig the way kubectl finds one: `--kubeconfig`, else the files listed in
 * KUBECONFIG merged (the first file to define a name or the current context wins; missing
 * files are skipped), else `~/.kube/config`, else the in-cluster service account; with none of
 * them, `--server` alone defines the cluster. Then `--context` picks the context and the other
 * connection flags apply over it. Throws InvalidInputError when nothing usable is found.
 */
export function loadKubeConfig(options: LoadKubeConfigOptions = {}): KubeConfig {
  const env = options.env ?? process.env;
  const kubeConfig = new KubeConfig();
  if (options.kubeconfigPath) {
    if (!existsSync(options.kubeconfigPath)) throw new InvalidInputError(`kubeconfig ${options.kubeconfigPath}: no such file`);
    kubeConfig.loadFromFile(options.kubeconfigPath);
  } else if (env.KUBECONFIG) {
    mergeFiles(kubeConfig, env.KUBECONFIG.split(delimiter).filter((file) => file && existsSync(file)));
  } else if (env.HOME && existsSync(join(env.HOME, '.kube', 'config'))) {
    kubeConfig.loadFromFile(join(env.HOME, '.kube', 'config'));
  } else if (env.KUBERNETES_SERVICE_HOST) {
    kubeConfig.loadFromCluster();
  }
  if (!kubeConfig.getCurrentContext() && options.overrides?.server && !options.context) {
    // As kubectl: --server (with --token or --certificate-authority) works without a kubeconfig.
    kubeConfig.loadFromOptions({
      clusters: [{ name: FLAGS_ONLY, server: options.overrides.server, skipTLSVerify: false }],
      users: [{ name: FLAGS_ONLY }],
      contexts: [{ name: FLAGS_ONLY, cluster: FLAGS_ONLY, user: FLAGS_ONLY }],
      currentContext: FLAGS_ONLY,
    });
  }
  selectContext(kubeConfig, options.context);
  if (options.overrides) applyOverrides(kubeConfig, options.overrides);
  return kubeConfig;
}

/**
 * Applies kubectl's connection flags over the current context: `--cluster` and `--user` pick
 * other kubeconfig entries, `--server`, `--certificate-authority` and
 * `--insecure-skip-tls-verify` change the cluster, `--token` authenticates with that bearer
 * token instead of the user's credentials.
 */
function applyOverrides(kubeConfig: KubeConfig, overrides: ConnectionOverrides): void {
  const contextName = kubeConfig.getCurrentContext();
  const context = kubeConfig.getContextObject(contextName) as Context;
  const clusterName = overrides.cluster ?? context.cluster;
  const baseCluster = kubeConfig.getCluster(clusterName);
  if (!baseCluster) throw new InvalidInputError(`cluster "${clusterName}" does not exist in the kubeconfig`);
  const userName = overrides.user ?? context.user;
  const baseUser = kubeConfig.getUser(userName);
  if (overrides.user && !baseUser) throw new InvalidInputError(`auth info "${userName}" does not exist`);
  let cluster: Cluster = { ...baseCluster, ...(overrides.server ? { server: overrides.server } : {}) };
  if (overrides.certificateAuthority) {
    if (!existsSync(overrides.certificateAuthority)) throw new InvalidInputError(`certificate authority ${overrides.certificateAuthority}: no such file`);
    const { caData: _caData, ...rest } = cluster;
    cluster = { ...rest, caFile: overrides.certificateAuthority };
  }
  if (overrides.insecureSkipTlsVerify) {
    const { caData: _caData, caFile: _caFile, ...rest } = cluster;
    cluster = { ...rest, skipTLSVerify: true };
  }
  const user: User = overrides.token ? { name: userName, token: overrides.token } : (baseUser ?? { name: userName });
  kubeConfig.loadFromOptions({
    clusters: [...kubeConfig.getClusters().filter((entry) => entry.name !== clusterName), cluster],
    users: [...kubeConfig.getUsers().filter((entry) => entry.name !== userName), user],
    contexts: [...kubeConfig.getContexts().filter((entry) => entry.name !== contextName), { ...context, cluster: clusterName, user: userName }],
    currentContext: contextName,
  });
}

function mergeFiles(target: KubeConfig, files: string[]): void {
  const clusters = new Map<string, Cluster>();
  const users = new Map<string, User>();
  const contexts = new Map<string, Context>();
  let currentContext = '';
  for (const file of files) {
    const part = new KubeConfig();
    part.loadFromFile(file);
    for (const cluster of part.getClusters()) if (!clusters.has(cluster.name)) clusters.set(cluster.name, cluster);
    for (const user of part.getUsers()) if (!users.has(user.name)) users.set(user.name, user);
    for (const context of part.getContexts()) if (!contexts.has(context.name)) contexts.set(context.name, context);
    currentContext ||= part.getCurrentContext();
  }
  target.loadFromOptions({
    clusters: [...clusters.values()],
    users: [...users.values()],
    contexts: [...contexts.values()],
    currentContext,
  });
}

function selectContext(kubeConfig: KubeConfig, context: string | undefined): void {
  if (context) {
    if (!kubeConfig.getContextObject(context)) throw new InvalidInputError(`context "${context}" does not exist`);
    kubeConfig.setCurrentContext(context);
  }
  const current = kubeConfig.getCurrentContext();
  if (!current || !kubeConfig.getContextObject(current)) {
    throw new InvalidInputError('no usable kubeconfig: set KUBECONFIG, pass --kubeconfig, or set a current context');
  }
  if (!kubeConfig.getCurrentCluster()) throw new InvalidInputError(`context "${current}" names a cluster that is not defined`);
}

/**
 * A connection with client-node's full kubeconfig semantics (exec and auth-provider plugins,
 * token files, proxies), for the CLI and the local control plane's `--kubeconfig` cluster.
 * Functions use connectionFromRecord, which keeps client-node out of their bundles.
 */
export function connectionFromKubeConfig(kubeConfig: KubeConfig, impersonation: Impersonation = {}): ClusterConnection {
  const cluster = kubeConfig.getCurrentCluster();
  if (!cluster) throw new InvalidInputError('kubeconfig has no current cluster: set current-context or pass a context');
  const plainHttp = cluster.server.startsWith('http:');
  return {
    server: cluster.server,
    providesAgent: Boolean(cluster.proxyUrl),
    async applyTo(options) {
      try {
        await kubeConfig.applyToHTTPSOptions(options);
      } catch (error) {
        // client-node refuses to build an agent for a plain-HTTP server unless TLS checks are
        // skipped; kubectl accepts one (a loopback server). The refusal comes after the
        // credentials were applied, and the transport brings its own agent.
        if (!(plainHttp && error instanceof Error && /HTTP protocol is not allowed/.test(error.message))) throw error;
      }
      if (impersonation.user) options.headers['Impersonate-User'] = impersonation.user;
      if (impersonation.groups?.length) options.headers['Impersonate-Group'] = impersonation.groups;
    },
  };
}

/** kubectl's `--as` and `--as-group`: the API server acts as this user, if the caller may impersonate. */
export interface Impersonation {
  user?: string;
  groups?: string[];
}

/**
 * The local control plane's connector. A kubeconfig-file record is the operator's own
 * kubeconfig on this machine, so client-node reads it with kubectl's semantics, exec and
 * auth-provider plugins included, using the context named after the calling function when
 * the file has one, else the record's, else the file's current one. Every other record
 * comes from the table, which anyone reaching it could have written: connectionFromRecord
 * builds those with static credentials only, never running a plugin.
 */
export function connectLocalCluster(record: ClusterRecord, resolved: ResolvedCredentials, policy: ConnectionPolicy): ClusterConnection {
  const { credentials } = record;
  if (credentials.kind !== 'kubeconfig-file') return connectionFromRecord(record, resolved, policy);
  assertRecordAllowed(record, policy);
  if (!existsSync(credentials.path)) throw new InvalidInputError(`cluster ${record.id}: kubeconfig file ${credentials.path} does not exist`);
  const kubeConfig = new KubeConfig();
  try {
    kubeConfig.loadFromFile(credentials.path);
  } catch (error) {
    // No message of the parser: it may quote the file, which holds credentials.
    throw new InvalidInputError(`cluster ${record.id}: kubeconfig file ${credentials.path} is not a valid kubeconfig`, { cause: error });
  }
  const names = kubeConfig.getContexts().map((context) => context.name);
  try {
    selectContext(kubeConfig, kubeconfigFileContextFor(names, credentials.context, policy.functionName));
  } catch (error) {
    throw new InvalidInputError(`cluster ${record.id}: kubeconfig file ${credentials.path}: ${(error as Error).message}`, { cause: error });
  }
  return connectionFromKubeConfig(kubeConfig);
}
