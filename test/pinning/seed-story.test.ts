/**
 * The pinning page (seed 000) at use-case level, in its order: each step changes the
 * cluster as the user's kubectl command would, then runs what the hint it causes runs
 * (an InferenceService change → pin; a runtime change → drift check), and checks what the
 * user would print.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { pinInferenceService } from '../../shared/use-cases/pinning';
import { Resources } from '../../shared/domain/model/resources';
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

/**
 * Each test starts from a fresh cluster and replays the user's earlier steps (their
 * kubectl commands and the hints those cause, without the earlier checks), so it passes
 * or fails the same run alone, in order or shuffled.
 */
beforeEach(async () => {
  world = await startPinningWorld();
  await applyRuntime(world.admin, seedRuntime('0.9'));
});

afterEach(async () => {
  await world?.stop();
});

type Step = (world: PinningWorld) => Promise<unknown>;

const setAutoSync = (autoSync: boolean, revision?: string): Step => async (w) => {
  await editIsvc(w.admin, ISVC, (isvc) => {
    isvc.spec.runtime = { name: RUNTIME, kind: 'ServingRuntime', autoSync, ...(revision ? { revision } : {}) };
  });
  return w.pin(ISVC);
};
const changeRuntime = (memFrac: '0.9' | '0.85'): Step => async (w) => {
  await applyRuntime(w.admin, seedRuntime(memFrac));
  return w.driftCheck(runtimeChanged);
};
const setSync = (token: string): Step => async (w) => {
  await annotateSync(w.admin, ISVC, token);
  return w.pin(ISVC);
};

/** The page's steps, in order: what the user does, and what the hint it causes runs. */
const STEPS = {
  create: (async (w) => {
    await w.admin.create(Resources.inferenceServices, seedIsvc());
    return w.pin(ISVC);
  }) as Step,
  pinAgain: (async (w) => {
    w.client.reset();
    return w.pin(ISVC);
  }) as Step,
  runtimeTo085: changeRuntime('0.85'),
  minReplicas: (async (w) => {
    await editIsvc(w.admin, ISVC, (isvc) => {
      isvc.spec.engine = { minReplicas: 2, maxReplicas: 2 };
    });
    return w.pin(ISVC);
  }) as Step,
  syncTo085: setSync('mem-frac-0-85'),
  explicit090: setAutoSync(false, REV_090),
  syncWhileExplicit: (async (w) => {
    await annotateSync(w.admin, ISVC, 'ignored-while-explicit');
    w.client.reset();
    const pinned = await w.pin(ISVC);
    const drift = await w.driftCheck(runtimeChanged);
    const writes = w.client.writes();
    await annotateSync(w.admin, ISVC, 'mem-frac-0-85');
    return { pinned, drift, writes };
  }) as Step,
  followLive: setAutoSync(true),
  resumePinning: setAutoSync(false),
  runtimeBackTo090: changeRuntime('0.9'),
  setEarly: (async (w) => {
    await annotateSync(w.admin, ISVC, 'set-early');
    const pinned = await w.pin(ISVC);
    const token = (await pinColumns(w.admin)).token;
    await applyRuntime(w.admin, seedRuntime('0.85'));
    return { pinned, token, drift: await w.driftCheck(runtimeChanged) };
  }) as Step,
  earlyToken: (async (w) => {
    await w.admin.create(Resources.inferenceServices, seedIsvc('early-token', {}, { 'ome.io/runtime-sync': 'at-create' }));
    return w.pin('early-token');
  }) as Step,
} satisfies Record<string, Step>;
type StepName = keyof typeof STEPS;
const ORDER = Object.keys(STEPS) as StepName[];

/** Replays every step before `step` on the current world, then runs `step` and returns its result. */
async function reach<T = unknown>(step: StepName): Promise<T> {
  for (const earlier of ORDER.slice(0, ORDER.indexOf(step))) await STEPS[earlier](world);
  return (await STEPS[step](world)) as T;
}

/** The steps before `step` only, for a check that needs the state before it acts. */
async function reachBefore(step: StepName): Promise<void> {
  for (const earlier of ORDER.slice(0, ORDER.indexOf(step))) await STEPS[earlier](world);
}

