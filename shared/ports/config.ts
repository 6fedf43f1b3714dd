/**
 * The configuration's shape: what the composition root (`shared/app/config.ts`, which reads
 * it once from the environment) hands to use-cases and adapters.
 */
import type { SourceAllowlist } from '../domain/analysis/source-allowlist';

/**
 * Where the process runs. `deployed` (every Lambda) connects only to clusters whose records
 * hold no credential of their own and only over verified HTTPS; `local` (`npm start`) also
 * accepts kubeconfig records and files on the operator's machine. See shared/adapters/kubernetes/record-connection.ts.
 */
export type ControlPlaneMode = 'deployed' | 'local';

/** The functions' service names (POWERTOOLS_SERVICE_NAME), each with its own cluster secrets. */
export const FUNCTION_NAMES = ['forward-watch-events', 'pin', 'drift-check', 'repin-apply', 'rollout-run', 'revision-gc', 'resync', 'admission-webhook'] as const;
export type FunctionName = (typeof FUNCTION_NAMES)[number];

export interface ControlPlaneConfig {
  /**
   * `loadConfig` always sets it: `deployed` in Lambda (or with CONTROL_PLANE_MODE=deployed),
   * else `local`. A configuration built by hand without it (tests) behaves as `local`.
   */
  mode?: ControlPlaneMode;
  /** This function's service name (POWERTOOLS_SERVICE_NAME): it picks the function's own cluster secret. */
  functionName?: FunctionName;
  /** The single DynamoDB table of leases, idempotency records, checkpoints and clusters. */
  tableName: string;
  /** Overrides the DynamoDB endpoint (DynamoDB Local); unset in AWS. */
  dynamoDbEndpoint?: string;
  eventBusName: string;
  /** Overrides the EventBridge endpoint (the local bus); unset in AWS. */
  eventBridgeEndpoint?: string;
  /** Overrides the SQS endpoint of the hint queues (the local bus); unset in AWS. */
  sqsEndpoint?: string;
  /** This function's own hint queue (HINT_QUEUE_URL, set by serverless.yml): where a hint that met a held lease is put back. */
  hintQueueUrl?: string;
  region: string;
  /** OME's namespace in every cluster, where revisions live; a cluster record may override it. */
  omeNamespace: string;
  /**
   * The Prometheus that canary analysis queries when a canary names no source and the
   * cluster's `inferenceservice-config` names no default (PROMETHEUS_ADDRESS): it plays
   * upstream's `bundledPrometheusAddress`. `npm start` sets it to its local Prometheus.
   */
  prometheusAddress?: string;
  /**
   * What canary analysis may query beyond the network fence (ANALYSIS_SOURCE_ALLOWLIST,
   * see shared/domain/analysis/network-fence.ts): origins a canary's own serverAddress may name
   * in deployed mode, and private, loopback or link-local ranges a source may resolve to.
   * `npm start` lists its local Prometheus. Unset: nothing beyond the fence.
   */
  analysisSourceAllowlist?: SourceAllowlist;
  /** Revisions kept per runtime besides the referenced ones. */
  revisionRetention: number;
  /** How long a revision stays marked before it is deleted. */
  revisionGracePeriodMs: number;
  /** Render each InferenceService's engine Deployment; off where OME itself renders. */
  renderWorkloads: boolean;
  /** How long a reconcile may hold an object's lease. */
  leaseTtlMs: number;
  /** Conflicting writes retried within one delivery before it is handed back for redelivery. */
  maxConflictRetries: number;
  /** How long one scheduled forwarder run works before it checkpoints (FORWARDER_MAX_RUNTIME); unset: the invocation's time. */
  forwarderMaxRuntimeMs?: number;
  /**
   * How many forwarder shards split the registered clusters (FORWARDER_SHARDS, default 1);
   * serverless.yml has one schedule rule per shard. `loadConfig` sets this and the three
   * below; a configuration built by hand (tests) without them gets the defaults, except
   * that without `kubeApiQps` clients have no client-side rate limit at all. See docs/decisions.md, section 15.
   */
  forwarderShards?: number;
  /**
   * How often a scheduled forwarder run tries a lease still held by the run before it
   * (FORWARDER_LEASE_POLL, default 1s): the hand-over waits at most this long.
   */
  forwarderLeasePollMs?: number;
  /** Client-side rate limit per cluster and process: requests per second (KUBE_API_QPS, default 20). */
  kubeApiQps?: number;
  /** Requests a cluster's limit lets through at once after a quiet spell (KUBE_API_BURST, default 30). */
  kubeApiBurst?: number;
  /**
   * The only Secrets Manager names cluster records may point at (CLUSTER_SECRET_PREFIX);
   * empty refuses every secret record.
   */
  clusterSecretPrefix?: string;
}
