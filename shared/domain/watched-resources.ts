/**
 * The kinds the forwarder lists and watches in each cluster: what the functions act on,
 * and nothing else (every extra watch costs API-server memory and bus traffic).
 */
import type { ResourceType } from './model/kube-object';
import { Resources } from './model/resources';
import { WorkloadLabel } from './vocabulary';

export interface WatchedResource {
  /** Stable name of the stream, the checkpoint's sort key: `<plural>` or `<plural>@<namespace>`. */
  name: string;
  type: ResourceType;
  /** Only this namespace; all namespaces when absent. */
  namespace?: string;
  labelSelector?: string;
}

/**
 * Deployments we render carry the InferenceService label (see `renderEngineDeployment`);
 * others are not ours to follow. Their readiness drives rollout runs.
 */
export const RENDERED_WORKLOAD_SELECTOR = WorkloadLabel.inferenceService;

/** The watched streams of one cluster, revisions only in OME's namespace. */
export function listWatchedResources(omeNamespace: string): WatchedResource[] {
  return [
    { name: Resources.inferenceServices.plural, type: Resources.inferenceServices },
    { name: Resources.servingRuntimes.plural, type: Resources.servingRuntimes },
    { name: Resources.clusterServingRuntimes.plural, type: Resources.clusterServingRuntimes },
    { name: Resources.rolloutPolicies.plural, type: Resources.rolloutPolicies },
    {
      name: `${Resources.controllerRevisions.plural}@${omeNamespace}`,
      type: Resources.controllerRevisions,
      namespace: omeNamespace,
    },
    {
      name: Resources.deployments.plural,
      type: Resources.deployments,
      labelSelector: RENDERED_WORKLOAD_SELECTOR,
    },
  ];
}
