/**
 * What the analysis executor reads from the cluster: the `inferenceservice-config`
 * ConfigMap in the OME namespace (analysis settings and provider bindings) and the
 * bearer-token Secrets that authRef and authSecretRef name. Both are read at every
 * sample, so an edited binding or a rotated token applies from the next one.
 */
import { INFERENCESERVICE_CONFIG, parseMetricsConfig, type MetricsConfig } from '../../domain/analysis/metrics-config';
import { NotFoundError } from '../../domain/errors';
import type { ClusterClient, KubeObject, ResourceType } from '../../ports/cluster';

export const ConfigMaps: ResourceType = { group: '', version: 'v1', plural: 'configmaps', kind: 'ConfigMap', namespaced: true };
export const Secrets: ResourceType = { group: '', version: 'v1', plural: 'secrets', kind: 'Secret', namespaced: true };

interface DataObject extends KubeObject {
  data?: Record<string, string>;
}

/**
 * Reads the cluster's analysis configuration. A missing ConfigMap is an empty one (only
 * `fallbackAddress`, the plane's PROMETHEUS_ADDRESS, then names a source); any other
 * read failure is thrown, and the executor reports it in the sample.
 */
export function clusterMetricsConfigReader(client: ClusterClient, omeNamespace: string, fallbackAddress?: string): () => Promise<MetricsConfig> {
  return async () => {
    let data: Record<string, string> | undefined;
    try {
      data = (await client.get<DataObject>(ConfigMaps, omeNamespace, INFERENCESERVICE_CONFIG)).data;
    } catch (error) {
      if (!(error instanceof NotFoundError)) throw error;
    }
    return parseMetricsConfig(data, fallbackAddress);
  };
}

/**
 * Reads one key of a Secret, base64-decoded: undefined when the key is absent;
 * NotFoundError when the Secret is. The value is never logged.
 */
export function clusterSecretReader(client: ClusterClient): (namespace: string, name: string, key: string) => Promise<string | undefined> {
  return async (namespace, name, key) => {
    if (!name) throw new NotFoundError(`secret ${namespace}/ not found`);
    const secret = await client.get<DataObject>(Secrets, namespace, name);
    const encoded = secret.data?.[key];
    return encoded === undefined ? undefined : Buffer.from(encoded, 'base64').toString('utf8');
  };
}
