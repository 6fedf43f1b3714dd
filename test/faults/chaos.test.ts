/**
 * Chaos: pin hints for eight InferenceServices whose users keep moving their runtimes and
 * `ome.io/runtime-sync` tokens, with faults drawn from a seeded generator — 409, 429, 500
 * and timeouts from the API server, duplicated and reordered hints, ambiguous store
 * timeouts that succeeded, runtimes changed without a token, a record under a token's key
 * for another payload, and two interleavings the test plays step by step:
 *
 * - pause: worker A writes status, then stops before the engine Deployment; time moves
 *   past its lease; the user moves on; worker B takes the lease over, writes status and
 *   stops before the Deployment too; A resumes and tries to write, then B.
 * - skew: the same, but no time passes: B's clock is 5 minutes fast (or A's 5 minutes
 *   slow), so the lease store, which judges expiry by the caller's clock as the DynamoDB
 *   adapter does, hands B the lease A still holds by its own clock.
 *
 * It runs on the memory stores and on DynamoDB Local, each worker seeing the stores through
 * its own clock as the adapters do. Everything is deterministic for a seed, whichever the
 * stores: deliveries run one at a time in an order the generator draws, time is virtual (it
 * moves between deliveries, by the product's own sleeps, and past a lease when the test
 * says), `Math.random` is the seeded generator, and
 * nothing on a real timer can change an outcome (lease renewals are held: within a step
 * no virtual time passes, so a lease lives its TTL from acquisition; the simulated
 * Deployment controller never reports within the run). The same seed gives the same figures.
 *
 * The effects are read from the API server: nothing lost (every object ends on the runtime
 * its last usable token asked for, its Deployment rendering that pin), nothing doubled (no
 * token recorded twice, no Deployment written from a pin it no longer had, no pin moved
 * without a new token), and a token whose key holds another payload refused, never applied.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { IdempotencyPayloadMismatchError, UnavailableError, isRetryable } from '../../shared/domain/errors';
import { Resources } from '../../shared/domain/model/resources';
import type { Clock } from '../../shared/ports/clock';
import type { ClusterClient, ResourceType } from '../../shared/ports/cluster';
import { idempotencyKey } from '../../shared/ports/store';
import { pinInferenceService, type PinningDeps } from '../../shared/use-cases/pinning';
import { hashIdempotencyPayload } from '../../shared/domain/idempotency-rules';
import { MemoryIdempotencyStore, MemoryLeaseStore } from '../../shared/adapters/memory';
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
  startDynamoTable,
  startFaultWorld,
  type DynamoTable,
  type FaultWorld,
  type Stores,
} from './support';

const SEEDS = [20261201, 7];
const OBJECTS = 8;
const STEPS = 300;
const LEASE_TTL_MS = 30_000;
const SKEW_MS = 5 * 60_000;
/** The virtual epoch every run starts at. */
const EPOCH_MS = Date.UTC(2026, 11, 1);

type FaultKind = '409' | '429' | '500' | 'timeout' | 'duplicate' | 'reorder' | 'ambiguous-store' | 'drift' | 'foreign-payload' | 'pause' | 'skew';
const KINDS: FaultKind[] = ['409', '429', '500', 'timeout', 'duplicate', 'reorder', 'ambiguous-store', 'drift', 'foreign-payload', 'pause', 'skew'];
const FAULT_RATE = 0.3;

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

/** Time that moves only when told to. */
class VirtualClock implements Clock {
  constructor(private at: number) {}
  now(): number {
    return this.at;
  }
  advance(ms: number): void {
    this.at += ms;
  }
}

interface Hint {
  name: string;
  attempt: number;
}

