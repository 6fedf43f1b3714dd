/**
 * The fenced Deployment writers against the embedded API server: the direct engine writer
 * (create when absent, replace only when the render moved or the Deployment was edited,
 * never a Deployment the plane does not own) and the rollout run's fenced client (every
 * Deployment write stamped with the lease's token and carrying the resourceVersion it was
 * decided on; reads, status writes and other kinds as sent). Writes are counted at the API
 * server: resourceVersion moves only on a write that changed something.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestCluster, type TestCluster } from '../support/test-cluster';
import { createInferenceService, held, lost, overtakenAfterRead, renderEngine, withDeploymentReads } from '../support/engine-deployments';
import { AlreadyExistsError, ConflictError, LeaseLostError, NotFoundError, ThrottledError, UnownedDeploymentError } from '../../shared/domain/errors';
import { Resources } from '../../shared/domain/model/resources';
import type { ClusterClient, KubeObject, WatchEvent } from '../../shared/ports/cluster';
import type { WorkloadFence } from '../../shared/ports/workloads';
import { createDirectWorkloadWriter, LEASE_FENCE_ANNOTATION } from '../../shared/use-cases/direct-workload-writer';
import { fenceDeploymentWrites } from '../../shared/use-cases/rollout-runs/fenced-deployments';

const NS = 'fenced';
let cluster: TestCluster;

beforeAll(async () => {
  // No simulated rollout: its status writes would move the resourceVersions writes are counted by.
  cluster = await startTestCluster({ namespaces: [NS], embedded: { workloadReadyDelayMs: 3_600_000 } });
});

afterAll(async () => {
  await cluster?.stop();
});

interface Container {
  name: string;
  image: string;
  args?: string[];
}

const isvcNamed = (name: string): Promise<KubeObject> => createInferenceService(cluster.client, NS, name);

function deployment(name: string): Promise<KubeObject> {
  return cluster.client.get(Resources.deployments, NS, name);
}

/** The direct writer's apply of `desired` for `isvc`, through `client` (the API server's own by default). */
function apply(isvc: KubeObject, desired: KubeObject, fence?: WorkloadFence, client: ClusterClient = cluster.client) {
  return createDirectWorkloadWriter(client).apply({ clusterId: 'c', isvc, desired, renderedFrom: 'live', ...(fence ? { fence } : {}) });
}

function containersOf(object: KubeObject): Container[] {
  return (object.spec as { template: { spec: { containers: Container[] } } }).template.spec.containers;
}

function withContainers(object: KubeObject, containers: Container[]): KubeObject {
  const spec = object.spec as { template: { spec: object } };
  return { ...object, spec: { ...spec, template: { ...spec.template, spec: { ...spec.template.spec, containers } } } };
}

function withoutTemplateAnnotations(object: KubeObject): KubeObject {
  const spec = object.spec as { template: { metadata: { annotations?: object } } };
  const { annotations: _, ...metadata } = spec.template.metadata;
  return { ...object, spec: { ...spec, template: { ...spec.template, metadata } } };
}

function withMetadata(object: KubeObject, metadata: Partial<KubeObject['metadata']>): KubeObject {
  return { ...object, metadata: { ...object.metadata, ...metadata } };
}

const replicasOf = (object: KubeObject): number | undefined => (object.spec as { replicas?: number }).replicas;

const withReplicas = (object: KubeObject, replicas: number): KubeObject => ({ ...object, spec: { ...(object.spec as object), replicas } });

/** Someone else's merge patch of the Deployment's metadata. */
function annotate(name: string, metadata: { labels?: Record<string, string>; annotations?: Record<string, string> }): Promise<KubeObject> {
  return cluster.client.patch(Resources.deployments, NS, name, { metadata }, { type: 'merge' });
}

/** Someone else's label on the Deployment. */
const label = (name: string): Promise<KubeObject> => annotate(name, { labels: { team: 'search' } });

interface Rendered {
  isvc: KubeObject;
  name: string;
  /** The rollout run's client for this InferenceService under `fence` (none: ownership only), over `client`. */
  fenced(fence: WorkloadFence | undefined, client?: ClusterClient): ClusterClient;
}

