/**
 * The fence on engine Deployment writes, against the embedded API server and (in the real
 * project) a real kube-apiserver: the writer stamps
 * its lease token, leaves alone a Deployment stamped with a newer one, raises the fence
 * after a takeover even when nothing else changes, and checks its lease right before the
 * write. Writes are counted at the API server (resourceVersion moves only on a write).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestCluster, type TestCluster } from '../support/test-cluster';
import { createInferenceService, held, lost, renderEngine as render } from '../support/engine-deployments';
import { LeaseLostError, UnownedDeploymentError } from '../../shared/domain/errors';
import { Resources } from '../../shared/domain/model/resources';
import type { KubeObject } from '../../shared/ports/cluster';
import { createDirectWorkloadWriter, LEASE_FENCE_ANNOTATION, WorkloadSupersededError } from '../../shared/use-cases/direct-workload-writer';
import { fenceDeploymentWrites } from '../../shared/use-cases/rollout-runs/fenced-deployments';

const NS = 'fence';
let cluster: TestCluster;

beforeAll(async () => {
  cluster = await startTestCluster({ namespaces: [NS], embedded: { workloadReadyDelayMs: 5 } });
});

afterAll(async () => {
  await cluster?.stop();
});

const isvcNamed = (name: string): Promise<KubeObject> => createInferenceService(cluster.client, NS, name);

async function deployment(name: string): Promise<KubeObject> {
  return cluster.client.get(Resources.deployments, NS, `${name}-engine`);
}

describe('fenced engine Deployment writes', () => {
  it('stamps the token, and refuses a write under an older lease without touching the Deployment', async () => {
    const isvc = await isvcNamed('older');
    const writer = createDirectWorkloadWriter(cluster.client);
    await writer.apply({ clusterId: 'c', isvc, desired: render(isvc, 'img:v2'), renderedFrom: 'live', fence: held(8) });
    const stamped = await deployment('older');

    const stale = await writer.apply({ clusterId: 'c', isvc, desired: render(isvc, 'img:v1'), renderedFrom: 'live', fence: held(7) }).catch((e: unknown) => e);

    expect(stamped.metadata.annotations?.[LEASE_FENCE_ANNOTATION]).toBe('8');
    expect(stale).toBeInstanceOf(WorkloadSupersededError);
    expect(stale).toMatchObject({ name: 'WorkloadSupersededError', message: `Deployment ${NS}/older-engine was written under lease token 8; ours is 7` });
    expect((await deployment('older')).metadata.resourceVersion).toBe(stamped.metadata.resourceVersion);
  });

  it('raises the fence after a takeover even when the Deployment is as wanted, and writes nothing otherwise', async () => {
    const isvc = await isvcNamed('takeover');
    const writer = createDirectWorkloadWriter(cluster.client);
    await writer.apply({ clusterId: 'c', isvc, desired: render(isvc, 'img:v1'), renderedFrom: 'live', fence: held(3) });
    const before = await deployment('takeover');

    const plain = await writer.apply({ clusterId: 'c', isvc, desired: render(isvc, 'img:v1'), renderedFrom: 'live', fence: held(4) });
    const afterPlain = await deployment('takeover');
    const takenOver = await writer.apply({ clusterId: 'c', isvc, desired: render(isvc, 'img:v1'), renderedFrom: 'live', fence: held(5, true) });
    const afterTakeover = await deployment('takeover');

    expect([plain, takenOver]).toEqual(['unchanged', 'unchanged']);
    expect(afterPlain.metadata.resourceVersion).toBe(before.metadata.resourceVersion);
    expect(afterTakeover.metadata.annotations?.[LEASE_FENCE_ANNOTATION]).toBe('5');
    expect(afterTakeover.spec).toEqual(before.spec);
  });

  it('checks the lease right before writing: a lost lease writes nothing', async () => {
    const isvc = await isvcNamed('lost');
    const writer = createDirectWorkloadWriter(cluster.client);

    const error = await writer.apply({ clusterId: 'c', isvc, desired: render(isvc, 'img:v1'), renderedFrom: 'live', fence: lost(9) }).catch((e: unknown) => e);

    expect(error).toBeInstanceOf(LeaseLostError);
    await expect(deployment('lost')).rejects.toThrow();
  });

  it('fences the rollout run\'s scaling, promotion and canary removal the same way', async () => {
    const isvc = await isvcNamed('rollout');
    await createDirectWorkloadWriter(cluster.client).apply({ clusterId: 'c', isvc, desired: render(isvc, 'img:v1'), renderedFrom: 'live', fence: held(6) });
    const before = await deployment('rollout');
    const owner = { name: 'rollout', uid: isvc.metadata.uid };
    const stale = fenceDeploymentWrites(cluster.client, held(5), owner);
    const current = fenceDeploymentWrites(cluster.client, held(6), owner);

    const refused = await Promise.all([
      stale.patch(Resources.deployments, NS, 'rollout-engine', { spec: { replicas: 3 } }, { type: 'merge' }).catch((e: unknown) => e),
      stale.replace(Resources.deployments, { ...before, spec: { ...(before.spec as object), replicas: 3 } }).catch((e: unknown) => e),
      stale.delete(Resources.deployments, NS, 'rollout-engine').catch((e: unknown) => e),
    ]);
    const untouched = await deployment('rollout');
    await current.patch(Resources.deployments, NS, 'rollout-engine', { spec: { replicas: 3 } }, { type: 'merge' });
    const scaled = await deployment('rollout');

    expect(refused.every((e) => e instanceof WorkloadSupersededError)).toBe(true);
    expect(untouched.metadata.resourceVersion).toBe(before.metadata.resourceVersion);
    expect((scaled.spec as { replicas?: number }).replicas).toBe(3);
    expect(scaled.metadata.annotations?.[LEASE_FENCE_ANNOTATION]).toBe('6');
  });

  it('refuses the rollout run\'s writes to a Deployment of another InferenceService of the same name', async () => {
    const isvc = await isvcNamed('recreated');
    await createDirectWorkloadWriter(cluster.client).apply({ clusterId: 'c', isvc, desired: render(isvc, 'img:v1'), renderedFrom: 'live', fence: held(6) });
    const before = await deployment('recreated');
    // The InferenceService was deleted and made again under the same name: the Deployment still names the old uid.
    const writes = fenceDeploymentWrites(cluster.client, held(7), { name: 'recreated', uid: 'another-uid' });

    const refused = await Promise.all([
      writes.patch(Resources.deployments, NS, 'recreated-engine', { spec: { replicas: 3 } }, { type: 'merge' }).catch((e: unknown) => e),
      writes.replace(Resources.deployments, { ...before, spec: { ...(before.spec as object), replicas: 3 } }).catch((e: unknown) => e),
      writes.delete(Resources.deployments, NS, 'recreated-engine').catch((e: unknown) => e),
    ]);

    expect(refused.every((e) => e instanceof UnownedDeploymentError)).toBe(true);
    expect(await deployment('recreated')).toEqual(before);
  });
});
