/**
 * Where analysis samples come from. Metric evaluation is not part of the plane yet: an
 * executor plugged in here queries a step's metrics and answers with a verdict. Without
 * one, plans with analysis steps park at run open (RolloutPlanReady False/ProviderUnbound).
 */
import type { AnalysisVerdict } from '../rollout/analysis';
import type { AnalysisPrometheus, RolloutAnalysis } from '../rollout/types';

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
