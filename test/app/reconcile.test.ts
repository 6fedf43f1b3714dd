import { afterEach, describe, expect, it, vi } from 'vitest';
import { ConflictRetriesExhaustedError, LeaseBusyError, objectLeaseKey, reconcileUnderLease, workloadFenceOf } from '../../shared/use-cases/reconcile-under-lease';
import type { ReconcileDeps } from '../../shared/use-cases/reconcile-under-lease';
import { ConflictError, InvalidInputError, LeaseLostError, UnavailableError } from '../../shared/domain/errors';
import { systemClock, type Clock } from '../../shared/ports/clock';
import type { Lease, LeaseStore } from '../../shared/ports/store';
import { MemoryLeaseStore } from '../../shared/adapters/memory';

/** A clock that sleeping moves forward, so waits take no real time. */
function fakeTime(): { clock: Clock; sleep: (ms: number) => Promise<void> } {
  let now = 1_000_000;
  return { clock: { now: () => now }, sleep: async (ms) => void (now += ms) };
}

function prepare(overrides: Partial<ReconcileDeps> = {}): ReconcileDeps & { leases: LeaseStore } {
  const time = fakeTime();
  return {
    leases: new MemoryLeaseStore(time.clock),
    clock: time.clock,
    sleep: time.sleep,
    holder: 'worker-a',
    leaseTtlMs: 30_000,
    maxConflictRetries: 3,
    ...overrides,
  };
}

const KEY = objectLeaseKey('local', 'InferenceService', 'prod', 'chat');

/** The jitter's draws pinned at the bottom or the top of their range. */
const LOWEST_DRAW = 0;
const HIGHEST_DRAW = 1 - Number.EPSILON;
function drawJitter(value: number): void {
  vi.spyOn(Math, 'random').mockReturnValue(value);
}

/** Deps on a fake clock whose sleeps are recorded, in order. */
function prepareRecordingSleeps(overrides: Partial<ReconcileDeps> = {}): { deps: ReconcileDeps & { leases: LeaseStore }; sleeps: number[] } {
  const time = fakeTime();
  const sleeps: number[] = [];
  const deps = prepare({ clock: time.clock, leases: new MemoryLeaseStore(time.clock), sleep: async (ms) => void (sleeps.push(ms), await time.sleep(ms)), ...overrides });
  return { deps, sleeps };
}

/** An attempt that meets `conflicts` conflicts before it writes. */
function conflictingTimes(conflicts: number): () => Promise<string> {
  let seen = 0;
  return async () => {
    seen += 1;
    if (seen <= conflicts) throw new ConflictError('stale resourceVersion');
    return 'written';
  };
}

afterEach(() => {
  vi.restoreAllMocks();
  vi.useRealTimers();
});