/** An InferenceService whose engine Deployment was written under token 6 (`written: false`: not yet written). */
async function engineOf(isvcName: string, { written = true } = {}): Promise<Rendered> {
  const isvc = await isvcNamed(isvcName);
  if (written) await apply(isvc, renderEngine(isvc, 'img:v1'), held(6));
  return {
    isvc,
    name: `${isvcName}-engine`,
    fenced: (fence, client = cluster.client) => fenceDeploymentWrites(client, fence, { name: isvcName, uid: isvc.metadata.uid }),
  };
}

function revision(name: string): KubeObject {
  return { apiVersion: 'apps/v1', kind: 'ControllerRevision', metadata: { name, namespace: NS }, data: { note: 'history' }, revision: 1 };
}

describe('the direct engine workload writer', () => {
  it('creates an absent Deployment owned by the InferenceService, and writes again only when the render moves', async () => {
    const isvc = await isvcNamed('moves');
    const outcomes = [await apply(isvc, renderEngine(isvc, 'img:v1'), held(2))];
    const created = await deployment('moves-engine');
    outcomes.push(await apply(isvc, renderEngine(isvc, 'img:v1'), held(2)));
    const unmoved = await deployment('moves-engine');
    // The same lease writes again: its own stamp does not fence it out.
    outcomes.push(await apply(isvc, renderEngine(isvc, 'img:v2'), held(2)));
    const moved = await deployment('moves-engine');

    expect(outcomes).toEqual(['created', 'unchanged', 'updated']);
    expect(created.metadata.ownerReferences).toEqual([{ apiVersion: 'ome.io/v1beta1', kind: 'InferenceService', name: 'moves', uid: isvc.metadata.uid, controller: true }]);
    expect(unmoved.metadata.resourceVersion).toBe(created.metadata.resourceVersion);
    expect(containersOf(moved).map((c) => c.image)).toEqual(['img:v2']);
    expect(moved.metadata.annotations?.[LEASE_FENCE_ANNOTATION]).toBe('2');
  });

  it('makes the InferenceService the Deployment\'s controller even when the render names no owner', async () => {
    const isvc = await isvcNamed('ownerless');

    await apply(isvc, withMetadata(renderEngine(isvc, 'img:v1'), { ownerReferences: undefined }), held(1));

    expect((await deployment('ownerless-engine')).metadata.ownerReferences).toEqual([{ apiVersion: 'ome.io/v1beta1', kind: 'InferenceService', name: 'ownerless', uid: isvc.metadata.uid, controller: true }]);
  });

  it.each<[string, string, (isvc: KubeObject) => KubeObject]>([
    ['names one', 'one', (isvc) => renderEngine(isvc, 'img:v1')],
    ['names none', 'none', (isvc) => withMetadata(renderEngine(isvc, 'img:v1'), { ownerReferences: undefined })],
  ])('keeps the owners the render names when the InferenceService comes without a uid (the render %s)', async (_, slug, renderFor) => {
    const isvc = await isvcNamed(`uidless-${slug}`);
    const desired = renderFor(isvc);
    const uidless = withMetadata(isvc, { uid: undefined });

    await apply(uidless, desired);

    expect((await deployment(desired.metadata.name)).metadata.ownerReferences ?? []).toEqual(desired.metadata.ownerReferences ?? []);
  });

  it('leaves alone the defaults the server fills into fields the render leaves undefined', async () => {
    const isvc = await isvcNamed('defaults');
    const desired = renderEngine(isvc, 'img:v1');
    const unset = { ...desired, spec: { ...(desired.spec as object), strategy: undefined } };
    await apply(isvc, unset, held(1));
    const before = await deployment('defaults-engine');

    const outcome = await apply(isvc, unset, held(1));

    expect(outcome).toBe('unchanged');
    expect((await deployment('defaults-engine')).metadata.resourceVersion).toBe(before.metadata.resourceVersion);
  });

  it('counts a render that drops one of its labels as moved', async () => {
    const isvc = await isvcNamed('unlabelled');
    const desired = renderEngine(isvc, 'img:v1');
    await apply(isvc, withMetadata(desired, { labels: { ...desired.metadata.labels, tier: 'gold' } }), held(1));
    const before = await deployment('unlabelled-engine');

    const outcome = await apply(isvc, desired, held(1));

    expect(outcome).toBe('updated');
    expect((await deployment('unlabelled-engine')).metadata.resourceVersion).not.toBe(before.metadata.resourceVersion);
  });

  it('writes a render that only changes an annotation', async () => {
    const isvc = await isvcNamed('noted');
    const rendered = renderEngine(isvc, 'img:v1');
    const noted = (note: string) => withMetadata(rendered, { annotations: { ...rendered.metadata.annotations, 'example.com/note': note } });
    await apply(isvc, noted('first'), held(1));

    const outcome = await apply(isvc, noted('second'), held(1));

    expect(outcome).toBe('updated');
    expect((await deployment('noted-engine')).metadata.annotations?.['example.com/note']).toBe('second');
  });

  it.each<[string, string, (current: KubeObject, neighbour: KubeObject) => KubeObject]>([
    ['its image', 'image', (current) => withContainers(current, [{ ...containersOf(current)[0]!, image: 'img:edited' }])],
    ['its container\'s arguments', 'args', (current) => withContainers(current, [{ ...containersOf(current)[0]!, args: ['--port', '9090'] }])],
    ['a container added beside its own', 'sidecar', (current) => withContainers(current, [...containersOf(current), { name: 'sidecar', image: 'img:sidecar' }])],
    ['its replica count', 'replicas', (current) => withReplicas(current, 3)],
    ['its pod template\'s annotations', 'template', (current) => withoutTemplateAnnotations(current)],
    ['one of its labels', 'label', (current) => withMetadata(current, { labels: { ...current.metadata.labels, 'serving-runtime': 'edited' } })],
    [
      'an owner reference added beside its own',
      'owner',
      (current, neighbour) =>
        withMetadata(current, {
          ownerReferences: [...(current.metadata.ownerReferences ?? []), { apiVersion: 'ome.io/v1beta1', kind: 'InferenceService', name: neighbour.metadata.name, uid: neighbour.metadata.uid ?? '' }],
        }),
    ],
  ])('puts back the render when someone edited %s', async (_, slug, edit) => {
    const name = `edited-${slug}`;
    const [isvc, neighbour] = await Promise.all([isvcNamed(name), isvcNamed(`${name}-neighbour`)]);
    await apply(isvc, renderEngine(isvc, 'img:v1'), held(1));
    const rendered = await deployment(`${name}-engine`);
    await cluster.client.replace(Resources.deployments, edit(rendered, neighbour));

    const outcome = await apply(isvc, renderEngine(isvc, 'img:v1'), held(1));
    const restored = await deployment(`${name}-engine`);

    expect(outcome).toBe('updated');
    expect(restored.spec).toMatchObject(renderEngine(isvc, 'img:v1').spec as object);
    expect(restored.metadata.labels).toEqual(rendered.metadata.labels);
    expect(restored.metadata.ownerReferences).toEqual(rendered.metadata.ownerReferences);
  });

  it('keeps the labels and annotations others put on the Deployment when it writes a new render', async () => {
    const isvc = await isvcNamed('shared');
    await apply(isvc, renderEngine(isvc, 'img:v1'), held(1));
    await annotate('shared-engine', { labels: { team: 'search' }, annotations: { 'example.com/owner-note': 'keep' } });

    await apply(isvc, renderEngine(isvc, 'img:v2'), held(1));
    const after = await deployment('shared-engine');

    expect(containersOf(after).map((c) => c.image)).toEqual(['img:v2']);
    expect(after.metadata.labels?.team).toBe('search');
    expect(after.metadata.annotations?.['example.com/owner-note']).toBe('keep');
  });

  it('without a lease (tools, tests) writes without a stamp', async () => {
    const isvc = await isvcNamed('unleased');

    const outcomes = [await apply(isvc, renderEngine(isvc, 'img:v1')), await apply(isvc, renderEngine(isvc, 'img:v2'))];
    const after = await deployment('unleased-engine');

    expect(outcomes).toEqual(['created', 'updated']);
    expect(containersOf(after).map((c) => c.image)).toEqual(['img:v2']);
    expect(after.metadata.annotations?.[LEASE_FENCE_ANNOTATION]).toBeUndefined();
  });

  it('refuses a same-named Deployment the plane does not own, and leaves it as it is', async () => {
    const isvc = await isvcNamed('foreign');
    const { name, namespace } = renderEngine(isvc, 'img:v1').metadata;
    const theirs = await cluster.client.create<KubeObject>(Resources.deployments, { ...renderEngine(isvc, 'img:theirs'), metadata: { name, namespace } });

    const error = await apply(isvc, renderEngine(isvc, 'img:v1'), held(1)).catch((e: unknown) => e);

    expect(error).toBeInstanceOf(UnownedDeploymentError);
    expect(error).toMatchObject({ namespace: NS, deploymentName: 'foreign-engine', deploymentUid: theirs.metadata.uid });
    expect(await deployment('foreign-engine')).toEqual(theirs);
  });

  it('a write landing between its read and its replace makes the replace a conflict, and that write stays', async () => {
    const isvc = await isvcNamed('overtaken');
    await apply(isvc, renderEngine(isvc, 'img:v1'), held(1));
    const overtaken = overtakenAfterRead(cluster.client, () => label('overtaken-engine'));

    const error = await apply(isvc, renderEngine(isvc, 'img:v2'), held(1), overtaken).catch((e: unknown) => e);
    const after = await deployment('overtaken-engine');

    expect(error).toBeInstanceOf(ConflictError);
    expect(containersOf(after).map((c) => c.image)).toEqual(['img:v1']);
    expect(after.metadata.labels?.team).toBe('search');
  });

  it('a Deployment created while it creates its own is a conflict, not an overwrite', async () => {
    const isvc = await isvcNamed('appeared');
    const overtaken = overtakenAfterRead(cluster.client, () => cluster.client.create(Resources.deployments, renderEngine(isvc, 'img:first')));

    const error = await apply(isvc, renderEngine(isvc, 'img:v1'), held(1), overtaken).catch((e: unknown) => e);

    expect(error).toBeInstanceOf(ConflictError);
    expect((error as Error).message).toBe(`Deployment ${NS}/appeared-engine appeared while being created`);
    expect((error as Error).cause).toBeInstanceOf(AlreadyExistsError);
    expect(containersOf(await deployment('appeared-engine')).map((c) => c.image)).toEqual(['img:first']);
  });

  it('passes on a failed read other than NotFound and writes nothing', async () => {
    const isvc = await isvcNamed('unread');
    await apply(isvc, renderEngine(isvc, 'img:v1'), held(1));
    const before = await deployment('unread-engine');
    const throttled = new ThrottledError('too many requests');
    const unreadable = withDeploymentReads(cluster.client, () => Promise.reject(throttled));

    const error = await apply(isvc, renderEngine(isvc, 'img:v2'), held(1), unreadable).catch((e: unknown) => e);

    expect(error).toBe(throttled);
    expect((await deployment('unread-engine')).metadata.resourceVersion).toBe(before.metadata.resourceVersion);
  });

  it('passes on a failed create other than AlreadyExists', async () => {
    const isvc = await isvcNamed('nowhere');
    const desired = renderEngine(isvc, 'img:v1');

    const error = await apply(isvc, withMetadata(desired, { namespace: 'no-such-namespace' }), held(1)).catch((e: unknown) => e);

    expect(error).toBeInstanceOf(NotFoundError);
  });

  it.each(['not-a-number', '99.5'])('counts a stamp of %s as none and writes its own over it', async (stamp) => {
    const name = `stamp-${stamp.replace(/[^a-z0-9]/g, '')}`;
    const isvc = await isvcNamed(name);
    await apply(isvc, renderEngine(isvc, 'img:v1'), held(1));
    await annotate(`${name}-engine`, { annotations: { [LEASE_FENCE_ANNOTATION]: stamp } });

    const outcome = await apply(isvc, renderEngine(isvc, 'img:v2'), held(1));

    expect(outcome).toBe('updated');
    expect((await deployment(`${name}-engine`)).metadata.annotations?.[LEASE_FENCE_ANNOTATION]).toBe('1');
  });

  it('writes nothing after a takeover once its own token is on the Deployment, so an edit meanwhile is no conflict', async () => {
    const isvc = await isvcNamed('retaken');
    await apply(isvc, renderEngine(isvc, 'img:v1'), held(3, true));
    const overtaken = overtakenAfterRead(cluster.client, () => label('retaken-engine'));

    const outcome = await apply(isvc, renderEngine(isvc, 'img:v1'), held(3, true), overtaken);

    expect(outcome).toBe('unchanged');
    expect((await deployment('retaken-engine')).metadata.labels?.team).toBe('search');
  });

  it('checks the lease right before writing: a lost lease writes nothing', async () => {
    const [absent, present] = await Promise.all([isvcNamed('lost-absent'), isvcNamed('lost-present')]);
    await apply(present, renderEngine(present, 'img:v1'), held(9));
    const before = await deployment('lost-present-engine');

    const errors = await Promise.all([
      apply(absent, renderEngine(absent, 'img:v1'), lost(9)).catch((e: unknown) => e),
      apply(present, renderEngine(present, 'img:v2'), lost(9)).catch((e: unknown) => e),
    ]);

    expect(errors.every((e) => e instanceof LeaseLostError)).toBe(true);
    await expect(deployment('lost-absent-engine')).rejects.toThrow(NotFoundError);
    expect((await deployment('lost-present-engine')).metadata.resourceVersion).toBe(before.metadata.resourceVersion);
  });
});

