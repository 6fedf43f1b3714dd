/**
 * Where analysis samples come from. rollout-run plugs in the Prometheus executor
 * (shared/adapters/prometheus), which queries a step's metrics and answers with a verdict;
 * the other functions resolve plans with the cluster's binding but never sample. Where no
 * metrics source exists, plans with analysis steps park at run open (RolloutPlanReady
 * False/ProviderUnbound).
 */
import type { AnalysisVerdict } from '../domain/rollout/analysis';
import type { AnalysisPrometheus, RolloutAnalysis } from '../domain/rollout/types';

export interface AnalysisSampleRequest {
  readonly namespace: string;
  readonly isvcName: string;
  readonly component: string;
  readonly canaryRevision: string;
  readonly stableRevision?: string;
  readonly step: number;
  readonly analysis: RolloutAnalysis;
  /** Only a sample produced after this time counts (the last one consumed). */
  readonly since?: string;
  /** The canary's metrics source (`canary.prometheus`); unset queries the cluster's default source. */
  readonly prometheus?: AnalysisPrometheus;
  /** `{{.CanaryService}}`; defaults to `<isvc>-<component>-rev-<canaryRevision>`. */
  readonly canaryService?: string;
  /** `{{.StableService}}`; defaults to `<isvc>-<component>-rev-<stableRevision>`. */
  readonly stableService?: string;
}

export interface AnalysisExecutor {
  /** A sample newer than `since`, or undefined while none is ready (the step holds). */
  sample(request: AnalysisSampleRequest): Promise<AnalysisVerdict | undefined>;
}
