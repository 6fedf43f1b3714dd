/**
 * The pinning page (seed 000) at use-case level, in its order: each step changes the
 * cluster as the user's kubectl command would, then runs what the hint it causes runs
 * (an InferenceService change → pin; a runtime change → drift check), and checks what the
 * user would print.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Resources } from '../../shared/model/resources';
import {
  annotateSync,
  applyRuntime,
  editIsvc,
  engineView,
  getIsvc,
  ISVC,
  NS,
  pinColumns,
  REV_085,
  REV_090,
  revisionNames,
  RUNTIME,
  seedIsvc,
  seedRuntime,
  startPinningWorld,
  type PinningWorld,
} from './support';

let world: PinningWorld;
const runtimeChanged = { kind: 'ServingRuntime', namespace: NS, name: RUNTIME, change: 'modified' } as const;

beforeAll(async () => {
  world = await startPinningWorld();
  await applyRuntime(world.admin, seedRuntime('0.9'));
});

afterAll(async () => {
  await world?.stop();
});

describe('seed 000: runtime revisions and pinning', () => {
  it('pins a new InferenceService to a revision of the live spec and renders from it', async () => {
    await world.admin.create(Resources.inferenceServices, seedIsvc());
    const result = await world.pin(ISVC);
    expect(result).toMatchObject({ outcome: 'pinned', pinnedRevisionName: REV_090, revisionCreated: true, statusWritten: true, workload: 'created' });
    expect(await pinColumns(world.admin)).toMatchObject({ pinned: REV_090, drifted: '<none>', reason: '<none>' });
    const revision = await world.admin.get(Resources.controllerRevisions, 'ome', REV_090);
    expect(revision.metadata.labels).toEqual({
      'ome.io/runtime-of': RUNTIME,
      'ome.io/runtime-of-kind': 'ServingRuntime',
      'ome.io/runtime-of-namespace': NS,
      'ome.io/revision-hash': '590753e8',
    });
    expect(await engineView(world.admin)).toMatchObject({ renderedFrom: REV_090, replicas: 1, args: expect.arrayContaining(['--mem-frac=0.9']) });
  });

  it('writes nothing when pinned again with nothing changed', async () => {
    world.client.reset();
    expect(await world.pin(ISVC)).toMatchObject({ statusWritten: false, revisionCreated: false, workload: 'unchanged' });
    expect(world.client.writes()).toBe(0);
  });

  it('reports RevisionMismatch with the seed message when the runtime changes, and leaves the workload', async () => {
    const before = await engineView(world.admin);
    await applyRuntime(world.admin, seedRuntime('0.85'));
    const report = await world.driftCheck(runtimeChanged);
    expect(report).toMatchObject({ scope: 'runtime', evaluated: 1, statusWrites: 1, pinned: 0 });
    expect(await pinColumns(world.admin)).toEqual({
      pinned: REV_090,
      drifted: 'True',
      reason: 'RevisionMismatch',
      message: `pinned ${REV_090}, live spec differs; bump ome.io/runtime-sync annotation to advance`,
      token: '',
    });
    expect(await engineView(world.admin)).toEqual(before);
  });

  it('ignores a minReplicas change while drifted', async () => {
    const before = await engineView(world.admin);
    await editIsvc(world.admin, ISVC, (isvc) => {
      isvc.spec.engine = { minReplicas: 2, maxReplicas: 2 };
    });
    // The only status change is the generation pin acted on; the workload stays as it was.
    expect(await world.pin(ISVC)).toMatchObject({ outcome: 'drifted', drift: 'RevisionMismatch', workload: 'paused', statusWritten: true });
    expect(await engineView(world.admin)).toEqual(before);
  });

  it('rolls forward on a new ome.io/runtime-sync value, removes the condition and renders 0.85', async () => {
    await annotateSync(world.admin, ISVC, 'mem-frac-0-85');
    expect(await world.pin(ISVC)).toMatchObject({ outcome: 'pinned', pinnedRevisionName: REV_085, tokenApplied: 'mem-frac-0-85', workload: 'updated' });
    expect(await pinColumns(world.admin)).toEqual({ pinned: REV_085, drifted: '<none>', reason: '<none>', message: '', token: 'mem-frac-0-85' });
    expect(await engineView(world.admin)).toMatchObject({ renderedFrom: REV_085, replicas: 2, args: expect.arrayContaining(['--mem-frac=0.85']) });
    expect(await revisionNames(world.admin)).toEqual([REV_090, REV_085].sort());
  });

  it('rolls back to an explicit revision and renders 0.9 again', async () => {
    await editIsvc(world.admin, ISVC, (isvc) => {
      isvc.spec.runtime = { name: RUNTIME, kind: 'ServingRuntime', autoSync: false, revision: REV_090 };
    });
    expect(await world.pin(ISVC)).toMatchObject({ outcome: 'pinned', pinnedRevisionName: REV_090, workload: 'updated' });
    expect(await pinColumns(world.admin)).toMatchObject({ pinned: REV_090, drifted: '<none>', token: 'mem-frac-0-85' });
    expect(await engineView(world.admin)).toMatchObject({ renderedFrom: REV_090, args: expect.arrayContaining(['--mem-frac=0.9']) });
  });

  it('ignores ome.io/runtime-sync while a revision is named, and a runtime change does not drift it', async () => {
    await annotateSync(world.admin, ISVC, 'ignored-while-explicit');
    world.client.reset();
    expect(await world.pin(ISVC)).toMatchObject({ pinnedRevisionName: REV_090, statusWritten: false, workload: 'unchanged' });
    expect(await world.driftCheck(runtimeChanged)).toMatchObject({ evaluated: 1, statusWrites: 0, pinned: 0 });
    expect(world.client.writes()).toBe(0);
    expect(await pinColumns(world.admin)).toMatchObject({ pinned: REV_090, drifted: '<none>', token: 'mem-frac-0-85' });
    await annotateSync(world.admin, ISVC, 'mem-frac-0-85');
  });

  it('stops pinning: follows the live runtime and keeps the status', async () => {
    await editIsvc(world.admin, ISVC, (isvc) => {
      isvc.spec.runtime = { name: RUNTIME, kind: 'ServingRuntime', autoSync: true };
    });
    expect(await world.pin(ISVC)).toMatchObject({ outcome: 'follow-live', workload: 'updated' });
    expect(await pinColumns(world.admin)).toMatchObject({ pinned: REV_090, drifted: '<none>', token: 'mem-frac-0-85' });
    expect(await engineView(world.admin)).toMatchObject({ renderedFrom: 'live', args: expect.arrayContaining(['--mem-frac=0.85']) });
  });

  it('resumes from the last revision when autoSync is false again, not from the live spec', async () => {
    await editIsvc(world.admin, ISVC, (isvc) => {
      isvc.spec.runtime = { name: RUNTIME, kind: 'ServingRuntime', autoSync: false };
    });
    expect(await world.pin(ISVC)).toMatchObject({ outcome: 'drifted', pinnedRevisionName: REV_090, drift: 'RevisionMismatch', workload: 'paused' });
    expect(await pinColumns(world.admin)).toMatchObject({ pinned: REV_090, drifted: 'True', reason: 'RevisionMismatch' });
  });

  it('removes the condition and resumes rendering when the runtime change is undone', async () => {
    await applyRuntime(world.admin, seedRuntime('0.9'));
    expect(await world.driftCheck(runtimeChanged)).toMatchObject({ evaluated: 1, pinned: 1 });
    expect(await pinColumns(world.admin)).toMatchObject({ pinned: REV_090, drifted: '<none>' });
    expect(await engineView(world.admin)).toMatchObject({ renderedFrom: REV_090, replicas: 2, args: expect.arrayContaining(['--mem-frac=0.9']) });
  });

  it('waits with a value set before the change and rolls at the next change without drift', async () => {
    await annotateSync(world.admin, ISVC, 'set-early');
    expect(await world.pin(ISVC)).toMatchObject({ statusWritten: false });
    expect((await pinColumns(world.admin)).token).toBe('mem-frac-0-85');
    await applyRuntime(world.admin, seedRuntime('0.85'));
    expect(await world.driftCheck(runtimeChanged)).toMatchObject({ evaluated: 1, statusWrites: 0, pinned: 1 });
    expect(await pinColumns(world.admin)).toEqual({ pinned: REV_085, drifted: '<none>', reason: '<none>', message: '', token: 'set-early' });
    expect(await engineView(world.admin)).toMatchObject({ renderedFrom: REV_085 });
  });

  it('records a value present at the first pin without acting on it', async () => {
    await world.admin.create(Resources.inferenceServices, seedIsvc('early-token', {}, { 'ome.io/runtime-sync': 'at-create' }));
    expect(await world.pin('early-token')).toMatchObject({ outcome: 'pinned', pinnedRevisionName: REV_085, revisionCreated: false });
    expect(await pinColumns(world.admin, 'early-token')).toMatchObject({ pinned: REV_085, token: 'at-create', drifted: '<none>' });
  });

  it('shares one revision between InferenceServices pinned to the same spec', async () => {
    expect(await revisionNames(world.admin)).toEqual([REV_090, REV_085].sort());
    expect((await getIsvc(world.admin, 'early-token')).status?.pinnedRevisionName).toBe((await getIsvc(world.admin)).status?.pinnedRevisionName);
  });

  it('renders nothing when RENDER_WORKLOADS is off', async () => {
    const off = { ...world.deps, config: { ...world.deps.config, renderWorkloads: false } };
    const { pinInferenceService } = await import('../../shared/pinning');
    await world.admin.create(Resources.inferenceServices, seedIsvc('no-render'));
    expect(await pinInferenceService(off, { namespace: NS, name: 'no-render' })).toMatchObject({ outcome: 'pinned', workload: 'disabled' });
    expect(await engineView(world.admin, 'no-render')).toBeUndefined();
  });
});