describe('Deployment creates through the fenced client', () => {
  it('stamp the lease token', async () => {
    const { isvc, name, fenced } = await engineOf('create-held', { written: false });

    await fenced(held(4)).create(Resources.deployments, renderEngine(isvc, 'img:v1'));

    expect((await deployment(name)).metadata.annotations?.[LEASE_FENCE_ANNOTATION]).toBe('4');
  });

  it('create nothing once the lease is lost', async () => {
    const { isvc, name, fenced } = await engineOf('create-lost', { written: false });

    const error = await fenced(lost(4)).create(Resources.deployments, renderEngine(isvc, 'img:v1')).catch((e: unknown) => e);

    expect(error).toBeInstanceOf(LeaseLostError);
    await expect(deployment(name)).rejects.toThrow(NotFoundError);
  });

  it('without a lease create the Deployment unstamped', async () => {
    const { isvc, name, fenced } = await engineOf('create-unleased', { written: false });

    await fenced(undefined).create(Resources.deployments, renderEngine(isvc, 'img:v1'));

    expect((await deployment(name)).metadata.annotations?.[LEASE_FENCE_ANNOTATION]).toBeUndefined();
  });
});

describe('Deployment replaces through the fenced client', () => {
  it('write under the current lease and stamp its token', async () => {
    const { name, fenced } = await engineOf('replace-held');

    await fenced(held(7)).replace(Resources.deployments, withReplicas(await deployment(name), 2));
    const after = await deployment(name);

    expect(replicasOf(after)).toBe(2);
    expect(after.metadata.annotations?.[LEASE_FENCE_ANNOTATION]).toBe('7');
  });

  it('decided on a stale read are a conflict, and the newer write stays', async () => {
    const { name, fenced } = await engineOf('replace-stale');
    const read = await deployment(name);
    await label(name);

    const error = await fenced(held(6)).replace(Resources.deployments, withReplicas(read, 2)).catch((e: unknown) => e);
    const after = await deployment(name);

    expect(error).toBeInstanceOf(ConflictError);
    expect(replicasOf(after)).toBe(1);
    expect(after.metadata.labels?.team).toBe('search');
  });

  it('without a resourceVersion carry the one the fence read: a write landing after that read is a conflict', async () => {
    const { isvc, name, fenced } = await engineOf('replace-overtaken');
    const overtaken = overtakenAfterRead(cluster.client, () => label(name));

    const error = await fenced(held(6), overtaken).replace(Resources.deployments, withReplicas(renderEngine(isvc, 'img:v1'), 2)).catch((e: unknown) => e);
    const after = await deployment(name);

    expect(error).toBeInstanceOf(ConflictError);
    expect(replicasOf(after)).toBe(1);
    expect(after.metadata.labels?.team).toBe('search');
  });

  it('of a Deployment that is gone are NotFound', async () => {
    const { isvc, name, fenced } = await engineOf('replace-gone', { written: false });

    const error = await fenced(held(6)).replace(Resources.deployments, renderEngine(isvc, 'img:v1')).catch((e: unknown) => e);

    expect(error).toBeInstanceOf(NotFoundError);
    await expect(deployment(name)).rejects.toThrow(NotFoundError);
  });
});

