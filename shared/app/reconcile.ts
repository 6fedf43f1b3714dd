/**
 * The reconcile step every function shares: take the object's lease, re-read, decide,
 * write with the object's resourceVersion, retry conflicts a bounded number of times,
 * release. Events are only hints: the attempt callback must re-read the object itself.
 */
import { ConflictError, ControlPlaneError } from '../errors';
import type { Clock } from '../ports/clock';
import type { Lease, LeaseStore } from '../ports/store';

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
}

/** The lease is held by another worker for longer than we may wait; redeliver later. */
export class LeaseBusyError extends ControlPlaneError {
  constructor(key: string) {
    super(`lease ${key} is held by another worker`, { retryable: true });
    this.name = 'LeaseBusyError';
  }
}

/** The conflicts did not settle within the retries of one delivery; redeliver later. */
export class ConflictRetriesExhaustedError extends ControlPlaneError {
  constructor(key: string, attempts: number, cause: unknown) {
    super(`${key}: still conflicting after ${attempts} attempts`, { retryable: true, cause });
    this.name = 'ConflictRetriesExhaustedError';
  }
}

export interface AttemptContext {
  lease: Lease;
  /** 1 for the first attempt. */
  attempt: number;
}

const defaultSleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Lease key of one object in one cluster; keyed by name so a recreated object queues behind the old one. */
export function objectLeaseKey(clusterId: string, kind: string, namespace: string | undefined, name: string): string {
  return `object#${clusterId}#${kind}#${namespace ?? ''}#${name}`;
}

async function acquireWithin(deps: ReconcileDeps, key: string): Promise<Lease> {
  const sleep = deps.sleep ?? defaultSleep;
  const deadline = deps.clock.now() + (deps.leaseWaitMs ?? 2_000);
  let pause = 20;
  for (;;) {
    // A DynamoDB failure propagates from here: no Kubernetes write happens without the lease.
    const lease = await deps.leases.acquire(key, deps.holder, deps.leaseTtlMs);
    if (lease) return lease;
    if (deps.clock.now() >= deadline) throw new LeaseBusyError(key);
    await sleep(pause + Math.floor(Math.random() * pause));
    pause = Math.min(pause * 2, 250);
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
  const sleep = deps.sleep ?? defaultSleep;
  const lease = await acquireWithin(deps, key);
  try {
    for (let n = 1; ; n += 1) {
      try {
        return await attempt({ lease, attempt: n });
      } catch (error) {
        if (!(error instanceof ConflictError)) throw error;
        if (n > deps.maxConflictRetries) throw new ConflictRetriesExhaustedError(key, n, error);
        await sleep(Math.min(10 * 2 ** n, 200) + Math.floor(Math.random() * 10));
      }
    }
  } finally {
    await deps.leases.release(lease).catch(() => {
      // The lease expires on its own; a failed release must not mask the outcome.
    });
  }
}
