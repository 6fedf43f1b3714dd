/**
 * Lease safety through the real pin use-case on the embedded API server: a worker paused
 * past its lease cannot overwrite the engine Deployment its successor wrote (case 10), and
 * ±5 min of clock skew between workers never gives two successful writers (case 11). The
 * effects are read from the API server's watch stream.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { objectLeaseKey, reconcileUnderLease } from '../../shared/use-cases/reconcile-under-lease';
import { LeaseLostError } from '../../shared/domain/errors';
import { Resources } from '../../shared/domain/model/resources';
import type { Clock } from '../../shared/ports/clock';
import type { ClusterClient } from '../../shared/ports/cluster';
import { pinInferenceService } from '../../shared/use-cases/pinning';
import { MemoryLeaseStore } from '../../shared/adapters/memory';
import {
  annotateSync,
  applyRuntime,
  deliver,
  engineRenderedFrom,
  getIsvc,
  LEASE_TTL_MS,
  NS,
  seedIsvc,
  seedRuntime,
  skewedClock,
  startFaultWorld,
  storesWithClock,
  type FaultWorld,
} from './support';

let world: FaultWorld;

beforeAll(async () => {
  world = await startFaultWorld();
});

afterAll(async () => {
  await world?.stop();
});

const MINUTE = 60_000;

/** An InferenceService on its own runtime (so tests do not share drift), pinned at 0.9. */
async function pinnedOnOwnRuntime(name: string): Promise<{ runtime: string; rev090: string }> {
  const runtime = `rt-${name}`;
  await applyRuntime(world.admin, seedRuntime('0.9', runtime));
  await world.admin.create(Resources.inferenceServices, seedIsvc(name, runtime));
  await deliver(() => world.pin(name));
  return { runtime, rev090: (await getIsvc(world.admin, name)).status?.pinnedRevisionName ?? '' };
}

/** Where a paused worker stops: before a call is sent, or after its reply came back. */
type PausePoint = { verb: 'get' | 'replace'; plural: string; when: 'before' | 'after' };

/**
 * A client that freezes the worker at the first call matching `point`: the call waits for
 * `resume()` (before), or its reply is held until then (after).
 */
function pausingClient(inner: ClusterClient, point: PausePoint): { client: ClusterClient; paused: Promise<void>; resume: () => void } {
  let signalPaused: () => void = () => undefined;
  const paused = new Promise<void>((resolve) => (signalPaused = resolve));
  let resume: () => void = () => undefined;
  const gate = new Promise<void>((resolve) => (resume = resolve));
  let armed = true;
  const hold = async <T>(verb: string, plural: string, run: () => Promise<T>): Promise<T> => {
    if (!armed || verb !== point.verb || plural !== point.plural) return run();
    armed = false;
    if (point.when === 'before') {
      signalPaused();
      await gate;
      return run();
    }
    const result = await run();
    signalPaused();
    await gate;
    return result;
  };
  const client = {
    ...inner,
    get: (type, namespace, name) => hold('get', type.plural, () => inner.get(type, namespace, name)),
    replace: (type, object, options) => hold('replace', type.plural, () => inner.replace(type, object, options)),
    list: (type, options) => inner.list(type, options),
    create: (type, object, options) => inner.create(type, object, options),
    replaceStatus: (type, object, options) => inner.replaceStatus(type, object, options),
    patch: (type, namespace, name, patch, options) => inner.patch(type, namespace, name, patch, options),
    delete: (type, namespace, name, options) => inner.delete(type, namespace, name, options),
    watch: (type, options, onEvent) => inner.watch(type, options, onEvent),
  } as ClusterClient;
  return { client, paused, resume };
}

