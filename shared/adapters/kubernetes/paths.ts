import type { ResourceType } from '../../ports/cluster';
import { InvalidInputError } from '../../domain/errors';

function groupVersionPath(type: ResourceType): string {
  return type.group === '' ? `/api/${type.version}` : `/apis/${type.group}/${type.version}`;
}

/**
 * Why a name or namespace cannot be a path segment, as apimachinery's
 * `IsValidPathSegmentName` words it. `encodeURIComponent` leaves `.` and `..` as they
 * are, and every HTTP client resolves them: `…/inferenceservices/..` would address the
 * namespace, and a DELETE there would delete it.
 */
export function pathSegmentProblems(segment: string): string[] {
  if (segment === '.' || segment === '..') return [`may not be '${segment}'`];
  return ['/', '%'].filter((part) => segment.includes(part)).map((part) => `may not contain '${part}'`);
}

function checkSegment(type: ResourceType, what: 'name' | 'namespace', segment: string): void {
  const problems = pathSegmentProblems(segment);
  if (problems.length > 0) throw new InvalidInputError(`${type.kind} ${what} ${JSON.stringify(segment)}: ${problems.join(', ')}`);
}

/**
 * The collection path of a kind: across all namespaces when a namespaced kind is given no
 * namespace (list and watch), in one namespace otherwise. Cluster-scoped kinds ignore it.
 * @throws InvalidInputError for a namespace that cannot be a path segment
 */
export function collectionPath(type: ResourceType, namespace: string | undefined): string {
  const base = groupVersionPath(type);
  if (type.namespaced && namespace) {
    checkSegment(type, 'namespace', namespace);
    return `${base}/namespaces/${encodeURIComponent(namespace)}/${type.plural}`;
  }
  return `${base}/${type.plural}`;
}

/**
 * The path of one object (or its subresource). A namespaced kind needs its namespace.
 * @throws InvalidInputError for a missing name, or a name or namespace that cannot be a path segment
 */
export function objectPath(type: ResourceType, namespace: string | undefined, name: string, subresource?: string): string {
  if (!name) throw new InvalidInputError(`${type.kind}: a name is required`);
  if (type.namespaced && !namespace) throw new InvalidInputError(`${type.kind} ${name}: a namespace is required`);
  checkSegment(type, 'name', name);
  const path = `${collectionPath(type, namespace)}/${encodeURIComponent(name)}`;
  return subresource ? `${path}/${subresource}` : path;
}
