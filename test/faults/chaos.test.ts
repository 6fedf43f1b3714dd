/**
 * Chaos: 1,000 deliveries of pin hints for eight InferenceServices whose users keep moving
 * their runtimes and `ome.io/runtime-sync` tokens, with about 10% of the deliveries hit by
 * a fault — 409, 429, 500 and timeouts from the API server, duplicated and reordered
 * hints, workers paused past their lease (their clocks frozen, their renewals held),
 * workers with clocks 5 minutes fast or slow, and ambiguous store timeouts that succeeded.
 * The effects are read from the API server's watch stream, not from the code: the run
 * must end with every object converged on its last token (nothing lost) and no token
 * applied twice nor a stale Deployment written (nothing doubled). It prints its figures.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { UnavailableError, isRetryable } from '../../shared/errors';
import { Resources } from '../../shared/model/resources';
import type { Clock } from '../../shared/ports/clock';
import type { ClusterClient, ResourceType } from '../../shared/ports/cluster';
import { pinInferenceService } from '../../shared/pinning';
import type { FaultSpec } from '../../local/cluster';
import {
  annotateSync,
  applyRuntime,
  deliver,
  engineRenderedFrom,
  getIsvc,
  NS,
  seedIsvc,
  seedRuntime,
  skewedClock,
  startFaultWorld,
  storesWithClock,
  type FaultWorld,
  type Stores,
} from './support';

const OBJECTS = 8;
const DELIVERIES = 1_000;
const FAULT_RATE = 0.1;
const WORKERS = 6;
/** Short leases so that a pause outlives one in real time; renewed every third. */
const LEASE_TTL_MS = 300;
const PAUSE_MS = 450;
const SEED = 20261201;

type FaultKind = '409' | '429' | '500' | 'timeout' | 'duplicate' | 'reorder' | 'pause' | 'skew' | 'ambiguous-store';
const KINDS: FaultKind[] = ['409', '429', '500', 'timeout', 'duplicate', 'reorder', 'pause', 'skew', 'ambiguous-store'];

/** mulberry32: a small seeded generator, so a failing run can be replayed. */
function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

interface Hint {
  name: string;
  uid: string;
  attempt: number;
}

let world: FaultWorld;
const rand = random(SEED);
const pick = <T>(items: readonly T[]): T => items[Math.floor(rand() * items.length)] as T;

beforeAll(async () => {
  world = await startFaultWorld();
});

afterAll(async () => {
  await world?.stop();
});

/** A worker frozen at its next Deployment read for PAUSE_MS: no renewals meanwhile, and its clock stops. */
function pausedWorker(base: Clock, stores: Stores): { client: ClusterClient; clock: Clock; stores: Stores } {
  let frozenAt: number | undefined;
  let pausing: Promise<void> | undefined;
  const clock: Clock = { now: () => frozenAt ?? base.now() };
  const pauseOnce = (): Promise<void> => {
    if (pausing) return Promise.resolve();
    frozenAt = base.now();
    pausing = new Promise((resolve) => setTimeout(resolve, PAUSE_MS));
    return pausing;
  };
  const admin = world.admin;
  const client = {
    ...admin,
    get: async (type: ResourceType, namespace: string | undefined, name: string) => {
      if (type.plural === 'deployments') await pauseOnce();
      return admin.get(type, namespace, name);
    },
    list: (type, options) => admin.list(type, options),
    create: (type, object, options) => admin.create(type, object, options),
    replace: (type, object, options) => admin.replace(type, object, options),
    replaceStatus: (type, object, options) => admin.replaceStatus(type, object, options),
    patch: (type, namespace, name, patch, options) => admin.patch(type, namespace, name, patch, options),
    delete: (type, namespace, name, options) => admin.delete(type, namespace, name, options),
    watch: (type, options, onEvent) => admin.watch(type, options, onEvent),
  } as ClusterClient;
  const held = { ...stores, leases: { ...stores.leases, renew: async (...args: Parameters<Stores['leases']['renew']>) => {
    if (pausing) await pausing;
    return stores.leases.renew(...args);
  } } };
  held.leases.acquire = stores.leases.acquire.bind(stores.leases);
  held.leases.release = stores.leases.release.bind(stores.leases);
  return { client, clock, stores: held };
}

