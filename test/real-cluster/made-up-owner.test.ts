/**
 * What the admission policy cannot check, a real cluster does: a Deployment that names a
 * controlling InferenceService by a uid that does not exist is deleted by the
 * controller-manager's garbage collector, while one owned by a real InferenceService stays.
 * Written with pin's own token, so the policy admits both (infra/k8s/README.md).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRealCluster, type RealCluster } from '../../local/real-cluster';
import { connectionFromKubeconfigText, createClusterClient, type ClosableClusterClient } from '../../shared/adapters/kubernetes';
import { NotFoundError } from '../../shared/domain/errors';
import { Resources } from '../../shared/domain/model/resources';
import type { KubeObject } from '../../shared/ports/cluster';

const NS = 'default';

function ownedDeployment(name: string, owner: { name: string; uid: string }): KubeObject {
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: {
      name,
      namespace: NS,
      labels: { 'ome.io/inferenceservice': owner.name },
      ownerReferences: [{ apiVersion: 'ome.io/v1beta1', kind: 'InferenceService', name: owner.name, uid: owner.uid, controller: true }],
    },
    spec: { selector: { matchLabels: { app: name } }, template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'c', image: 'busybox' }] } } },
  } as KubeObject;
}

describe('a made-up owner uid on a real cluster', () => {
  let cluster: RealCluster;
  let pin: ClosableClusterClient;

  beforeAll(async () => {
    cluster = await startRealCluster({ nodes: 1 });
    const identities = cluster.identityKubeconfig;
    pin = createClusterClient(connectionFromKubeconfigText('real', identities, 'pin'));
  });

  afterAll(async () => {
    pin?.close();
    await cluster?.stop();
  });

  it('is garbage-collected, while a Deployment owned by a real InferenceService stays', async () => {
    const isvc = await cluster.client.create<KubeObject>(Resources.inferenceServices, {
      apiVersion: 'ome.io/v1beta1',
      kind: 'InferenceService',
      metadata: { name: 'llama', namespace: NS },
      spec: { model: { name: 'm' } },
    } as KubeObject);
    await pin.create(Resources.deployments, ownedDeployment('real-owner', { name: 'llama', uid: isvc.metadata.uid ?? '' }));
    await pin.create(Resources.deployments, ownedDeployment('made-up-owner', { name: 'llama', uid: '7d7c1f43-0000-4000-8000-000000000001' }));

    const deadline = Date.now() + 60_000;
    let gone = false;
    while (!gone && Date.now() < deadline) {
      gone = await cluster.client.get(Resources.deployments, NS, 'made-up-owner').then(
        () => false,
        (error: unknown) => {
          if (error instanceof NotFoundError) return true;
          throw error;
        },
      );
      if (!gone) await new Promise((resolveDelay) => setTimeout(resolveDelay, 500));
    }
    expect(gone).toBe(true);
    expect((await cluster.client.get<KubeObject>(Resources.deployments, NS, 'real-owner')).metadata.name).toBe('real-owner');
  });
});
