/**
 * When the forwarder saves a cluster's checkpoints: its first positions at once, soon after
 * a published hint moved a position (a crash before the save publishes it again), late when
 * only observations that needed no hint moved it (a restart replays them and publishes
 * nothing), and always at the end. The position rules themselves (never past an unsettled hint) are a table; the
 * cadence runs the real forwarder against the embedded API server and DynamoDB Local.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Resources } from '../../shared/domain/model/resources';
import type { KubeObject } from '../../shared/ports/cluster';
import type { CheckpointStore, Stores } from '../../shared/ports/store';
import { listWatchedResources, runForwarder } from '../../shared/use-cases/forwarder';
import { StreamPosition } from '../../shared/use-cases/forwarder/stream-position';
import { createNamespace, eventually, inferenceService, RecordingPublisher, startForwarderWorld, testLogger, type ForwarderWorld } from './support';

type Step = ['pass', string | undefined] | ['hold', string | undefined] | ['settle', number] | ['save'];

/** Runs the steps (`settle n` settles the n-th hold) and reports where the position stands. */
function positionAfter(steps: readonly Step[]): { checkpoint: string | undefined; unsaved: string | undefined; unsavedHint: boolean } {
  const position = new StreamPosition('1');
  const held: ReturnType<StreamPosition['hold']>[] = [];
  for (const step of steps) {
    if (step[0] === 'pass') position.pass(step[1]);
    if (step[0] === 'hold') held.push(position.hold(step[1]));
    if (step[0] === 'settle') position.settle(held[step[1]] as ReturnType<StreamPosition['hold']>);
    if (step[0] === 'save' && position.checkpoint !== undefined) position.markSaved(position.checkpoint);
  }
  return { checkpoint: position.checkpoint, unsaved: position.unsaved, unsavedHint: position.unsavedHint };
}

describe('a stream position', () => {
  it.each<[string, Step[], ReturnType<typeof positionAfter>]>([
    ['observations without a hint move it, not urgently', [['pass', '2'], ['pass', '3']], { checkpoint: '3', unsaved: '3', unsavedHint: false }],
    ['a published hint moves it urgently', [['hold', '2'], ['settle', 0]], { checkpoint: '2', unsaved: '2', unsavedHint: true }],
    ['an unsettled hint holds it, and what passed behind it', [['hold', '2'], ['pass', '3']], { checkpoint: '1', unsaved: undefined, unsavedHint: false }],
    ['the hint settles: it moves past what passed behind it', [['hold', '2'], ['pass', '3'], ['settle', 0]], { checkpoint: '3', unsaved: '3', unsavedHint: true }],
    ['hints settled out of order wait for the first', [['hold', '2'], ['hold', '3'], ['settle', 1]], { checkpoint: '1', unsaved: undefined, unsavedHint: false }],
    ['a relist: its hints carry no position, the list version that follows them does', [['hold', undefined], ['hold', undefined], ['pass', '9'], ['settle', 0], ['settle', 1]], { checkpoint: '9', unsaved: '9', unsavedHint: true }],
    ['a relist whose hints settled before its list version passed', [['hold', undefined], ['settle', 0], ['pass', '9']], { checkpoint: '9', unsaved: '9', unsavedHint: true }],
    ['a save clears the urgency', [['hold', '2'], ['settle', 0], ['save']], { checkpoint: '2', unsaved: undefined, unsavedHint: false }],
    ['after a save, only observations without a hint: not urgent', [['hold', '2'], ['settle', 0], ['save'], ['pass', '3']], { checkpoint: '3', unsaved: '3', unsavedHint: false }],
  ])('%s', (_name, steps, expected) => {
    expect(positionAfter(steps)).toEqual(expected);
  });

  it('tells bookmarks, which replay nothing, from observations, which a restarted forwarder would publish again', () => {
    const position = new StreamPosition('1');
    position.pass('2', { bookmark: true });
    expect([position.unsaved, position.unsavedEvent, position.unsavedHint]).toEqual(['2', false, false]);
    position.pass('3');
    expect([position.unsaved, position.unsavedEvent, position.unsavedHint]).toEqual(['3', true, false]);
    position.markSaved('3');
    const held = position.hold('4');
    position.pass('5', { bookmark: true });
    position.settle(held);
    expect([position.unsaved, position.unsavedEvent, position.unsavedHint]).toEqual(['5', true, true]);
  });

  it('is never saved until its first save, unless it started from a checkpoint', () => {
    const fresh = new StreamPosition();
    expect(fresh.neverSaved).toBe(false);
    fresh.pass('5');
    expect(fresh.neverSaved).toBe(true);
    fresh.markSaved('5');
    expect(fresh.neverSaved).toBe(false);
    const resumed = new StreamPosition('1');
    resumed.pass('2');
    expect(resumed.neverSaved).toBe(false);
  });
});