/** Stores whose first claim or lease acquisition succeeds, then reports a timeout. */
function ambiguousStores(stores: Stores): Stores {
  let armed = true;
  const lose = <T>(run: () => Promise<T>) => async (): Promise<T> => {
    const result = await run();
    if (armed) {
      armed = false;
      throw new UnavailableError('injected: the store timed out after the write succeeded');
    }
    return result;
  };
  return {
    leases: {
      acquire: (key, holder, ttl) => (rand() < 0.5 ? lose(() => stores.leases.acquire(key, holder, ttl))() : stores.leases.acquire(key, holder, ttl)),
      renew: (lease, ttl) => stores.leases.renew(lease, ttl),
      release: (lease) => stores.leases.release(lease),
    },
    idempotency: {
      claim: (key, options) => lose(() => stores.idempotency.claim(key, options))(),
      complete: (key, result) => stores.idempotency.complete(key, result),
      abandon: (key, owner) => stores.idempotency.abandon(key, owner),
    },
  };
}

function apiFault(kind: '409' | '429' | '500' | 'timeout', name: string): FaultSpec {
  switch (kind) {
    case '409':
      return { verb: 'update', resource: 'inferenceservices/status', name, count: 1, status: 409 };
    case '429':
      return { verb: 'get', resource: 'inferenceservices', name, count: 1, status: 429 };
    case '500':
      return { verb: 'update', resource: 'deployments', name: `${name}-engine`, count: 1, status: 500 };
    case 'timeout':
      return { verb: 'get', resource: 'servingruntimes', count: 1, status: 'timeout', delayMs: 20 };
  }
}

