/**
 * Every RuntimeDrifted reason with upstream's message, and the RuntimePinError cases,
 * through the use-cases on the embedded cluster.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Resources } from '../../shared/domain/model/resources';
import { RuntimePinError } from '../../shared/use-cases/pinning';
import {
  annotateSync,
  applyRuntime,
  editIsvc,
  engineView,
  getIsvc,
  NS,
  pinColumns,
  REV_085,
  REV_090,
  RUNTIME,
  seedIsvc,
  seedRuntime,
  startPinningWorld,
  warningEvents,
  type PinningWorld,
} from './support';

let world: PinningWorld;

beforeAll(async () => {
  world = await startPinningWorld();
  await applyRuntime(world.admin, seedRuntime('0.9'));
  await applyRuntime(world.admin, seedRuntime('0.9', { name: 'other-runtime' }));
});

afterAll(async () => {
  await world?.stop();
});

describe('RuntimeDrifted reasons', () => {
  it('RevisionMissing for an explicit revision that does not exist, pausing the workload', async () => {
    const missing = 'r-llama-demo-sglang-llama-3-2-3b-00000000';
    await world.admin.create(Resources.inferenceServices, seedIsvc('explicit-missing', { revision: missing }));
    expect(await world.pin('explicit-missing')).toMatchObject({ outcome: 'drifted', drift: 'RevisionMissing', workload: 'paused' });
    expect(await pinColumns(world.admin, 'explicit-missing')).toMatchObject({
      drifted: 'True',
      reason: 'RevisionMissing',
      message: `explicit pin ${missing} not found in namespace ome`,
    });
    expect(await engineView(world.admin, 'explicit-missing')).toBeUndefined();
  });

  it('RuntimeMismatch for a revision of another runtime', async () => {
    await world.admin.create(Resources.inferenceServices, { ...seedIsvc('other'), spec: { ...seedIsvc('other').spec, runtime: { name: 'other-runtime', kind: 'ServingRuntime', autoSync: false } } });
    const { pinnedRevisionName: otherRevision } = await world.pin('other');
    await world.admin.create(Resources.inferenceServices, seedIsvc('mismatch', { revision: otherRevision }));
    expect(await world.pin('mismatch')).toMatchObject({ drift: 'RuntimeMismatch', workload: 'paused' });
    expect(await pinColumns(world.admin, 'mismatch')).toMatchObject({
      reason: 'RuntimeMismatch',
      message: `revision ${otherRevision} belongs to runtime "other-runtime" but ISVC references "${RUNTIME}"`,
    });
  });

  it('RevisionMissing when the pinned revision is deleted, found by the revision-delete fan-out', async () => {
    await world.admin.create(Resources.inferenceServices, seedIsvc('pinned'));
    expect(await world.pin('pinned')).toMatchObject({ pinnedRevisionName: REV_090 });
    await world.admin.delete(Resources.controllerRevisions, 'ome', REV_090);
    const report = await world.driftCheck({ kind: 'ControllerRevision', namespace: 'ome', name: REV_090, change: 'deleted' });
    expect(report).toMatchObject({ scope: 'revision', evaluated: 1, statusWrites: 1 });
    expect(await pinColumns(world.admin, 'pinned')).toMatchObject({ reason: 'RevisionMissing', message: `pinned revision ${REV_090} missing from ome` });
  });

  it('RevisionMissing is not cleared by rolling forward; pinning an existing revision clears it', async () => {
    await annotateSync(world.admin, 'pinned', 'try-forward');
    expect(await world.pin('pinned')).toMatchObject({ drift: 'RevisionMissing', statusWritten: false });
    await applyRuntime(world.admin, seedRuntime('0.85'));
    await world.admin.create(Resources.inferenceServices, seedIsvc('makes-085'));
    await world.pin('makes-085');
    await editIsvc(world.admin, 'pinned', (isvc) => {
      isvc.spec.runtime = { name: RUNTIME, kind: 'ServingRuntime', autoSync: false, revision: REV_085 };
    });
    expect(await world.pin('pinned')).toMatchObject({ outcome: 'pinned', pinnedRevisionName: REV_085, workload: 'updated' });
    expect(await pinColumns(world.admin, 'pinned')).toMatchObject({ drifted: '<none>' });
  });

  it('SourceRuntimeMissing when the runtime is deleted: keeps serving from the revision', async () => {
    const before = await engineView(world.admin, 'makes-085');
    await world.admin.delete(Resources.servingRuntimes, NS, RUNTIME);
    const report = await world.driftCheck({ kind: 'ServingRuntime', namespace: NS, name: RUNTIME, change: 'deleted' });
    expect(report.statusWrites).toBeGreaterThanOrEqual(1);
    expect(await pinColumns(world.admin, 'makes-085')).toMatchObject({
      drifted: 'True',
      reason: 'SourceRuntimeMissing',
      message: `runtime ${RUNTIME} not found; serving from pinned revision ${REV_085}`,
    });
    expect(await world.pin('makes-085')).toMatchObject({ drift: 'SourceRuntimeMissing', workload: 'unchanged' });
    expect(await engineView(world.admin, 'makes-085')).toEqual(before);
  });

  it('removes SourceRuntimeMissing when the runtime comes back', async () => {
    await applyRuntime(world.admin, seedRuntime('0.85'));
    await world.driftCheck({ kind: 'ServingRuntime', namespace: NS, name: RUNTIME, change: 'added' });
    expect(await pinColumns(world.admin, 'makes-085')).toMatchObject({ pinned: REV_085, drifted: '<none>' });
  });
});

describe('RuntimePinError', () => {
  it('on a missing runtime at the first pin: a Warning event, no status, no workload, retried', async () => {
    await world.admin.create(Resources.inferenceServices, { ...seedIsvc('no-runtime'), spec: { ...seedIsvc().spec, runtime: { name: 'absent', kind: 'ServingRuntime', autoSync: false } } });
    const error = await world.pin('no-runtime').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RuntimePinError);
    expect((error as RuntimePinError).retryable).toBe(true);
    expect(await warningEvents(world.admin, 'no-runtime')).toEqual([
      { reason: 'RuntimePinError', message: 'resolve live runtime absent: ServingRuntime absent not found in namespace llama-demo', count: 1 },
    ]);
    expect((await getIsvc(world.admin, 'no-runtime')).status?.pinnedRevisionName).toBeUndefined();
    expect(await engineView(world.admin, 'no-runtime')).toBeUndefined();
  });

  it('the retry pins once the runtime exists, through the runtime fan-out', async () => {
    await applyRuntime(world.admin, seedRuntime('0.9', { name: 'absent' }));
    expect(await world.driftCheck({ kind: 'ServingRuntime', namespace: NS, name: 'absent', change: 'added' })).toMatchObject({ pinned: 1 });
    expect(await pinColumns(world.admin, 'no-runtime')).toMatchObject({ pinned: expect.stringMatching(/^r-llama-demo-absent-[0-9a-f]{8}$/) });
  });

  it('on a broken inheritance chain, even when already pinned: nothing changes', async () => {
    await applyRuntime(world.admin, seedRuntime('0.9', { name: 'child' }));
    await world.admin.create(Resources.inferenceServices, { ...seedIsvc('chain'), spec: { ...seedIsvc().spec, runtime: { name: 'child', kind: 'ServingRuntime', autoSync: false } } });
    await world.pin('chain');
    const before = await getIsvc(world.admin, 'chain');
    await applyRuntime(world.admin, seedRuntime('0.9', { name: 'child', annotations: { 'ome.io/inherit-from': 'gone' } }));
    await expect(world.pin('chain')).rejects.toBeInstanceOf(RuntimePinError);
    expect(await warningEvents(world.admin, 'chain')).toEqual([
      { reason: 'RuntimePinError', message: 'resolve live runtime child: inherit-from parent "gone" not found (chain so far: [child])', count: 1 },
    ]);
    expect((await getIsvc(world.admin, 'chain')).metadata.resourceVersion).toBe(before.metadata.resourceVersion);
  });
});

describe('RuntimeReady, advisory, as upstream', () => {
  it('turns False/RuntimeNotFound with one Warning while the runtime a service follows live is missing, and renders nothing', async () => {
    await world.admin.create(Resources.inferenceServices, { ...seedIsvc('live-missing'), spec: { ...seedIsvc().spec, runtime: { name: 'later', kind: 'ServingRuntime', autoSync: true } } });
    expect(await world.pin('live-missing')).toMatchObject({ outcome: 'follow-live', statusWritten: true, workload: 'runtime-unavailable' });
    await world.pin('live-missing');
    const message = 'runtime later not found in namespace llama-demo or at cluster scope';
    expect((await getIsvc(world.admin, 'live-missing')).status?.conditions).toEqual([
      { type: 'RuntimeReady', status: 'False', reason: 'RuntimeNotFound', message, lastTransitionTime: expect.any(String) },
    ]);
    expect(await warningEvents(world.admin, 'live-missing')).toEqual([{ reason: 'RuntimeNotFound', message, count: 1 }]);
    expect(await engineView(world.admin, 'live-missing')).toBeUndefined();
  });

  it('turns True/RuntimeResolved once the runtime exists, and renders from it', async () => {
    await applyRuntime(world.admin, seedRuntime('0.9', { name: 'later' }));
    expect(await world.pin('live-missing')).toMatchObject({ outcome: 'follow-live', statusWritten: true });
    expect((await getIsvc(world.admin, 'live-missing')).status?.conditions).toEqual([
      { type: 'RuntimeReady', status: 'True', reason: 'RuntimeResolved', lastTransitionTime: expect.any(String) },
    ]);
    expect(await engineView(world.admin, 'live-missing')).toBeDefined();
  });

  it('adds no condition to a service whose runtime was always there', async () => {
    await world.admin.create(Resources.inferenceServices, { ...seedIsvc('live-found'), spec: { ...seedIsvc().spec, runtime: { name: RUNTIME, kind: 'ServingRuntime', autoSync: true } } });
    await world.pin('live-found');
    expect((await getIsvc(world.admin, 'live-found')).status?.conditions).toBeUndefined();
  });
});
