/**
 * Delegate mode's use-cases against the stand-in for upstream's controller in an embedded
 * cluster: the reports read what upstream wrote and write nothing; the levers (a sync token,
 * an explicit revision, a rollout request, a revision made upstream's way) are guarded by the
 * object's uid and resourceVersion, and upstream acts on them.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmbeddedCluster, type EmbeddedCluster } from '../../local/cluster';
import { ConflictError, InvalidInputError } from '../../shared/domain/errors';
import { isSyncAcknowledged, pinRevision, readUpstreamState, reportDelegatedInferenceService, reportDelegatedRuntimeChange, requestRolloutAction, requestRuntimeSync, ensureRevision } from '../../shared/use-cases/delegate';
import type { InferenceService } from '../../shared/domain/model/inference-service';
import { Resources } from '../../shared/domain/model/resources';
import { fetchLiveRuntime } from '../../shared/use-cases/pinning';
import { pollUntil } from '../e2e/support';
import { applyRuntime, CountingClient, getIsvc, ISVC, NS, pinColumns, REV_085, REV_090, RUNTIME, seedIsvc, seedRuntime } from '../pinning/support';
import { startUpstreamController, type UpstreamController } from '../support/upstream-controller';

describe('delegate mode: reports and levers beside upstream\'s controller', () => {
  let cluster: EmbeddedCluster;
  let controller: UpstreamController;
  let plane: CountingClient;

  beforeAll(async () => {
    cluster = await startEmbeddedCluster({ workloadReadyDelayMs: 5 });
    await cluster.client.create(Resources.namespaces, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } });
    controller = startUpstreamController(cluster.client, { omeNamespace: 'ome' });
    plane = new CountingClient(cluster.client);
    await applyRuntime(cluster.client, seedRuntime('0.9'));
    await cluster.client.create(Resources.inferenceServices, seedIsvc());
    await pollUntil('pinned by upstream', () => pinColumns(cluster.client), (c) => c.pinned === REV_090);
  });
  afterAll(async () => {
    await controller?.stop();
    await cluster?.stop();
  });

  it('reports the pin and the drift upstream wrote, and writes nothing', async () => {
    await applyRuntime(cluster.client, seedRuntime('0.85'));
    await pollUntil('drift', () => pinColumns(cluster.client), (c) => c.reason === 'RevisionMismatch');
    plane.reset();
    const one = await reportDelegatedInferenceService(plane, { namespace: NS, name: ISVC });
    const fanned = await reportDelegatedRuntimeChange(plane, { kind: 'ServingRuntime', namespace: NS, name: RUNTIME });
    const elsewhere = await reportDelegatedRuntimeChange(plane, { kind: 'ServingRuntime', namespace: 'other', name: RUNTIME });
    expect(one).toMatchObject({ outcome: 'reported', state: { pinnedRevisionName: REV_090, drift: { reason: 'RevisionMismatch' }, syncPending: false } });
    expect(fanned.reports.map((entry) => entry.name)).toEqual([ISVC]);
    expect(elsewhere.reports).toEqual([]);
    expect(await reportDelegatedInferenceService(plane, { namespace: NS, name: ISVC, uid: 'another-uid' })).toMatchObject({ outcome: 'gone' });
    expect(plane.writes()).toBe(0);
  });

  it('rolls forward through ome.io/runtime-sync: upstream acknowledges the token', async () => {
    const isvc = await getIsvc(cluster.client);
    const requested = await requestRuntimeSync(plane, isvc, '2026-09-28T14:15:57Z');
    expect(readUpstreamState(requested)).toMatchObject({ syncToken: '2026-09-28T14:15:57Z', syncPending: true });
    const acknowledged = await pollUntil('acknowledged', () => getIsvc(cluster.client), (current) => isSyncAcknowledged(current, '2026-09-28T14:15:57Z'));
    expect(acknowledged.status?.pinnedRevisionName).toBe(REV_085);
    expect(plane.count('replaceStatus', 'inferenceservices')).toBe(0);
  });

  it('refuses to write over a concurrent change: the guard tests uid and resourceVersion', async () => {
    const stale = await getIsvc(cluster.client);
    await cluster.client.patch(Resources.inferenceServices, NS, ISVC, { metadata: { labels: { touched: 'yes' } } }, { type: 'merge' });
    const attempt = requestRolloutAction(plane, stale, 'paused', 'true');
    await expect(attempt).rejects.toSatisfy((error: unknown) => error instanceof ConflictError || error instanceof InvalidInputError);
    expect((await getIsvc(cluster.client)).metadata.annotations?.['ome.io/rollout-paused']).toBeUndefined();
  });

  it('pins an explicit revision with autoSync false, made upstream\'s way; upstream serves it', async () => {
    // The live merged spec (0.85 now): upstream made that revision at the roll-forward, so it is found, not changed.
    const live = await fetchLiveRuntime(plane, { kind: 'ServingRuntime', name: RUNTIME, namespace: NS });
    if (live.status !== 'found') throw new Error(`runtime not found: ${live.message}`);
    const made = await ensureRevision(plane, { kind: 'ServingRuntime', namespace: NS, runtimeName: RUNTIME, mergedSpec: live.spec, omeNamespace: 'ome' });
    expect([made.revision.metadata.name, made.created]).toEqual([REV_085, false]);
    expect(made.revision.metadata.labels).toMatchObject({ 'ome.io/runtime-of': RUNTIME, 'ome.io/runtime-of-kind': 'ServingRuntime', 'ome.io/revision-hash': 'af9539ac' });
    const pinned = await pinRevision(plane, await getIsvc(cluster.client), REV_090);
    expect(pinned.spec.runtime).toMatchObject({ autoSync: false, revision: REV_090 });
    const served = await pollUntil('served', () => getIsvc(cluster.client), (current: InferenceService) => current.status?.pinnedRevisionName === REV_090);
    expect(readUpstreamState(served)).toMatchObject({ explicitRevision: REV_090, pinnedRevisionName: REV_090 });
    expect(isSyncAcknowledged(served, '2026-09-28T14:15:57Z')).toBe(false);
  });
});

describe('readUpstreamState', () => {
  const base = seedIsvc();
  it.each([
    ['nothing yet', {}, {}, { syncToken: '', lastRuntimeSyncToken: '', syncPending: false, requests: [] }],
    ['a pending token', { 'ome.io/runtime-sync': 'b' }, { lastRuntimeSyncToken: 'a' }, { syncToken: 'b', lastRuntimeSyncToken: 'a', syncPending: true }],
    ['an acknowledged token', { 'ome.io/runtime-sync': 'a' }, { lastRuntimeSyncToken: 'a' }, { syncPending: false }],
    ['a global pause', { 'ome.io/rollout-paused': 'true' }, { rollout: { activeRun: { runID: 'chat-1', openedAt: '', pinnedAt: '', plan: { groups: [] } } } }, { run: { runID: 'chat-1', hold: 'GlobalPause' }, requests: ['ome.io/rollout-paused'] }],
    ['a pre-step hold and a promote waiting', { 'ome.io/rollout-promote': 'abc' }, { canary: { currentStep: 0, observedTrafficWeight: 5, preStepHold: true }, rollout: { activeRun: { runID: 'chat-2', openedAt: '', pinnedAt: '', plan: { groups: [] } } } }, { run: { runID: 'chat-2', hold: 'CanaryPreStep' }, requests: ['ome.io/rollout-promote'] }],
  ])('%s', (_name, annotations, status, expected) => {
    const isvc = { ...base, metadata: { ...base.metadata, annotations }, status } as unknown as InferenceService;
    expect(readUpstreamState(isvc)).toMatchObject(expected);
  });
});