describe('a worker paused past its lease (case 10)', () => {
  // The paused worker's clock is frozen at its pause, so its own lease check still passes:
  // only the fence on the Deployment can stop it.
  it.each<[string, PausePoint]>([
    ['before it reads the Deployment', { verb: 'get', plural: 'deployments', when: 'before' }],
    ['between reading and replacing the Deployment', { verb: 'replace', plural: 'deployments', when: 'before' }],
  ])('cannot overwrite the newer engine Deployment when paused %s', async (label, point) => {
    // Prepare: roll-1 asks for 0.85; worker A decides and writes status, then freezes.
    const name = point.verb === 'get' ? 'paused-get' : 'paused-replace';
    const { runtime, rev090 } = await pinnedOnOwnRuntime(name);
    await applyRuntime(world.admin, seedRuntime('0.85', runtime));
    await annotateSync(world.admin, name, 'roll-1');
    const frozenAt = world.clock.now();
    const frozen: Clock = { now: () => frozenAt };
    const pause = pausingClient(world.admin, point);
    const deps = world.worker({ client: pause.client, clock: frozen });
    // A's first Deployment write of this run: the render for roll-1 (0.85) replaces 0.9's.
    const workerA = pinInferenceService(deps, { namespace: NS, name }).then(
      (result) => ({ result, error: undefined }),
      (error: unknown) => ({ result: undefined, error }),
    );
    await pause.paused;
    const afterA = await getIsvc(world.admin, name);
    expect(afterA.status?.lastRuntimeSyncToken).toBe('roll-1');

    // Act: A's lease lapses; the user goes back to 0.9 with roll-2; worker B takes over.
    world.clock.advance(LEASE_TTL_MS + 1_000);
    await applyRuntime(world.admin, seedRuntime('0.9', runtime));
    await annotateSync(world.admin, name, 'roll-2');
    const byB = await deliver(() => world.pin(name));
    pause.resume();
    const outcomeA = await workerA;

    // Assess: A's late write was refused; the Deployment renders what B pinned.
    expect(byB).toMatchObject({ tokenApplied: 'roll-2', pinnedRevisionName: rev090 });
    // A wrote nothing: it found B's newer fence (or B's stamp made its replace a 409, and
    // its retry then found the fence), so the Deployment is B's.
    expect(outcomeA.error, label).toBeUndefined();
    expect(outcomeA.result?.workload, label).toBe('superseded');
    await world.effects.settle();
    expect(await engineRenderedFrom(world.admin, name)).toBe(rev090);
    expect(world.effects.staleTemplateWrites()).toEqual([]);
    expect(world.effects.of('token-applied', name).map((e) => e.value)).toEqual(['roll-1', 'roll-2']);
    // A's delivery comes again (it failed retryably): nothing more happens.
    const again = await deliver(() => world.pin(name));
    expect(again.tokenApplied).toBeUndefined();
    await world.effects.settle();
    expect(world.effects.of('template-changed', name).map((e) => e.value)).toEqual([rev090]);
  });
});

