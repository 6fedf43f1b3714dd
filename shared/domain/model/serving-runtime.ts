import type { KubeObject } from './kube-object';
import type { DecoderSpec, EngineSpec, RouterSpec } from './component';
import type { MetaCondition } from './condition';
import type { Affinity, Container, LocalObjectReference, Toleration, Volume } from './pod';

export interface ModelFormat {
  name: string;
  version?: string;
}

export interface ModelFrameworkSpec {
  name: string;
  version?: string;
}

export interface SupportedModelFormat {
  name?: string;
  modelFormat?: ModelFormat;
  modelType?: string;
  version?: string;
  modelFramework?: ModelFrameworkSpec;
  modelArchitecture?: string;
  quantization?: string;
  autoSelect?: boolean;
  priority?: number;
  operator?: 'Equal' | 'GreaterThan';
  [field: string]: unknown;
}

export interface ModelSizeRangeSpec {
  min?: string;
  max?: string;
}

export interface WorkerPodSpec {
  size?: number | null;
  containers?: Container[] | null;
  [field: string]: unknown;
}

export interface AcceleratorRequirements {
  acceleratorClasses?: string[];
  minMemory?: number;
  minComputePerformanceTFLOPS?: number;
  minArchitectureVersion?: string;
  requiredFeatures?: string[];
  preferredPrecisions?: string[];
}

/**
 * `ServingRuntimeSpec`, shared by ServingRuntime and ClusterServingRuntime. Fields are
 * listed in upstream's declaration order (the inline `ServingRuntimePodSpec` fields sit
 * between `protocolVersions` and `workers`), which is the key order of the Go JSON that
 * revisions hash. `containers` has no omitempty upstream: Go writes `null` when unset.
 */
export interface ServingRuntimeSpec {
  supportedModelFormats?: SupportedModelFormat[];
  modelSizeRange?: ModelSizeRangeSpec;
  disabled?: boolean;
  routerConfig?: RouterSpec;
  engineConfig?: EngineSpec;
  decoderConfig?: DecoderSpec;
  protocolVersions?: string[];
  containers?: Container[] | null;
  volumes?: Volume[];
  nodeSelector?: Record<string, string>;
  affinity?: Affinity;
  tolerations?: Toleration[];
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  imagePullSecrets?: LocalObjectReference[];
  schedulerName?: string;
  hostIPC?: boolean;
  dnsPolicy?: string;
  hostNetwork?: boolean;
  workers?: WorkerPodSpec;
  scalingPolicy?: unknown;
  acceleratorRequirements?: AcceleratorRequirements;
}

/** A runtime's place in an inheritance chain, as runtime status reports it (root first). */
export type RuntimeChainEntry = string | { kind?: string; name: string; namespace?: string };

export interface ServingRuntimeStatus {
  inheritanceChain?: RuntimeChainEntry[];
  /** `InheritanceReady`: Resolved, ParentNotFound, InheritanceCycle, MaxDepthExceeded, ResolverError. */
  conditions?: MetaCondition[];
  [field: string]: unknown;
}

export interface ServingRuntime extends KubeObject {
  kind: 'ServingRuntime';
  spec: ServingRuntimeSpec;
  status?: ServingRuntimeStatus;
}

export interface ClusterServingRuntime extends KubeObject {
  kind: 'ClusterServingRuntime';
  spec: ServingRuntimeSpec;
  status?: ServingRuntimeStatus;
}

/** Either kind of runtime; `kind` tells them apart. */
export type AnyServingRuntime = ServingRuntime | ClusterServingRuntime;
