/**
 * What a cluster's rollout passes know about analysis: the metrics binding every plan
 * resolution uses (run open, plan status, run advance), and on the one path that samples
 * (rollout-run's hints and schedule) the executor. Every path that resolves a plan must
 * use the same binding, or RolloutPlanReady and `status.rollout.groups[]` would flap
 * between passes that bind a provider and passes that do not.
 */
import { clusterMetricsConfigReader, clusterSecretReader, createPrometheusExecutor, type FetchFn } from '../adapters/prometheus';
import { metricsBinding } from '../domain/analysis/metrics-config';
import { EMPTY_SOURCE_ALLOWLIST, type MetricsFence } from '../domain/analysis/network-fence';
import type { AnalysisExecutor } from '../ports/analysis';
import type { ClusterClient } from '../ports/cluster';
import type { MetricsBinding } from '../domain/rollout/analysis';
import type { AwsCredentialsProvider } from '../adapters/aws-credentials/eks-token';
import { functionAwsCredentials } from '../adapters/aws-credentials/clients';

/** A cluster as the wiring sees it: its client (with the calling function's identity) and OME's namespace. */
export interface AnalysisCluster {
  readonly id: string;
  readonly client: ClusterClient;
  readonly omeNamespace: string;
}

/** A cluster's analysis for one invocation. */
export interface ClusterAnalysis {
  readonly metrics: MetricsBinding;
  /** Only on the sampling path (rollout-run); other paths resolve plans with the binding alone. */
  readonly analysis?: AnalysisExecutor;
}

/** Builds one cluster's analysis; reads the cluster's metrics configuration at most once per invocation (see memoizeAnalysisWiring). */
export type AnalysisWiring = (cluster: AnalysisCluster) => Promise<ClusterAnalysis>;

/**
 * One build per cluster for as long as the returned wiring lives (a function invocation):
 * a batch of hints or a sweep over many InferenceServices reads the configuration once,
 * and an edit to it applies from the next invocation. A failed build is not kept.
 */
export function memoizeAnalysisWiring(wiring: AnalysisWiring): AnalysisWiring {
  const built = new Map<string, Promise<ClusterAnalysis>>();
  return (cluster) => {
    let entry = built.get(cluster.id);
    if (!entry) {
      entry = wiring(cluster);
      built.set(cluster.id, entry);
      entry.catch(() => built.delete(cluster.id));
    }
    return entry;
  };
}

/** The binding alone, for paths that resolve plans but never sample (repin-apply, run open). */
export async function bindingOnly(wiring: AnalysisWiring | undefined, cluster: AnalysisCluster): Promise<ClusterAnalysis | undefined> {
  if (!wiring) return undefined;
  const { metrics } = await wiring(cluster);
  return { metrics };
}

export interface PrometheusWiringOptions {
  /** The plane's PROMETHEUS_ADDRESS: the bundled source when the ConfigMap names none. */
  readonly fallbackAddress?: string;
  /** Build the executor too (rollout-run); otherwise the binding alone (run open, repin, plan status). */
  readonly sampling: boolean;
  /** The network fence of the executor; unset, the strictest (deployed mode, nothing allowed). */
  readonly fence?: MetricsFence;
  readonly fetch?: FetchFn;
  /** What AWS sources (CloudWatch, Managed Prometheus) are signed with; the function's role (the SDK's default chain) by default. */
  readonly awsCredentials?: AwsCredentialsProvider;
  /** The plane's region, for AWS sources whose binding names none. */
  readonly awsRegion?: string;
  readonly now?: () => Date;
}

/**
 * The wiring the functions use: the cluster's `inferenceservice-config` read once per
 * invocation through the function's own cluster client (a missing ConfigMap is an empty
 * one; any other read failure fails the pass, to be retried, rather than resolve plans
 * against a configuration that was not read), the binding derived from it, and on the
 * sampling path the Prometheus executor over that same configuration, reading token
 * Secrets through the same client at each sample.
 */
export function prometheusAnalysisWiring(options: PrometheusWiringOptions): AnalysisWiring {
  return memoizeAnalysisWiring(async (cluster) => {
    const config = await clusterMetricsConfigReader(cluster.client, cluster.omeNamespace, options.fallbackAddress)();
    // A canary's own serverAddress is always reachable to the Prometheus executor.
    const metrics: MetricsBinding = { ...metricsBinding(config), addresses: true };
    if (!options.sampling) return { metrics };
    const analysis = createPrometheusExecutor({
      fence: options.fence ?? STRICTEST_FENCE,
      readSecret: clusterSecretReader(cluster.client),
      readConfig: () => config,
      ...(options.fetch ? { fetch: options.fetch } : {}),
      awsCredentials: options.awsCredentials ?? functionAwsCredentials(),
      ...(options.awsRegion ? { awsRegion: options.awsRegion } : {}),
      ...(options.now ? { now: options.now } : {}),
    });
    return { metrics, analysis };
  });
}

const STRICTEST_FENCE: MetricsFence = { mode: 'deployed', allowlist: EMPTY_SOURCE_ALLOWLIST };

/**
 * One wiring per function invocation, keyed by its request id (Lambda's awsRequestId):
 * the hints of one SQS batch share a configuration read; the next invocation reads afresh,
 * so an edit to the ConfigMap applies from it. Several invocations in one process (the
 * local plane) each get their own.
 */
export function wiringPerInvocation(build: () => AnalysisWiring): (invocationId: string) => AnalysisWiring {
  const live = new Map<string, AnalysisWiring>();
  return (invocationId) => {
    let wiring = live.get(invocationId);
    if (!wiring) {
      // Only the latest few are kept: an invocation's hints arrive together.
      if (live.size >= MAX_LIVE_INVOCATIONS) live.delete(live.keys().next().value as string);
      wiring = build();
      live.set(invocationId, wiring);
    }
    return wiring;
  };
}

const MAX_LIVE_INVOCATIONS = 16;

/**
 * The binding alone, read through the writer's cluster client: what a run opens with (the
 * pin and drift-check functions' workload writer), so it parks or opens exactly as the
 * rollout-run function then resolves the same plan.
 */
export function metricsBindingReader(cluster: { id: string; omeNamespace: string }, fallbackAddress?: string): (client: ClusterClient) => Promise<MetricsBinding> {
  const wiring = prometheusAnalysisWiring({ sampling: false, ...(fallbackAddress ? { fallbackAddress } : {}) });
  return async (client) => (await wiring({ id: cluster.id, omeNamespace: cluster.omeNamespace, client })).metrics;
}
