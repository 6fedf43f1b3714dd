/**
 * @kubernetes/client-node against the embedded API server: informers resume after a
 * dropped watch and relist after 410 Gone; conflicts, the status subresource and bad
 * requests answer as a real server does, and failed requests change nothing.
 */
import * as k8s from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmbeddedCluster, type EmbeddedCluster } from '../../local/cluster';
import type { KubeObject, ResourceType } from '../../shared/ports/cluster';
import { eventually, FIXTURE_CRDS } from './support';

const NS = 'client-node';
const CONFIGMAPS: ResourceType = { group: '', version: 'v1', plural: 'configmaps', kind: 'ConfigMap', namespaced: true };
const SECRETS: ResourceType = { group: '', version: 'v1', plural: 'secrets', kind: 'Secret', namespaced: true };
const ISVC = { group: 'ome.io', version: 'v1beta1', plural: 'inferenceservices', namespace: NS };

interface Isvc extends KubeObject {
  spec: { model: { name: string }; engine?: { minReplicas?: number } };
  status?: { pinnedRevisionName?: string };
}

function isvc(name: string): Isvc {
  return { apiVersion: 'ome.io/v1beta1', kind: 'InferenceService', metadata: { name, namespace: NS }, spec: { model: { name: 'm' }, engine: { minReplicas: 1 } } };
}

async function failure(promise: Promise<unknown>): Promise<{ code: number; status: Record<string, unknown> }> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof k8s.ApiException) {
      const body = error.body as unknown;
      return { code: error.code, status: (typeof body === 'string' ? JSON.parse(body) : body) as Record<string, unknown> };
    }
    throw error;
  }
  throw new Error('the request succeeded');
}

