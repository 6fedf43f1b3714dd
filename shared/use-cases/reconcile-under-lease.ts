/**
 * The reconcile step every function shares: take the object's lease, re-read, decide,
 * write with the object's resourceVersion, retry conflicts a bounded number of times,
 * release. Events are only hints: the attempt callback must re-read the object itself.
 *
 * Lease timeline (docs/storage.md): the lease is taken for `leaseTtlMs` and renewed every
 * third of it while the attempt runs, so it outlives any run however long, and lapses at
 * most `leaseTtlMs` after the worker died or froze. The holder measures its own lease on
 * its own clock (acquire time + TTL), which no skew between workers can shorten. Safety
 * does not rest on time at all: a worker that lost its lease (a renewal refused, or its own
 * copy expired) stops before its next write, and the writes themselves are fenced — status
 * by the object's resourceVersion, the engine Deployment by the lease's fencing token.
 */
import { ConflictError, ControlPlaneError, LeaseLostError } from '../domain/errors';
import type { Clock } from '../ports/clock';
import type { Lease, LeaseStore } from '../ports/store';
import type { WorkloadFence } from '../ports/workloads';

export interface ReconcileDeps {
  leases: LeaseStore;
  clock: Clock;
  /** Identifies this worker in lease records (e.g. the Lambda request id). */
  holder: string;
  leaseTtlMs: number;
  maxConflictRetries: number;
  /** How long to wait for a lease another worker holds before handing the event back. */
  leaseWaitMs?: number;
  sleep?: (ms: number) => Promise<void>;
  /** How often the lease is renewed while the attempt runs (default a third of the TTL). */
  renewEveryMs?: number;
}

/**
 * The lease is held by another worker for longer than we may wait; redeliver later —
 * after `retryAfterMs` (the holder's lease lapses by then, unless renewed) when the store
 * said, so the hint handler can shorten its message's visibility to that.
 */
export class LeaseBusyError extends ControlPlaneError {
  readonly retryAfterMs: number | undefined;

  constructor(key: string, retryAfterMs?: number) {
    super(`lease ${key} is held by another worker${retryAfterMs === undefined ? '' : ` for up to ${Math.round(retryAfterMs)} ms more`}`, { retryable: true });
    this.name = 'LeaseBusyError';
    this.retryAfterMs = retryAfterMs;
  }
}

/**
 * Waits between attempts to take a held lease: exponential from the first to the cap, each
 * drawn in its upper half (jitter), so waiters on one object spread out and a wait of
 * `leaseWaitMs` makes a handful of conditional writes, not dozens.
 */
export const LEASE_RETRY_FIRST_MS = 50;
export const LEASE_RETRY_MAX_MS = 500;

/** The conflicts did not settle within the retries of one delivery; redeliver later. */
export class ConflictRetriesExhaustedError extends ControlPlaneError {
  constructor(key: string, attempts: number, cause: unknown) {
    super(`${key}: still conflicting after ${attempts} attempts`, { retryable: true, cause });
    this.name = 'ConflictRetriesExhaustedError';
  }
}

export interface AttemptContext {
  /** The lease as last renewed. */
  lease: Lease;
  /** 1 for the first attempt. */
  attempt: number;
  /**
   * Throws LeaseLostError when the lease is no longer ours: a renewal was refused (another
   * worker took it over) or our own copy of it expired (we were paused past it). Call it
   * right before every write; the fenced writes catch what slips between the check and the write.
   */
  assertHeld(): void;
}

/** The attempt's lease as the engine Deployment writers fence with it (see WorkloadFence). */
export function workloadFenceOf(context: AttemptContext): WorkloadFence {
  return { fencingToken: context.lease.fencingToken, takenOver: context.lease.takenOver === true, assertHeld: () => context.assertHeld() };
}

/** The lease of one reconcile, kept alive by renewals until `stop`. */
interface HeldLease {
  current(): Lease;
  assertHeld(): void;
  stop(): void;
}

/**
 * Renews the lease every `renewEveryMs`; a refused renewal marks it lost, a failed one is
 * retried at the next beat. The holder's own deadline is measured on its own clock from
 * before the call that took or renewed the lease — never from an expiry another clock
 * wrote — so it errs early, whatever the skew between workers.
 */
