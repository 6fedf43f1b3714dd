import { existsSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { KubeConfig } from '@kubernetes/client-node';
import type { Cluster, Context, User } from '@kubernetes/client-node';
import { InvalidInputError } from '../../errors';
import type { ClusterRecord } from '../../ports/store';

export interface LoadKubeConfigOptions {
  /** `--kubeconfig FILE`: this file only, as kubectl does. */
  kubeconfigPath?: string;
  /** `--context NAME`: overrides the current context. */
  context?: string;
  /** The environment to read KUBECONFIG and HOME from; read once by the caller at start. */
  env?: Record<string, string | undefined>;
}

/**
 * Loads a kubeconfig the way kubectl finds one: `--kubeconfig`, else the files listed in
 * KUBECONFIG merged (the first file to define a name or the current context wins; missing
 * files are skipped), else `~/.kube/config`, else the in-cluster service account. Then
 * `--context` picks the context. Throws InvalidInputError when nothing usable is found.
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
  selectContext(kubeConfig, options.context);
  return kubeConfig;
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

export interface ResolvedCredentials {
  /** A bearer token: an EKS token presigned with STS, or a ServiceAccount token from the secret. */
  token?: string;
  /** A whole kubeconfig, when the secret holds one. */
  kubeconfig?: string;
  /** With a token: the API server to use instead of the record's (EKS DescribeCluster, or the secret). */
  server?: string;
  /** With a token: the base64 PEM CA bundle to use instead of the record's. */
  caData?: string;
  /** Epoch milliseconds after which the credential must not be used; clients built on it are dropped before then. */
  expiresAt?: number;
}

/**
 * A KubeConfig for a registered cluster. A kubeconfig record is used as stored (with its
 * context, if any). Secret and EKS records carry no credential themselves: the caller
 * resolves it (reads the secret, presigns the EKS token and caches it under its lifetime)
 * and passes it in `resolved`; a resolved `server`/`caData` overrides the record's.
 */
export function kubeConfigFromRecord(record: ClusterRecord, resolved: ResolvedCredentials = {}): KubeConfig {
  const { credentials } = record;
  const kubeconfigText = credentials.kind === 'kubeconfig' ? credentials.kubeconfig : resolved.kubeconfig;
  if (kubeconfigText) {
    const kubeConfig = new KubeConfig();
    kubeConfig.loadFromString(kubeconfigText);
    selectContext(kubeConfig, credentials.kind === 'kubeconfig' ? credentials.context : undefined);
    return kubeConfig;
  }
  if (!resolved.token) {
    throw new InvalidInputError(`cluster ${record.id}: ${credentials.kind} credentials must be resolved to a token or a kubeconfig first`);
  }
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromOptions({
    clusters: [{ name: record.id, server: resolved.server ?? record.server, caData: resolved.caData ?? record.caData, skipTLSVerify: false }],
    users: [{ name: record.id, token: resolved.token }],
    contexts: [{ name: record.id, cluster: record.id, user: record.id }],
    currentContext: record.id,
  });
  return kubeConfig;
}
