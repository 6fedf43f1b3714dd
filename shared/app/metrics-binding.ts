/**
 * What a cluster's rollout passes know about analysis: the metrics binding every plan
 * resolution uses (run open, plan status, run advance). Every path that resolves a plan
 * must use the same binding, or RolloutPlanReady and `status.rollout.groups[]` would flap
 * between passes that bind a provider and passes that do not. Reading the binding needs
 * no metrics client: the one path that samples (rollout-run) adds the executor in
 * analysis-wiring.ts, and only the functions that sample bundle it.
 */
import { clusterMetricsConfigReader } from '../adapters/prometheus/cluster-reads';
import { metricsBinding, type MetricsConfig } from '../domain/analysis/metrics-config';
import type { AnalysisExecutor } from '../ports/analysis';
import type { ClusterClient } from '../ports/cluster';
import type { MetricsBinding } from '../domain/rollout/analysis';

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

/**
 * Reads the cluster's `inferenceservice-config` through the function's own cluster client
 * (a missing ConfigMap is an empty one; any other read failure fails the pass, to be
 * retried, rather than resolve plans against a configuration that was not read) and
 * derives the binding from it. `fallbackAddress` is the plane's PROMETHEUS_ADDRESS: the
 * bundled source when the ConfigMap names none.
 */
export async function readClusterBinding(cluster: AnalysisCluster, fallbackAddress: string | undefined): Promise<{ config: MetricsConfig; metrics: MetricsBinding }> {
  const config = await clusterMetricsConfigReader(cluster.client, cluster.omeNamespace, fallbackAddress)();
  // A canary's own serverAddress is always reachable to the Prometheus executor.
  return { config, metrics: { ...metricsBinding(config), addresses: true } };
}

/** The wiring of the paths that resolve plans but never sample (repin-apply, plan status, run open): the binding alone, read once per invocation. */
export function metricsBindingWiring(fallbackAddress?: string): AnalysisWiring {
  return memoizeAnalysisWiring(async (cluster) => ({ metrics: (await readClusterBinding(cluster, fallbackAddress)).metrics }));
}

/**
 * The binding alone, read through the writer's cluster client: what a run opens with (the
 * pin and drift-check functions' workload writer), so it parks or opens exactly as the
 * rollout-run function then resolves the same plan.
 */
export function metricsBindingReader(cluster: { id: string; omeNamespace: string }, fallbackAddress?: string): (client: ClusterClient) => Promise<MetricsBinding> {
  const wiring = metricsBindingWiring(fallbackAddress);
  return async (client) => (await wiring({ id: cluster.id, omeNamespace: cluster.omeNamespace, client })).metrics;
}