describe('Deployment patches through the fenced client', () => {
  it('stamp the lease token on a merge patch and keep the metadata the caller patched', async () => {
    const { name, fenced } = await engineOf('patch-held');

    await fenced(held(7)).patch(Resources.deployments, NS, name, { metadata: { labels: { team: 'search' }, annotations: { 'example.com/note': 'scaled' } }, spec: { replicas: 2 } }, { type: 'merge' });
    const after = await deployment(name);

    expect(replicasOf(after)).toBe(2);
    expect(after.metadata.labels?.team).toBe('search');
    expect(after.metadata.annotations).toMatchObject({ 'example.com/note': 'scaled', [LEASE_FENCE_ANNOTATION]: '7' });
  });

  it('without a lease leave the stamp as it was', async () => {
    const { name, fenced } = await engineOf('patch-unleased');

    await fenced(undefined).patch(Resources.deployments, NS, name, { spec: { replicas: 2 } }, { type: 'merge' });
    const after = await deployment(name);

    expect(replicasOf(after)).toBe(2);
    expect(after.metadata.annotations?.[LEASE_FENCE_ANNOTATION]).toBe('6');
  });

  it('landing after a write that followed the fence\'s read are a conflict', async () => {
    const { name, fenced } = await engineOf('patch-overtaken');
    const overtaken = overtakenAfterRead(cluster.client, () => label(name));

    const error = await fenced(held(6), overtaken).patch(Resources.deployments, NS, name, { spec: { replicas: 2 } }, { type: 'merge' }).catch((e: unknown) => e);
    const after = await deployment(name);

    expect(error).toBeInstanceOf(ConflictError);
    expect(replicasOf(after)).toBe(1);
    expect(after.metadata.labels?.team).toBe('search');
  });

  it('of a Deployment that is gone are NotFound', async () => {
    const { name, fenced } = await engineOf('patch-gone', { written: false });

    const error = await fenced(held(6)).patch(Resources.deployments, NS, name, { spec: { replicas: 2 } }, { type: 'merge' }).catch((e: unknown) => e);

    expect(error).toBeInstanceOf(NotFoundError);
  });

  it('pass on a failed read other than NotFound and write nothing', async () => {
    const { name, fenced } = await engineOf('fenced-unread');
    const before = await deployment(name);
    const throttled = new ThrottledError('too many requests');
    const unreadable = withDeploymentReads(cluster.client, () => Promise.reject(throttled));

    const error = await fenced(held(6), unreadable).patch(Resources.deployments, NS, name, { spec: { replicas: 2 } }, { type: 'merge' }).catch((e: unknown) => e);

    expect(error).toBe(throttled);
    expect((await deployment(name)).metadata.resourceVersion).toBe(before.metadata.resourceVersion);
  });

  it('in JSON Patch form go as the caller wrote them', async () => {
    const { name, fenced } = await engineOf('patch-json');

    await fenced(held(6)).patch(Resources.deployments, NS, name, [{ op: 'replace', path: '/spec/replicas', value: 4 }], { type: 'json' });

    expect(replicasOf(await deployment(name))).toBe(4);
  });
});