describe('seed 000: runtime revisions and pinning', () => {
  it('pins a new InferenceService to a revision of the live spec and renders from it', async () => {
    const result = await reach('create');
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
    expect(await reach('pinAgain')).toMatchObject({ statusWritten: false, revisionCreated: false, workload: 'unchanged' });
    expect(world.client.writes()).toBe(0);
  });

  it('reports RevisionMismatch with the seed message when the runtime changes, and leaves the workload', async () => {
    await reachBefore('runtimeTo085');
    const before = await engineView(world.admin);
    expect(before).toMatchObject({ renderedFrom: REV_090 });
    const report = await STEPS.runtimeTo085(world);
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
    await reachBefore('minReplicas');
    const before = await engineView(world.admin);
    expect(before).toMatchObject({ renderedFrom: REV_090, replicas: 1 });
    // The only status change is the generation pin acted on; the workload stays as it was.
    expect(await STEPS.minReplicas(world)).toMatchObject({ outcome: 'drifted', drift: 'RevisionMismatch', workload: 'paused', statusWritten: true });
    expect(await engineView(world.admin)).toEqual(before);
  });

  it('rolls forward on a new ome.io/runtime-sync value, removes the condition and renders 0.85', async () => {
    expect(await reach('syncTo085')).toMatchObject({ outcome: 'pinned', pinnedRevisionName: REV_085, tokenApplied: 'mem-frac-0-85', workload: 'updated' });
    expect(await pinColumns(world.admin)).toEqual({ pinned: REV_085, drifted: '<none>', reason: '<none>', message: '', token: 'mem-frac-0-85' });
    expect(await engineView(world.admin)).toMatchObject({ renderedFrom: REV_085, replicas: 2, args: expect.arrayContaining(['--mem-frac=0.85']) });
    expect(await revisionNames(world.admin)).toEqual([REV_090, REV_085].sort());
  });

  it('rolls back to an explicit revision and renders 0.9 again', async () => {
    expect(await reach('explicit090')).toMatchObject({ outcome: 'pinned', pinnedRevisionName: REV_090, workload: 'updated' });
    expect(await pinColumns(world.admin)).toMatchObject({ pinned: REV_090, drifted: '<none>', token: 'mem-frac-0-85' });
    expect(await engineView(world.admin)).toMatchObject({ renderedFrom: REV_090, args: expect.arrayContaining(['--mem-frac=0.9']) });
  });

  it('ignores ome.io/runtime-sync while a revision is named, and a runtime change does not drift it', async () => {
    const { pinned, drift, writes } = await reach<{ pinned: unknown; drift: unknown; writes: number }>('syncWhileExplicit');
    expect(pinned).toMatchObject({ pinnedRevisionName: REV_090, statusWritten: false, workload: 'unchanged' });
    expect(drift).toMatchObject({ evaluated: 1, statusWrites: 0, pinned: 0 });
    expect(writes).toBe(0);
    expect(await pinColumns(world.admin)).toMatchObject({ pinned: REV_090, drifted: '<none>', token: 'mem-frac-0-85' });
  });

  it('stops pinning: follows the live runtime and keeps the status', async () => {
    expect(await reach('followLive')).toMatchObject({ outcome: 'follow-live', workload: 'updated' });
    expect(await pinColumns(world.admin)).toMatchObject({ pinned: REV_090, drifted: '<none>', token: 'mem-frac-0-85' });
    expect(await engineView(world.admin)).toMatchObject({ renderedFrom: 'live', args: expect.arrayContaining(['--mem-frac=0.85']) });
  });

  it('resumes from the last revision when autoSync is false again, not from the live spec', async () => {
    expect(await reach('resumePinning')).toMatchObject({ outcome: 'drifted', pinnedRevisionName: REV_090, drift: 'RevisionMismatch', workload: 'paused' });
    expect(await pinColumns(world.admin)).toMatchObject({ pinned: REV_090, drifted: 'True', reason: 'RevisionMismatch' });
  });

  it('removes the condition and resumes rendering when the runtime change is undone', async () => {
    expect(await reach('runtimeBackTo090')).toMatchObject({ evaluated: 1, pinned: 1 });
    expect(await pinColumns(world.admin)).toMatchObject({ pinned: REV_090, drifted: '<none>' });
    expect(await engineView(world.admin)).toMatchObject({ renderedFrom: REV_090, replicas: 2, args: expect.arrayContaining(['--mem-frac=0.9']) });
  });

  it('waits with a value set before the change and rolls at the next change without drift', async () => {
    const { pinned, token, drift } = await reach<{ pinned: unknown; token: string; drift: unknown }>('setEarly');
    expect(pinned).toMatchObject({ statusWritten: false });
    expect(token).toBe('mem-frac-0-85');
    expect(drift).toMatchObject({ evaluated: 1, statusWrites: 0, pinned: 1 });
    expect(await pinColumns(world.admin)).toEqual({ pinned: REV_085, drifted: '<none>', reason: '<none>', message: '', token: 'set-early' });
    expect(await engineView(world.admin)).toMatchObject({ renderedFrom: REV_085 });
  });

  it('records a value present at the first pin without acting on it', async () => {
    expect(await reach('earlyToken')).toMatchObject({ outcome: 'pinned', pinnedRevisionName: REV_085, revisionCreated: false });
    expect(await pinColumns(world.admin, 'early-token')).toMatchObject({ pinned: REV_085, token: 'at-create', drifted: '<none>' });
  });

  it('shares one revision between InferenceServices pinned to the same spec', async () => {
    await reach('earlyToken');
    expect(await revisionNames(world.admin)).toEqual([REV_090, REV_085].sort());
    expect((await getIsvc(world.admin, 'early-token')).status?.pinnedRevisionName).toBe(REV_085);
    expect((await getIsvc(world.admin)).status?.pinnedRevisionName).toBe(REV_085);
  });

  it('renders nothing when RENDER_WORKLOADS is off', async () => {
    const off = { ...world.deps, config: { ...world.deps.config, renderWorkloads: false } };
    await world.admin.create(Resources.inferenceServices, seedIsvc('no-render'));
    expect(await pinInferenceService(off, { namespace: NS, name: 'no-render' })).toMatchObject({ outcome: 'pinned', workload: 'disabled' });
    expect(await engineView(world.admin, 'no-render')).toBeUndefined();
  });
});
