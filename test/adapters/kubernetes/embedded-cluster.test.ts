import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmbeddedCluster, type EmbeddedCluster } from '../../../local/cluster';
import { connectionFromKubeConfig, createClusterClient, loadKubeConfig, type ClosableClusterClient } from '../../../shared/adapters/kubernetes';
import { recordEvent } from '../../../shared/use-cases/record-event';
import { AlreadyExistsError, ConflictError, ExpiredError, InvalidInputError, NotFoundError, ThrottledError, UnavailableError } from '../../../shared/domain/errors';
import { Resources } from '../../../shared/domain/model';
import type { Event, InferenceService, ServingRuntime } from '../../../shared/domain/model';
import type { WatchEvent } from '../../../shared/ports/cluster';

const namespace = 'llama-demo';

const runtime: ServingRuntime = {
  apiVersion: 'ome.io/v1beta1',
  kind: 'ServingRuntime',
  metadata: { name: 'sglang-llama-3-2-3b', namespace },
  spec: { containers: [{ name: 'ome-container', image: 'lmsysorg/sglang:v0.4', args: ['--mem-frac=0.9'] }] },
};

const isvc: InferenceService = {
  apiVersion: 'ome.io/v1beta1',
  kind: 'InferenceService',
  metadata: { name: 'llama-3-2-3b-instruct', namespace },
  spec: {
    model: { name: 'llama-3-2-3b-instruct' },
    runtime: { name: 'sglang-llama-3-2-3b', kind: 'ServingRuntime', autoSync: false },
    engine: { minReplicas: 1, maxReplicas: 1 },
  },
};