describe('Deployment deletes through the fenced client', () => {
  it('remove the Deployment under the current lease', async () => {
    const { name, fenced } = await engineOf('delete-held');

    await fenced(held(6)).delete(Resources.deployments, NS, name);

    await expect(deployment(name)).rejects.toThrow(NotFoundError);
  });

  it('of a Deployment that is gone are NotFound, before any lease check', async () => {
    const { name, fenced } = await engineOf('delete-gone', { written: false });

    const error = await fenced(lost(6)).delete(Resources.deployments, NS, name).catch((e: unknown) => e);

    expect(error).toBeInstanceOf(NotFoundError);
    expect((error as Error).message).toBe(`deployments "${name}" not found`);
  });

  it('landing after a write that followed the fence\'s read are a conflict, and the Deployment stays', async () => {
    const { name, fenced } = await engineOf('delete-overtaken');
    const overtaken = overtakenAfterRead(cluster.client, () => label(name));

    const error = await fenced(held(6), overtaken).delete(Resources.deployments, NS, name).catch((e: unknown) => e);

    expect(error).toBeInstanceOf(ConflictError);
    expect((await deployment(name)).metadata.labels?.team).toBe('search');
  });

  it('keep the caller\'s own preconditions', async () => {
    const { name, fenced } = await engineOf('delete-preconditions');

    const error = await fenced(held(6)).delete(Resources.deployments, NS, name, { preconditions: { uid: 'not-its-uid' } }).catch((e: unknown) => e);

    expect(error).toBeInstanceOf(ConflictError);
    await expect(deployment(name)).resolves.toMatchObject({ metadata: { name } });
  });
});

