import type { Clock } from '../../shared/ports/clock';

/** A clock that moves only when told to. */
export class FakeClock implements Clock {
  constructor(private current: number = Date.now()) {}

  now(): number {
    return this.current;
  }

  advance(ms: number): void {
    this.current += ms;
  }
}
