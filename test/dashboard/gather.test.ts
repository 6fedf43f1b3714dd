/**
 * The fleet view's data and its rendering, without HTTP: the snapshot gatherFleet reads
 * from an in-memory registry and the embedded API server (CRDs of infra/crds, so status
 * fields upstream does not declare would be pruned), and the fragment renderFleet makes of
 * it, every value escaped.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { gatherFleet, type DashboardRegistry, type FleetSnapshot } from '../../cli/dashboard/gather';
import { durationText, escapeHtml, renderFleet } from '../../cli/dashboard/page';
import { startEmbeddedCluster, type EmbeddedCluster } from '../../local/cluster';
import { Resources } from '../../shared/domain/model/resources';
import type { ClusterClient } from '../../shared/ports/cluster';
import type { ClusterRecord } from '../../shared/ports/store';
import { formatGcMark } from '../../shared/domain/runtime/gc';
import { createNamespace, createRevision, createRevisions, DAY, T0 } from '../revision-gc/fixtures';
import { createSyncWave, type SyncWave } from '../../shared/domain/fleet/sync-wave';

const NOW = T0 + 10 * DAY;
const HOSTILE = '<img src=x onerror="alert(1)">&\'`';

function record(id: string, omeNamespace = 'ome'): ClusterRecord {
  return { id, mode: 'standalone', server: `https://${id}.example:6443`, credentials: { kind: 'secret' }, omeNamespace };
}

async function isvc(client: ClusterClient, namespace: string, name: string, status: Record<string, unknown>, extra: Record<string, unknown> = {}): Promise<void> {
  await client.create(Resources.inferenceServices, {
    apiVersion: 'ome.io/v1beta1',
    kind: 'InferenceService',
    metadata: { name, namespace, ...extra },
    spec: { model: { name: 'chat-model' }, runtime: { name: 'srt', autoSync: false } },
  });
  await client.patch(Resources.inferenceServices, namespace, name, { status }, { type: 'merge', subresource: 'status' });
}

const condition = (type: string, status: string, reason: string, message = '') => ({ type, status, reason, message, lastTransitionTime: '2026-10-08T14:00:00Z' });

describe('gatherFleet against the embedded API server', () => {
  let cluster: EmbeddedCluster;
  let snapshot: FleetSnapshot;
  let pinnedRevision = '';

  beforeAll(async () => {
    cluster = await startEmbeddedCluster({ namespaces: ['default', 'ome', 'prod'] });
    const { client } = cluster;
    await createNamespace(client, 'ome-edge');
    // srt: 12 revisions, the 10 newest kept and #1 pinned, so #0 is beyond retention; and an
    // older one marked two days ago, past the one-day grace: due. old: 11, #0 beyond retention.
    const names = await createRevisions(client, 'ome', 12, { runtime: 'srt' });
    pinnedRevision = names[1] as string;
    await createRevision(client, 'ome', { runtime: 'srt', index: 99, createdAt: T0 - 20 * DAY, mark: formatGcMark(NOW - 2 * DAY) });
    await createRevisions(client, 'ome', 11, { runtime: 'old' });

    await isvc(client, 'prod', 'drifting', {
      pinnedRevisionName: pinnedRevision,
      conditions: [condition('RuntimeDrifted', 'True', 'RevisionMismatch', HOSTILE)],
    });
    await isvc(client, 'prod', 'missing', { pinnedRevisionName: 'r-gone', conditions: [condition('RuntimeDrifted', 'True', 'RevisionMissing', 'pinned revision r-gone missing from ome')] });
    await isvc(client, 'prod', 'calm', { pinnedRevisionName: pinnedRevision, conditions: [condition('RuntimeDrifted', 'False', 'InSync')] });
    await isvc(client, 'prod', 'canary', {
      rollout: {
        activeRun: {
          runID: `run-${HOSTILE}`,
          openedAt: '2026-10-08T13:00:00Z',
          pinnedAt: '2026-10-08T13:00:00Z',
          plan: { groups: [{ source: 'Inline', group: { components: ['engine'], canary: { steps: [{ capacity: '50%', traffic: 50, pause: {} }, { capacity: '100%', traffic: 100, pause: {} }] } } }] },
        },
      },
      components: { engine: { rolloutPhase: 'Paused', canary: { currentStep: 0, observedTrafficWeight: 50, canaryRevisionHash: 'abcd1234' } } },
      canary: { currentStep: 0, observedTrafficWeight: 50, canaryRevisionHash: 'abcd1234' },
      conditions: [condition('RolloutPlanDrift', 'True', 'SpecNewerThanRun'), condition('RolloutPlanReady', 'True', 'Pinned')],
    });

    const registry: DashboardRegistry = {
      listClusters: async () => [record('edge', 'ome-edge'), record('alpha'), record('down')],
      listCheckpoints: async (id) => (id === 'alpha' ? [{ resource: 'inferenceservices', resourceVersion: '7', updatedAt: NOW - 65_000 }, { resource: 'servingruntimes', resourceVersion: '9', updatedAt: NOW - 1_000 }] : []),
      loadForwarderError: async (id) => (id === 'alpha' ? { message: `watch failed: ${HOSTILE}`, at: NOW - 5_000 } : undefined),
    };
    snapshot = await gatherFleet({
      registry,
      now: () => NOW,
      readerFor: async (found) => {
        if (found.id === 'down') throw new Error('connect ECONNREFUSED 10.0.0.9:6443');
        // Both registered ids read the one embedded server; edge's OME namespace is empty.
        return cluster.client;
      },
    });
  }, 60_000);

  afterAll(async () => {
    await cluster?.stop();
  });

  it('lists every registered cluster with its mode, forwarder lag and last error, and says why one cannot be read', () => {
    expect(snapshot.clusters.map((row) => row.id)).toEqual(['alpha', 'down', 'edge']);
    const alpha = snapshot.clusters[0]!;
    expect(alpha).toMatchObject({ mode: 'standalone', lagMs: 65_000, lastCheckpointAt: new Date(NOW - 1_000).toISOString(), inferenceServices: 4 });
    expect(alpha.lastError?.message).toBe(`watch failed: ${HOSTILE}`);
    expect(alpha.readError).toBeUndefined();
    expect(snapshot.clusters[1]).toMatchObject({ lagMs: null, readError: 'connect ECONNREFUSED 10.0.0.9:6443', inferenceServices: 0 });
  });

  it('groups drifting InferenceServices by their RuntimeDrifted reason, leaving in-sync ones out', () => {
    const alpha = snapshot.drift.filter((row) => row.cluster === 'alpha');
    expect(alpha.map((row) => [row.reason, row.namespace, row.name])).toEqual([
      ['RevisionMismatch', 'prod', 'drifting'],
      ['RevisionMissing', 'prod', 'missing'],
    ]);
    expect(alpha[0]!.message).toBe(HOSTILE);
  });

  it('shows an active canary run with its step of N, traffic, phase and plan drift', () => {
    const alpha = snapshot.rollouts.filter((row) => row.cluster === 'alpha');
    expect(alpha).toEqual([
      {
        cluster: 'alpha',
        namespace: 'prod',
        name: 'canary',
        runID: `run-${HOSTILE}`,
        openedAt: '2026-10-08T13:00:00Z',
        groups: [{ index: 0, components: 'engine', strategy: 'Canary', step: 'step 1/2', trafficWeight: 50, phase: 'Paused' }],
        hold: '',
        planDrift: 'True/SpecNewerThanRun',
      },
    ]);
  });

  it('counts InferenceServices per pinned revision and the GC backlog of the OME namespace', () => {
    expect(snapshot.pins.filter((row) => row.cluster === 'alpha')).toEqual([
      { cluster: 'alpha', revision: pinnedRevision, count: 2 },
      { cluster: 'alpha', revision: 'r-gone', count: 1 },
    ]);
    expect(snapshot.gc).toEqual([
      { cluster: 'alpha', namespace: 'ome', revisions: 24, marked: 1, beyondRetention: 3, due: 1 },
      { cluster: 'edge', namespace: 'ome-edge', revisions: 0, marked: 0, beyondRetention: 0, due: 0 },
    ]);
  });

  it('renders every value escaped: a hostile message or run id stays text', () => {
    const html = renderFleet(snapshot);
    expect(html).not.toContain('<img');
    expect(html).not.toContain('onerror="');
    expect(html).toContain(escapeHtml(HOSTILE));
    expect(html).toContain('&lt;img src=x onerror=&quot;alert(1)&quot;&gt;&amp;&#39;&#96;');
    expect(html).toMatch(/<h3 class="reason">RevisionMismatch<\/h3>/);
    expect(html).toContain('<td>#0 Canary engine step 1/2 50% Paused</td>');
    expect(html).toContain('<td>1m5s</td>');
  });
});

describe('escapeHtml and durationText', () => {
  it.each([
    ['plain', 'plain'],
    ['<b>', '&lt;b&gt;'],
    ['a & b', 'a &amp; b'],
    ['"q"', '&quot;q&quot;'],
    ["'s'", '&#39;s&#39;'],
    ['`t`', '&#96;t&#96;'],
    ['&lt;', '&amp;lt;'],
  ])('escapes %j as %j', (input, output) => {
    expect(escapeHtml(input)).toBe(output);
  });

  it.each([
    [0, '0ms'],
    [250, '250ms'],
    [1_000, '1s'],
    [65_000, '1m5s'],
    [3_600_000, '1h0m0s'],
  ])('prints %d ms as %s', (ms, text) => {
    expect(durationText(ms)).toBe(text);
  });
});

describe('gatherFleet bounds', () => {
  it('follows list pages, keeps 200 rows per section and says how many it left out', async () => {
    const services = Array.from({ length: 250 }, (_, index) => ({
      apiVersion: 'ome.io/v1beta1',
      kind: 'InferenceService',
      metadata: { name: `svc-${String(index).padStart(3, '0')}`, namespace: 'prod' },
      status: { conditions: [condition('RuntimeDrifted', 'True', 'RevisionMismatch', 'x'.repeat(1_000))] },
    }));
    const listed: Array<string | undefined> = [];
    const reader = {
      list: async (type: { plural: string }, options: { continue?: string; limit?: number } = {}) => {
        if (type.plural !== 'inferenceservices') return { items: [], resourceVersion: '1' };
        listed.push(options.continue);
        const start = Number(options.continue ?? 0);
        const end = start + (options.limit ?? 500) / 5;
        return { items: services.slice(start, end), resourceVersion: '1', ...(end < services.length ? { continue: String(end) } : {}) };
      },
    } as unknown as ClusterClient;
    const snapshot = await gatherFleet({
      registry: { listClusters: async () => [record('big')], listCheckpoints: async () => [], loadForwarderError: async () => undefined },
      readerFor: async () => reader,
      now: () => NOW,
    });
    expect(listed).toEqual([undefined, '100', '200']);
    expect(snapshot.clusters[0]?.inferenceServices).toBe(250);
    expect(snapshot.drift).toHaveLength(200);
    expect(snapshot.drift[199]?.name).toBe('svc-199');
    expect(snapshot.truncated).toEqual({ drift: 50 });
    expect(snapshot.drift[0]?.message).toHaveLength(256);
    expect(renderFleet(snapshot)).toContain('<p class="note">50 more not shown</p>');
  });
});

describe('fleet sync waves on the page', () => {
  const NOW_MS = Date.parse('2026-12-08T10:20:00Z');
  const runtime = { kind: 'ServingRuntime' as const, namespace: 'team-a', name: 'vllm-llama' };
  /** A staged wave whose canary stage acknowledged at 10:05: the main stage soaks until 10:35. */
  function soakingWave(): SyncWave {
    const wave = createSyncWave({
      id: 'w-staged',
      runtime,
      clusterIds: ['eu-1', 'eu-2', 'eu-3'],
      ackTimeout: '30m',
      ackTimeoutMs: 1_800_000,
      now: NOW_MS - 3_600_000,
      stages: { stages: [{ selector: 'tier=canary' }, { selector: 'tier=main' }], stageOf: [0, 1, 1] },
      maxUpdate: '50%',
      soak: { text: '30m', ms: 1_800_000 },
    });
    wave.clusters[0] = { ...wave.clusters[0]!, state: 'Acknowledged', startedAt: NOW_MS - 1_800_000, acknowledgedAt: Date.parse('2026-12-08T10:05:00Z') };
    return wave;
  }
  const halted = (): SyncWave => ({
    ...createSyncWave({ id: 'w-halted', runtime, clusterIds: ['us-1', 'us-2'], ackTimeout: '30m', ackTimeoutMs: 1_800_000, now: NOW_MS - 7_200_000 }),
    state: 'Halted',
    updatedAt: NOW_MS - 3_600_000,
    failure: { clusterId: 'us-1', reason: 'RuntimePinError', message: 'team-a/chat: RuntimePinError: model cache unavailable' },
  });
  const longDone = (): SyncWave => ({ ...createSyncWave({ id: 'w-old', runtime, clusterIds: ['ap-1'], ackTimeout: '30m', ackTimeoutMs: 1, now: NOW_MS - 3 * 86_400_000 }), state: 'Completed', updatedAt: NOW_MS - 2 * 86_400_000 });
  const registryWith = (listWaves: () => Promise<SyncWave[]>): DashboardRegistry => ({ listClusters: async () => [], listCheckpoints: async () => [], loadForwarderError: async () => undefined, listWaves });

  it('shows running waves stage by stage with what they wait for, and a halt for a day', async () => {
    const snapshot = await gatherFleet({ registry: registryWith(async () => [halted(), soakingWave(), longDone()]), now: () => NOW_MS, readerFor: async () => Promise.reject(new Error('no cluster')) });

    expect(snapshot.waves.map((row) => row.id)).toEqual(['w-staged', 'w-halted']);
    expect(snapshot.waves[0]).toEqual({
      id: 'w-staged',
      runtime: 'ServingRuntime team-a/vllm-llama',
      state: 'Running',
      acknowledged: '1/3',
      pace: '50% at once, soak 30m',
      stages: [
        { stage: 1, selector: 'tier=canary', acknowledged: 1, clusters: 1, syncing: [] },
        { stage: 2, selector: 'tier=main', acknowledged: 0, clusters: 2, syncing: [] },
      ],
      waiting: 'stage 2 starts at 2026-12-08T10:35:00.000Z (soak)',
    });
    expect(snapshot.waves[1]?.waiting).toBe('halted at us-1: RuntimePinError: team-a/chat: RuntimePinError: model cache unavailable');
    const html = renderFleet(snapshot);
    expect(html).toContain('<td>1. tier=canary 1/1; 2. tier=main 0/2</td>');
    expect(html).toContain('<td>one at a time</td>');
  });

  it('says when the waves cannot be read, and still shows the rest', async () => {
    const snapshot = await gatherFleet({ registry: registryWith(async () => Promise.reject(new Error('AccessDeniedException: not authorized to Query FLEET'))), now: () => NOW_MS, readerFor: async () => Promise.reject(new Error('no cluster')) });

    expect(snapshot.waves).toEqual([]);
    expect(renderFleet(snapshot)).toContain('<p class="empty" id="waves-error">The waves could not be read: AccessDeniedException: not authorized to Query FLEET</p>');
  });
});
