/**
 * Advancing a wave against an embedded API server with no controller in it (nothing ever
 * acknowledges) and a fake clock: the deadline halts the wave, an invocation that died
 * between recording a step and patching is completed by the next one with one patch, and
 * a cluster that is unreachable is retried until its deadline, then halts the wave.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startEmbeddedCluster, type EmbeddedCluster } from '../../local/cluster';
import { InvalidInputError, UnavailableError } from '../../shared/domain/errors';
import { advanceSyncWave, startSyncWave, type FleetDeps } from '../../shared/use-cases/fleet/advance-sync-wave';
import { Resources } from '../../shared/domain/model/resources';
import type { ClusterClient } from '../../shared/ports/cluster';
import type { Stores } from '../../shared/ports/store';
import { createMemoryStores } from '../../shared/adapters/memory';
import { FakeClock } from '../store/fake-clock';
import { applyRuntime, getIsvc, NS, RUNTIME, seedIsvc, seedRuntime } from '../pinning/support';

let cluster: EmbeddedCluster;

beforeAll(async () => {
  cluster = await startEmbeddedCluster({ workloadReadyDelayMs: 5 });
  await cluster.client.create(Resources.namespaces, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } });
  await applyRuntime(cluster.client, seedRuntime('0.9'));
});

afterAll(async () => {
  await cluster?.stop();
});

/** A pinned InferenceService that drifts with RevisionMismatch, its status written as upstream would. */
async function driftingIsvc(name: string): Promise<void> {
  const created = await cluster.client.create(Resources.inferenceServices, seedIsvc(name, {}, { 'ome.io/runtime-sync': 'ticket-1' }));
  await cluster.client.replaceStatus(Resources.inferenceServices, {
    ...created,
    status: {
      pinnedRevisionName: 'r-llama-demo-sglang-llama-3-2-3b-590753e8',
      lastRuntimeSyncToken: 'ticket-1',
      conditions: [{ type: 'RuntimeDrifted', status: 'True', reason: 'RevisionMismatch', message: 'pinned r-llama-demo-sglang-llama-3-2-3b-590753e8, live spec differs; bump ome.io/runtime-sync annotation to advance' }],
    },
  });
}