describe('client-node against the embedded API server', () => {
  let cluster: EmbeddedCluster;
  let kc: k8s.KubeConfig;
  let custom: k8s.CustomObjectsApi;
  let core: k8s.CoreV1Api;

  const raw = (path: string, init: RequestInit = {}): Promise<Response> =>
    fetch(`${cluster.url}${path}`, { ...init, headers: { Authorization: `Bearer ${cluster.adminToken}`, ...(init.headers as Record<string, string> | undefined) } });

  beforeAll(async () => {
    cluster = await startEmbeddedCluster({ crdDir: FIXTURE_CRDS, watchWindow: 10, namespaces: ['default', NS] });
    kc = new k8s.KubeConfig();
    kc.loadFromString(cluster.kubeconfig);
    custom = kc.makeApiClient(k8s.CustomObjectsApi);
    core = kc.makeApiClient(k8s.CoreV1Api);
  });

  afterAll(async () => {
    await cluster?.stop();
  });

  it('keeps an informer in sync across a dropped watch, and relists after 410 Gone', async () => {
    let lists = 0;
    const informer = k8s.makeInformer(kc, `/api/v1/namespaces/${NS}/configmaps`, () => {
      lists += 1;
      return core.listNamespacedConfigMap({ namespace: NS });
    });
    const names = (): string[] => informer.list(NS).map((o) => o.metadata?.name ?? '').sort();
    const errors: unknown[] = [];
    informer.on('error', (error) => errors.push(error));
    await informer.start();
    try {
      await cluster.client.create(CONFIGMAPS, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'a', namespace: NS } });
      await eventually(() => names().includes('a'), () => names().join(','));

      cluster.faults.closeWatches();
      await cluster.client.create(CONFIGMAPS, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'b', namespace: NS } });
      await eventually(() => names().includes('b'), () => names().join(','));
      expect(lists).toBe(1);

      // These writes finish before the informer's next watch request arrives, so the
      // version it resumes from has left the 10-event window.
      cluster.faults.closeWatches();
      for (let i = 0; i < 40; i += 1) {
        await cluster.client.create(SECRETS, { apiVersion: 'v1', kind: 'Secret', metadata: { name: `filler-${i}`, namespace: 'default' } });
      }
      await cluster.client.create(CONFIGMAPS, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c', namespace: NS } });
      await cluster.client.delete(CONFIGMAPS, NS, 'a');
      await eventually(() => lists === 2 && names().join(',') === 'b,c', () => `lists=${lists} names=${names().join(',')}`);
      expect(errors).toEqual([]);
    } finally {
      await informer.stop();
    }
  });

  it('answers a watch from an expired version with an ERROR event carrying 410 Expired', async () => {
    const response = await raw(`/api/v1/namespaces/${NS}/configmaps?watch=true&resourceVersion=2`);
    expect(response.status).toBe(200);
    const event = JSON.parse((await response.text()).trim()) as { type: string; object: Record<string, unknown> };
    expect(event.type).toBe('ERROR');
    expect(event.object).toMatchObject({ kind: 'Status', apiVersion: 'v1', status: 'Failure', reason: 'Expired', code: 410 });
    expect(event.object.message).toMatch(/^too old resource version: 2 \(\d+\)$/);
  });

  it('rejects a replace with a stale resourceVersion with 409 Conflict', async () => {
    const created = (await custom.createNamespacedCustomObject({ ...ISVC, body: isvc('stale') })) as Isvc;
    await custom.patchNamespacedCustomObject(
      { ...ISVC, name: 'stale', body: { spec: { engine: { minReplicas: 2 } } } },
      k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch),
    );
    const stale = { ...created, spec: { ...created.spec, engine: { minReplicas: 3 } } };
    const { code, status } = await failure(custom.replaceNamespacedCustomObject({ ...ISVC, name: 'stale', body: stale }));
    expect(code).toBe(409);
    expect(status).toEqual({
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: 'Operation cannot be fulfilled on inferenceservices.ome.io "stale": the object has been modified; please apply your changes to the latest version and try again',
      reason: 'Conflict',
      details: { name: 'stale', group: 'ome.io', kind: 'inferenceservices' },
      code: 409,
    });
    const stored = (await custom.getNamespacedCustomObject({ ...ISVC, name: 'stale' })) as Isvc;
    expect(stored.spec.engine?.minReplicas).toBe(2);
  });

  it('keeps spec on a status patch and status on a spec patch; generation follows spec only', async () => {
    const created = (await custom.createNamespacedCustomObject({ ...ISVC, body: { ...isvc('pinned'), status: { pinnedRevisionName: 'ignored-on-create' } } })) as Isvc;
    expect(created.status).toBeUndefined();
    expect(created.metadata.generation).toBe(1);
    const merge = k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch);
    const afterStatus = (await custom.patchNamespacedCustomObjectStatus(
      { ...ISVC, name: 'pinned', body: { spec: { engine: { minReplicas: 7 } }, status: { pinnedRevisionName: 'r-a' } } },
      merge,
    )) as Isvc;
    expect(afterStatus.spec.engine?.minReplicas).toBe(1);
    expect(afterStatus.status?.pinnedRevisionName).toBe('r-a');
    expect(afterStatus.metadata.generation).toBe(1);
    const afterSpec = (await custom.patchNamespacedCustomObject(
      { ...ISVC, name: 'pinned', body: { spec: { engine: { minReplicas: 2 } }, status: { pinnedRevisionName: 'r-b' } } },
      merge,
    )) as Isvc;
    expect(afterSpec.status?.pinnedRevisionName).toBe('r-a');
    expect(afterSpec.spec.engine?.minReplicas).toBe(2);
    expect(afterSpec.metadata.generation).toBe(2);
    const afterLabel = (await custom.patchNamespacedCustomObject({ ...ISVC, name: 'pinned', body: { metadata: { labels: { a: 'b' } } } }, merge)) as Isvc;
    expect(afterLabel.metadata.generation).toBe(2);
    expect(Number(afterLabel.metadata.resourceVersion)).toBeGreaterThan(Number(afterSpec.metadata.resourceVersion));
  });

  it('answers bad requests with the real errors and changes nothing', async () => {
    const before = (await custom.getNamespacedCustomObject({ ...ISVC, name: 'pinned' })) as Isvc;
    const listBefore = await custom.listNamespacedCustomObject(ISVC);

    const unknown = await failure(custom.listNamespacedCustomObject({ ...ISVC, plural: 'widgets' }));
    expect(unknown).toEqual({ code: 404, status: { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: 'the server could not find the requested resource', reason: 'NotFound', details: {}, code: 404 } });

    const path = `/apis/ome.io/v1beta1/namespaces/${NS}/inferenceservices/pinned`;
    const malformed = await raw(path, { method: 'PATCH', headers: { 'Content-Type': 'application/merge-patch+json' }, body: '{"spec": ' });
    expect(malformed.status).toBe(400);
    expect(await malformed.json()).toMatchObject({ kind: 'Status', reason: 'BadRequest', code: 400 });

    const notAList = await raw(path, { method: 'PATCH', headers: { 'Content-Type': 'application/json-patch+json' }, body: '{"op":"remove"}' });
    expect(notAList.status).toBe(400);

    const failedOp = await raw(path, { method: 'PATCH', headers: { 'Content-Type': 'application/json-patch+json' }, body: '[{"op":"remove","path":"/spec/missing"}]' });
    expect(failedOp.status).toBe(422);
    expect(await failedOp.json()).toMatchObject({ reason: 'Invalid', message: 'the server rejected our request due to an error in our request' });

    const badName = await failure(custom.createNamespacedCustomObject({ ...ISVC, body: isvc('Bad_Name') }));
    expect(badName.code).toBe(422);
    expect(badName.status).toMatchObject({
      reason: 'Invalid',
      message: expect.stringMatching(/^InferenceService\.ome\.io "Bad_Name" is invalid: metadata\.name: Invalid value: "Bad_Name": a lowercase RFC 1123 subdomain/),
      details: { name: 'Bad_Name', group: 'ome.io', kind: 'InferenceService', causes: [{ reason: 'FieldValueInvalid', field: 'metadata.name' }] },
    });

    const schema = await failure(custom.patchNamespacedCustomObject(
      { ...ISVC, name: 'pinned', body: { spec: { engine: { minReplicas: 'two' } } } },
      k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch),
    ));
    expect(schema.code).toBe(422);
    expect(schema.status.message).toBe('InferenceService.ome.io "pinned" is invalid: spec.engine.minReplicas: Invalid value: "string": spec.engine.minReplicas in body must be of type integer: "string"');

    const selector = await raw(`/apis/ome.io/v1beta1/namespaces/${NS}/inferenceservices?labelSelector=${encodeURIComponent('a in b')}`);
    expect(selector.status).toBe(400);
    const unsupported = await raw(path, { method: 'PATCH', headers: { 'Content-Type': 'text/plain' }, body: 'x' });
    expect(unsupported.status).toBe(415);
    const notAllowed = await raw(path, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: '{}' });
    expect(notAllowed.status).toBe(405);

    const after = (await custom.getNamespacedCustomObject({ ...ISVC, name: 'pinned' })) as Isvc;
    expect(after).toEqual(before);
    const listAfter = (await custom.listNamespacedCustomObject(ISVC)) as { items: unknown[] };
    expect(listAfter.items).toEqual((listBefore as { items: unknown[] }).items);
  });

  it('pages a list with limit and continue', async () => {
    for (const name of ['p1', 'p2', 'p3']) await cluster.client.create(CONFIGMAPS, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: NS, labels: { page: 'yes' } } });
    const first = await core.listNamespacedConfigMap({ namespace: NS, labelSelector: 'page', limit: 2 });
    expect(first.items.map((o) => o.metadata?.name)).toEqual(['p1', 'p2']);
    expect(first.metadata?._continue).toBeTruthy();
    const second = await core.listNamespacedConfigMap({ namespace: NS, labelSelector: 'page', limit: 2, _continue: first.metadata?._continue ?? '' });
    expect(second.items.map((o) => o.metadata?.name)).toEqual(['p3']);
    expect(second.metadata?._continue).toBeFalsy();
  });
});
