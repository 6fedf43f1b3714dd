import { describe, expect, it } from 'vitest';
import { ConcurrencyLimit } from '../../shared/use-cases/forwarder';

function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve = (): void => undefined;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}

describe('Class: ConcurrencyLimit', () => {
  it('runs at most `max` tasks at once and the rest in order as slots free up', async () => {
    // Prepare
    const limit = new ConcurrencyLimit(2);
    const gates = Array.from({ length: 5 }, deferred);
    const started: number[] = [];
    let running = 0;
    let peak = 0;

    // Act
    const runs = gates.map((gate, index) =>
      limit.run(async () => {
        started.push(index);
        running += 1;
        peak = Math.max(peak, running);
        await gate.promise;
        running -= 1;
        return index;
      }),
    );
    await Promise.resolve();
    const startedFirst = [...started];
    for (const gate of gates) {
      gate.resolve();
      await new Promise((resolve) => setImmediate(resolve));
    }

    // Assess
    expect(startedFirst).toEqual([0, 1]);
    expect(await Promise.all(runs)).toEqual([0, 1, 2, 3, 4]);
    expect(started).toEqual([0, 1, 2, 3, 4]);
    expect(peak).toBe(2);
  });

  it('gives the slot back when a task fails', async () => {
    const limit = new ConcurrencyLimit(1);
    await expect(limit.run(() => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    await expect(limit.run(async () => 'next')).resolves.toBe('next');
  });

  it.each([0, -1, 1.5])('refuses a limit of %s', (max) => {
    expect(() => new ConcurrencyLimit(max)).toThrow(RangeError);
  });
});
