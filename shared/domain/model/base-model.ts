import type { KubeObject } from './kube-object';
import type { ModelFormat, ModelFrameworkSpec } from './serving-runtime';

export interface BaseModelSpec {
  disabled?: boolean;
  vendor?: string;
  version?: string;
  modelFormat?: ModelFormat;
  modelFramework?: ModelFrameworkSpec;
  modelArchitecture?: string;
  modelParameterSize?: string;
  storage?: unknown;
  [field: string]: unknown;
}

export interface ClusterBaseModel extends KubeObject {
  kind: 'ClusterBaseModel';
  spec: BaseModelSpec;
  /** `state` is `Ready` once the model agent has the weights. */
  status?: { state?: string; [field: string]: unknown };
}