/** A client that stops once at its first Deployment read until released; counts writes. */
function gatedClient(admin: ClusterClient, counter: { writes: number }): { client: ClusterClient; reached: Promise<void>; release(): void } {
  let arrive: () => void = () => undefined;
  let release: () => void = () => undefined;
  const reached = new Promise<void>((resolve) => (arrive = resolve));
  const gate = new Promise<void>((resolve) => (release = resolve));
  let armed = true;
  const inner = countingClient(admin, counter);
  const client = {
    ...inner,
    get: async (type: ResourceType, namespace: string | undefined, name: string) => {
      if (armed && type.plural === 'deployments') {
        armed = false;
        arrive();
        await gate;
      }
      return inner.get(type, namespace, name);
    },
  } as ClusterClient;
  return { client, reached, release };
}

/** The admin client, counting the writes it sends. */
function countingClient(admin: ClusterClient, counter: { writes: number }): ClusterClient {
  const write = <A extends unknown[], R>(run: (...args: A) => Promise<R>) => (...args: A): Promise<R> => {
    counter.writes += 1;
    return run(...args);
  };
  return {
    get: (type, namespace, name) => admin.get(type, namespace, name),
    list: (type, options) => admin.list(type, options),
    watch: (type, options, onEvent) => admin.watch(type, options, onEvent),
    create: write((type, object, options) => admin.create(type, object, options)),
    replace: write((type, object, options) => admin.replace(type, object, options)),
    replaceStatus: write((type, object, options) => admin.replaceStatus(type, object, options)),
    patch: write((type, namespace, name, patch, options) => admin.patch(type, namespace, name, patch, options)),
    delete: write((type, namespace, name, options) => admin.delete(type, namespace, name, options)),
  } as ClusterClient;
}

/** The shared stores as a worker whose clock reads `clock` sees them. */
type StoreView = (clock: Clock) => Stores;

/** A worker's view of the stores with its lease renewals held. */
function withRenewalsHeld(stores: Stores): Stores {
  const { leases } = stores;
  return {
    leases: {
      acquire: (key, holder, ttl) => leases.acquire(key, holder, ttl),
      ...(leases.tryAcquire ? { tryAcquire: leases.tryAcquire.bind(leases) } : {}),
      // A renewal beat runs on a real timer, which virtual time cannot order; failing it
      // (not refusing it) keeps the lease's deadline, as a beat that never came would.
      renew: () => Promise.reject(new UnavailableError('renewals are held: no virtual time passes within a step')),
      release: (lease) => leases.release(lease),
    },
    idempotency: stores.idempotency,
  };
}

/** The world's memory stores, each worker seeing them through its own clock. */
function memoryView(world: FaultWorld): StoreView {
  const { leases, idempotency } = world.stores;
  if (!(leases instanceof MemoryLeaseStore) || !(idempotency instanceof MemoryIdempotencyStore)) throw new Error('the world holds no memory stores');
  return (clock) => ({ leases: leases.withClock(clock), idempotency: idempotency.withClock(clock) });
}

