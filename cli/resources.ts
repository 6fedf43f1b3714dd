/** The kinds the plugin reads and patches, from the control plane's resource table. */
import { Resources } from '../shared/domain/model/resources';

export const InferenceServices = Resources.inferenceServices;
export const ControllerRevisions = Resources.controllerRevisions;
export const ServingRuntimes = Resources.servingRuntimes;
export const ClusterServingRuntimes = Resources.clusterServingRuntimes;