describe('advanceSyncWave', () => {
  let clock: FakeClock;
  let stores: Stores;
  let patches: number;
  let failPatches: number;
  let unreachable: boolean;
  let deps: FleetDeps;

  beforeEach(async () => {
    clock = new FakeClock(Date.parse('2026-12-01T10:00:00Z'));
    stores = createMemoryStores(clock);
    patches = 0;
    failPatches = 0;
    unreachable = false;
    await stores.clusters.putCluster({ id: 'one', server: cluster.url, credentials: { kind: 'kubeconfig', kubeconfig: '' }, omeNamespace: 'ome', mode: 'delegate' });
    const client: ClusterClient = {
      ...cluster.client,
      get: (type, namespace, name) => (unreachable ? Promise.reject(new UnavailableError('connect ECONNREFUSED')) : cluster.client.get(type, namespace, name)),
      list: (type, options) => (unreachable ? Promise.reject(new UnavailableError('connect ECONNREFUSED')) : cluster.client.list(type, options)),
      patch: (type, namespace, name, patch, options) => {
        if (failPatches > 0) {
          failPatches -= 1;
          return Promise.reject(new UnavailableError('the invocation died before its patch'));
        }
        patches += 1;
        return cluster.client.patch(type, namespace, name, patch, options);
      },
    };
    deps = { fleet: stores.fleet, clusters: stores.clusters, clock, cluster: async (id) => ({ id, client, omeNamespace: 'ome', mode: 'delegate' }) };
  });

  it('halts the wave when no acknowledgement comes within the deadline', async () => {
    // Prepare
    await driftingIsvc('deadline');
    const wave = await startSyncWave(deps, { runtime: { kind: 'ServingRuntime', namespace: NS, name: RUNTIME }, ackTimeout: '1h30m' });
    expect(wave.ackTimeoutMs).toBe(5_400_000);

    // Act: set the token, then advance just before and at the deadline.
    expect((await advanceSyncWave(deps, wave.id)).outcome).toBe('waiting');
    expect((await getIsvc(cluster.client, 'deadline')).metadata.annotations?.['ome.io/runtime-sync']).toBe(wave.token);
    clock.advance(5_399_999);
    expect((await advanceSyncWave(deps, wave.id)).outcome).toBe('waiting');
    clock.advance(1);
    const outcome = await advanceSyncWave(deps, wave.id);

    // Assess
    expect(outcome.outcome).toBe('halted');
    expect((await stores.fleet.getWave(wave.id))?.failure).toEqual({ clusterId: 'one', namespace: NS, name: 'deadline', reason: 'AcknowledgementTimeout', message: `${NS}/deadline: not acknowledged within 1h30m` });
    expect(patches).toBe(1);
    await cluster.client.delete(Resources.inferenceServices, NS, 'deadline');
  });

  it('sends the patch a died invocation recorded but never sent, once', async () => {
    // Prepare
    await driftingIsvc('redelivered');
    const wave = await startSyncWave(deps, { runtime: { kind: 'ServingRuntime', namespace: NS, name: RUNTIME } });

    // Act: the first invocation records the step and dies before its patch; the redelivery goes on.
    failPatches = 1;
    await expect(advanceSyncWave(deps, wave.id)).rejects.toBeInstanceOf(UnavailableError);
    expect((await stores.fleet.getWave(wave.id))?.clusters[0]?.state).toBe('Syncing');
    expect((await getIsvc(cluster.client, 'redelivered')).metadata.annotations?.['ome.io/runtime-sync']).toBe('ticket-1');
    for (let i = 0; i < 3; i += 1) expect((await advanceSyncWave(deps, wave.id)).outcome).toBe('waiting');

    // Assess
    expect((await getIsvc(cluster.client, 'redelivered')).metadata.annotations?.['ome.io/runtime-sync']).toBe(wave.token);
    expect(patches).toBe(1);
    await cluster.client.delete(Resources.inferenceServices, NS, 'redelivered');
  });

  it('retries an unreachable cluster until its deadline, then halts naming the cluster', async () => {
    // Prepare
    await driftingIsvc('unreachable');
    const wave = await startSyncWave(deps, { runtime: { kind: 'ServingRuntime', namespace: NS, name: RUNTIME }, ackTimeout: '10m' });
    expect((await advanceSyncWave(deps, wave.id)).outcome).toBe('waiting');

    // Act
    unreachable = true;
    await expect(advanceSyncWave(deps, wave.id)).rejects.toBeInstanceOf(UnavailableError);
    expect((await stores.fleet.getWave(wave.id))?.state).toBe('Running');
    clock.advance(600_000);
    const outcome = await advanceSyncWave(deps, wave.id);

    // Assess
    expect(outcome.outcome).toBe('halted');
    expect((await stores.fleet.getWave(wave.id))?.failure).toMatchObject({ clusterId: 'one', reason: 'ClusterUnreachable', message: 'cluster one: connect ECONNREFUSED' });
    unreachable = false;
    await cluster.client.delete(Resources.inferenceServices, NS, 'unreachable');
  });

  it('refuses a standalone or unknown cluster named explicitly, and a bad deadline', async () => {
    await stores.clusters.putCluster({ id: 'solo', server: cluster.url, credentials: { kind: 'kubeconfig', kubeconfig: '' }, omeNamespace: 'ome', mode: 'standalone' });
    const runtime = { kind: 'ServingRuntime' as const, namespace: NS, name: RUNTIME };
    await expect(startSyncWave(deps, { runtime, clusterIds: ['solo'] })).rejects.toThrow('cluster solo is not a delegate cluster');
    await expect(startSyncWave(deps, { runtime, clusterIds: ['nowhere'] })).rejects.toThrow('cluster nowhere is not registered');
    await expect(startSyncWave(deps, { runtime, ackTimeout: '10' })).rejects.toThrow('time: missing unit in duration "10"');
    await expect(startSyncWave(deps, { runtime, ackTimeout: '0s' })).rejects.toThrow('must be positive');
    expect(await stores.fleet.listWaves()).toEqual([]);
  });

  it('refuses stages that leave a chosen cluster out, and a bad maxUpdate or soak, recording nothing', async () => {
    await stores.clusters.putCluster({ id: 'two', server: cluster.url, credentials: { kind: 'kubeconfig', kubeconfig: '' }, omeNamespace: 'ome', mode: 'delegate', labels: { tier: 'main' } });
    const runtime = { kind: 'ServingRuntime' as const, namespace: NS, name: RUNTIME };
    await expect(startSyncWave(deps, { runtime, stages: ['tier=canary', 'tier=main'] })).rejects.toThrow(
      'cluster one matches no stage (tier=canary | tier=main): add a stage that matches it, or leave it out of the wave',
    );
    await expect(startSyncWave(deps, { runtime, stages: ['tier in (main'] })).rejects.toThrow(InvalidInputError);
    await expect(startSyncWave(deps, { runtime, maxUpdate: '150%' })).rejects.toThrow('maxUpdate "150%": a percentage is 1% to 100%');
    await expect(startSyncWave(deps, { runtime, maxUpdate: 'all' })).rejects.toThrow('maxUpdate "all": give a count of clusters (2) or a share of the stage (50%)');
    await expect(startSyncWave(deps, { runtime, stages: ['!tier', 'tier'], soak: '-5m' })).rejects.toThrow('soak "-5m" must be positive');
    expect(await stores.fleet.listWaves()).toEqual([]);

    const staged = await startSyncWave(deps, { runtime, stages: ['!tier', 'tier'], maxUpdate: '50%', soak: '30m' });
    expect(staged).toMatchObject({ stages: [{ selector: '!tier' }, { selector: 'tier' }], maxUpdate: '50%', soak: '30m', soakMs: 1_800_000 });
    expect(staged.clusters.map((step) => `${step.stage}:${step.clusterId}`)).toEqual(['0:one', '1:two']);
  });
});
