/**
 * The analysis of the one path that samples (rollout-run's hints and schedule): the
 * metrics binding every plan resolution uses (metrics-binding.ts) and the Prometheus
 * executor over the same configuration. The executor, its network fence and the AWS
 * signing of CloudWatch and Managed Prometheus sources are bundled only by the functions
 * that import this file.
 */
import { clusterSecretReader } from '../adapters/prometheus/cluster-reads';
import { createPrometheusExecutor } from '../adapters/prometheus/executor';
import type { FetchFn } from '../adapters/prometheus/client';
import { EMPTY_SOURCE_ALLOWLIST } from '../domain/analysis/source-allowlist';
import type { MetricsFence } from '../domain/analysis/network-fence';
import type { AwsCredentialsProvider } from '../adapters/aws-credentials/eks-token';
import { functionAwsCredentials } from '../adapters/aws-credentials/clients';
import { memoizeAnalysisWiring, metricsBindingWiring, readClusterBinding, type AnalysisWiring } from './metrics-binding';

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
 * invocation through the function's own cluster client (see readClusterBinding), the
 * binding derived from it, and on the sampling path the Prometheus executor over that
 * same configuration, reading token Secrets through the same client at each sample.
 */
export function prometheusAnalysisWiring(options: PrometheusWiringOptions): AnalysisWiring {
  if (!options.sampling) return metricsBindingWiring(options.fallbackAddress);
  return memoizeAnalysisWiring(async (cluster) => {
    const { config, metrics } = await readClusterBinding(cluster, options.fallbackAddress);
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
