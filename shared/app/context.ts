/**
 * What every function needs, built once per process (a Lambda container, or `npm start`)
 * and reused across invocations: configuration, the DynamoDB stores and a Kubernetes
 * client per registered cluster and function. Nothing here runs at import time: the first
 * call to `getAppContext` reads the environment.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { createDefaultAwsCredentialResolver } from '../adapters/aws-credentials';
import { createDynamoClient, createDynamoStores } from '../adapters/dynamodb';
// The adapter files, not the kubernetes index: that also exports the @kubernetes/client-node
// based kubeconfig loading, which the function bundles must not carry.
import { createClusterClient } from '../adapters/kubernetes/cluster-client';
import { TokenBucket } from '../adapters/kubernetes/rate-limit';
import type { RequestPriority } from '../adapters/kubernetes/rate-limit';
import type { ClusterConnection, ResolvedCredentials } from '../adapters/kubernetes/connection';
import { connectionFromRecord } from '../adapters/kubernetes/record-connection';
import type { ConnectionPolicy } from '../adapters/kubernetes/record-connection';
import type { ControlPlaneConfig } from './config';
import { loadConfig } from './config';
import { NotFoundError } from '../domain/errors';
import type { Clock } from '../ports/clock';
import { systemClock } from '../ports/clock';
import type { ClusterRecord, Stores } from '../ports/store';
import { clusterModeOf, type ClusterMode } from '../domain/cluster-mode';
import type { AppContext, ClusterHandle } from '../ports/app-context';
import { isSweeping } from '../use-cases/sweep-priority';

export type { AppContext, ClusterHandle } from '../ports/app-context';
export { runAsSweep } from '../use-cases/sweep-priority';

/** Turns a secret or EKS cluster record into a usable credential for one function; kubeconfig records need none. */
export interface CredentialResolver {
  resolve(record: ClusterRecord, functionName: string | undefined): Promise<ResolvedCredentials>;
  /** Drops a credential the API server refused (401) so the next resolve gets a new one. */
  forget(record: ClusterRecord, functionName: string | undefined, rejected: ResolvedCredentials): void;
}

/**
 * Builds the connection to a registered cluster from its record and resolved credential;
 * `policy` carries the process's mode and the calling function.
 */
export type ClusterConnector = (record: ClusterRecord, resolved: ResolvedCredentials, policy: ConnectionPolicy) => ClusterConnection;

/**
 * The function on whose behalf work runs, where one process hosts several (`npm start`):
 * it picks the function's own secret and kubeconfig context. A Lambda hosts one function,
 * named by its configuration.
 */
const functionIdentity = new AsyncLocalStorage<string>();

/** Runs `work` as function `functionName`: clusters it connects to use that function's credentials. */
export function runAsFunction<T>(functionName: string, work: () => T): T {
  return functionIdentity.run(functionName, work);
}

/** What the clients need to know of the invocation they serve (Lambda's Context fits). */
export interface InvocationClock {
  getRemainingTimeInMillis(): number;
}

/**
 * The invocation work runs for. Clients are shared across invocations, so they look its
 * remaining time up here when a wait for the rate limit or a Retry-After must fit in it.
 */
const invocation = new AsyncLocalStorage<InvocationClock>();

/** Runs `work` on behalf of the invocation `context`: cluster requests cap their waits by its remaining time. */
export function runWithinInvocation<T>(context: InvocationClock, work: () => T): T {
  if (typeof context?.getRemainingTimeInMillis !== 'function') return work();
  return invocation.run(context, work);
}

/** The priority of the work running now: a sweep's requests yield to user work's. */
export function currentPriority(): RequestPriority {
  return isSweeping() ? 'sweep' : 'user';
}

function invocationRemainingMs(): number | undefined {
  return invocation.getStore()?.getRemainingTimeInMillis();
}

export interface AppContextOptions {
  config: ControlPlaneConfig;
  stores: Stores;
  clock?: Clock;
  resolveCredentials?: CredentialResolver;
  /**
   * Default connectionFromRecord: static credentials only, no credential plugins. The local
   * control plane passes one that gives kubeconfig-file records (the operator's own
   * kubeconfig) client-node's full semantics, plugins included.
   */
  connectCluster?: ClusterConnector;
  /**
   * How long a cluster's client is reused at most. A client built on a credential that
   * reports `expiresAt` is dropped by then at the latest, so it never outlives its token.
   */
  clientTtlMs?: number;
  /**
   * How long a cluster's mode, once read, is reused (default 60 s): the admission webhook
   * asks for it on every review, and a mode changes only when an operator switches it.
   */
  modeTtlMs?: number;
}

// EKS tokens live 15 minutes; reuse a client well inside that (the resolver's expiry caps it too).
const DEFAULT_CLIENT_TTL_MS = 10 * 60_000;
const DEFAULT_MODE_TTL_MS = 60_000;

const noCredentials: CredentialResolver = {
  async resolve(record) {
    const { kind } = record.credentials;
    if (kind === 'kubeconfig' || kind === 'kubeconfig-file') return {};
    throw new NotFoundError(`cluster ${record.id}: no resolver for ${kind} credentials in this process; register a kubeconfig or deploy with the AWS resolver`);
  },
  forget() {},
};

