/**
 * CPU time per function invocation, in a process where many invocations share one event
 * loop. An invocation's CPU time is the sum of the synchronous slices run on its behalf:
 * its target's synchronous start, and every callback (timer, socket data, promise
 * continuation) scheduled from within it, as AsyncLocalStorage follows them; an async
 * hook's `before` and `after` mark each slice. A slice of nobody's (the bus, the
 * forwarders, the simulator) is not timed.
 *
 * Reading `process.cpuUsage()` is a system call (microseconds), and an invocation runs
 * thousands of slices (every `await`), so back-to-back slices of one owner (a promise
 * chain's continuations, less than MERGE_GAP_MS apart) are timed as one stretch, and the
 * CPU clock is read only where the owner changes. A stretch is charged the lesser of its
 * CPU time and its wall time: both bound the main thread's work from above, the CPU time
 * also counting what ran between its slices (the event loop's own work, a socket's TLS)
 * and the wall time also counting the moments the machine gave the process no core.
 *
 * What it is not: `process.cpuUsage()` counts the whole process, so a stretch also carries
 * what other threads (the garbage collector's helpers, libuv's pool) spent meanwhile; a
 * callback of a socket shared by several callers (a keep-alive connection) counts for
 * whoever opened the socket; work done natively before a callback (reading and decrypting
 * its data) counts for nobody; and the hooks cost every promise of the process some time
 * (the report's plane CPU is higher with them on: `--no-cpu-accounting` measures without).
 */
import { AsyncLocalStorage, createHook } from 'node:async_hooks';
import { performance } from 'node:perf_hooks';

/** Whom slices are charged to: an invocation's running total of CPU microseconds. */
export interface CpuOwner {
  cpuMicros: number;
}

/** Slices of one owner less than this apart (milliseconds of wall time) are one stretch. */
export const MERGE_GAP_MS = 0.05;

/** An owner's stretch being timed: open while one of its slices runs, then closed until the next slice shows whose it is. */
interface Stretch {
  owner: CpuOwner;
  cpuSince: number;
  wallSince: number;
  /** When its last slice ended; undefined while one runs. */
  wallEnd: number | undefined;
}

/** The process's CPU time so far, user and system, in microseconds. */
export function processCpuMicros(): number {
  const usage = process.cpuUsage();
  return usage.user + usage.system;
}

export class CpuAccountant {
  private readonly owners = new AsyncLocalStorage<CpuOwner>();
  /** The slices running, innermost last (nested when a callback runs another synchronously). */
  private readonly stack: Array<{ asyncId: number; owner: CpuOwner | undefined }> = [];
  private stretch: Stretch | undefined;
  private readonly hook = createHook({
    before: (asyncId) => this.enter(asyncId, this.owners.getStore()),
    after: (asyncId) => this.leave(asyncId),
  });

  /** `clock` reads CPU microseconds, `wallClock` milliseconds (tests give fake ones). */
  constructor(
    private readonly clock: () => number = processCpuMicros,
    private readonly wallClock: () => number = () => performance.now(),
  ) {}

  /** Starts timing the callbacks of owned work (until then only `run`'s synchronous parts count). */
  enable(): this {
    this.hook.enable();
    return this;
  }

  /** Stops timing; a stretch still open is charged up to now. */
  disable(): void {
    this.hook.disable();
    this.stack.length = 0;
    if (this.stretch) this.settle(this.clock(), this.wallClock());
  }

  /** Charges the last stretch, closed and waiting to see whose the next slice is: before reading the owners' totals. */
  flush(): void {
    if (this.stretch?.wallEnd !== undefined) this.settle(this.clock(), this.wallClock());
  }

  /** Runs `work` for `owner`: its synchronous part now, and later every callback it scheduled. */
  run<T>(owner: CpuOwner, work: () => T): T {
    return this.owners.run(owner, () => {
      this.enter(0, owner);
      try {
        return work();
      } finally {
        this.leave(0);
      }
    });
  }

  /** Charges the stretch up to `cpuNow` (or its end), the lesser of its CPU and wall time. */
  private settle(cpuNow: number, wallNow: number): void {
    const stretch = this.stretch;
    if (!stretch) return;
    const wallMicros = ((stretch.wallEnd ?? wallNow) - stretch.wallSince) * 1000;
    stretch.owner.cpuMicros += Math.max(0, Math.min(cpuNow - stretch.cpuSince, wallMicros));
    this.stretch = undefined;
  }

  /** Ends the current stretch (if any) and, for an owner, starts one. */
  private switchTo(owner: CpuOwner | undefined): void {
    const wall = this.wallClock();
    const cpu = this.clock();
    this.settle(cpu, wall);
    if (owner) this.stretch = { owner, cpuSince: cpu, wallSince: wall, wallEnd: undefined };
  }

  private enter(asyncId: number, owner: CpuOwner | undefined): void {
    this.stack.push({ asyncId, owner });
    const stretch = this.stretch;
    if (stretch && stretch.owner === owner) {
      // A slice nested in the owner's own, or the next of a chain: the stretch goes on.
      if (stretch.wallEnd === undefined) return;
      if (this.wallClock() - stretch.wallEnd <= MERGE_GAP_MS) {
        stretch.wallEnd = undefined;
        return;
      }
    }
    if (!stretch && !owner) return;
    this.switchTo(owner);
  }

  private leave(asyncId: number): void {
    // Pops to the slice that ends: one left open by a callback that threw ends with it.
    let index = this.stack.length - 1;
    while (index >= 0 && this.stack[index]!.asyncId !== asyncId) index -= 1;
    if (index < 0) return;
    this.stack.splice(index);
    const outer = this.stack[this.stack.length - 1]?.owner;
    const stretch = this.stretch;
    if (stretch?.wallEnd === undefined && stretch?.owner === outer && outer) return;
    if (outer) {
      // Back in an owned slice that a nested one interrupted.
      this.switchTo(outer);
      return;
    }
    // Back to the event loop: the stretch closes, until the next slice shows whose it is.
    if (stretch && stretch.wallEnd === undefined) stretch.wallEnd = this.wallClock();
  }
}
