/**
 * The engine workloads a rollout run moves between: the stable Deployment the pin
 * use-case renders (`<isvc>-engine`) and, for a canary, `<isvc>-engine-canary` beside
 * it. A workload's revision is the short hash of its pod template, recorded on the
 * Deployment so that the API server's defaulting cannot make it look changed.
 */
import { createHash } from 'node:crypto';
import { NotFoundError } from '../../domain/errors';
import { Resources } from '../../domain/model/resources';
import { WorkloadLabel } from '../../domain/vocabulary';
import type { ClusterClient, KubeObject } from '../../ports/cluster';
import { resolveDeploymentMode, type ComponentModeFields, type ComponentName } from '../../domain/runtime/deployment-mode';

/** The pod-template hash of a rendered workload (what `target=` and the promote value name). */
export const WORKLOAD_REVISION_ANNOTATION = 'ome.io/workload-revision';
/** Added to the canary's selector and pods so its ReplicaSets never overlap the stable one's. */
export const ROLLOUT_ROLE_LABEL = 'ome.io/rollout-role';
export const CANARY_ROLE = 'canary';
/** The only value of `ome.io/deploymentMode` under which rollout groups apply. */
export const OME_NATIVE = 'OMENative';

export type Deployment = KubeObject & {
  spec?: {
    replicas?: number;
    selector?: { matchLabels?: Record<string, string> };
    template?: { metadata?: { labels?: Record<string, string>; annotations?: Record<string, string> }; spec?: unknown };
  };
  status?: { observedGeneration?: number; readyReplicas?: number };
};

/** The canary Deployment's name beside a stable one. */
export function canaryDeploymentName(stableName: string): string {
  return `${stableName}-canary`;
}

/** 8 hex of sha256 over the pod template as rendered. */
export function computeWorkloadRevision(deployment: Deployment): string {
  return createHash('sha256').update(JSON.stringify(deployment.spec?.template ?? {}), 'utf8').digest('hex').slice(0, 8);
}

/** The rendered Deployment with its revision recorded, ready to hand to a writer. */
export function withWorkloadRevision(desired: Deployment): Deployment {
  const copy = structuredClone(desired);
  copy.metadata.annotations = { ...copy.metadata.annotations, [WORKLOAD_REVISION_ANNOTATION]: computeWorkloadRevision(desired) };
  return copy;
}

/**
 * The revision a stored Deployment runs. Deployments written before the revision was
 * recorded are compared by content: a template that contains every rendered field is
 * the rendered revision (the API server only adds defaults).
 */
export function revisionOf(stored: Deployment, desired?: Deployment): string {
  const recorded = stored.metadata.annotations?.[WORKLOAD_REVISION_ANNOTATION];
  if (recorded) return recorded;
  if (desired && containsJson(stored.spec?.template, desired.spec?.template)) return computeWorkloadRevision(desired);
  return computeWorkloadRevision(stored);
}

/** Ready replicas of the Deployment's current generation; none while a new generation rolls. */
export function readyReplicasOf(deployment: Deployment | undefined): number {
  if (!deployment) return 0;
  const observed = deployment.status?.observedGeneration ?? 0;
  if (observed < (deployment.metadata.generation ?? 1)) return 0;
  return deployment.status?.readyReplicas ?? 0;
}

/**
 * A rendered Deployment labelled as in a rollout group (`WorkloadLabel.rolloutGrouped`)
 * when its component is, so its readiness reaches rollout-run; otherwise as rendered. The
 * label is metadata: the workload revision, a hash of the pod template, does not move.
 */
export function markRolloutGrouped(desired: Deployment, grouped: boolean): Deployment {
  if (!grouped) return desired;
  return { ...desired, metadata: { ...desired.metadata, labels: { ...desired.metadata.labels, [WorkloadLabel.rolloutGrouped]: 'true' } } };
}