describe('everything else through the fenced client', () => {
  it('writes other kinds as sent, even once the lease is lost', async () => {
    const { fenced } = await engineOf('other-kinds', { written: false });
    const client = fenced(lost(6));

    const created = await client.create(Resources.controllerRevisions, revision('other-kinds-1'));
    const replaced = await client.replace(Resources.controllerRevisions, { ...created, revision: 2 });
    const patched = await client.patch<KubeObject>(Resources.controllerRevisions, NS, 'other-kinds-1', { metadata: { labels: { team: 'search' } } }, { type: 'merge' });
    await client.delete(Resources.controllerRevisions, NS, 'other-kinds-1');

    expect(replaced).toMatchObject({ revision: 2 });
    expect(patched.metadata.labels?.team).toBe('search');
    expect([created, replaced, patched].map((r) => r.metadata.annotations?.[LEASE_FENCE_ANNOTATION])).toEqual([undefined, undefined, undefined]);
    await expect(cluster.client.get(Resources.controllerRevisions, NS, 'other-kinds-1')).rejects.toThrow(NotFoundError);
  });

  it('reads, lists and watches what the server holds', async () => {
    const { name, fenced } = await engineOf('reads');
    const client = fenced(held(6));
    const events: WatchEvent[] = [];
    const stop = new AbortController();

    const read = await client.get(Resources.deployments, NS, name);
    const listed = await client.list(Resources.deployments, { namespace: NS });
    await client.watch(Resources.deployments, { namespace: NS, signal: stop.signal }, (event) => {
      events.push(event);
      stop.abort();
    });

    expect(read).toEqual(await deployment(name));
    expect(listed.items.map((d) => d.metadata.name)).toContain(name);
    expect(events.map((e) => e.object.metadata.name)).toContain(name);
  });

  it('writes status as sent, even once the lease is lost', async () => {
    const { isvc, name, fenced } = await engineOf('status');
    const client = fenced(lost(6));

    await client.replaceStatus(Resources.inferenceServices, { ...isvc, status: { pinnedRevisionName: 'rt-abc' } });
    await client.patch(Resources.deployments, NS, name, { status: { observedGeneration: 1, replicas: 1 } }, { type: 'merge', subresource: 'status' });

    expect((await cluster.client.get(Resources.inferenceServices, NS, 'status')).status).toMatchObject({ pinnedRevisionName: 'rt-abc' });
    expect((await deployment(name)).status).toMatchObject({ observedGeneration: 1, replicas: 1 });
  });
});
