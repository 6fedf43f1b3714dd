/**
 * The in-process `client` is the fake other modules test against, so it must behave like
 * the port's HTTP adapter over client-node. The same scenario runs through both against
 * one server; their transcripts (results and typed errors, with names and volatile
 * fields masked) must be identical.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmbeddedCluster, type EmbeddedCluster } from '../../local/cluster';
import { connectionFromKubeConfig, createClusterClient, loadKubeConfig, type ClosableClusterClient } from '../../shared/adapters/kubernetes';
import type { ClusterClient, KubeObject, ResourceType, WatchEvent } from '../../shared/ports/cluster';
import { FIXTURE_CRDS } from './support';

const NS = 'contract';
const ISVC: ResourceType = { group: 'ome.io', version: 'v1beta1', plural: 'inferenceservices', kind: 'InferenceService', namespaced: true };
const CONFIGMAPS: ResourceType = { group: '', version: 'v1', plural: 'configmaps', kind: 'ConfigMap', namespaced: true };
const WIDGETS: ResourceType = { group: 'ome.io', version: 'v1beta1', plural: 'widgets', kind: 'Widget', namespaced: true };

type Transcript = unknown[];

/** Masks what differs between two runs: the name prefix, uids, versions, timestamps. */
function mask(value: unknown, prefix: string): unknown {
  return JSON.parse(
    JSON.stringify(value ?? null)
      .replaceAll(prefix, 'P')
      .replace(/"uid":"[^"]+"/g, '"uid":"U"')
      .replace(/"resourceVersion":"\d+"/g, '"resourceVersion":"RV"')
      .replace(/"creationTimestamp":"[^"]+"/g, '"creationTimestamp":"T"'),
  ) as unknown;
}

async function outcome(prefix: string, action: () => Promise<unknown>): Promise<unknown> {
  try {
    return { ok: mask(await action(), prefix) };
  } catch (error) {
    const e = error as Error & { retryable?: boolean };
    const message = e.message.replaceAll(prefix, 'P').replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g, 'U');
    return { error: e.name, retryable: e.retryable, message };
  }
}

function isvc(name: string, minReplicas = 1): KubeObject {
  return { apiVersion: 'ome.io/v1beta1', kind: 'InferenceService', metadata: { name, namespace: NS, labels: { suite: 'contract' } }, spec: { model: { name: 'm' }, engine: { minReplicas } } };
}

async function scenario(client: ClusterClient, prefix: string): Promise<Transcript> {
  const t: Transcript = [];
  const step = async (action: () => Promise<unknown>): Promise<void> => {
    t.push(await outcome(prefix, action));
  };
  const a = `${prefix}-a`;
  const events: Array<WatchEvent> = [];
  const start = await client.list(ISVC, { namespace: NS, labelSelector: `run=${prefix}` });
  const controller = new AbortController();
  const watching = client.watch(ISVC, { namespace: NS, labelSelector: `run=${prefix}`, resourceVersion: start.resourceVersion, signal: controller.signal }, (event) => {
    events.push(event);
    if (event.type === 'DELETED') controller.abort();
  });

  const created = await client.create<KubeObject>(ISVC, { ...isvc(a), metadata: { ...isvc(a).metadata, labels: { run: prefix } } });
  t.push(mask(created, prefix));
  await step(() => client.create(ISVC, isvc(a)));
  await step(() => client.get(ISVC, NS, a));
  await step(() => client.get(ISVC, NS, `${prefix}-missing`));
  await step(() => client.get(WIDGETS, NS, a));
  await step(() => client.create(ISVC, isvc(`${prefix}-Bad`)));
  await step(() => client.create(ISVC, isvc(`${prefix}-dry`), { dryRun: 'All' }));
  await step(() => client.get(ISVC, NS, `${prefix}-dry`));
  await step(() => client.create(CONFIGMAPS, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `${prefix}-cm`, namespace: NS, labels: { run: prefix } }, data: { k: 'v' } }));
  await step(async () => (await client.list(CONFIGMAPS, { namespace: NS, labelSelector: `run=${prefix}` })).items);
  await step(async () => (await client.list(CONFIGMAPS, { namespace: NS, fieldSelector: `metadata.name=${prefix}-cm` })).items.length);
  await step(() => client.list(CONFIGMAPS, { namespace: NS, labelSelector: 'run in' }));

  await step(() => client.replace(ISVC, { ...created, spec: { model: { name: 'm' }, engine: { minReplicas: 2 } } }));
  await step(() => client.replace(ISVC, { ...created, spec: { model: { name: 'm' }, engine: { minReplicas: 3 } } }));
  const current = await client.get<KubeObject>(ISVC, NS, a);
  await step(() => client.replaceStatus(ISVC, { ...current, spec: { model: { name: 'changed' } }, status: { pinnedRevisionName: 'r-1' } }));
  await step(() => client.replace(ISVC, { ...current, status: { pinnedRevisionName: 'ignored' } }));
  await step(() => client.patch(ISVC, NS, a, { metadata: { annotations: { 'ome.io/runtime-sync': 't1' } } }, { type: 'merge' }));
  await step(() => client.patch(ISVC, NS, a, { status: { lastRuntimeSyncToken: 't1' } }, { type: 'merge', subresource: 'status' }));
  await step(() => client.patch(ISVC, NS, a, [{ op: 'test', path: '/spec/engine/minReplicas', value: 2 }, { op: 'replace', path: '/spec/engine/minReplicas', value: 4 }], { type: 'json' }));
  await step(() => client.patch(ISVC, NS, a, [{ op: 'test', path: '/spec/engine/minReplicas', value: 2 }], { type: 'json' }));
  await step(() => client.patch(ISVC, NS, a, { spec: { engine: { minReplicas: 9 } } }, { type: 'merge', dryRun: 'All' }));
  await step(() => client.patch(ISVC, NS, `${prefix}-missing`, { metadata: { labels: { x: 'y' } } }, { type: 'merge' }));
  await step(() => client.delete(ISVC, NS, a, { preconditions: { uid: 'not-it' } }));
  await step(() => client.delete(ISVC, NS, a));
  await step(() => client.delete(ISVC, NS, a));
  await watching;
  t.push(events.map((e) => [e.type, mask(e.object, prefix)]));
  return t;
}

