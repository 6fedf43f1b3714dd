/**
 * The fence on engine Deployment writes, against the embedded API server and (in the real
 * project) a real kube-apiserver: the writer stamps
 * its lease token, leaves alone a Deployment stamped with a newer one, raises the fence
 * after a takeover even when nothing else changes, and checks its lease right before the
 * write. A write of ours shows in what only our writers set: the spec (its generation), the
 * labels and the annotations. The resourceVersion is no measure on a real kube-apiserver,
 * whose deployment controller writes the status at times of its own; for the same reason a
 * write there may meet a conflict, which the writers' callers retry (reconcileUnderLease),
 * and so do these tests.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestCluster, type TestCluster } from '../support/test-cluster';
import { ConflictError } from '../../shared/domain/errors';
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

/**
 * What our writers set on a Deployment, and nothing the API server's controllers write
 * (the status, and the deployment controller's `deployment.kubernetes.io/` annotations).
 */
function oursOf(object: KubeObject): unknown {
  const { generation, labels, annotations = {} } = object.metadata;
  const ours = Object.fromEntries(Object.entries(annotations).filter(([key]) => !key.startsWith('deployment.kubernetes.io/')));
  return { generation, labels, annotations: ours, spec: object.spec };
}

/** Retries a write that met the deployment controller's status write, as reconcileUnderLease does. */
async function retryingConflicts<T>(write: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt += 1) {
    try {
      return await write();
    } catch (error) {
      if (!(error instanceof ConflictError) || attempt >= 5) throw error;
    }
  }
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
    expect(oursOf(await deployment('older'))).toEqual(oursOf(stamped));
  });

  it('raises the fence after a takeover even when the Deployment is as wanted, and writes nothing otherwise', async () => {
    const isvc = await isvcNamed('takeover');
    const writer = createDirectWorkloadWriter(cluster.client);
    await retryingConflicts(() => writer.apply({ clusterId: 'c', isvc, desired: render(isvc, 'img:v1'), renderedFrom: 'live', fence: held(3) }));
    const before = await deployment('takeover');

    const plain = await retryingConflicts(() => writer.apply({ clusterId: 'c', isvc, desired: render(isvc, 'img:v1'), renderedFrom: 'live', fence: held(4) }));
    const afterPlain = await deployment('takeover');
    const takenOver = await retryingConflicts(() => writer.apply({ clusterId: 'c', isvc, desired: render(isvc, 'img:v1'), renderedFrom: 'live', fence: held(5, true) }));
    const afterTakeover = await deployment('takeover');

    expect([plain, takenOver]).toEqual(['unchanged', 'unchanged']);
    expect(oursOf(afterPlain)).toEqual(oursOf(before));
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
    await retryingConflicts(() => current.patch(Resources.deployments, NS, 'rollout-engine', { spec: { replicas: 3 } }, { type: 'merge' }));
    const scaled = await deployment('rollout');

    expect(refused.every((e) => e instanceof WorkloadSupersededError)).toBe(true);
    expect(oursOf(untouched)).toEqual(oursOf(before));
    expect((scaled.spec as { replicas?: number }).replicas).toBe(3);
    expect(scaled.metadata.annotations?.[LEASE_FENCE_ANNOTATION]).toBe('6');
  });

  it('refuses the rollout run\'s writes to a Deployment of another InferenceService of the same name', async () => {
    const isvc = await isvcNamed('recreated');
    await retryingConflicts(() => createDirectWorkloadWriter(cluster.client).apply({ clusterId: 'c', isvc, desired: render(isvc, 'img:v1'), renderedFrom: 'live', fence: held(6) }));
    const before = await deployment('recreated');
    // The InferenceService was deleted and made again under the same name: the Deployment still names the old uid.
    const writes = fenceDeploymentWrites(cluster.client, held(7), { name: 'recreated', uid: 'another-uid' });

    const refused = await Promise.all([
      writes.patch(Resources.deployments, NS, 'recreated-engine', { spec: { replicas: 3 } }, { type: 'merge' }).catch((e: unknown) => e),
      writes.replace(Resources.deployments, { ...before, spec: { ...(before.spec as object), replicas: 3 } }).catch((e: unknown) => e),
      writes.delete(Resources.deployments, NS, 'recreated-engine').catch((e: unknown) => e),
    ]);

    expect(refused.every((e) => e instanceof UnownedDeploymentError)).toBe(true);
    expect(oursOf(await deployment('recreated'))).toEqual(oursOf(before));
  });
});
