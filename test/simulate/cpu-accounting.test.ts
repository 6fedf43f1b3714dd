/**
 * CPU time per invocation on a shared event loop: each owner is charged the synchronous
 * slices run on its behalf (its start and every callback it scheduled), never another's or
 * nobody's. The clock is fake: each busy stretch advances it by what it says.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { CpuAccountant } from '../../scripts/simulate/cpu-accounting';
import type { CpuOwner } from '../../scripts/simulate/cpu-accounting';

let micros = 0;
let wallMs = 0;
/** The main thread busy for `ms`: CPU and wall time go on alike. */
const busy = (ms: number): void => {
  micros += ms * 1000;
  wallMs += ms;
};
const clocks = (): [() => number, () => number] => [() => micros, () => wallMs];
const tick = (): Promise<void> => new Promise((resolve) => setTimeout(resolve, 1));
let accountant: CpuAccountant | undefined;

afterEach(() => accountant?.disable());

describe('Class: CpuAccountant', () => {
  it('charges an owner its synchronous start, its timers and its promise continuations', async () => {
    // Prepare
    accountant = new CpuAccountant(...clocks()).enable();
    const owner: CpuOwner = { cpuMicros: 0 };

    // Act
    await accountant.run(owner, async () => {
      busy(3);
      await tick();
      busy(5);
      await Promise.resolve();
      busy(7);
      await new Promise<void>((resolve) =>
        setTimeout(() => {
          busy(11);
          resolve();
        }, 1),
      );
    });

    // Assess
    accountant.flush();
    expect(owner.cpuMicros).toBe(26_000);
  });

  it('keeps owners whose work interleaves apart, and charges nobody for unowned work', async () => {
    // Prepare
    accountant = new CpuAccountant(...clocks()).enable();
    const first: CpuOwner = { cpuMicros: 0 };
    const second: CpuOwner = { cpuMicros: 0 };
    const work = (owner: CpuOwner, ms: number) =>
      accountant!.run(owner, async () => {
        for (let step = 0; step < 3; step += 1) {
          busy(ms);
          await tick();
        }
      });

    // Act
    const unowned = (async () => {
      for (let step = 0; step < 3; step += 1) {
        busy(100);
        await tick();
      }
    })();
    await Promise.all([work(first, 1), work(second, 2), unowned]);

    // Assess
    accountant!.flush();
    expect(first.cpuMicros).toBe(3_000);
    expect(second.cpuMicros).toBe(6_000);
  });

  it('charges a nested run to the inner owner only, and the outer its own time', () => {
    // Prepare
    accountant = new CpuAccountant(...clocks()).enable();
    const outer: CpuOwner = { cpuMicros: 0 };
    const inner: CpuOwner = { cpuMicros: 0 };

    // Act
    accountant.run(outer, () => {
      busy(2);
      accountant!.run(inner, () => busy(5));
      busy(3);
    });

    // Assess
    accountant.flush();
    expect(outer.cpuMicros).toBe(5_000);
    expect(inner.cpuMicros).toBe(5_000);
  });

  it('charges a stretch the lesser of its CPU and wall time: other threads\' CPU and time without a core count for nobody', () => {
    // Prepare
    accountant = new CpuAccountant(...clocks()).enable();
    const helped: CpuOwner = { cpuMicros: 0 };
    const preempted: CpuOwner = { cpuMicros: 0 };

    // Act: the garbage collector's threads spend 9 ms beside 2 ms of work; then 3 ms of work spread over 10 ms of wall time.
    accountant.run(helped, () => {
      busy(2);
      micros += 9_000;
    });
    accountant.run(preempted, () => {
      busy(3);
      wallMs += 7;
    });
    accountant.flush();

    // Assess
    expect(helped.cpuMicros).toBe(2_000);
    expect(preempted.cpuMicros).toBe(3_000);
  });

  it('reads the CPU clock once for a chain of one owner\'s continuations', async () => {
    // Prepare
    let reads = 0;
    accountant = new CpuAccountant(() => {
      reads += 1;
      return micros;
    }, () => wallMs).enable();
    const owner: CpuOwner = { cpuMicros: 0 };

    // Act: a hundred awaits back to back.
    await accountant.run(owner, async () => {
      for (let step = 0; step < 100; step += 1) {
        busy(0.01);
        await Promise.resolve();
      }
    });
    accountant.flush();

    // Assess
    expect(owner.cpuMicros).toBeCloseTo(1_000, 6);
    expect(reads).toBeLessThan(10);
  });
});