describe('Function: reconcileUnderLease', () => {
  it('runs the attempt under the lease and releases it afterwards', async () => {
    const deps = prepare();
    const result = await reconcileUnderLease(deps, KEY, async ({ lease }) => lease.holder);
    expect(result).toBe('worker-a');
    // Released: another worker takes it at once.
    expect(await deps.leases.acquire(KEY, 'worker-b', 1_000)).toBeDefined();
  });

  it('re-runs the attempt after a conflict, re-reading each time', async () => {
    const deps = prepare();
    const attempts: number[] = [];
    const result = await reconcileUnderLease(deps, KEY, async ({ attempt }) => {
      attempts.push(attempt);
      if (attempt < 3) throw new ConflictError('stale resourceVersion');
      return 'written';
    });
    expect(result).toBe('written');
    expect(attempts).toEqual([1, 2, 3]);
  });

  it('hands the event back as retryable when conflicts outlast the retries, with the lease released', async () => {
    const deps = prepare({ maxConflictRetries: 2 });
    let attempts = 0;
    const run = reconcileUnderLease(deps, KEY, async () => {
      attempts += 1;
      throw new ConflictError('stale resourceVersion');
    });
    await expect(run).rejects.toBeInstanceOf(ConflictRetriesExhaustedError);
    await expect(run).rejects.toMatchObject({
      name: 'ConflictRetriesExhaustedError',
      message: `${KEY}: still conflicting after 3 attempts`,
      retryable: true,
      cause: expect.any(ConflictError),
    });
    expect(attempts).toBe(3);
    expect(await deps.leases.acquire(KEY, 'worker-b', 1_000)).toBeDefined();
  });

  it('backs off between conflict retries: 20 ms doubling up to 200 ms, plus a jitter under 10 ms', async () => {
    drawJitter(LOWEST_DRAW);
    const lowest = prepareRecordingSleeps({ maxConflictRetries: 6 });
    await expect(reconcileUnderLease(lowest.deps, KEY, conflictingTimes(6))).resolves.toBe('written');
    drawJitter(HIGHEST_DRAW);
    const highest = prepareRecordingSleeps({ maxConflictRetries: 6 });
    await expect(reconcileUnderLease(highest.deps, KEY, conflictingTimes(6))).resolves.toBe('written');

    expect(lowest.sleeps).toEqual([20, 40, 80, 160, 200, 200]);
    expect(highest.sleeps).toEqual(lowest.sleeps.map((ms) => ms + 9));
  });

  it('does not retry other errors, and releases the lease', async () => {
    const deps = prepare();
    let attempts = 0;
    const run = reconcileUnderLease(deps, KEY, async () => {
      attempts += 1;
      throw new InvalidInputError('malformed annotation');
    });
    await expect(run).rejects.toBeInstanceOf(InvalidInputError);
    expect(attempts).toBe(1);
    expect(await deps.leases.acquire(KEY, 'worker-b', 1_000)).toBeDefined();
  });

  it('waits for a lease another worker holds, then gives up with a retryable LeaseBusyError', async () => {
    const deps = prepare({ leaseWaitMs: 500 });
    await deps.leases.acquire(KEY, 'worker-b', 60_000);
    let ran = false;
    const run = reconcileUnderLease(deps, KEY, async () => {
      ran = true;
    });
    await expect(run).rejects.toBeInstanceOf(LeaseBusyError);
    await expect(run).rejects.toMatchObject({ retryable: true });
    expect(ran).toBe(false);
  });

  it('says how long the held lease runs when the store tells it with the refusal, and backs off between tries', async () => {
    // Prepare: a store whose refusal carries the holder's expiry (as DynamoDB's does), counting the tries.
    const time = fakeTime();
    const heldUntil = time.clock.now() + 20_000;
    const pauses: number[] = [];
    let tries = 0;
    const leases: LeaseStore = {
      acquire: async () => undefined,
      tryAcquire: async () => {
        tries += 1;
        return { heldUntil };
      },
      renew: async (lease) => lease,
      release: async () => undefined,
    };
    const deps = prepare({ leases, clock: time.clock, sleep: async (ms) => void (pauses.push(ms), await time.sleep(ms)), leaseWaitMs: 2_000 });
    // Act
    const run = reconcileUnderLease(deps, KEY, async () => 'never');
    // Assess: the remaining 18 s ride on the error; each pause at least half the last cap's
    // double, none above 500 ms; the 2 s wait takes a handful of tries, not dozens.
    await expect(run).rejects.toMatchObject({ name: 'LeaseBusyError', retryAfterMs: 18_000 });
    expect(pauses[0]).toBeGreaterThanOrEqual(25);
    expect(Math.max(...pauses)).toBeLessThanOrEqual(500);
    expect(tries).toBeGreaterThanOrEqual(5);
    expect(tries).toBeLessThanOrEqual(10);
  });

  it('waits half of each try\'s cap at the lowest draw, caps doubling from the first to the maximum, and cuts the last wait to the deadline', async () => {
    drawJitter(LOWEST_DRAW);
    const { deps, sleeps } = prepareRecordingSleeps({ leaseWaitMs: 1_000 });
    await deps.leases.acquire(KEY, 'worker-b', 60_000);

    await expect(reconcileUnderLease(deps, KEY, async () => 'never')).rejects.toBeInstanceOf(LeaseBusyError);

    // Caps 50, 100, 200, 400, then 500 from there on; 875 ms slept before the last wait.
    expect(sleeps).toEqual([25, 50, 100, 200, 250, 250, 125]);
  });

  it('waits just under each try\'s cap at the highest draw', async () => {
    drawJitter(HIGHEST_DRAW);
    const { deps, sleeps } = prepareRecordingSleeps({ leaseWaitMs: 1_000 });
    await deps.leases.acquire(KEY, 'worker-b', 60_000);

    await expect(reconcileUnderLease(deps, KEY, async () => 'never')).rejects.toBeInstanceOf(LeaseBusyError);

    // 49 + 99 + 199 + 399 = 746 ms slept, so the fifth wait is cut to the 254 ms left.
    expect(sleeps).toEqual([49, 99, 199, 399, 254]);
  });

  it('without a sleep of its own, waits in real time between tries rather than asking the store again at once', async () => {
    const leases = new MemoryLeaseStore(systemClock);
    await leases.acquire(KEY, 'worker-b', 60_000);
    let tries = 0;
    const counting: LeaseStore = Object.assign(Object.create(leases) as LeaseStore, {
      acquire: (key: string, holder: string, ttlMs: number) => {
        tries += 1;
        return leases.acquire(key, holder, ttlMs);
      },
    });
    const { sleep: _none, ...deps } = prepare({ clock: systemClock, leases: counting, leaseWaitMs: 150 });
    const startedAt = Date.now();

    await expect(reconcileUnderLease(deps, KEY, async () => 'never')).rejects.toBeInstanceOf(LeaseBusyError);

    expect(Date.now() - startedAt).toBeGreaterThanOrEqual(150);
    expect(tries).toBeLessThanOrEqual(6);
  });

  it('gives up without a time when the store cannot tell it', async () => {
    const deps = prepare({ leaseWaitMs: 500 });
    await deps.leases.acquire(KEY, 'worker-b', 60_000);
    await expect(reconcileUnderLease(deps, KEY, async () => undefined)).rejects.toMatchObject({ name: 'LeaseBusyError', retryAfterMs: undefined });
  });

  it('takes the lease over once the other holder lets it expire', async () => {
    const deps = prepare({ leaseWaitMs: 5_000 });
    await deps.leases.acquire(KEY, 'worker-b', 1_000);
    const result = await reconcileUnderLease(deps, KEY, async ({ lease }) => lease.fencingToken);
    expect(result).toBe(2);
  });

  it('writes nothing when the lease store is down: the error reaches the caller before the attempt', async () => {
    const down: LeaseStore = {
      acquire: async () => {
        throw new UnavailableError('DynamoDB unreachable');
      },
      renew: async () => {
        throw new UnavailableError('DynamoDB unreachable');
      },
      release: async () => undefined,
    };
    const deps = prepare({ leases: down });
    let ran = false;
    await expect(
      reconcileUnderLease(deps, KEY, async () => {
        ran = true;
      }),
    ).rejects.toBeInstanceOf(UnavailableError);
    expect(ran).toBe(false);
  });
});

