/**
 * Collects hints and hands them to the publisher in batches: at once when a batch is
 * full, else after a short linger, so a burst goes out ten entries per PutEvents call and
 * a lone change waits only the linger. A few batches are in flight at once (EventBridge
 * promises no order between events anyway); a producer that fills the queue while all
 * are busy waits, which slows the watch streams down (their reads are paced by our
 * handler) instead of buffering without bound.
 *
 * A hint whose publish failed is resent with backoff until it is published or the
 * batcher is stopped; it is never settled before that, so the checkpoint stays behind it.
 */
import type { HintEvent } from '../../domain/hint-event';
import type { EventPublisher, PublishResult } from '../../ports/event-publisher';
import type { ForwarderLogger } from './logger';
import { computeBackoff, sleep } from './timing';

export interface QueuedHint {
  event: HintEvent;
  /** Called once the hint is published or deliberately skipped. */
  settle(): void;
}

export interface BatcherCounters {
  forwarded: number;
  skipped: number;
  batches: number;
  entries: number;
  retries: number;
}

export interface HintBatcherOptions {
  publisher: EventPublisher;
  maxBatchSize: number;
  /** Batches being published at once. */
  maxInFlight: number;
  lingerMs: number;
  retryBaseDelayMs: number;
  retryMaxDelayMs: number;
  /** Aborted: stop resending failed hints and give up on what is queued. */
  signal: AbortSignal;
  counters: BatcherCounters;
  logger?: ForwarderLogger;
}

export class HintBatcher {
  private pending: QueuedHint[] = [];
  private readonly inFlight = new Set<Promise<void>>();
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly options: HintBatcherOptions) {}

  /** Hints queued and not yet handed to the publisher. */
  get queued(): number {
    return this.pending.length;
  }

  /** Queues a hint; resolves at once unless a full batch had to wait for a free publish slot. */
  async add(hint: QueuedHint): Promise<void> {
    this.pending.push(hint);
    if (this.pending.length >= this.options.maxBatchSize) {
      this.clearTimer();
      await this.dispatch(this.options.maxBatchSize);
    } else {
      this.armTimer();
    }
  }

  /** Sends everything queued; resolves when it is published, skipped or given up on. */
  async flushAll(): Promise<void> {
    this.clearTimer();
    while ((this.pending.length > 0 && !this.options.signal.aborted) || this.inFlight.size > 0) {
      await this.dispatch(1);
      await Promise.all(this.inFlight);
    }
  }

  /** Drops what is queued (its positions stay held) and cancels the linger. */
  discard(): void {
    this.clearTimer();
    this.pending = [];
  }

  private armTimer(): void {
    if (this.timer !== undefined || this.pending.length === 0) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      void this.dispatch(1);
    }, this.options.lingerMs);
  }

  private clearTimer(): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
  }

  /** Starts batches while at least `minimum` hints are queued, waiting for a free slot when all are busy. */
  private async dispatch(minimum: number): Promise<void> {
    while (this.pending.length >= minimum && !this.options.signal.aborted) {
      while (this.inFlight.size >= this.options.maxInFlight) await Promise.race(this.inFlight);
      // Another producer may have taken the batch while this one waited.
      if (this.pending.length < minimum) break;
      const batch = this.pending.splice(0, this.options.maxBatchSize);
      const sending: Promise<void> = this.sendBatch(batch).finally(() => this.inFlight.delete(sending));
      this.inFlight.add(sending);
    }
    this.armTimer();
  }

  private async sendBatch(batch: QueuedHint[]): Promise<void> {
    let toSend = batch;
    for (let attempt = 0; toSend.length > 0; attempt += 1) {
      if (this.options.signal.aborted) return;
      if (attempt > 0) {
        this.options.counters.retries += toSend.length;
        await sleep(computeBackoff(attempt, this.options.retryBaseDelayMs, this.options.retryMaxDelayMs), this.options.signal);
        if (this.options.signal.aborted) return;
      }
      toSend = await this.publishOnce(toSend);
    }
  }

  /** One publish; settles what went through and returns what is to be resent. */
  private async publishOnce(batch: QueuedHint[]): Promise<QueuedHint[]> {
    const { counters, publisher, logger } = this.options;
    let result: PublishResult;
    try {
      result = await publisher.publish(batch.map((hint) => hint.event));
    } catch (error) {
      // The port reports failures in its result; an exception is a bug or an outage.
      logger?.warn('publishing hints failed', { error: describeError(error), entries: batch.length });
      return batch;
    }
    counters.batches += 1;
    counters.entries += batch.length;
    counters.forwarded += result.published;
    counters.skipped += result.skipped.length;
    for (const skipped of result.skipped) {
      logger?.warn('hint skipped by the publisher', { reason: skipped.reason, uid: skipped.event.detail.uid });
    }
    const failed = new Set(result.failed.map((failure) => failure.event));
    const retry: QueuedHint[] = [];
    for (const hint of batch) {
      if (failed.has(hint.event)) retry.push(hint);
      else hint.settle();
    }
    if (retry.length > 0) {
      const codes = [...new Set(result.failed.map((failure) => failure.errorCode))];
      logger?.warn('hints not accepted by the bus; resending with backoff', { entries: retry.length, errorCodes: codes });
    }
    return retry;
  }
}

export function describeError(error: unknown): string {
  return error instanceof Error ? `${error.name}: ${error.message}` : String(error);
}
