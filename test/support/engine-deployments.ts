/**
 * What the tests of the fenced Deployment writes share: an InferenceService on the API
 * server, its rendered engine Deployment, a lease to write under, and a client over the
 * same server whose first Deployment read is overtaken by another write.
 */
import { LeaseLostError } from '../../shared/domain/errors';
import { Resources } from '../../shared/domain/model/resources';
import { renderEngineDeployment } from '../../shared/domain/runtime';
import type { ClusterClient, KubeObject } from '../../shared/ports/cluster';
import type { WorkloadFence } from '../../shared/ports/workloads';

/** A lease still held, with this fencing token. */
export const held = (fencingToken: number, takenOver = false): WorkloadFence => ({ fencingToken, takenOver, assertHeld: () => undefined });

/** A lease that expired before the write. */
export const lost = (fencingToken: number): WorkloadFence => ({
  fencingToken,
  takenOver: false,
  assertHeld: () => {
    throw new LeaseLostError('lease expired');
  },
});

export function createInferenceService(client: ClusterClient, namespace: string, name: string): Promise<KubeObject> {
  return client.create(Resources.inferenceServices, {
    apiVersion: 'ome.io/v1beta1',
    kind: 'InferenceService',
    metadata: { name, namespace },
    spec: { model: { name: 'm' }, runtime: { name: 'rt' } },
  });
}

/** The engine Deployment the plane renders for `isvc`, running `image` (serving on port 8080). */
export function renderEngine(isvc: KubeObject, image: string): KubeObject {
  return renderEngineDeployment({
    isvc: { namespace: isvc.metadata.namespace ?? '', name: isvc.metadata.name, uid: isvc.metadata.uid, engine: { minReplicas: 1 } },
    runtimeName: 'rt',
    spec: { engineConfig: { runner: { name: 'ome-container', image, args: ['--port', '8080'] } } },
  });
}

/** `client`, except that its Deployment reads answer with `read`. */
export function withDeploymentReads(client: ClusterClient, read: (namespace: string | undefined, name: string) => Promise<KubeObject>): ClusterClient {
  return {
    get: (type, namespace, name) => (type.plural === Resources.deployments.plural ? read(namespace, name) : client.get(type, namespace, name)),
    list: (type, options) => client.list(type, options),
    create: (type, object, options) => client.create(type, object, options),
    replace: (type, object, options) => client.replace(type, object, options),
    replaceStatus: (type, object, options) => client.replaceStatus(type, object, options),
    patch: (type, namespace, name, patch, options) => client.patch(type, namespace, name, patch, options),
    delete: (type, namespace, name, options) => client.delete(type, namespace, name, options),
    watch: (type, options, onEvent) => client.watch(type, options, onEvent),
  } as ClusterClient;
}

/**
 * `client`, except that its first Deployment read runs `meanwhile` before answering, so
 * whoever decides on that read writes after someone else did.
 */
export function overtakenAfterRead(client: ClusterClient, meanwhile: () => Promise<unknown>): ClusterClient {
  let overtaken = false;
  return withDeploymentReads(client, async (namespace, name) => {
    const read = client.get<KubeObject>(Resources.deployments, namespace, name);
    if (overtaken) return read;
    overtaken = true;
    await read.catch(() => undefined);
    await meanwhile();
    return read;
  });
}