/** Builds a context over the given stores (tests pass memory stores; functions the DynamoDB ones). */
export function createAppContext(options: AppContextOptions): AppContext {
  const clock = options.clock ?? systemClock;
  const ttl = options.clientTtlMs ?? DEFAULT_CLIENT_TTL_MS;
  const resolver = options.resolveCredentials ?? noCredentials;
  const connectCluster = options.connectCluster ?? connectionFromRecord;
  const mode = options.config.mode ?? 'local';
  const handles = new Map<string, { handle: Promise<ClusterHandle>; expiresAt: number }>();
  const modeTtl = options.modeTtlMs ?? DEFAULT_MODE_TTL_MS;
  const modes = new Map<string, { mode: Promise<ClusterMode>; expiresAt: number }>();
  // One bucket per cluster, shared by every function's client to it and outliving client renewals.
  const { kubeApiQps: qps, kubeApiBurst: burst } = options.config;
  const limiters = new Map<string, TokenBucket>();
  const limiterOf = (clusterId: string): TokenBucket | undefined => {
    if (qps === undefined) return undefined;
    let limiter = limiters.get(clusterId);
    if (!limiter) {
      limiter = new TokenBucket({ qps, burst: burst ?? Math.max(1, Math.ceil(qps * 1.5)) }, () => clock.now());
      limiters.set(clusterId, limiter);
    }
    return limiter;
  };

  async function connect(clusterId: string, functionName: string | undefined, dropHandle: () => void): Promise<{ handle: ClusterHandle; expiresAt: number | undefined }> {
    const record = await options.stores.clusters.getCluster(clusterId);
    if (!record) throw new NotFoundError(`cluster ${clusterId} is not registered`);
    // Before any credential is resolved: a record without a mode is unusable as it stands.
    const clusterMode = clusterModeOf(record);
    const resolved = await resolver.resolve(record, functionName);
    const policy: ConnectionPolicy = { mode, ...(functionName === undefined ? {} : { functionName }) };
    // A 401 means the credential was rotated, revoked or expired early: drop it and this
    // client so the next delivery reads the secret again or signs a new token.
    const onUnauthorized = (): void => {
      dropHandle();
      resolver.forget(record, functionName, resolved);
    };
    const rateLimiter = limiterOf(record.id);
    const client = createClusterClient(connectCluster(record, resolved, policy), {
      onUnauthorized,
      remainingTimeMs: invocationRemainingMs,
      priority: currentPriority,
      ...(rateLimiter ? { rateLimiter } : {}),
    });
    const handle = { id: record.id, client, omeNamespace: record.omeNamespace || options.config.omeNamespace, mode: clusterMode };
    return { handle, expiresAt: resolved.expiresAt };
  }

  return {
    config: options.config,
    clock,
    stores: options.stores,
    clusterMode(clusterId) {
      const cached = modes.get(clusterId);
      if (cached && cached.expiresAt > clock.now()) return cached.mode;
      const mode = options.stores.clusters.getCluster(clusterId).then((record) => {
        if (!record) throw new NotFoundError(`cluster ${clusterId} is not registered`);
        return clusterModeOf(record);
      });
      const entry = { mode, expiresAt: clock.now() + modeTtl };
      // A failed read (unregistered, no mode, the store unreachable) is not kept: the next review reads again.
      mode.catch(() => {
        if (modes.get(clusterId) === entry) modes.delete(clusterId);
      });
      modes.set(clusterId, entry);
      return mode;
    },
    cluster(clusterId) {
      const functionName = functionIdentity.getStore() ?? options.config.functionName;
      const key = `${functionName ?? ''}\0${clusterId}`;
      const cached = handles.get(key);
      if (cached && cached.expiresAt > clock.now()) return cached.handle;
      const dropHandle = (): void => {
        if (handles.get(key) === entry) handles.delete(key);
      };
      const entry = {
        expiresAt: clock.now() + ttl,
        handle: connect(clusterId, functionName, dropHandle).then(({ handle, expiresAt }) => {
          if (expiresAt !== undefined) entry.expiresAt = Math.min(entry.expiresAt, expiresAt);
          return handle;
        }),
      };
      // A failed connect is not cached: the next delivery tries again.
      entry.handle.catch(dropHandle);
      handles.set(key, entry);
      return entry.handle;
    },
  };
}

let processContext: AppContext | undefined;

/** The process-wide context, built from the environment on first use. */
export function getAppContext(env: Record<string, string | undefined> = process.env): AppContext {
  if (!processContext) {
    const config = loadConfig(env);
    const client = createDynamoClient({
      region: config.region,
      ...(config.dynamoDbEndpoint === undefined ? {} : { endpoint: config.dynamoDbEndpoint }),
    });
    // Secret and EKS records are resolved through AWS; deployed mode refuses kubeconfig records.
    const resolveCredentials = createDefaultAwsCredentialResolver({ region: config.region, secretPrefix: config.clusterSecretPrefix ?? '' });
    processContext = createAppContext({ config, stores: createDynamoStores(client, { tableName: config.tableName }), resolveCredentials });
  }
  return processContext;
}

/** Replaces the process-wide context (the local control plane and tests). */
export function setAppContext(context: AppContext | undefined): void {
  processContext = context;
}
