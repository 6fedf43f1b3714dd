/**
 * The parts of an InferenceService the plugin reads. Everything is optional: the plugin
 * reads objects as the API server returns them and treats malformed fields as evidence
 * it cannot use, never as a crash.
 */
import type { KubeObject } from '../shared/ports/cluster';
import type { CanaryState, RolloutGroup, RolloutStatus, StatusCondition } from '../shared/domain/rollout/types';

export interface RuntimeRef {
  name?: string;
  kind?: string;
  apiGroup?: string;
  autoSync?: boolean;
  revision?: string;
}

export interface InferenceServiceObject extends KubeObject {
  spec?: {
    runtime?: RuntimeRef;
    rollout?: { groups?: RolloutGroup[] };
    model?: { name?: string };
    deploymentMode?: string;
    engine?: Record<string, unknown>;
    decoder?: Record<string, unknown>;
    router?: Record<string, unknown>;
  };
  status?: {
    observedGeneration?: number;
    conditions?: StatusCondition[];
    pinnedRevisionName?: string;
    lastRuntimeSyncToken?: string;
    rollout?: RolloutStatus;
    canary?: CanaryState;
  };
}

/** The single condition of a type; `duplicate` when the status carries it more than once. */
export function findCondition(
  object: InferenceServiceObject,
  type: string,
): { condition?: StatusCondition; duplicate: boolean } {
  const matches = (object.status?.conditions ?? []).filter((condition) => condition?.type === type);
  return { condition: matches.length === 1 ? matches[0] : undefined, duplicate: matches.length > 1 };
}

export function annotationOf(object: KubeObject, key: string): string | undefined {
  const annotations = object.metadata.annotations;
  return annotations && Object.hasOwn(annotations, key) ? annotations[key] : undefined;
}

/** `-n` wins, then the kubeconfig context's namespace, then `default`. */
export function resolveNamespace(flag: string | undefined, contextNamespace: string | undefined): string {
  return flag || contextNamespace || 'default';
}
