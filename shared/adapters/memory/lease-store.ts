/**
 * Leases with fencing tokens in memory, with the DynamoDB store's semantics: the check and
 * the take happen in one synchronous step, as one conditional update does in DynamoDB.
 */
import { LeaseLostError } from '../../domain/errors';
import type { Clock } from '../../ports/clock';
import { systemClock } from '../../ports/clock';
import type { Lease, LeaseStore } from '../../ports/store';

interface LeaseState {
  holder?: string;
  fencingToken: number;
  expiresAt: number;
}

export class MemoryLeaseStore implements LeaseStore {
  constructor(
    private readonly clock: Clock = systemClock,
    private readonly leases = new Map<string, LeaseState>(),
  ) {}

  /** The same leases seen through another clock: a second process whose wall clock differs. */
  withClock(clock: Clock): MemoryLeaseStore {
    return new MemoryLeaseStore(clock, this.leases);
  }

  async acquire(key: string, holder: string, ttlMs: number): Promise<Lease | undefined> {
    const now = this.clock.now();
    const state = this.leases.get(key);
    const takeable = state === undefined || state.holder === undefined || state.expiresAt < now || state.holder === holder;
    if (!takeable) return undefined;
    const next: LeaseState = { holder, fencingToken: (state?.fencingToken ?? 0) + 1, expiresAt: now + ttlMs };
    this.leases.set(key, next);
    const takenOver = state?.holder !== undefined && state.holder !== holder;
    return { key, holder, fencingToken: next.fencingToken, expiresAt: next.expiresAt, ...(takenOver ? { takenOver } : {}) };
  }

  async renew(lease: Lease, ttlMs: number): Promise<Lease> {
    const state = this.leases.get(lease.key);
    if (state === undefined || state.holder !== lease.holder || state.fencingToken !== lease.fencingToken) {
      throw new LeaseLostError(`lease ${lease.key} (token ${lease.fencingToken}) is no longer held by ${lease.holder}`);
    }
    state.expiresAt = this.clock.now() + ttlMs;
    return { ...lease, expiresAt: state.expiresAt };
  }

  async release(lease: Lease): Promise<void> {
    const state = this.leases.get(lease.key);
    if (state === undefined || state.holder !== lease.holder || state.fencingToken !== lease.fencingToken) return;
    // Keep the entry: it carries the fencing counter.
    this.leases.set(lease.key, { fencingToken: state.fencingToken, expiresAt: 0 });
  }
}
