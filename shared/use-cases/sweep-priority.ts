import { AsyncLocalStorage } from 'node:async_hooks';

/**
 * Work that sweeps (a drift fan-out, a GC sweep) rather than answers a user's request: its
 * cluster requests yield to user work in the cluster's rate limit (docs/decisions.md).
 */
const sweeping = new AsyncLocalStorage<true>();

/** Runs `work` as a sweep: its cluster requests take rate-limit tokens only after user work's. */
export function runAsSweep<T>(work: () => T): T {
  return sweeping.run(true, work);
}

/** Whether the work running now is a sweep (the clients' rate limit reads it per request). */
export function isSweeping(): boolean {
  return sweeping.getStore() === true;
}