/** The canary form of a rendered Deployment: own name, role label on selector and pods. */
export function renderCanaryDeployment(desired: Deployment, replicas: number): Deployment {
  const revisioned = withWorkloadRevision(desired);
  const spec = structuredClone(revisioned.spec ?? {});
  const role = { [ROLLOUT_ROLE_LABEL]: CANARY_ROLE };
  spec.replicas = replicas;
  spec.selector = { matchLabels: { ...spec.selector?.matchLabels, ...role } };
  spec.template = { ...spec.template, metadata: { ...spec.template?.metadata, labels: { ...spec.template?.metadata?.labels, ...role } } };
  return {
    apiVersion: revisioned.apiVersion,
    kind: revisioned.kind,
    metadata: {
      name: canaryDeploymentName(desired.metadata.name),
      ...(desired.metadata.namespace ? { namespace: desired.metadata.namespace } : {}),
      labels: { ...revisioned.metadata.labels, ...role },
      annotations: { ...revisioned.metadata.annotations },
      ...(desired.metadata.ownerReferences ? { ownerReferences: desired.metadata.ownerReferences } : {}),
    },
    spec,
  };
}

/**
 * The stable form of a canary that finished: the canary's pods under the stable
 * Deployment's name and selector, at full replicas.
 */
export function promoteCanaryTemplate(stable: Deployment, canary: Deployment, replicas: number): Deployment {
  const next = structuredClone(stable);
  const template = structuredClone(canary.spec?.template ?? {});
  const labels = { ...template.metadata?.labels };
  delete labels[ROLLOUT_ROLE_LABEL];
  template.metadata = { ...template.metadata, labels };
  next.metadata.annotations = { ...next.metadata.annotations, ...canary.metadata.annotations };
  next.spec = { ...next.spec, replicas, template };
  return next;
}

/**
 * Whether a component (the engine unless named) rolls out through runs: its mode,
 * resolved in upstream's order (resolveDeploymentMode), is OMENative, or nothing sets a
 * mode at all. Upstream's webhook refuses rollout groups on a component not declared
 * OMENative; the plane treats an undeclared one as OMENative instead, so a declared
 * RawDeployment (the component's annotation or `spec.deploymentMode`) is what opts out.
 */
export function usesOmeNative(isvc: KubeObject, component: ComponentName = 'engine'): boolean {
  const spec = (isvc.spec ?? {}) as { deploymentMode?: string } & Partial<Record<ComponentName, ComponentModeFields>>;
  const resolved = resolveDeploymentMode({
    component,
    serviceAnnotations: isvc.metadata.annotations,
    specMode: spec.deploymentMode,
    service: spec[component],
  });
  return resolved.mode === OME_NATIVE || resolved.source === 'Default';
}

export async function getOptional<T extends KubeObject>(
  client: ClusterClient,
  namespace: string,
  name: string,
  type: typeof Resources.deployments | typeof Resources.inferenceServices = Resources.deployments,
): Promise<T | undefined> {
  try {
    return await client.get<T>(type, namespace, name);
  } catch (error) {
    if (error instanceof NotFoundError) return undefined;
    throw error;
  }
}

export async function deleteIfPresent(client: ClusterClient, namespace: string, name: string): Promise<void> {
  try {
    await client.delete(Resources.deployments, namespace, name);
  } catch (error) {
    if (!(error instanceof NotFoundError)) throw error;
  }
}

/** Sets a Deployment's replicas with a merge patch, when they differ. */
export async function scaleDeployment(client: ClusterClient, deployment: Deployment | undefined, replicas: number): Promise<void> {
  if (!deployment || deployment.spec?.replicas === replicas) return;
  await client.patch(Resources.deployments, deployment.metadata.namespace, deployment.metadata.name, { spec: { replicas } }, { type: 'merge' });
}

/** True when every field of `wanted` is present with the same value in `actual`. */
export function containsJson(actual: unknown, wanted: unknown): boolean {
  if (wanted === undefined) return true;
  if (Array.isArray(wanted)) {
    return Array.isArray(actual) && actual.length === wanted.length && wanted.every((item, i) => containsJson(actual[i], item));
  }
  if (wanted !== null && typeof wanted === 'object') {
    if (actual === null || typeof actual !== 'object' || Array.isArray(actual)) return false;
    return Object.entries(wanted).every(([key, value]) => containsJson((actual as Record<string, unknown>)[key], value));
  }
  return actual === wanted;
}
