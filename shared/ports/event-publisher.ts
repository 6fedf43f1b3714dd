/**
 * Publishing hint events to the bus. The EventBridge adapter implements it; tests use a
 * recording fake. A publish never loses an event silently: every event comes back as
 * published, skipped (can never be sent, e.g. over the size limit) or failed (still
 * failing after the retries), so the forwarder only advances its checkpoint past what
 * was published or deliberately skipped.
 */
import type { HintEvent } from '../domain/hint-event.js';

export interface SkippedEvent {
  event: HintEvent;
  reason: string;
}

export interface FailedEvent {
  event: HintEvent;
  /** EventBridge's per-entry ErrorCode, or the error name of the failed call. */
  errorCode: string;
  errorMessage?: string;
}

export interface PublishResult {
  published: number;
  skipped: SkippedEvent[];
  failed: FailedEvent[];
}

export interface EventPublisher {
  publish(events: readonly HintEvent[]): Promise<PublishResult>;
}
