import type { ResourceType } from '../../ports/cluster';
import { InvalidInputError } from '../../errors';

function groupVersionPath(type: ResourceType): string {
  return type.group === '' ? `/api/${type.version}` : `/apis/${type.group}/${type.version}`;
}

/**
 * The collection path of a kind: across all namespaces when a namespaced kind is given no
 * namespace (list and watch), in one namespace otherwise. Cluster-scoped kinds ignore it.
 */
export function collectionPath(type: ResourceType, namespace: string | undefined): string {
  const base = groupVersionPath(type);
  if (type.namespaced && namespace) return `${base}/namespaces/${encodeURIComponent(namespace)}/${type.plural}`;
  return `${base}/${type.plural}`;
}

/** The path of one object (or its subresource). A namespaced kind needs its namespace. */
export function objectPath(type: ResourceType, namespace: string | undefined, name: string, subresource?: string): string {
  if (!name) throw new InvalidInputError(`${type.kind}: a name is required`);
  if (type.namespaced && !namespace) throw new InvalidInputError(`${type.kind} ${name}: a namespace is required`);
  const path = `${collectionPath(type, namespace)}/${encodeURIComponent(name)}`;
  return subresource ? `${path}/${subresource}` : path;
}
