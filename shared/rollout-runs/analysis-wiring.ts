/**
 * What a cluster's rollout passes know about analysis: the metrics binding every plan
 * resolution uses (run open, plan status, run advance), and on the one path that samples
 * (rollout-run's hints and schedule) the executor. Every path that resolves a plan must
 * use the same binding, or RolloutPlanReady and `status.rollout.groups[]` would flap
 * between passes that bind a provider and passes that do not.
 */
import type { AnalysisExecutor } from '../ports/analysis';
import type { ClusterClient } from '../ports/cluster';
import { NO_METRICS, type MetricsBinding } from '../rollout/analysis';

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

/** Nothing can evaluate metrics: analysis steps park their plans at run open (ProviderUnbound). */
export const NO_ANALYSIS: ClusterAnalysis = { metrics: NO_METRICS };

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
