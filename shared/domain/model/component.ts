import type { Container, IntOrString, PodSpecFields } from './pod';

/** The components of an InferenceService, as rollout groups and status name them. */
export type ComponentType = 'engine' | 'decoder' | 'router';

/** `ComponentExtensionSpec`: the deployment settings each component carries inline. */
export interface ComponentExtensionSpec {
  minReplicas?: number;
  maxReplicas?: number;
  scaleTarget?: number;
  scaleMetric?: string;
  containerConcurrency?: number;
  timeoutSeconds?: number;
  canaryTrafficPercent?: number;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  minAvailable?: IntOrString;
  maxUnavailable?: IntOrString;
  deploymentStrategy?: unknown;
  kedaConfig?: unknown;
}

/** The main container override of a component (`RunnerSpec`, a core/v1 Container inline). */
export type RunnerSpec = Partial<Container>;

export interface LeaderSpec extends PodSpecFields {
  runner?: RunnerSpec;
}

export interface WorkerSpec extends PodSpecFields {
  size?: number;
  runner?: RunnerSpec;
}

export interface EngineSpec extends PodSpecFields, ComponentExtensionSpec {
  runner?: RunnerSpec;
  leader?: LeaderSpec;
  worker?: WorkerSpec;
  acceleratorOverride?: unknown;
}

export type DecoderSpec = EngineSpec;

export interface RouterSpec extends PodSpecFields, ComponentExtensionSpec {
  runner?: RunnerSpec;
  config?: Record<string, string>;
}