describe('in-process client and client-node over HTTP', () => {
  let cluster: EmbeddedCluster;
  let http: ClosableClusterClient;
  const dir = mkdtempSync(join(tmpdir(), 'embedded-contract-'));

  beforeAll(async () => {
    cluster = await startEmbeddedCluster({ crdDir: FIXTURE_CRDS, namespaces: ['default', NS] });
    await cluster.writeKubeconfig(join(dir, 'kubeconfig'));
    // The contract is the server's answers: 429s are handed back, not retried (throttling.test.ts covers that).
    http = createClusterClient(connectionFromKubeConfig(loadKubeConfig({ env: { KUBECONFIG: join(dir, 'kubeconfig') } })), { requestTimeoutMs: 5000, maxThrottledRetries: 0 });
  });

  afterAll(async () => {
    http?.close();
    await cluster?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('give the same results and typed errors for get, list, create, replace, replaceStatus, patch, delete and watch', async () => {
    const inProcess = await scenario(cluster.client, 'inproc');
    const overHttp = await scenario(http, 'overhttp');
    expect(inProcess).toEqual(overHttp);
    expect(inProcess[1]).toMatchObject({ error: 'AlreadyExistsError', message: 'inferenceservices.ome.io "P-a" already exists' });
    expect(inProcess[3]).toMatchObject({ error: 'NotFoundError' });
    expect(inProcess[4]).toMatchObject({ error: 'NotFoundError', message: 'the server could not find the requested resource' });
    expect(inProcess[5]).toMatchObject({ error: 'InvalidInputError' });
    expect(inProcess[7]).toMatchObject({ error: 'NotFoundError' });
    expect(inProcess[13]).toMatchObject({ error: 'ConflictError', retryable: true });
    expect(inProcess[14]).toMatchObject({ ok: { spec: { model: { name: 'm' }, engine: { minReplicas: 2 } }, status: { pinnedRevisionName: 'r-1' } } });
    expect(inProcess[19]).toMatchObject({ error: 'InvalidInputError' });
    expect(inProcess[22]).toMatchObject({ error: 'ConflictError', message: expect.stringContaining('the UID in the precondition (not-it) does not match the UID in record') });
    expect(inProcess[24]).toMatchObject({ error: 'NotFoundError' });
    const events = inProcess[inProcess.length - 1] as Array<[string, unknown]>;
    expect(events.map(([type]) => type)).toEqual(['ADDED', 'MODIFIED', 'MODIFIED', 'MODIFIED', 'MODIFIED', 'MODIFIED', 'DELETED']);
  });

  it('map injected faults to the same typed errors', async () => {
    for (const status of [409, 429, 500] as const) {
      const results: unknown[] = [];
      for (const client of [cluster.client, http]) {
        cluster.faults.inject({ verb: 'list', resource: 'configmaps', count: 1, status });
        results.push(await outcome('x', () => client.list(CONFIGMAPS, { namespace: NS })));
      }
      expect(results[0]).toEqual(results[1]);
    }
    cluster.faults.inject({ verb: 'get', resource: 'configmaps', name: 'slow', count: 1, status: 'timeout', delayMs: 50 });
    expect(await outcome('x', () => cluster.client.get(CONFIGMAPS, NS, 'slow'))).toMatchObject({ error: 'UnavailableError' });
    expect(cluster.faults.pending()).toBe(0);
  });
});
