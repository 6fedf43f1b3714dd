/**
 * The kinds the plugin reads and patches. Kept in one place so the paths match the
 * control plane's own resource constants.
 */
import type { ResourceType } from '../shared/ports/cluster';

export const InferenceServices: ResourceType = {
  group: 'ome.io',
  version: 'v1beta1',
  plural: 'inferenceservices',
  kind: 'InferenceService',
  namespaced: true,
};

export const ControllerRevisions: ResourceType = {
  group: 'apps',
  version: 'v1',
  plural: 'controllerrevisions',
  kind: 'ControllerRevision',
  namespaced: true,
};

export const ServingRuntimes: ResourceType = {
  group: 'ome.io',
  version: 'v1beta1',
  plural: 'servingruntimes',
  kind: 'ServingRuntime',
  namespaced: true,
};

export const ClusterServingRuntimes: ResourceType = {
  group: 'ome.io',
  version: 'v1beta1',
  plural: 'clusterservingruntimes',
  kind: 'ClusterServingRuntime',
  namespaced: false,
};
