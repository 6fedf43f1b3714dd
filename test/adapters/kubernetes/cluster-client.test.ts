import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createClusterClient, type ClosableClusterClient } from '../../../shared/adapters/kubernetes';
import { Resources } from '../../../shared/domain/model';
import type { ControllerRevision, InferenceService } from '../../../shared/domain/model';
import type { WatchEvent } from '../../../shared/ports/cluster';
import { FIELD_MANAGER } from '../../../shared/domain/vocabulary';
import { reply, startCannedServer, type CannedServer } from './canned-server';

const isvc: InferenceService = {
  apiVersion: 'ome.io/v1beta1',
  kind: 'InferenceService',
  metadata: { name: 'chat', namespace: 'prod', resourceVersion: '7' },
  spec: { runtime: { name: 'sglang', autoSync: false } },
};

describe('Kubernetes adapter: requests', () => {
  let server: CannedServer;
  let client: ClosableClusterClient;

  beforeAll(async () => {
    server = await startCannedServer();
    client = createClusterClient(server.connection);
  });
  beforeEach(() => {
    server.requests.length = 0;
    server.route = (request, response) => reply(response, 200, request.body ? JSON.parse(request.body) : {});
  });
  afterAll(async () => {
    client.close();
    await server.stop();
  });

  const last = () => server.requests.at(-1)!;

  it('gets a namespaced object and a cluster-scoped one by their REST paths, with the kubeconfig token', async () => {
    await client.get(Resources.inferenceServices, 'prod', 'chat');
    expect(last()).toMatchObject({ method: 'GET', path: '/apis/ome.io/v1beta1/namespaces/prod/inferenceservices/chat' });
    expect(last().headers.authorization).toBe('Bearer test-token');
    await client.get(Resources.clusterServingRuntimes, undefined, 'sglang');
    expect(last().path).toBe('/apis/ome.io/v1beta1/clusterservingruntimes/sglang');
    await client.get(Resources.events, 'prod', 'chat.1');
    expect(last().path).toBe('/api/v1/namespaces/prod/events/chat.1');
  });

  it('lists across namespaces with selectors and paging, and gives items their apiVersion and kind', async () => {
    server.route = (_request, response) =>
      reply(response, 200, { metadata: { resourceVersion: '42', continue: 'next' }, items: [{ metadata: { name: 'r-a', namespace: 'ome' }, revision: 1 }] });
    const page = await client.list<ControllerRevision>(Resources.controllerRevisions, {
      labelSelector: 'ome.io/runtime-of=sglang',
      fieldSelector: 'metadata.name=r-a',
      limit: 500,
      continue: 'abc',
    });
    expect(last().path).toBe('/apis/apps/v1/controllerrevisions');
    expect(Object.fromEntries(last().query)).toEqual({ labelSelector: 'ome.io/runtime-of=sglang', fieldSelector: 'metadata.name=r-a', limit: '500', continue: 'abc' });
    expect(page).toEqual({
      resourceVersion: '42',
      continue: 'next',
      items: [{ apiVersion: 'apps/v1', kind: 'ControllerRevision', metadata: { name: 'r-a', namespace: 'ome' }, revision: 1 }],
    });
  });

  it('creates with the field manager and a server dry run when asked', async () => {
    await client.create(Resources.inferenceServices, isvc, { dryRun: 'All' });
    expect(last()).toMatchObject({ method: 'POST', path: '/apis/ome.io/v1beta1/namespaces/prod/inferenceservices' });
    expect(Object.fromEntries(last().query)).toEqual({ dryRun: 'All', fieldManager: FIELD_MANAGER });
    expect(JSON.parse(last().body)).toEqual(isvc);
  });

  it('replaces the object and its status subresource with the resourceVersion in the body', async () => {
    await client.replace(Resources.inferenceServices, isvc, { fieldManager: 'ome-pinning-pin' });
    expect(last()).toMatchObject({ method: 'PUT', path: '/apis/ome.io/v1beta1/namespaces/prod/inferenceservices/chat' });
    expect(last().query.get('fieldManager')).toBe('ome-pinning-pin');
    await client.replaceStatus(Resources.inferenceServices, { ...isvc, status: { pinnedRevisionName: 'r-prod-sglang-590753e8' } });
    expect(last().path).toBe('/apis/ome.io/v1beta1/namespaces/prod/inferenceservices/chat/status');
    expect(JSON.parse(last().body).metadata.resourceVersion).toBe('7');
  });

  it.each([
    ['merge', 'application/merge-patch+json', { metadata: { annotations: { 'ome.io/rollout-repin': null } } }, undefined],
    ['json', 'application/json-patch+json', [{ op: 'test', path: '/metadata/resourceVersion', value: '7' }], undefined],
    ['merge', 'application/merge-patch+json', { status: { lastRuntimeSyncToken: 't1' } }, 'status'],
  ] as const)('patches with %s patch as %s', async (type, contentType, patch, subresource) => {
    await client.patch(Resources.inferenceServices, 'prod', 'chat', patch, { type, subresource, dryRun: 'All' });
    expect(last().method).toBe('PATCH');
    expect(last().path).toBe(`/apis/ome.io/v1beta1/namespaces/prod/inferenceservices/chat${subresource ? '/status' : ''}`);
    expect(last().headers['content-type']).toBe(contentType);
    expect(last().query.get('dryRun')).toBe('All');
    expect(JSON.parse(last().body)).toEqual(patch);
  });

  it('deletes with preconditions in DeleteOptions', async () => {
    await client.delete(Resources.controllerRevisions, 'ome', 'r-a', { preconditions: { uid: 'u1', resourceVersion: '9' } });
    expect(last()).toMatchObject({ method: 'DELETE', path: '/apis/apps/v1/namespaces/ome/controllerrevisions/r-a' });
    expect(JSON.parse(last().body)).toMatchObject({ kind: 'DeleteOptions', preconditions: { uid: 'u1', resourceVersion: '9' } });
  });

  it('refuses a namespaced call without a namespace before sending anything', async () => {
    await expect(client.get(Resources.inferenceServices, undefined, 'chat')).rejects.toThrow('a namespace is required');
    expect(server.requests).toHaveLength(0);
  });

  it('watches from a resourceVersion with bookmarks, one event at a time, until the server closes', async () => {
    server.route = (_request, response) => {
      response.writeHead(200, { 'Content-Type': 'application/json' });
      const events = [
        { type: 'ADDED', object: { ...isvc, apiVersion: undefined, kind: undefined } },
        { type: 'MODIFIED', object: isvc },
        { type: 'BOOKMARK', object: { kind: 'InferenceService', apiVersion: 'ome.io/v1beta1', metadata: { resourceVersion: '12' } } },
      ];
      // One event split across writes: the reader must join the halves.
      const text = events.map((event) => JSON.stringify(event)).join('\n') + '\n';
      response.write(text.slice(0, 17));
      setTimeout(() => response.end(text.slice(17)), 10);
    };
    const seen: Array<WatchEvent<InferenceService>> = [];
    let inHandler = 0;
    await client.watch<InferenceService>(Resources.inferenceServices, { resourceVersion: '10', allowWatchBookmarks: true }, async (event) => {
      inHandler += 1;
      expect(inHandler).toBe(1);
      await new Promise((resolve) => setTimeout(resolve, 5));
      seen.push(event);
      inHandler -= 1;
    });
    expect(last().path).toBe('/apis/ome.io/v1beta1/inferenceservices');
    expect(Object.fromEntries(last().query)).toEqual({ watch: 'true', resourceVersion: '10', allowWatchBookmarks: 'true' });
    expect(seen.map((event) => [event.type, event.object.kind, event.object.metadata.resourceVersion])).toEqual([
      ['ADDED', 'InferenceService', '7'],
      ['MODIFIED', 'InferenceService', '7'],
      ['BOOKMARK', 'InferenceService', '12'],
    ]);
  });

  it('ends a watch quietly when its signal aborts', async () => {
    server.route = (_request, response) => {
      response.writeHead(200, { 'Content-Type': 'application/json' });
      response.write(`${JSON.stringify({ type: 'ADDED', object: isvc })}\n`);
    };
    const controller = new AbortController();
    const seen: string[] = [];
    await client.watch(Resources.inferenceServices, { namespace: 'prod', signal: controller.signal }, (event) => {
      seen.push(event.type);
      controller.abort();
    });
    expect(seen).toEqual(['ADDED']);
  });

  it('passes a handler error to the caller unchanged', async () => {
    server.route = (_request, response) => {
      response.writeHead(200, { 'Content-Type': 'application/json' });
      response.end(`${JSON.stringify({ type: 'ADDED', object: isvc })}\n`);
    };
    const failure = new TypeError('handler bug');
    await expect(
      client.watch(Resources.inferenceServices, {}, () => {
        throw failure;
      }),
    ).rejects.toBe(failure);
  });
});
