/**
 * How an InferenceService's engine workload reaches the cluster. The pin use-case renders
 * the desired Deployment from the effective runtime and hands it to a writer: the direct
 * writer creates or replaces it; the rollout writer, for services with rollout groups,
 * opens a rollout run and brings the new revision up beside the stable one instead.
 */
import type { KubeObject } from './cluster';

export interface EngineWorkloadRequest {
  clusterId: string;
  /** The InferenceService as just re-read (with its resourceVersion and status). */
  isvc: KubeObject;
  /** The Deployment rendered from the effective runtime spec, model and engine settings. */
  desired: KubeObject;
  /** The revision name the workload was rendered from, or `live` when following the runtime. */
  renderedFrom: string;
}

export type EngineWorkloadOutcome = 'unchanged' | 'created' | 'updated' | 'run-opened' | 'run-in-progress';

export interface EngineWorkloadWriter {
  apply(request: EngineWorkloadRequest): Promise<EngineWorkloadOutcome>;
}