describe('±5 min clock skew between workers (case 11)', () => {
  it.each([
    ['a slow worker (−5 min), whose lease looks expired to everyone at once', -5 * MINUTE],
    ['a fast worker (+5 min), which takes a live lease over at once', 5 * MINUTE],
  ])('never gives two successful writers: %s', async (_label, skew) => {
    // Prepare: the skewed worker S works for roll-1 and freezes before its status write...
    const name = skew < 0 ? 'skew-slow' : 'skew-fast';
    const { runtime, rev090 } = await pinnedOnOwnRuntime(name);
    await applyRuntime(world.admin, seedRuntime('0.85', runtime));
    await annotateSync(world.admin, name, 'roll-1');
    const pause = pausingClient(world.admin, { verb: 'get', plural: 'deployments', when: 'before' });
    // ...or, for the fast worker, holds the lease a normal worker N is in the middle of.
    const skewed = skewedClock(world.clock, skew);
    const asSkewed = { clock: skewed, stores: storesWithClock(world.stores, skewed) };
    const first = skew < 0 ? world.worker({ client: pause.client, ...asSkewed }) : world.worker({ client: pause.client });
    const second = skew < 0 ? world.worker() : world.worker(asSkewed);
    const running = pinInferenceService(first, { namespace: NS, name }).then(
      (result) => ({ result, error: undefined }),
      (error: unknown) => ({ result: undefined, error }),
    );
    await pause.paused;

    // Act: no time passes, yet the other worker gets the lease; the user moves to 0.9 meanwhile.
    await applyRuntime(world.admin, seedRuntime('0.9', runtime));
    await annotateSync(world.admin, name, 'roll-2');
    const other = await deliver(() => pinInferenceService(second, { namespace: NS, name }));
    pause.resume();
    const outcome = await running;

    // Assess: both held "the lease", but only one could write after the takeover.
    expect(other.tokenApplied).toBe('roll-2');
    expect(outcome.error ?? outcome.result?.workload).toBe('superseded');
    await world.effects.settle();
    expect(world.effects.of('token-applied', name).map((e) => e.value)).toEqual(['roll-1', 'roll-2']);
    expect(world.effects.staleTemplateWrites()).toEqual([]);
    expect(await engineRenderedFrom(world.admin, name)).toBe(rev090);
    expect((await getIsvc(world.admin, name)).status?.pinnedRevisionName).toBe(rev090);
  });

  it('keeps one token application when 12 workers with clocks −5, 0 and +5 min race on one value', async () => {
    const name = 'skew-race';
    const { runtime } = await pinnedOnOwnRuntime(name);
    await applyRuntime(world.admin, seedRuntime('0.85', runtime));
    await annotateSync(world.admin, name, 'race-1');
    const skews = Array.from({ length: 12 }, (_, i) => [-5 * MINUTE, 0, 5 * MINUTE][i % 3] ?? 0);

    await Promise.all(
      skews.map((skew) => {
        const clock = skewedClock(world.clock, skew);
        return deliver(() => world.pin(name, { clock, stores: storesWithClock(world.stores, clock), leaseWaitMs: 2_000 }));
      }),
    );

    await world.effects.settle();
    expect(world.effects.of('token-applied', name).map((e) => e.value)).toEqual(['race-1']);
    expect(world.effects.of('template-changed', name)).toHaveLength(2); // the first pin, then race-1
    expect(world.effects.staleTemplateWrites()).toEqual([]);
  });
});

describe('the lease is renewed while a reconcile runs', () => {
  it('outlives its TTL while the attempt works, and a refused renewal stops the next write', async () => {
    vi.useFakeTimers();
    try {
      // Prepare: a 1 s lease renewed every 300 ms; the attempt runs for 10 s of fake time.
      const clock: Clock = { now: () => Date.now() };
      const leases = new MemoryLeaseStore(clock);
      const key = objectLeaseKey('test', 'InferenceService', NS, 'long-run');
      let release: () => void = () => undefined;
      const running = new Promise<void>((resolve) => (release = resolve));
      const outcome = reconcileUnderLease({ leases, clock, holder: 'a', leaseTtlMs: 1_000, renewEveryMs: 300, maxConflictRetries: 0 }, key, async (context) => {
        await running;
        context.assertHeld();
        return 'written';
      });

      // Act + Assess: every 250 ms for 10 s, another worker finds the lease held.
      const rivals: Array<unknown> = [];
      for (let t = 0; t < 10_000; t += 250) {
        await vi.advanceTimersByTimeAsync(250);
        rivals.push(await leases.acquire(key, 'b', 1_000));
      }
      expect(rivals.every((r) => r === undefined)).toBe(true);
      release();
      await expect(outcome).resolves.toBe('written');
      await expect(leases.acquire(key, 'b', 1_000)).resolves.toMatchObject({ holder: 'b' });

      // A renewal refused (the lease was taken over) makes the worker stop before it writes.
      let resume: () => void = () => undefined;
      const paused = new Promise<void>((resolve) => (resume = resolve));
      const lost = reconcileUnderLease({ leases, clock, holder: 'c', leaseTtlMs: 1_000, renewEveryMs: 300, maxConflictRetries: 0 }, `${key}-2`, async (context) => {
        await paused;
        context.assertHeld();
        return 'written';
      });
      const settled = lost.catch((error: unknown) => error);
      await vi.advanceTimersByTimeAsync(1);
      await leases.release({ key: `${key}-2`, holder: 'c', fencingToken: 1, expiresAt: 0 });
      await leases.acquire(`${key}-2`, 'd', 60_000);
      await vi.advanceTimersByTimeAsync(300);
      resume();
      expect(await settled).toBeInstanceOf(LeaseLostError);
    } finally {
      vi.useRealTimers();
    }
  });
});