/** Stores whose first claim or lease acquisition succeeds, then reports a timeout. */
function ambiguousStores(stores: Stores, loseAcquire: boolean): Stores {
  let armed = true;
  const lose = async <T>(run: () => Promise<T>): Promise<T> => {
    const result = await run();
    if (armed) {
      armed = false;
      throw new UnavailableError('injected: the store timed out after the write succeeded');
    }
    return result;
  };
  return {
    leases: {
      acquire: (key, holder, ttl) => (loseAcquire ? lose(() => stores.leases.acquire(key, holder, ttl)) : stores.leases.acquire(key, holder, ttl)),
      renew: (lease, ttl) => stores.leases.renew(lease, ttl),
      release: (lease) => stores.leases.release(lease),
    },
    idempotency: {
      claim: (key, options) => (loseAcquire ? stores.idempotency.claim(key, options) : lose(() => stores.idempotency.claim(key, options))),
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

interface Figures {
  deliveries: number;
  changes: number;
  faults: string;
  writes: number;
  applied: number;
  templates: number;
  lost: number;
  doubled: number;
  stale: number;
  rolledWithoutToken: number;
  foreignApplied: number;
  foreignRefused: number;
  foreignRetried: number;
  foreignPlanted: number;
  superseded: number;
  leaseLost: number;
  terminal: number;
  deadLettered: number;
}

async function runChaos(world: FaultWorld, view: StoreView, seed: number): Promise<Figures> {
  const rand = random(seed);
  const pick = <T>(items: readonly T[]): T => items[Math.floor(rand() * items.length)] as T;
  const clock = new VirtualClock(EPOCH_MS);
  const counter = { writes: 0 };
  const client = countingClient(world.admin, counter);

  // The product's jittered waits draw from Math.random, and sleep in virtual time.
  vi.spyOn(Math, 'random').mockImplementation(rand);
  const sleep = async (ms: number): Promise<void> => clock.advance(ms);
  const deps = (o: { clock?: Clock; stores?: Stores; client?: ClusterClient } = {}): PinningDeps => {
    const own = o.clock ?? clock;
    return {
      ...world.worker({ client: o.client ?? client, clock: own, stores: o.stores ?? withRenewalsHeld(view(own)), leaseTtlMs: LEASE_TTL_MS, leaseWaitMs: 5_000 }),
      sleep,
    };
  };

  // Prepare: eight InferenceServices, each on its own runtime, pinned at 0.9.
  const names = Array.from({ length: OBJECTS }, (_, i) => `chaos-${seed}-${i}`);
  const uids = new Map<string, string>();
  const runtimeFrac = new Map<string, '0.9' | '0.85'>();
  /** What the last usable token asked for: the runtime as it was when the token was set. */
  const expectedFrac = new Map<string, '0.9' | '0.85'>();
  const tokensSet = new Map<string, Set<string>>();
  const foreignTokens = new Set<string>();
  for (const name of names) {
    await applyRuntime(world.admin, seedRuntime('0.9', `rt-${name}`));
    await world.admin.create(Resources.inferenceServices, seedIsvc(name, `rt-${name}`));
    await deliver(() => pinInferenceService(deps(), { namespace: NS, name }));
    runtimeFrac.set(name, '0.9');
    expectedFrac.set(name, '0.9');
    tokensSet.set(name, new Set());
    uids.set(name, (await getIsvc(world.admin, name)).metadata.uid ?? '');
  }

  const queue: Hint[] = [];
  const faults = new Map<FaultKind, number>(KINDS.map((k) => [k, 0]));
  const f: Figures = {
    deliveries: 0, changes: 0, faults: '', writes: 0, applied: 0, templates: 0, lost: 0, doubled: 0, stale: 0,
    rolledWithoutToken: 0, foreignApplied: 0, foreignRefused: 0, foreignRetried: 0, foreignPlanted: 0, superseded: 0, leaseLost: 0, terminal: 0, deadLettered: 0,
  };
  const lastSeen = new Map<string, { pinned: string; token: string }>();
  /** Reads statuses after each delivery: a pin that moved while the token stayed is a token applied again. */
  const observePins = async (only?: string): Promise<void> => {
    for (const name of only === undefined ? names : [only]) {
      const status = (await getIsvc(world.admin, name)).status;
      const now = { pinned: status?.pinnedRevisionName ?? '', token: status?.lastRuntimeSyncToken ?? '' };
      const before = lastSeen.get(name);
      if (before !== undefined && before.pinned !== '' && now.pinned !== before.pinned && now.token === before.token) f.rolledWithoutToken += 1;
      if (foreignTokens.has(now.token) && before?.token !== now.token) f.foreignApplied += 1;
      lastSeen.set(name, now);
    }
  };
  await observePins();

  const flipRuntime = async (name: string): Promise<void> => {
    const next = runtimeFrac.get(name) === '0.9' ? '0.85' : '0.9';
    runtimeFrac.set(name, next);
    await applyRuntime(world.admin, seedRuntime(next, `rt-${name}`));
  };
  /** A user flips the runtime and asks to roll forward; the forwarder sends a hint. */
  const userChange = async (name: string, usable = true): Promise<string> => {
    await flipRuntime(name);
    f.changes += 1;
    const token = `t-${f.changes}`;
    await annotateSync(world.admin, name, token);
    tokensSet.get(name)?.add(token);
    if (usable) expectedFrac.set(name, runtimeFrac.get(name) ?? '0.9');
    queue.push({ name, attempt: 1 });
    return token;
  };

  const settleOutcome = (hint: Hint, error: unknown): void => {
    if (error instanceof IdempotencyPayloadMismatchError) {
      f.foreignRefused += 1;
      return;
    }
    if (!isRetryable(error)) {
      f.terminal += 1;
      return;
    }
    if (error instanceof Error && error.name === 'LeaseLostError') f.leaseLost += 1;
    // The bus retries a failed delivery; after many, it dead-letters (redriven at the end).
    if (hint.attempt >= 40) f.deadLettered += 1;
    else queue.push({ ...hint, attempt: hint.attempt + 1 });
  };
  const pinOnce = async (hint: Hint, d: PinningDeps): Promise<void> => {
    f.deliveries += 1;
    try {
      const result = await pinInferenceService(d, { namespace: NS, name: hint.name, uid: uids.get(hint.name) ?? '' });
      if (result.workload === 'superseded') f.superseded += 1;
    } catch (error) {
      // Redelivered in vain: a claim for another payload never finishes, so the token never applies.
      if (error instanceof Error && error.name === 'RuntimeSyncInProgressError' && [...foreignTokens].some((t) => error.message.includes(JSON.stringify(t)))) f.foreignRetried += 1;
      settleOutcome(hint, error);
    }
    // A fault injected for this delivery ends with it, unspent or not; the test's own reads see none.
    world.cluster.faults.clear();
    await observePins(hint.name);
  };

  /**
   * Worker A delivers and stops before the Deployment; `between` happens; worker B
   * delivers, stopping there too when `b.stops`; A resumes, then B.
   */
  const interleave = async (name: string, a: { clock: Clock }, between: () => Promise<void>, b: { clock: Clock; stops: boolean }): Promise<void> => {
    const gateA = gatedClient(world.admin, counter);
    const runA = pinOnce({ name, attempt: 1 }, deps({ clock: a.clock, client: gateA.client }));
    await Promise.race([gateA.reached, runA]);
    await between();
    const gateB = gatedClient(world.admin, counter);
    if (!b.stops) gateB.release();
    const runB = pinOnce({ name, attempt: 1 }, deps({ clock: b.clock, client: gateB.client }));
    // B runs to its end, or to its stop: never alongside A.
    await (b.stops ? Promise.race([gateB.reached, runB]) : runB);
    gateA.release();
    await runA;
    gateB.release();
    await runB;
  };

  /** One delivery hit by a fault of `kind`. */
  const deliverWithFault = async (kind: FaultKind, hint: Hint): Promise<void> => {
    switch (kind) {
      case '409':
      case '429':
      case '500':
      case 'timeout':
        world.cluster.faults.inject(apiFault(kind, hint.name));
        await pinOnce(hint, deps());
        break;
      case 'duplicate':
        await pinOnce(hint, deps());
        await pinOnce({ ...hint }, deps());
        break;
      case 'reorder':
        // Held back behind everything queued now, delivered late.
        queue.push({ ...hint });
        break;
      case 'ambiguous-store':
        await pinOnce(hint, deps({ stores: ambiguousStores(withRenewalsHeld(view(clock)), rand() < 0.5) }));
        break;
      case 'drift':
        // The runtime moves without a token: a pin whose token is recorded stays, and updates
        // pause; a token set but not yet recorded (it found nothing to roll) rolls to it.
        await pinOnce(hint, deps());
        await flipRuntime(hint.name);
        {
          const isvc = await getIsvc(world.admin, hint.name);
          const token = isvc.metadata.annotations?.['ome.io/runtime-sync'] ?? '';
          if (token !== '' && !foreignTokens.has(token) && token !== (isvc.status?.lastRuntimeSyncToken ?? '')) {
            expectedFrac.set(hint.name, runtimeFrac.get(hint.name) ?? '0.9');
          }
        }
        await pinOnce(hint, deps());
        break;
      case 'foreign-payload': {
        // The key of the user's new token already holds a claim for another payload, still in progress.
        const token = await userChange(hint.name, false);
        foreignTokens.add(token);
        f.foreignPlanted += 1;
        await view(clock).idempotency.claim(idempotencyKey(world.clusterId, uids.get(hint.name) ?? '', 'runtime-sync', token), {
          inProgressTtlMs: 365 * 24 * 3600_000,
          recordTtlSeconds: 365 * 24 * 3600,
          payloadHash: hashIdempotencyPayload({ scope: 'another-plane', token }),
          owner: 'another-plane',
        });
        await pinOnce(hint, deps());
        break;
      }
      case 'pause':
        // The hint first, so the user's next change finds the object settled and A rolls it.
        await pinOnce(hint, deps());
        await userChange(hint.name);
        queue.pop();
        await interleave(hint.name, { clock }, async () => {
          clock.advance(LEASE_TTL_MS + 1);
          await userChange(hint.name);
          queue.pop();
        }, { clock, stops: true });
        break;
      case 'skew': {
        await pinOnce(hint, deps());
        await userChange(hint.name);
        queue.pop();
        const slowA = rand() < 0.5;
        await interleave(
          hint.name,
          { clock: slowA ? skewedClock(clock, -SKEW_MS) : clock },
          async () => {
            await userChange(hint.name);
            queue.pop();
          },
          { clock: slowA ? clock : skewedClock(clock, SKEW_MS), stops: false },
        );
        break;
      }
    }
  };

  /** Objects not on the runtime their last usable token asked for, or whose Deployment renders another pin. */
  const countLost = async (): Promise<number> => {
    let lost = 0;
    for (const name of names) {
      const isvc = await getIsvc(world.admin, name);
      const pinned = isvc.status?.pinnedRevisionName ?? '';
      const revision = await world.admin.get(Resources.controllerRevisions, 'ome', pinned).catch(() => undefined);
      const pinnedFrac = JSON.stringify(revision?.data ?? '').includes('0.85') ? '0.85' : '0.9';
      const rendered = await engineRenderedFrom(world.admin, name);
      const token = isvc.status?.lastRuntimeSyncToken ?? '';
      const tokenKnown = token === '' || (tokensSet.get(name)?.has(token) === true && !foreignTokens.has(token));
      if (pinnedFrac !== expectedFrac.get(name) || rendered !== pinned || !tokenKnown) {
        lost += 1;
        console.log(`chaos ${seed}: ${name} not converged: pinned ${pinned} (${pinnedFrac}), expected ${expectedFrac.get(name) ?? ''}, rendered ${rendered ?? '-'}, token ${token}`);
      }
    }
    return lost;
  };

  // Act: each step a user may change something, then one hint is delivered, possibly hit by a fault.
  for (let step = 0; step < STEPS || queue.length > 0; step += 1) {
    // Time between deliveries: up to a second.
    clock.advance(Math.floor(rand() * 1_000));
    if (step < STEPS && (queue.length === 0 || rand() < 0.35)) await userChange(pick(names));
    const index = Math.floor(rand() * Math.min(queue.length, 4));
    const [hint] = queue.splice(index, 1);
    if (hint === undefined) continue;
    if (step >= STEPS || rand() >= FAULT_RATE) {
      await pinOnce(hint, deps());
      continue;
    }
    const kind = pick(KINDS);
    faults.set(kind, (faults.get(kind) ?? 0) + 1);
    await deliverWithFault(kind, hint);
  }
  world.cluster.faults.clear();
  // The dead-letter queue is redriven once everything else is done (later, in virtual time).
  clock.advance(LEASE_TTL_MS + 1);
  for (const name of names) {
    await deliver(() => pinInferenceService(deps(), { namespace: NS, name })).catch((error: unknown) => {
      // An object whose last token is another payload's stays refused.
      if (!(error instanceof IdempotencyPayloadMismatchError)) throw error;
    });
  }
  await observePins();
  await world.effects.settle();
  vi.restoreAllMocks();

  // Assess: against the API server's own record of what happened.
  f.lost = await countLost();
  const mine = (e: { object: string }) => names.includes(e.object);
  const tokenCounts = new Map<string, number>();
  for (const e of world.effects.of('token-applied').filter(mine)) tokenCounts.set(`${e.uid}#${e.value}`, (tokenCounts.get(`${e.uid}#${e.value}`) ?? 0) + 1);
  const twice = [...tokenCounts.values()].reduce((sum, n) => sum + n - 1, 0);
  f.stale = world.effects.staleTemplateWrites().filter(mine).length;
  for (const e of world.effects.staleTemplateWrites().filter(mine)) console.log(`chaos ${seed}: stale Deployment write ${JSON.stringify(e)}`);
  f.doubled = twice + f.stale + f.rolledWithoutToken;
  f.applied = world.effects.of('token-applied').filter(mine).length;
  f.templates = world.effects.of('template-changed').filter(mine).length;
  f.writes = counter.writes;
  f.faults = KINDS.map((k) => `${k}=${faults.get(k) ?? 0}`).join(' ');
  return f;
}

/** Both seeds on the memory stores; the first on DynamoDB Local too, where it must give the same figures (one more run would pass 20 s). */
const RUNS = [...SEEDS.map((seed) => ({ stores: 'memory', seed })), { stores: 'DynamoDB Local', seed: SEEDS[0] ?? 0 }];

describe.each(RUNS)('chaos on $stores, seed $seed', ({ stores, seed }) => {
  let world: FaultWorld;
  let table: DynamoTable | undefined;
  let view: StoreView;

  beforeAll(async () => {
    if (stores === 'DynamoDB Local') table = await startDynamoTable();
    const dynamo = table;
    // The simulated Deployment controller would report readiness on a real timer, racing the writers.
    world = await startFaultWorld({ workloadReadyDelayMs: 3_600_000, ...(dynamo ? { stores: (clock: Clock) => dynamo.stores(clock) } : {}) });
    view = dynamo ? (clock) => dynamo.stores(clock) : memoryView(world);
  }, 60_000);

  afterAll(async () => {
    vi.restoreAllMocks();
    await world?.stop();
    await table?.stop();
  });

  it('converges with nothing lost, nothing applied twice, and the same figures on every run', async () => {
    const started = performance.now();
    const f = await runChaos(world, view, seed);
    console.log(
      [
        `chaos ${seed}: ${stores}`,
        `chaos ${seed}: ${f.deliveries} deliveries, ${f.changes} user changes, ${f.writes} API writes in ${Math.round(performance.now() - started)} ms`,
        `chaos ${seed}: faults ${f.faults}`,
        `chaos ${seed}: effects ${f.applied} token applications, ${f.templates} Deployment template changes; superseded=${f.superseded} lease-lost=${f.leaseLost}`,
        `chaos ${seed}: lost=${f.lost} doubled=${f.doubled} (stale=${f.stale} rolled-without-token=${f.rolledWithoutToken}) foreign planted=${f.foreignPlanted} refused=${f.foreignRefused} retried=${f.foreignRetried} applied=${f.foreignApplied} terminal=${f.terminal} dead-lettered=${f.deadLettered}`,
      ].join('\n'),
    );

    expect(f.lost).toBe(0);
    expect(f.doubled).toBe(0);
    expect(f.foreignApplied).toBe(0);
    // Same key, other payload: a validation error, not redelivered (case 17).
    expect(f.foreignRefused).toBeGreaterThan(0);
    expect(f.foreignRetried).toBe(0);
    expect(f.terminal).toBe(0);
    expect(f.deadLettered).toBe(0);
    expect(f.applied).toBeGreaterThan(0);
    // The interleavings happened and were each stopped by a fence.
    expect(f.superseded).toBeGreaterThan(0);
    expect(f.leaseLost).toBeGreaterThan(0);
    expect(f.foreignPlanted).toBeGreaterThan(0);
  }, 60_000);
});
