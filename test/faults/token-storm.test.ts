/**
 * Case 21: a thousand `ome.io/runtime-sync` changes in quick succession on one
 * InferenceService, each with its hint, delivered by eight workers at once and in a
 * shuffled (seeded) order. The values come from a small pool the user keeps cycling
 * through, then a fresh one last. The lease lets one reconcile run at a time and each
 * acts on the value the object holds when it reads it, so the burst is coalesced: one
 * reconcile at a time, no value applied twice however often it is set again, and the last
 * value wins.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { objectLeaseKey } from '../../shared/use-cases/reconcile-under-lease';
import { isRetryable } from '../../shared/domain/errors';
import { Resources } from '../../shared/domain/model/resources';
import type { KubeObject } from '../../shared/ports/cluster';
import type { LeaseStore } from '../../shared/ports/store';
import { annotateSync, applyRuntime, deliver, engineRenderedFrom, getIsvc, seedIsvc, seedRuntime, startFaultWorld, type FaultWorld } from './support';

const CHANGES = 1_000;
const WORKERS = 8;
/** Distinct values the user cycles through before the last change, which sets a fresh one. */
const POOL = 25;
const LAST = 'burst-last';

/** The value change `i` sets: one of the pool, seen again every POOL changes, or the fresh last one. */
function tokenOf(i: number): string {
  return i === CHANGES ? LAST : `burst-${String(i % POOL).padStart(2, '0')}`;
}

/** A fixed sequence in [0, 1) (an LCG), so the order the workers take hints in can be replayed. */
function seededRandom(seed: number): () => number {
  let state = seed;
  return () => (state = (Math.imul(state, 1_103_515_245) + 12_345) >>> 0) / 2 ** 32;
}

/** The world's leases, counting how many workers held one key at once. */
function countingLeases(inner: LeaseStore, key: string): { store: LeaseStore; maxHolders: () => number } {
  let holders = 0;
  let most = 0;
  const store: LeaseStore = {
    async acquire(k, holder, ttl) {
      const lease = await inner.acquire(k, holder, ttl);
      if (lease && k === key) most = Math.max(most, (holders += 1));
      return lease;
    },
    renew: (lease, ttl) => inner.renew(lease, ttl),
    async release(lease) {
      if (lease.key === key) holders -= 1;
      await inner.release(lease);
    },
  };
  return { store, maxHolders: () => most };
}

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
  it('coalesces them under the lease: one reconcile at a time, no value applied twice, and the last one wins', async () => {
    // Prepare
    const name = 'storm';
    const runtime = `rt-${name}`;
    await applyRuntime(world.admin, seedRuntime('0.9', runtime));
    await world.admin.create(Resources.inferenceServices, seedIsvc(name, runtime));
    await deliver(() => world.pin(name));
    const uid = (await getIsvc(world.admin, name)).metadata.uid ?? '';
    const leases = countingLeases(world.stores.leases, objectLeaseKey(world.clusterId, Resources.inferenceServices.kind, 'llama-demo', name));
    const stores = { leases: leases.store, idempotency: world.stores.idempotency };
    const random = seededRandom(0x5eed);

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
        await annotateSync(world.admin, name, tokenOf(i));
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
        queue.splice(Math.floor(random() * queue.length), 1);
        try {
          await world.pin(name, { uid, leaseWaitMs: 20, stores });
          reconciles += 1;
        } catch (error) {
          if (!isRetryable(error)) throw error;
          // A busy lease: another reconcile is on it and will read the newest value anyway.
        }
      }
    };
    await Promise.all([user, ...Array.from({ length: WORKERS }, () => worker())]);
    await deliver(() => world.pin(name, { uid, leaseWaitMs: 2_000, stores }));
    await world.effects.settle();

    // Assess
    const applied = world.effects.of('token-applied', name).map((e) => e.value);
    const isvc = await getIsvc(world.admin, name);
    console.log(`token storm: ${CHANGES} changes, ${reconciles + 1} reconciles, ${applied.length} applications`);
    expect(leases.maxHolders()).toBe(1);
    expect(isvc.status?.lastRuntimeSyncToken).toBe(LAST);
    expect(applied.at(-1)).toBe(LAST);
    expect(new Set(applied).size).toBe(applied.length);
    expect(world.effects.doubleApplications()).toBe(0);
    const pinned = isvc.status?.pinnedRevisionName ?? '';
    const revision = await world.admin.get(Resources.controllerRevisions, 'ome', pinned);
    expect(JSON.stringify(revision.data)).toContain(`--change=${CHANGES}"`);
    expect(await engineRenderedFrom(world.admin, name)).toBe(pinned);
    expect(world.effects.staleTemplateWrites()).toEqual([]);
    expect(world.effects.of('template-changed', name).length).toBeLessThanOrEqual(applied.length + 1);
  }, 60_000);
});
