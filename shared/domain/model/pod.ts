/**
 * The slices of core/v1 pod and container types that OME's specs embed. Only the fields the
 * control plane reads are named; the rest pass through untouched.
 */

export interface EnvVar {
  name: string;
  value?: string;
  valueFrom?: unknown;
}

export interface ContainerPort {
  name?: string;
  containerPort: number;
  protocol?: string;
  [field: string]: unknown;
}

export interface VolumeMount {
  name: string;
  mountPath: string;
  readOnly?: boolean;
  subPath?: string;
  [field: string]: unknown;
}

export interface Container {
  name: string;
  image?: string;
  command?: string[];
  args?: string[];
  env?: EnvVar[];
  ports?: ContainerPort[];
  resources?: { limits?: Record<string, string>; requests?: Record<string, string>; [field: string]: unknown };
  volumeMounts?: VolumeMount[];
  [field: string]: unknown;
}

export interface Volume {
  name: string;
  [field: string]: unknown;
}

export interface Toleration {
  key?: string;
  operator?: string;
  value?: string;
  effect?: string;
  tolerationSeconds?: number;
}

export interface LocalObjectReference {
  name: string;
}

export interface SecretKeySelector {
  name?: string;
  key: string;
  optional?: boolean;
}

/** An int or a percentage string, as `intstr.IntOrString` marshals it: `3` or `"25%"`. */
export type IntOrString = number | string;

/** The inline `PodSpec` of OME's components: any core/v1 PodSpec field. */
export interface PodSpecFields {
  containers?: Container[];
  initContainers?: Container[];
  volumes?: Volume[];
  nodeSelector?: Record<string, string>;
  affinity?: unknown;
  tolerations?: Toleration[];
  imagePullSecrets?: LocalObjectReference[];
  serviceAccountName?: string;
  schedulerName?: string;
  hostIPC?: boolean;
  dnsPolicy?: string;
  hostNetwork?: boolean;
  [field: string]: unknown;
}

/** core/v1 Affinity; passed through as written. */
export type Affinity = Record<string, unknown>;
