/**
 * Publishing events to the bus: hints, and the plane's notifications. The EventBridge adapter implements it; tests use a
 * recording fake. A publish never loses an event silently: every event comes back as
 * published, skipped (can never be sent, e.g. over the size limit) or failed (still
 * failing after the retries), so the forwarder only advances its checkpoint past what
 * was published or deliberately skipped.
 */
import type { HintEvent } from '../domain/hint-event.js';

/** What the bus carries: a source, a detail-type, and a detail naming the cluster and object. */
export interface BusEvent {
  source: string;
  detailType: string;
  detail: {
    clusterId: string;
    kind: string;
    namespace?: string;
    name: string;
    uid?: string;
    resourceVersion?: string;
    /** The event's time (RFC 3339). */
    observedAt: string;
  };
}

export interface SkippedEvent<E extends BusEvent = HintEvent> {
  event: E;
  reason: string;
}

export interface FailedEvent<E extends BusEvent = HintEvent> {
  event: E;
  /** EventBridge's per-entry ErrorCode, or the error name of the failed call. */
  errorCode: string;
  errorMessage?: string;
}

export interface PublishResult<E extends BusEvent = HintEvent> {
  published: number;
  skipped: SkippedEvent<E>[];
  failed: FailedEvent<E>[];
}

/** Publishes events of one kind: hints unless told otherwise. */
export interface EventPublisher<E extends BusEvent = HintEvent> {
  publish(events: readonly E[]): Promise<PublishResult<E>>;
}

/** Publishes whatever the bus carries (the EventBridge adapter): an EventPublisher of every kind. */
export interface BusPublisher {
  publish<E extends BusEvent>(events: readonly E[]): Promise<PublishResult<E>>;
}
