import type { KubeObject } from './kube-object';
import type { RuntimeKindName } from '../vocabulary';
import type { ComponentType, DecoderSpec, EngineSpec, RouterSpec } from './component';
import type { Condition } from './condition';
import type { CanaryStatus, RolloutPhase, RolloutSpec, RolloutStatus } from './rollout';

export interface ModelRef {
  name: string;
  /** Default `ClusterBaseModel`. */
  kind?: string;
  /** Default `ome.io`. */
  apiGroup?: string;
  fineTunedWeights?: string[];
}

/** spec.runtime: which runtime serves the ISVC and whether it follows the live spec. */
export interface ServingRuntimeRef {
  name: string;
  /** Default `ClusterServingRuntime` (the CRD defaults it; code must default it too). */
  kind?: RuntimeKindName;
  /** Default `ome.io`. */
  apiGroup?: string;
  /** Default true: follow the live spec. false: serve from a pinned revision. */
  autoSync?: boolean;
  /** A revision name to pin; only honoured with `autoSync: false`. */
  revision?: string;
}

export interface InferenceServiceSpec {
  predictor?: unknown;
  engine?: EngineSpec;
  decoder?: DecoderSpec;
  model?: ModelRef;
  runtime?: ServingRuntimeRef;
  router?: RouterSpec;
  /** RawDeployment, OMENative, …; a component's `ome.io/deploymentMode` annotation wins. */
  deploymentMode?: string;
  rollout?: RolloutSpec;
  kedaConfig?: unknown;
  acceleratorSelector?: unknown;
  [field: string]: unknown;
}

export interface TrafficTarget {
  tag?: string;
  revisionName?: string;
  latestRevision?: boolean;
  percent?: number;
  [field: string]: unknown;
}

export interface ComponentStatus {
  latestReadyRevision?: string;
  latestCreatedRevision?: string;
  previousRolledoutRevision?: string;
  latestRolledoutRevision?: string;
  traffic?: TrafficTarget[];
  url?: string;
  rolloutPhase?: RolloutPhase;
  [field: string]: unknown;
}

export interface InferenceServiceStatus {
  observedGeneration?: number;
  conditions?: Condition[];
  url?: string;
  address?: unknown;
  components?: Partial<Record<ComponentType, ComponentStatus>>;
  modelStatus?: unknown;
  /** The ControllerRevision this ISVC serves from while pinned; kept when pinning stops. */
  pinnedRevisionName?: string;
  /** The last `ome.io/runtime-sync` value acted on (or recorded at the first pin). */
  lastRuntimeSyncToken?: string;
  rollout?: RolloutStatus;
  canary?: CanaryStatus;
  [field: string]: unknown;
}

export interface InferenceService extends KubeObject {
  kind: 'InferenceService';
  spec: InferenceServiceSpec;
  status?: InferenceServiceStatus;
}