/** The store, counting the renewals asked of it. */
function countingRenewals(inner: LeaseStore): { leases: LeaseStore; renewals(): number } {
  let renewals = 0;
  const leases: LeaseStore = Object.assign(Object.create(inner) as LeaseStore, {
    renew: (lease: Lease, ttlMs: number) => {
      renewals += 1;
      return inner.renew(lease, ttlMs);
    },
  });
  return { leases, renewals: () => renewals };
}

/**
 * A store whose first renewal is held until `answer()`: the store renews at once, its reply
 * comes back late. Later renewals answer at once.
 */
function slowRenewals(inner: LeaseStore): { leases: LeaseStore; inFlight: Promise<void>; answer(): void; calls(): number } {
  let calls = 0;
  let signalInFlight: () => void = () => undefined;
  const inFlight = new Promise<void>((resolve) => (signalInFlight = resolve));
  let answer: () => void = () => undefined;
  const answered = new Promise<void>((resolve) => (answer = resolve));
  const leases: LeaseStore = Object.assign(Object.create(inner) as LeaseStore, {
    renew: async (lease: Lease, ttlMs: number) => {
      calls += 1;
      const renewed = await inner.renew(lease, ttlMs);
      if (calls === 1) {
        signalInFlight();
        await answered;
      }
      return renewed;
    },
  });
  return { leases, inFlight, answer: () => answer(), calls: () => calls };
}

