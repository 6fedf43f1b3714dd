import type { ResourceType } from './kube-object';
import { OME_GROUP, OME_VERSION } from '../vocabulary';

/** Where each kind the control plane uses is served; the adapter builds REST paths from these. */
export const Resources = {
  inferenceServices: { group: OME_GROUP, version: OME_VERSION, plural: 'inferenceservices', kind: 'InferenceService', namespaced: true },
  servingRuntimes: { group: OME_GROUP, version: OME_VERSION, plural: 'servingruntimes', kind: 'ServingRuntime', namespaced: true },
  clusterServingRuntimes: { group: OME_GROUP, version: OME_VERSION, plural: 'clusterservingruntimes', kind: 'ClusterServingRuntime', namespaced: false },
  clusterBaseModels: { group: OME_GROUP, version: OME_VERSION, plural: 'clusterbasemodels', kind: 'ClusterBaseModel', namespaced: false },
  rolloutPolicies: { group: OME_GROUP, version: OME_VERSION, plural: 'rolloutpolicies', kind: 'RolloutPolicy', namespaced: true },
  controllerRevisions: { group: 'apps', version: 'v1', plural: 'controllerrevisions', kind: 'ControllerRevision', namespaced: true },
  deployments: { group: 'apps', version: 'v1', plural: 'deployments', kind: 'Deployment', namespaced: true },
  events: { group: '', version: 'v1', plural: 'events', kind: 'Event', namespaced: true },
  namespaces: { group: '', version: 'v1', plural: 'namespaces', kind: 'Namespace', namespaced: false },
  validatingWebhookConfigurations: {
    group: 'admissionregistration.k8s.io',
    version: 'v1',
    plural: 'validatingwebhookconfigurations',
    kind: 'ValidatingWebhookConfiguration',
    namespaced: false,
  },
  customResourceDefinitions: {
    group: 'apiextensions.k8s.io',
    version: 'v1',
    plural: 'customresourcedefinitions',
    kind: 'CustomResourceDefinition',
    namespaced: false,
  },
} as const satisfies Record<string, ResourceType>;

export type ResourceName = keyof typeof Resources;

/** `apiVersion` as objects of the type carry it: `v1` for the core group, `group/version` otherwise. */
export function apiVersionOf(type: ResourceType): string {
  return type.group === '' ? type.version : `${type.group}/${type.version}`;
}

/** The runtime resource for a `spec.runtime.kind` (ClusterServingRuntime when unset). */
export function runtimeResourceFor(kind: string | undefined): ResourceType {
  return kind === 'ServingRuntime' ? Resources.servingRuntimes : Resources.clusterServingRuntimes;
}
