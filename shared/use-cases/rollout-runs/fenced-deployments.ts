/**
 * The rollout run's Deployment writes (scaling, promoting the canary's template, removing
 * the canary) fenced as the engine writers' are: each write first reads the Deployment,
 * refuses one stamped under a newer lease, stamps this lease's token, and carries the
 * resourceVersion it read, so a worker that lost the object's lease cannot undo what the
 * newer holder did. The same read refuses a Deployment the plane does not own
 * (UnownedDeploymentError), which stays as it is.
 */
import { NotFoundError } from '../../domain/errors';
import { Resources } from '../../domain/model/resources';
import { assertOwnedDeployment, checkFence, LEASE_FENCE_ANNOTATION, withFence } from '../direct-workload-writer';
import type { ClusterClient, KubeObject, ResourceType } from '../../ports/cluster';
import type { WorkloadFence } from '../../ports/workloads';
import type { WorkloadOwner } from '../../domain/runtime/workload';

function isDeployments(type: ResourceType): boolean {
  return type.group === Resources.deployments.group && type.plural === Resources.deployments.plural;
}

/**
 * `client` with every Deployment write fenced by `fence` (none: ownership only) and
 * limited to Deployments `owner` owns; other writes pass through.
 */
export function fenceDeploymentWrites(client: ClusterClient, fence: WorkloadFence | undefined, owner: WorkloadOwner): ClusterClient {
  const read = async (namespace: string | undefined, name: string): Promise<KubeObject | undefined> => {
    let current: KubeObject;
    try {
      current = await client.get(Resources.deployments, namespace, name);
    } catch (error) {
      if (error instanceof NotFoundError) return undefined;
      throw error;
    }
    assertOwnedDeployment(current, owner);
    return current;
  };
  return {
    get: (type, namespace, name) => client.get(type, namespace, name),
    list: (type, options) => client.list(type, options),
    watch: (type, options, onEvent) => client.watch(type, options, onEvent),
    replaceStatus: (type, object, options) => client.replaceStatus(type, object, options),
    async create(type, object, options) {
      if (!isDeployments(type)) return client.create(type, object, options);
      checkFence(undefined, fence);
      return client.create(type, withFence(object, fence), options);
    },
    async replace(type, object, options) {
      if (!isDeployments(type)) return client.replace(type, object, options);
      const current = await read(object.metadata.namespace, object.metadata.name);
      checkFence(current, fence);
      // The caller's own resourceVersion when it has one (it decided on that read), else ours.
      const resourceVersion = object.metadata.resourceVersion ?? current?.metadata.resourceVersion;
      return client.replace(type, withFence({ ...object, metadata: { ...object.metadata, ...(resourceVersion ? { resourceVersion } : {}) } }, fence), options);
    },
    async patch(type, namespace, name, patch, options) {
      if (!isDeployments(type) || options.type !== 'merge' || options.subresource !== undefined) return client.patch(type, namespace, name, patch, options);
      const current = await read(namespace, name);
      checkFence(current, fence);
      const body = (patch ?? {}) as { metadata?: Record<string, unknown> & { annotations?: Record<string, string> } };
      const fenced = {
        ...body,
        metadata: {
          ...(body.metadata ?? {}),
          ...(current?.metadata.resourceVersion ? { resourceVersion: current.metadata.resourceVersion } : {}),
          ...(fence ? { annotations: { ...(body.metadata?.annotations ?? {}), [LEASE_FENCE_ANNOTATION]: String(fence.fencingToken) } } : {}),
        },
      };
      return client.patch(type, namespace, name, fenced, options);
    },
    async delete(type, namespace, name, options) {
      if (!isDeployments(type)) return client.delete(type, namespace, name, options);
      const current = await read(namespace, name);
      if (current === undefined) throw new NotFoundError(`deployments "${name}" not found`);
      checkFence(current, fence);
      const resourceVersion = current.metadata.resourceVersion;
      return client.delete(type, namespace, name, { ...options, preconditions: { ...(options?.preconditions ?? {}), ...(resourceVersion ? { resourceVersion } : {}) } });
    },
  };
}