describe('Function: reconcileUnderLease, the lease while the attempt runs', () => {
  /** Lets the heartbeat's timer fire: renewals run on real timers, the clock is the test's. */
  const beats = (ms = 30) => new Promise((resolve) => setTimeout(resolve, ms));

  /** A clock the test moves by hand, its sleeps taking no time. */
  function handClock(): { clock: Clock; advance(ms: number): void } {
    let now = 5_000_000;
    return { clock: { now: () => now }, advance: (ms) => void (now += ms) };
  }

  it('refuses a write once its own copy of the lease expired (paused past it), and no renewal came', async () => {
    const time = handClock();
    const deps = prepare({ clock: time.clock, leases: new MemoryLeaseStore(time.clock), leaseTtlMs: 1_000, renewEveryMs: 60_000 });

    const run = reconcileUnderLease(deps, KEY, async ({ assertHeld }) => {
      assertHeld();
      time.advance(999);
      assertHeld();
      time.advance(1);
      assertHeld();
      return 'written';
    });

    await expect(run).rejects.toBeInstanceOf(LeaseLostError);
    await expect(run).rejects.toThrow(`lease ${KEY} (token 1) expired while worker-a held it`);
  });

  it('keeps the lease held past its first deadline while renewals succeed', async () => {
    const time = handClock();
    const leases = new MemoryLeaseStore(time.clock);
    const deps = prepare({ clock: time.clock, leases, leaseTtlMs: 1_000, renewEveryMs: 5 });

    const result = await reconcileUnderLease(deps, KEY, async ({ assertHeld }) => {
      for (let step = 0; step < 4; step += 1) {
        time.advance(600);
        await beats();
        assertHeld();
      }
      return 'written';
    });

    // 2,400 ms under a 1,000 ms lease: held because each beat renewed it from its own clock reading.
    expect(result).toBe('written');
  });

  it('refuses every write after a renewal is refused: another worker took the lease over', async () => {
    const time = handClock();
    const leases = new MemoryLeaseStore(time.clock);
    const deps = prepare({ clock: time.clock, leases, leaseTtlMs: 1_000, renewEveryMs: 5 });
    const seen: string[] = [];

    const run = reconcileUnderLease(deps, KEY, async ({ assertHeld }) => {
      // Paused past the lease: another worker takes it, our next renewal is refused.
      time.advance(1_001);
      expect(await leases.acquire(KEY, 'worker-b', 1_000)).toBeDefined();
      time.advance(-1_001);
      await beats();
      try {
        assertHeld();
      } catch (error) {
        seen.push((error as Error).name);
        throw error;
      }
      return 'written';
    });

    await expect(run).rejects.toBeInstanceOf(LeaseLostError);
    expect(seen).toEqual(['LeaseLostError']);
    // The newer holder keeps it: our release took nothing away.
    expect(await leases.acquire(KEY, 'worker-c', 1_000)).toBeUndefined();
  });

  it('stops renewing once the attempt is over', async () => {
    const time = handClock();
    const leases = new MemoryLeaseStore(time.clock);
    const counting = countingRenewals(leases);
    const deps = prepare({ clock: time.clock, leases: counting.leases, leaseTtlMs: 1_000, renewEveryMs: 5 });

    await reconcileUnderLease(deps, KEY, async () => {
      await beats();
      return 'written';
    });
    const afterwards = counting.renewals();
    await beats(60);

    expect(afterwards).toBeGreaterThan(0);
    expect(counting.renewals()).toBe(afterwards);
  });

  it('stops renewing once a renewal is refused, though the attempt runs on', async () => {
    const time = handClock();
    const leases = new MemoryLeaseStore(time.clock);
    let renewals = 0;
    const refusing: LeaseStore = Object.assign(Object.create(leases) as LeaseStore, {
      renew: async (lease: Lease) => {
        renewals += 1;
        throw new LeaseLostError(`lease ${lease.key} (token ${lease.fencingToken}) is no longer held by ${lease.holder}`);
      },
    });
    const deps = prepare({ clock: time.clock, leases: refusing, leaseTtlMs: 1_000, renewEveryMs: 5 });

    await reconcileUnderLease(deps, KEY, async () => {
      await beats(60);
      return 'done without writing';
    });

    expect(renewals).toBe(1);
  });

  it('renews every third of the lease unless told otherwise', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const time = handClock();
    const leases = new MemoryLeaseStore(time.clock);
    const counting = countingRenewals(leases);
    const deps = prepare({ clock: time.clock, leases: counting.leases, leaseTtlMs: 3_000 });
    const counted: number[] = [];

    await reconcileUnderLease(deps, KEY, async () => {
      await vi.advanceTimersByTimeAsync(999);
      counted.push(counting.renewals());
      await vi.advanceTimersByTimeAsync(1);
      counted.push(counting.renewals());
      await vi.advanceTimersByTimeAsync(1_000);
      counted.push(counting.renewals());
      return 'written';
    });

    expect(counted).toEqual([0, 1, 2]);
  });

  it('does not renew again after the attempt is over when a renewal in flight returns late', async () => {
    const time = handClock();
    const late = slowRenewals(new MemoryLeaseStore(time.clock));
    const deps = prepare({ clock: time.clock, leases: late.leases, leaseTtlMs: 1_000, renewEveryMs: 5 });

    await reconcileUnderLease(deps, KEY, async () => {
      await late.inFlight;
      return 'written';
    });
    late.answer();
    await beats(60);

    expect(late.calls()).toBe(1);
  });

  it('gives a fence kept past the attempt no time from a renewal that returns after the release', async () => {
    const time = handClock();
    const late = slowRenewals(new MemoryLeaseStore(time.clock));
    const deps = prepare({ clock: time.clock, leases: late.leases, leaseTtlMs: 1_000, renewEveryMs: 5 });

    // The renewal is asked for half-way through the lease; its reply comes after the release.
    const fence = await reconcileUnderLease(deps, KEY, async (context) => {
      time.advance(500);
      await late.inFlight;
      return workloadFenceOf(context);
    });
    late.answer();
    await beats();
    fence.assertHeld();
    time.advance(500);

    // Expired on the deadline the lease was released with, not half a lease later.
    expect(() => fence.assertHeld()).toThrow(`lease ${KEY} (token 1) expired while worker-a held it`);
  });

  it('gives the engine writers the lease as their fence: its token, whether it was taken over, and the same check', async () => {
    const time = handClock();
    const leases = new MemoryLeaseStore(time.clock);
    await leases.acquire(KEY, 'worker-old', 1_000);
    time.advance(1_001);
    const deps = prepare({ clock: time.clock, leases, leaseTtlMs: 1_000, renewEveryMs: 60_000 });

    const fence = await reconcileUnderLease(deps, KEY, async (context) => {
      const taken = workloadFenceOf(context);
      expect(taken.fencingToken).toBe(context.lease.fencingToken);
      taken.assertHeld();
      time.advance(1_000);
      expect(() => taken.assertHeld()).toThrow(LeaseLostError);
      return taken;
    });

    expect(fence).toMatchObject({ fencingToken: 2, takenOver: true });
  });

  it('says a lease it took fresh was not taken over, and keeps "taken over" through its renewals', async () => {
    const time = handClock();
    const leases = new MemoryLeaseStore(time.clock);
    const fresh = await reconcileUnderLease(prepare({ clock: time.clock, leases, leaseTtlMs: 1_000, renewEveryMs: 60_000 }), KEY, async (context) => workloadFenceOf(context).takenOver);
    await leases.acquire(KEY, 'worker-old', 1_000);
    time.advance(1_001);

    // Taken over from worker-old, renewed every 5 ms by a store whose renewal does not repeat
    // "taken over"; the first attempt conflicts, so the retry runs on the renewed lease.
    const renewsPlainly: LeaseStore = Object.assign(Object.create(leases) as LeaseStore, {
      renew: async (lease: Lease, ttlMs: number) => {
        const { takenOver: _dropped, ...plain } = await leases.renew(lease, ttlMs);
        return plain;
      },
    });
    const leaseAtTakeover = time.clock.now() + 1_000;
    const retried = await reconcileUnderLease(prepare({ clock: time.clock, leases: renewsPlainly, leaseTtlMs: 1_000, renewEveryMs: 5 }), KEY, async (context) => {
      if (context.attempt === 1) {
        time.advance(100);
        await beats();
        throw new ConflictError('stale resourceVersion');
      }
      return { takenOver: workloadFenceOf(context).takenOver, expiresAt: context.lease.expiresAt };
    });

    expect(fresh).toBe(false);
    expect(retried.takenOver).toBe(true);
    expect(retried.expiresAt).toBeGreaterThan(leaseAtTakeover);
  });

  it('keeps the lease when a renewal fails for another reason than a takeover, until its own deadline', async () => {
    const time = handClock();
    const leases = new MemoryLeaseStore(time.clock);
    const failing: LeaseStore = Object.assign(Object.create(leases) as LeaseStore, {
      renew: async () => {
        throw new UnavailableError('DynamoDB is throttling');
      },
    });
    const deps = prepare({ clock: time.clock, leases: failing, leaseTtlMs: 1_000, renewEveryMs: 5 });

    const run = reconcileUnderLease(deps, KEY, async ({ assertHeld }) => {
      await beats();
      time.advance(999);
      assertHeld();
      time.advance(1);
      assertHeld();
      return 'written';
    });

    await expect(run).rejects.toThrow(`lease ${KEY} (token 1) expired while worker-a held it`);
  });

  it('waits two seconds for a held lease unless told otherwise', async () => {
    const deps = prepare();
    await deps.leases.acquire(KEY, 'worker-b', 30_000);
    const startedAt = deps.clock.now();

    await expect(reconcileUnderLease(deps, KEY, async () => 'never')).rejects.toBeInstanceOf(LeaseBusyError);

    expect(deps.clock.now() - startedAt).toBe(2_000);
  });

  it('names each object lease by cluster, kind, namespace and name; a cluster-scoped object has an empty namespace', () => {
    expect(objectLeaseKey('east', 'InferenceService', 'prod', 'chat')).toBe('object#east#InferenceService#prod#chat');
    expect(objectLeaseKey('east', 'ClusterServingRuntime', undefined, 'srt')).toBe('object#east#ClusterServingRuntime##srt');
  });

  it('says in the busy error how long the other holder keeps the lease', () => {
    expect(new LeaseBusyError(KEY, 1_499.6).message).toBe(`lease ${KEY} is held by another worker for up to 1500 ms more`);
    expect(new LeaseBusyError(KEY, undefined).message).toBe(`lease ${KEY} is held by another worker`);
  });
});
