/**
 * At most `max` tasks at once, the rest wait their turn in order. Forwarders of one process
 * share one for their start (lease, checkpoint loads): a hundred clusters starting together
 * would otherwise send their reads to the table in one burst, which a slow store (DynamoDB
 * Local on a small machine) answers with timeouts.
 */
export class ConcurrencyLimit {
  private running = 0;
  private readonly waiting: Array<() => void> = [];

  constructor(readonly max: number) {
    if (!Number.isInteger(max) || max < 1) throw new RangeError(`a concurrency limit must be a whole number of at least 1 (got ${max})`);
  }

  /** Runs `task` once a slot is free; the slot is given back however the task ends. */
  async run<T>(task: () => Promise<T>): Promise<T> {
    if (this.running >= this.max) await new Promise<void>((resolve) => this.waiting.push(resolve));
    else this.running += 1;
    try {
      return await task();
    } finally {
      // The slot passes straight to the next waiter, so `running` counts it all along.
      const next = this.waiting.shift();
      if (next) next();
      else this.running -= 1;
    }
  }
}
