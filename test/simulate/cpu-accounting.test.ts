/**
 * CPU time per invocation on a shared event loop: each owner is charged the synchronous
 * slices run on its behalf (its start and every callback it scheduled), never another's or
 * nobody's. The clock is fake: each busy stretch advances it by what it says.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { CpuAccountant } from '../../scripts/simulate/cpu-accounting';
import type { CpuOwner } from '../../scripts/simulate/cpu-accounting';

let micros = 0;
const busy = (ms: number): void => {
  micros += ms * 1000;
};
const tick = (): Promise<void> => new Promise((resolve) => setTimeout(resolve, 1));
let accountant: CpuAccountant | undefined;

afterEach(() => accountant?.disable());

describe('Class: CpuAccountant', () => {
  it('charges an owner its synchronous start, its timers and its promise continuations', async () => {
    // Prepare
    accountant = new CpuAccountant(() => micros).enable();
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
    expect(owner.cpuMicros).toBe(26_000);
  });

  it('keeps owners whose work interleaves apart, and charges nobody for unowned work', async () => {
    // Prepare
    accountant = new CpuAccountant(() => micros).enable();
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
    expect(first.cpuMicros).toBe(3_000);
    expect(second.cpuMicros).toBe(6_000);
  });

  it('charges a nested run to the inner owner only, and the outer its own time', () => {
    // Prepare
    accountant = new CpuAccountant(() => micros).enable();
    const outer: CpuOwner = { cpuMicros: 0 };
    const inner: CpuOwner = { cpuMicros: 0 };

    // Act
    accountant.run(outer, () => {
      busy(2);
      accountant!.run(inner, () => busy(5));
      busy(3);
    });

    // Assess
    expect(outer.cpuMicros).toBe(5_000);
    expect(inner.cpuMicros).toBe(5_000);
  });
});
