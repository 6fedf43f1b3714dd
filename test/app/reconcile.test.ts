import { describe, expect, it } from 'vitest';
import { ConflictRetriesExhaustedError, LeaseBusyError, objectLeaseKey, reconcileUnderLease } from '../../shared/use-cases/reconcile-under-lease';
import type { ReconcileDeps } from '../../shared/use-cases/reconcile-under-lease';
import { ConflictError, InvalidInputError, UnavailableError } from '../../shared/domain/errors';
import type { Clock } from '../../shared/ports/clock';
import type { LeaseStore } from '../../shared/ports/store';
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
    await expect(run).rejects.toMatchObject({ retryable: true });
    expect(attempts).toBe(3);
    expect(await deps.leases.acquire(KEY, 'worker-b', 1_000)).toBeDefined();
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
