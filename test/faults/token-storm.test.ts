/**
 * Case 21: a thousand `ome.io/runtime-sync` changes in quick succession on one
 * InferenceService, each with its hint, delivered by eight workers at once and out of
 * order. The lease lets one reconcile run at a time and each acts on the value the object
 * holds when it reads it, so the burst is coalesced: never more applications than
 * reconciles, never an older value after a newer one, and the last value wins.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isRetryable } from '../../shared/errors';
import { Resources } from '../../shared/model/resources';
import type { KubeObject } from '../../shared/ports/cluster';
import { annotateSync, applyRuntime, deliver, engineRenderedFrom, getIsvc, seedIsvc, seedRuntime, startFaultWorld, type FaultWorld } from './support';

const CHANGES = 1_000;
const WORKERS = 8;

let world: FaultWorld;

/** The runtime as change `i` leaves it: every change is a new spec, so every value has something to roll forward to. */
function runtimeSpecNumbered(runtime: string, i: number): KubeObject {
  const object = seedRuntime('0.9', runtime);
  const runner = (object.spec as { engineConfig: { runner: { args: string[] } } }).engineConfig.runner;
  runner.args = [...runner.args, `--change=${i}`];
  return object;
}

beforeAll(async () => {
  world = await startFaultWorld();
});

afterAll(async () => {
  await world?.stop();
});

describe('1,000 token changes on one object (case 21)', () => {
  it('coalesces them under the lease: ordered, none twice, and the last one wins', async () => {
    // Prepare
    const name = 'storm';
    const runtime = `rt-${name}`;
    await applyRuntime(world.admin, seedRuntime('0.9', runtime));
    await world.admin.create(Resources.inferenceServices, seedIsvc(name, runtime));
    await deliver(() => world.pin(name));
    const uid = (await getIsvc(world.admin, name)).metadata.uid ?? '';

    // Act: the user flips the runtime and sets a new token, a thousand times; every change
    // sends a hint; eight workers take hints in any order while the changes go on.
    const queue: number[] = [];
    let userDone = false;
    let wake: () => void = () => undefined;
    let woken = new Promise<void>((resolve) => (wake = resolve));
    const notify = (): void => {
      wake();
      woken = new Promise<void>((resolve) => (wake = resolve));
    };
    let reconciles = 0;

    const user = (async () => {
      for (let i = 1; i <= CHANGES; i += 1) {
        await applyRuntime(world.admin, runtimeSpecNumbered(runtime, i));
        await annotateSync(world.admin, name, `burst-${String(i).padStart(4, '0')}`);
        queue.push(i);
        notify();
        // Bursts of twenty changes between turns of the event loop: the workers run between bursts.
        if (i % 20 === 0) await new Promise((resolve) => setImmediate(resolve));
      }
      userDone = true;
      notify();
    })();
    const worker = async (): Promise<void> => {
      while (!userDone || queue.length > 0) {
        if (queue.length === 0) {
          await woken;
          continue;
        }
        queue.splice(Math.floor(Math.random() * queue.length), 1);
        try {
          await world.pin(name, { uid, leaseWaitMs: 20 });
          reconciles += 1;
        } catch (error) {
          if (!isRetryable(error)) throw error;
          // A busy lease: another reconcile is on it and will read the newest value anyway.
        }
      }
    };
    await Promise.all([user, ...Array.from({ length: WORKERS }, () => worker())]);
    await deliver(() => world.pin(name, { uid, leaseWaitMs: 2_000 }));
    await world.effects.settle();

    // Assess
    const applied = world.effects.of('token-applied', name).map((e) => e.value);
    const isvc = await getIsvc(world.admin, name);
    console.log(`token storm: ${CHANGES} changes, ${reconciles + 1} reconciles, ${applied.length} applications`);
    expect(isvc.status?.lastRuntimeSyncToken).toBe(`burst-${CHANGES}`);
    expect(applied.at(-1)).toBe(`burst-${CHANGES}`);
    expect([...applied].sort()).toEqual(applied);
    expect(new Set(applied).size).toBe(applied.length);
    expect(applied.length).toBeLessThanOrEqual(reconciles + 1);
    const pinned = isvc.status?.pinnedRevisionName ?? '';
    const revision = await world.admin.get(Resources.controllerRevisions, 'ome', pinned);
    expect(JSON.stringify(revision.data)).toContain(`--change=${CHANGES}"`);
    expect(await engineRenderedFrom(world.admin, name)).toBe(pinned);
    expect(world.effects.staleTemplateWrites()).toEqual([]);
    expect(world.effects.of('template-changed', name).length).toBeLessThanOrEqual(applied.length + 1);
  }, 60_000);
});
