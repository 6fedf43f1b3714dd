/**
 * How an InferenceService's engine workload reaches the cluster. The pin use-case renders
 * the desired Deployment from the effective runtime and hands it to a writer: the direct
 * writer creates or replaces it; the rollout writer, for services with rollout groups,
 * opens a rollout run and brings the new revision up beside the stable one instead.
 */
import type { KubeObject } from './cluster';

export interface EngineWorkloadRequest {
  clusterId: string;
  /** The component the Deployment serves; `engine` when unset. Router and decoder roll as the engine does. */
  component?: 'engine' | 'decoder' | 'router';
  /** The InferenceService as just re-read (with its resourceVersion and status). */
  isvc: KubeObject;
  /** The Deployment rendered from the effective runtime spec, model and engine settings. */
  desired: KubeObject;
  /** The revision name the workload was rendered from, or `live` when following the runtime. */
  renderedFrom: string;
  /** The lease of the reconcile that rendered it; absent only outside a reconcile (tools, tests). */
  fence?: WorkloadFence;
}

/**
 * The lease the write happens under. The writer stamps its fencing token on the Deployment
 * and refuses to replace one stamped with a higher token, so a worker that lost its lease
 * (paused past it) cannot overwrite what the newer holder wrote; the replace also carries
 * the resourceVersion it read, so a stamp landing in between turns it into a 409.
 */
export interface WorkloadFence {
  fencingToken: number;
  /** The lease was taken from a holder that never released it: stamp the token even when nothing else changes. */
  takenOver: boolean;
  /** Throws LeaseLostError when the lease is gone; called right before each write. */
  assertHeld(): void;
}

export type EngineWorkloadOutcome = 'unchanged' | 'created' | 'updated' | 'run-opened' | 'run-in-progress';

export interface EngineWorkloadWriter {
  apply(request: EngineWorkloadRequest): Promise<EngineWorkloadOutcome>;
  /**
   * One pin pass's renders of the same InferenceService (engine, decoder, router), in
   * that order, with one outcome each. A writer that opens rollout runs opens one run for
   * every component the pass changed; without it, the components are applied one by one.
   */
  applyAll?(requests: readonly EngineWorkloadRequest[]): Promise<EngineWorkloadOutcome[]>;
}
