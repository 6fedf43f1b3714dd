/**
 * CPU time per function invocation, in a process where many invocations share one event
 * loop. An invocation's CPU time is the sum of the synchronous slices run on its behalf:
 * its target's synchronous start, and every callback (timer, socket data, promise
 * continuation) scheduled from within it, as AsyncLocalStorage follows them. Each slice is
 * timed by `process.cpuUsage()` (user + system) from an async hook's `before` to its `after`;
 * a slice of nobody's (the bus, the forwarders, the simulator) is not timed at all.
 *
 * What it is not: `process.cpuUsage()` counts the whole process, so a slice also carries
 * what other threads (the garbage collector's helpers, libuv's pool) spent meanwhile; a
 * callback of a socket shared by several callers (a keep-alive connection) counts for
 * whoever opened the socket; and the hooks themselves cost every promise of the process
 * some time, which slows the plane a little while they are on.
 */
import { AsyncLocalStorage, createHook } from 'node:async_hooks';

/** Whom slices are charged to: an invocation's running total of CPU microseconds. */
export interface CpuOwner {
  cpuMicros: number;
}

interface Slice {
  /** The async resource the slice runs (0 for `run`'s own synchronous part). */
  asyncId: number;
  owner: CpuOwner | undefined;
  /** CPU microseconds at the slice's start, or since the nested slice it waited for. */
  since: number;
}

/** The process's CPU time so far, user and system, in microseconds. */
export function processCpuMicros(): number {
  const usage = process.cpuUsage();
  return usage.user + usage.system;
}

export class CpuAccountant {
  private readonly owners = new AsyncLocalStorage<CpuOwner>();
  private readonly stack: Slice[] = [];
  private readonly hook = createHook({
    before: (asyncId) => this.enter(asyncId, this.owners.getStore()),
    after: (asyncId) => this.leave(asyncId),
  });

  /** `clock` reads CPU microseconds (tests give a fake one). */
  constructor(private readonly clock: () => number = processCpuMicros) {}

  /** Starts timing the callbacks of owned work (until then only `run`'s synchronous parts count). */
  enable(): this {
    this.hook.enable();
    return this;
  }

  disable(): void {
    this.hook.disable();
    this.stack.length = 0;
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

  private enter(asyncId: number, owner: CpuOwner | undefined): void {
    const outer = this.stack[this.stack.length - 1];
    // The clock is read only where an owned slice starts or is interrupted.
    const now = owner || outer?.owner ? this.clock() : 0;
    if (outer?.owner) outer.owner.cpuMicros += now - outer.since;
    this.stack.push({ asyncId, owner, since: now });
  }

  private leave(asyncId: number): void {
    // Pops to the slice that ends: one left open by a callback that threw ends with it.
    let index = this.stack.length - 1;
    while (index >= 0 && this.stack[index]!.asyncId !== asyncId) index -= 1;
    if (index < 0) return;
    const ended = this.stack.splice(index);
    const outer = this.stack[this.stack.length - 1];
    // Only the innermost open slice was accruing; the others were charged when it started.
    const innermost = ended[ended.length - 1]!;
    const now = innermost.owner || outer?.owner ? this.clock() : 0;
    if (innermost.owner) innermost.owner.cpuMicros += now - innermost.since;
    if (outer) outer.since = now;
  }
}