function holdLease(deps: ReconcileDeps, acquired: Lease, requestedAt: number): HeldLease {
  let lease = acquired;
  let deadline = requestedAt + deps.leaseTtlMs;
  let lost: LeaseLostError | undefined;
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  const every = Math.max(1, deps.renewEveryMs ?? Math.floor(deps.leaseTtlMs / 3));
  const beat = async (): Promise<void> => {
    const renewRequestedAt = deps.clock.now();
    try {
      const renewed = await deps.leases.renew(lease, deps.leaseTtlMs);
      if (!stopped && lost === undefined) {
        lease = { ...renewed, ...(acquired.takenOver ? { takenOver: true } : {}) };
        deadline = renewRequestedAt + deps.leaseTtlMs;
      }
    } catch (error) {
      if (error instanceof LeaseLostError) lost = error;
      // Any other failure: the lease keeps its old deadline, which assertHeld watches.
    }
    if (!stopped && lost === undefined) schedule();
  };
  const schedule = (): void => {
    timer = setTimeout(() => void beat(), every);
    timer.unref?.();
  };
  schedule();
  return {
    current: () => lease,
    assertHeld() {
      if (lost !== undefined) throw lost;
      if (deps.clock.now() >= deadline) {
        lost = new LeaseLostError(`lease ${lease.key} (token ${lease.fencingToken}) expired while ${lease.holder} held it`);
        throw lost;
      }
    },
    stop() {
      stopped = true;
      if (timer !== undefined) clearTimeout(timer);
    },
  };
}

const defaultSleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Lease key of one object in one cluster; keyed by name so a recreated object queues behind the old one. */
export function objectLeaseKey(clusterId: string, kind: string, namespace: string | undefined, name: string): string {
  return `object#${clusterId}#${kind}#${namespace ?? ''}#${name}`;
}

/** The lease, and the holder's clock reading taken just before the call that got it. */
async function acquireWithin(deps: ReconcileDeps, key: string): Promise<{ lease: Lease; requestedAt: number }> {
  const sleep = deps.sleep ?? defaultSleep;
  const deadline = deps.clock.now() + (deps.leaseWaitMs ?? 2_000);
  let pause = LEASE_RETRY_FIRST_MS;
  for (;;) {
    // A DynamoDB failure propagates from here: no Kubernetes write happens without the lease.
    const requestedAt = deps.clock.now();
    const outcome = deps.leases.tryAcquire
      ? await deps.leases.tryAcquire(key, deps.holder, deps.leaseTtlMs)
      : await deps.leases.acquire(key, deps.holder, deps.leaseTtlMs).then((lease) => (lease ? { lease } : { heldUntil: undefined }));
    if ('lease' in outcome) return { lease: outcome.lease, requestedAt };
    const now = deps.clock.now();
    if (now >= deadline) throw new LeaseBusyError(key, outcome.heldUntil === undefined ? undefined : Math.max(0, outcome.heldUntil - now));
    await sleep(Math.min(deadline - now, pause / 2 + Math.floor((Math.random() * pause) / 2)));
    pause = Math.min(pause * 2, LEASE_RETRY_MAX_MS);
  }
}

/**
 * Runs `attempt`, and again on ConflictError up to `maxConflictRetries` times after a short,
 * growing, jittered pause; the attempt must read the object again itself. Any other error,
 * and exhausted retries, propagate. Where the object's resourceVersion alone fences the
 * write (no lease), this is the whole reconcile.
 */
export async function retryConflicts<R>(
  deps: Pick<ReconcileDeps, 'maxConflictRetries' | 'sleep'>,
  key: string,
  attempt: (n: number) => Promise<R>,
): Promise<R> {
  const sleep = deps.sleep ?? defaultSleep;
  for (let n = 1; ; n += 1) {
    try {
      return await attempt(n);
    } catch (error) {
      if (!(error instanceof ConflictError)) throw error;
      if (n > deps.maxConflictRetries) throw new ConflictRetriesExhaustedError(key, n, error);
      await sleep(Math.min(10 * 2 ** n, 200) + Math.floor(Math.random() * 10));
    }
  }
}

/**
 * Runs `attempt` under the object's lease, re-running it on ConflictError up to
 * `maxConflictRetries` times. Any other error, and exhausted retries, propagate with the
 * lease released, so the event is redelivered and tried afresh.
 */
export async function reconcileUnderLease<R>(
  deps: ReconcileDeps,
  key: string,
  attempt: (context: AttemptContext) => Promise<R>,
): Promise<R> {
  const acquired = await acquireWithin(deps, key);
  const held = holdLease(deps, acquired.lease, acquired.requestedAt);
  try {
    return await retryConflicts(deps, key, (n) => {
      // A worker that lost its lease must not start another attempt: its reads are stale.
      held.assertHeld();
      return attempt({ lease: held.current(), attempt: n, assertHeld: () => held.assertHeld() });
    });
  } finally {
    held.stop();
    await deps.leases.release(held.current()).catch(() => {
      // The lease expires on its own; a failed release must not mask the outcome.
    });
  }
}