let world: ForwarderWorld;

beforeAll(async () => {
  world = await startForwarderWorld();
});
afterAll(async () => world?.stop());

/** The store, counting the saves (every other call goes to the store itself, bound to it). */
function countingSaves(inner: CheckpointStore): CheckpointStore & { saves: number } {
  const counted = new Proxy(inner, {
    get(target, property, receiver) {
      if (property === 'saves') return saves;
      if (property === 'saveCheckpoints') {
        return async (...args: Parameters<CheckpointStore['saveCheckpoints']>) => {
          saves += 1;
          return target.saveCheckpoints(...args);
        };
      }
      const value = Reflect.get(target, property, receiver);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
  let saves = 0;
  return counted as CheckpointStore & { saves: number };
}

/** A forwarder of `namespace`'s InferenceServices, saving a hinted move every 50 ms and an idle one every minute. */
async function startCadenceForwarder(clusterId: string, namespace: string) {
  const stores: Stores = await world.newStores();
  const checkpoints = countingSaves(stores.checkpoints);
  const publisher = new RecordingPublisher();
  const controller = new AbortController();
  const done = runForwarder({
    clusterId,
    cluster: world.client,
    publisher,
    leases: stores.leases,
    checkpoints,
    omeNamespace: 'ome',
    resources: listWatchedResources('ome')
      .filter((resource) => resource.type === Resources.inferenceServices)
      .map((resource) => ({ ...resource, namespace })),
    leaseTtlMs: 5_000,
    lingerMs: 20,
    checkpointIntervalMs: 50,
    idleCheckpointIntervalMs: 60_000,
    logger: testLogger,
    signal: controller.signal,
  });
  return {
    checkpoints,
    publisher,
    saved: async () => (await stores.checkpoints.loadCheckpoints(clusterId)).inferenceservices,
    stop: async () => {
      controller.abort();
      await done;
    },
  };
}

describe('the forwarder saves checkpoints', () => {
  it('at the end of a run only bookmarks moved since its last save: not before the idle interval', async () => {
    const namespace = 'fwd-cadence-quiet';
    await createNamespace(world.client, namespace);
    await world.client.create<KubeObject>(Resources.inferenceServices, inferenceService(namespace, 'isvc'));
    const forwarder = await startCadenceForwarder('cadence-quiet', namespace);
    await eventually(async () => expect(await forwarder.saved()).toBeDefined());
    const savedFirst = Number(await forwarder.saved());
    const saves = forwarder.checkpoints.saves;

    // Writes elsewhere move the API server's version; the stream sees them only as bookmarks.
    await createNamespace(world.client, `${namespace}-elsewhere`);
    const elsewhere = await world.client.create<KubeObject>(Resources.inferenceServices, inferenceService(`${namespace}-elsewhere`, 'other'));
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    await forwarder.stop();

    expect(forwarder.checkpoints.saves).toBe(saves);
    expect(Number(await forwarder.saved())).toBe(savedFirst);
    expect(savedFirst).toBeLessThan(Number(elsewhere.metadata.resourceVersion));
  });

  it('soon after a hint, late after a change that needs none, and at the end', async () => {
    const namespace = 'fwd-cadence';
    await createNamespace(world.client, namespace);
    const created = await world.client.create<KubeObject>(Resources.inferenceServices, inferenceService(namespace, 'isvc'));
    const { checkpoints, publisher, saved, stop } = await startCadenceForwarder('cadence', namespace);
    // The list's hint is published: the position is saved within a few intervals.
    await eventually(async () => expect(publisher.inNamespace(namespace)).toHaveLength(1));
    await eventually(async () => expect(await saved()).toBeDefined());
    const afterHint = checkpoints.saves;

    // A status-only write needs no hint; its position is not saved for the idle interval.
    const updated = await world.client.replaceStatus<KubeObject>(Resources.inferenceServices, { ...created, status: { observedGeneration: 1 } });
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(publisher.inNamespace(namespace)).toHaveLength(1);
    expect(checkpoints.saves).toBe(afterHint);
    expect(Number(await saved())).toBeLessThan(Number(updated.metadata.resourceVersion));

    // At the end it is: a restarted forwarder would publish the write again.
    await stop();
    expect(Number(await saved())).toBeGreaterThanOrEqual(Number(updated.metadata.resourceVersion));
  });
});