describe('Kubernetes adapter against the embedded API server', () => {
  let cluster: EmbeddedCluster;
  let client: ClosableClusterClient;
  const dir = mkdtempSync(join(tmpdir(), 'embedded-adapter-'));

  beforeAll(async () => {
    cluster = await startEmbeddedCluster({ watchWindow: 20 });
    await cluster.writeKubeconfig(join(dir, 'kubeconfig'));
    // 429s map straight to ThrottledError here; their retries are in throttling.test.ts.
    client = createClusterClient(connectionFromKubeConfig(loadKubeConfig({ env: { KUBECONFIG: join(dir, 'kubeconfig') } })), { requestTimeoutMs: 5000, maxThrottledRetries: 0 });
    await client.create(Resources.namespaces, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: namespace } });
  });
  afterAll(async () => {
    client?.close();
    await cluster?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('creates OME objects from the CRDs, with the runtime defaults, and refuses a second create', async () => {
    await client.create(Resources.servingRuntimes, runtime);
    const created = await client.create(Resources.inferenceServices, isvc);
    expect(created.metadata.uid).toBeTruthy();
    expect(created.spec.runtime).toMatchObject({ name: 'sglang-llama-3-2-3b', kind: 'ServingRuntime', autoSync: false, apiGroup: 'ome.io' });
    await expect(client.create(Resources.inferenceServices, isvc)).rejects.toBeInstanceOf(AlreadyExistsError);
    await expect(client.get(Resources.inferenceServices, namespace, 'missing')).rejects.toBeInstanceOf(NotFoundError);
  });

  it('keeps spec and status apart, and rejects a stale replace with a Conflict', async () => {
    const current = await client.get<InferenceService>(Resources.inferenceServices, namespace, isvc.metadata.name);
    const pinned = await client.replaceStatus<InferenceService>(Resources.inferenceServices, {
      ...current,
      spec: { ...current.spec, engine: { minReplicas: 5 } },
      status: { pinnedRevisionName: 'r-llama-demo-sglang-llama-3-2-3b-590753e8', lastRuntimeSyncToken: '' },
    });
    expect(pinned.status?.pinnedRevisionName).toBe('r-llama-demo-sglang-llama-3-2-3b-590753e8');
    expect(pinned.spec.engine?.minReplicas).toBe(1);
    await expect(client.replace(Resources.inferenceServices, current)).rejects.toBeInstanceOf(ConflictError);
  });

  it('patches by merge and JSON patch, honours server dry runs, and maps a failed test to InvalidInputError', async () => {
    const annotate = { metadata: { annotations: { 'ome.io/runtime-sync': 'mem-frac-0-85' } } };
    const dry = await client.patch<InferenceService>(Resources.inferenceServices, namespace, isvc.metadata.name, annotate, { type: 'merge', dryRun: 'All' });
    expect(dry.metadata.annotations?.['ome.io/runtime-sync']).toBe('mem-frac-0-85');
    const stored = await client.get<InferenceService>(Resources.inferenceServices, namespace, isvc.metadata.name);
    expect(stored.metadata.annotations?.['ome.io/runtime-sync']).toBeUndefined();

    await client.patch(Resources.inferenceServices, namespace, isvc.metadata.name, annotate, { type: 'merge' });
    const failedTest = [
      { op: 'test', path: '/metadata/annotations/ome.io~1runtime-sync', value: 'old' },
      { op: 'replace', path: '/metadata/annotations/ome.io~1runtime-sync', value: 'new' },
    ];
    const error = await client.patch(Resources.inferenceServices, namespace, isvc.metadata.name, failedTest, { type: 'json' }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(InvalidInputError);
  });

  it('watches from a resourceVersion and reports 410 Gone for one older than the window', async () => {
    const start = await client.list(Resources.inferenceServices, { namespace });
    const controller = new AbortController();
    const seen: Array<WatchEvent<InferenceService>> = [];
    const watching = client.watch<InferenceService>(Resources.inferenceServices, { namespace, resourceVersion: start.resourceVersion, allowWatchBookmarks: true, signal: controller.signal }, (event) => {
      if (event.type !== 'BOOKMARK') seen.push(event);
      controller.abort();
    });
    await client.patch(Resources.inferenceServices, namespace, isvc.metadata.name, { metadata: { labels: { team: 'llm' } } }, { type: 'merge' });
    await watching;
    expect(seen.map((event) => [event.type, event.object.metadata.labels?.team])).toEqual([['MODIFIED', 'llm']]);

    // The server compacts its history in batches once it holds the window plus 16 events,
    // so 40 changes push the start version out whatever the history held before.
    for (let i = 0; i < 40; i += 1) {
      await client.patch(Resources.inferenceServices, namespace, isvc.metadata.name, { metadata: { labels: { step: String(i) } } }, { type: 'merge' });
    }
    await expect(client.watch(Resources.inferenceServices, { namespace, resourceVersion: start.resourceVersion }, () => undefined)).rejects.toBeInstanceOf(ExpiredError);
  });

  it.each([
    [429, ThrottledError],
    [500, UnavailableError],
    [409, ConflictError],
  ] as const)('maps an injected %s to its typed error', async (status, errorType) => {
    cluster.faults.inject({ verb: 'get', resource: 'inferenceservices.ome.io', count: 1, status });
    await expect(client.get(Resources.inferenceServices, namespace, isvc.metadata.name)).rejects.toBeInstanceOf(errorType);
  });

  it('records an Event kubectl can list, aggregating a repeat', async () => {
    const target = await client.get<InferenceService>(Resources.inferenceServices, namespace, isvc.metadata.name);
    const spec = { type: 'Warning', reason: 'RuntimePinError', message: 'resolve live runtime x: not found', reportingController: 'ome-pinning-pin' } as const;
    await recordEvent(client, target, spec);
    await recordEvent(client, target, spec);
    const events = await client.list<Event>(Resources.events, { namespace, fieldSelector: `involvedObject.name=${isvc.metadata.name},reason=RuntimePinError` });
    expect(events.items).toHaveLength(1);
    expect(events.items[0]).toMatchObject({ type: 'Warning', count: 2, involvedObject: { kind: 'InferenceService', uid: target.metadata.uid } });
  });

  it('deletes with preconditions', async () => {
    await expect(client.delete(Resources.servingRuntimes, namespace, runtime.metadata.name, { preconditions: { uid: 'not-the-uid' } })).rejects.toBeInstanceOf(ConflictError);
    await client.delete(Resources.servingRuntimes, namespace, runtime.metadata.name);
    await expect(client.get(Resources.servingRuntimes, namespace, runtime.metadata.name)).rejects.toBeInstanceOf(NotFoundError);
  });
});