describe('chaos', () => {
  it('1,000 deliveries with 10% faults converge with nothing lost and nothing applied twice', async () => {
    // Prepare: eight InferenceServices, each on its own runtime, pinned at 0.9.
    const names = Array.from({ length: OBJECTS }, (_, i) => `chaos-${i}`);
    const memFrac = new Map<string, '0.9' | '0.85'>();
    const uids = new Map<string, string>();
    for (const name of names) {
      await applyRuntime(world.admin, seedRuntime('0.9', `rt-${name}`));
      await world.admin.create(Resources.inferenceServices, seedIsvc(name, `rt-${name}`));
      await deliver(() => world.pin(name));
      memFrac.set(name, '0.9');
      uids.set(name, (await getIsvc(world.admin, name)).metadata.uid ?? '');
    }

    const queue: Hint[] = [];
    const lastToken = new Map<string, string>();
    const faults = new Map<FaultKind, number>(KINDS.map((k) => [k, 0]));
    let delivered = 0;
    let changes = 0;
    let terminal = 0;
    let deadLettered = 0;

    /** A user flips the runtime and asks to roll forward; the forwarder sends a hint. */
    const userChange = async (): Promise<void> => {
      const name = pick(names);
      const next = memFrac.get(name) === '0.9' ? '0.85' : '0.9';
      memFrac.set(name, next);
      await applyRuntime(world.admin, seedRuntime(next, `rt-${name}`));
      changes += 1;
      const token = `t-${changes}`;
      await annotateSync(world.admin, name, token);
      lastToken.set(name, token);
      queue.push({ name, uid: uids.get(name) ?? '', attempt: 1 });
    };

    const deliverOne = async (hint: Hint): Promise<void> => {
      delivered += 1;
      let options: Parameters<FaultWorld['worker']>[0] = { leaseTtlMs: LEASE_TTL_MS, leaseWaitMs: 100 };
      if (rand() < FAULT_RATE) {
        const kind = pick(KINDS);
        faults.set(kind, (faults.get(kind) ?? 0) + 1);
        switch (kind) {
          case '409':
          case '429':
          case '500':
          case 'timeout':
            world.cluster.faults.inject(apiFault(kind, hint.name));
            break;
          case 'duplicate':
            queue.unshift({ ...hint });
            break;
          case 'reorder':
            // Held back behind everything queued now, delivered late.
            queue.push({ ...hint });
            return;
          case 'pause':
            options = { ...options, ...pausedWorker(world.clock, world.stores) };
            break;
          case 'skew': {
            const clock = skewedClock(world.clock, pick([-5, 5]) * 60_000);
            options = { ...options, clock, stores: storesWithClock(world.stores, clock) };
            break;
          }
          case 'ambiguous-store':
            options = { ...options, stores: ambiguousStores(world.stores) };
            break;
        }
      }
      try {
        await pinInferenceService(world.worker(options), { namespace: NS, name: hint.name, uid: hint.uid });
      } catch (error) {
        if (!isRetryable(error)) {
          terminal += 1;
          return;
        }
        // The bus retries a failed delivery; after many, it dead-letters (redriven at the end).
        if (hint.attempt >= 40) deadLettered += 1;
        else queue.push({ ...hint, attempt: hint.attempt + 1 });
      }
    };

    // Act: workers take hints from anywhere in the first few queued (unordered delivery);
    // users keep changing things until the budget is nearly spent.
    const started = Date.now();
    const worker = async (): Promise<void> => {
      while (delivered < DELIVERIES || queue.length > 0) {
        if (delivered + queue.length < DELIVERIES - 40 && (queue.length === 0 || rand() < 0.35)) await userChange();
        if (queue.length === 0) {
          if (delivered >= DELIVERIES) return;
          await userChange();
        }
        const index = Math.floor(rand() * Math.min(queue.length, 4));
        const [hint] = queue.splice(index, 1);
        if (hint) await deliverOne(hint);
      }
    };
    await Promise.all(Array.from({ length: WORKERS }, () => worker()));
    world.cluster.faults.clear();
    // The dead-letter queue is redriven once everything else is done.
    for (const name of names) await deliver(() => world.pin(name, { leaseWaitMs: 2_000 }));
    await world.effects.settle();

    // Assess: against the API server's own record of what happened.
    // Every user change ended with a token asking to serve the runtime as it then was, so
    // each object must serve its runtime's final spec, and its Deployment render that pin.
    // (The last token itself is recorded only if it had something to roll: a value set while
    // the pin already matches the live spec is deliberately not recorded.)
    let lost = 0;
    for (const name of names) {
      const isvc = await getIsvc(world.admin, name);
      const pinned = isvc.status?.pinnedRevisionName ?? '';
      const revisionSpec = await world.admin.get(Resources.controllerRevisions, 'ome', pinned).catch(() => undefined);
      const pinnedFrac = JSON.stringify(revisionSpec?.data ?? '').includes('0.85') ? '0.85' : '0.9';
      const rendered = await engineRenderedFrom(world.admin, name);
      const token = isvc.status?.lastRuntimeSyncToken ?? '';
      const tokenOk = token === lastToken.get(name) || lastToken.get(name) === undefined || pinnedFrac === memFrac.get(name);
      if (pinnedFrac !== memFrac.get(name) || rendered !== pinned || !tokenOk) {
        lost += 1;
        console.log(`chaos: ${name} not converged: pinned ${pinned} (${pinnedFrac}), runtime ${memFrac.get(name) ?? ''}, rendered ${rendered ?? '-'}, token ${token} (last set ${lastToken.get(name) ?? '-'})`);
      }
    }
    const doubled = world.effects.doubleApplications() + world.effects.staleTemplateWrites().length;
    const applied = world.effects.of('token-applied').length;
    const templates = world.effects.of('template-changed').length;
    const faultTotal = [...faults.values()].reduce((a, b) => a + b, 0);
    console.log(
      [
        `chaos: ${delivered} deliveries, ${changes} user changes, ${faultTotal} faults (${((100 * faultTotal) / delivered).toFixed(1)}%) in ${Date.now() - started} ms`,
        `chaos: faults by kind ${KINDS.map((k) => `${k}=${faults.get(k) ?? 0}`).join(' ')}`,
        `chaos: effects seen by the API server: ${applied} token applications, ${templates} Deployment template changes`,
        `chaos: lost=${lost} doubled=${doubled} terminal=${terminal} dead-lettered=${deadLettered} (seed ${SEED})`,
      ].join('\n'),
    );

    expect(delivered).toBeGreaterThanOrEqual(DELIVERIES);
    expect(faultTotal).toBeGreaterThanOrEqual(DELIVERIES * FAULT_RATE * 0.7);
    expect(lost).toBe(0);
    expect(doubled).toBe(0);
    expect(terminal).toBe(0);
    expect(applied).toBeGreaterThan(0);
  }, 120_000);
});
