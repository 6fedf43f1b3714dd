/**
 * EventPublisher over Amazon EventBridge PutEvents.
 *
 * PutEvents takes at most 10 entries and 256 KB per call, and reports failures per entry
 * (`FailedEntryCount`, `Entries[i].ErrorCode`) in a successful response: the call
 * "succeeding" does not mean every event was accepted. So: pack entries into batches by
 * count and AWS's documented entry size, resend only the entries that failed, back off
 * exponentially with full jitter between rounds (the same for a throttled call), skip an
 * entry too large to ever be accepted, and hand back whatever still fails.
 */
import { PutEventsCommand } from '@aws-sdk/client-eventbridge';
import type { EventBridgeClient } from '@aws-sdk/client-eventbridge';
import type { PutEventsRequestEntry, PutEventsResultEntry } from '@aws-sdk/client-eventbridge';
import { createEventBridgeClient } from './client.js';
import type { BusEvent, BusPublisher, FailedEvent, PublishResult, SkippedEvent } from '../../ports/event-publisher.js';

/** PutEvents limits. */
export const MAX_ENTRIES_PER_CALL = 10;
export const MAX_REQUEST_BYTES = 256 * 1024;

/** Per-entry error codes that no resend can cure. */
const PERMANENT_ENTRY_ERRORS: ReadonlySet<string> = new Set([
  'MalformedDetail',
  'InvalidArgument',
  'ValidationException',
  'AccessDeniedException',
  'NotAuthorizedForSourceException',
  'NotAuthorizedForDetailTypeException',
  'ResourceNotFoundException',
]);

/** Call-level errors that no resend can cure (configuration or permission problems). */
const PERMANENT_CALL_ERRORS: ReadonlySet<string> = new Set([
  'ValidationException',
  'AccessDeniedException',
  'ResourceNotFoundException',
  'UnrecognizedClientException',
  'InvalidSignatureException',
  'MissingAuthenticationTokenException',
]);

export interface PublisherLogger {
  warn(message: string, ...details: unknown[]): void;
  debug?(message: string, ...details: unknown[]): void;
}

export interface EventPublisherOptions {
  client: EventBridgeClient;
  /** Name or ARN of the bus. */
  busName: string;
  logger?: PublisherLogger;
  /** Rounds of sending, the first included (default 5). */
  maxAttempts?: number;
  /** First backoff ceiling; doubles each round up to `maxDelayMs` (defaults 100 ms, 5 s). */
  baseDelayMs?: number;
  maxDelayMs?: number;
  /** For tests: deterministic jitter and no real waiting. */
  random?: () => number;
  sleep?: (ms: number) => Promise<void>;
}

interface Pending<E extends BusEvent> {
  event: E;
  entry: PutEventsRequestEntry;
  size: number;
  lastErrorCode: string;
  lastErrorMessage?: string;
}

/**
 * The size EventBridge counts for an entry ("Calculating PutEvents event entry size"):
 * 14 bytes for Time when set, plus the UTF-8 bytes of Source, DetailType, Detail and each Resource.
 */
export function computeEntrySize(entry: PutEventsRequestEntry): number {
  const bytes = (text: string | undefined) => (text === undefined ? 0 : Buffer.byteLength(text, 'utf8'));
  let size = entry.Time === undefined ? 0 : 14;
  size += bytes(entry.Source) + bytes(entry.DetailType) + bytes(entry.Detail);
  for (const resource of entry.Resources ?? []) size += bytes(resource);
  return size;
}

/** The PutEvents entry for an event (a hint or a notification). */
export function toPutEventsEntry(event: BusEvent, busName: string): PutEventsRequestEntry {
  return {
    EventBusName: busName,
    Source: event.source,
    DetailType: event.detailType,
    Detail: JSON.stringify(event.detail),
    Time: new Date(event.detail.observedAt),
  };
}

/** Packs entries in order into batches of at most 10 entries and 256 KB. */
export function packBatches<T extends { size: number }>(items: readonly T[]): T[][] {
  const batches: T[][] = [];
  let current: T[] = [];
  let bytes = 0;
  for (const item of items) {
    if (current.length === MAX_ENTRIES_PER_CALL || (current.length > 0 && bytes + item.size > MAX_REQUEST_BYTES)) {
      batches.push(current);
      current = [];
      bytes = 0;
    }
    current.push(item);
    bytes += item.size;
  }
  if (current.length > 0) batches.push(current);
  return batches;
}

export function createEventPublisher(options: EventPublisherOptions): BusPublisher {
  const maxAttempts = options.maxAttempts ?? 5;
  if (!Number.isInteger(maxAttempts) || maxAttempts < 1) throw new RangeError('maxAttempts must be a positive integer');
  const baseDelayMs = options.baseDelayMs ?? 100;
  const maxDelayMs = options.maxDelayMs ?? 5_000;
  const random = options.random ?? Math.random;
  const sleep = options.sleep ?? ((ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)));
  const { client, busName, logger } = options;

  /** Sends one batch; returns the entries to resend and those that failed for good. */
  async function sendBatch<E extends BusEvent>(batch: Pending<E>[]): Promise<{ retry: Pending<E>[]; failed: Pending<E>[] }> {
    let resultEntries: PutEventsResultEntry[];
    try {
      const response = await client.send(new PutEventsCommand({ Entries: batch.map((item) => item.entry) }));
      resultEntries = response.Entries ?? [];
      if ((response.FailedEntryCount ?? 0) === 0 && resultEntries.length === batch.length) {
        return { retry: [], failed: [] };
      }
    } catch (error) {
      const code = errorCodeOf(error);
      const message = error instanceof Error ? error.message : String(error);
      for (const item of batch) Object.assign(item, { lastErrorCode: code, lastErrorMessage: message });
      const permanent = PERMANENT_CALL_ERRORS.has(code);
      logger?.warn('PutEvents call failed', { errorCode: code, entries: batch.length, permanent });
      return permanent ? { retry: [], failed: batch } : { retry: batch, failed: [] };
    }
    const retry: Pending<E>[] = [];
    const failed: Pending<E>[] = [];
    batch.forEach((item, index) => {
      const result = resultEntries[index];
      if (result?.EventId && !result.ErrorCode) return;
      // An entry with neither an id nor an error code: the response is short; resend it.
      item.lastErrorCode = result?.ErrorCode ?? 'MissingResultEntry';
      item.lastErrorMessage = result?.ErrorMessage;
      (PERMANENT_ENTRY_ERRORS.has(item.lastErrorCode) ? failed : retry).push(item);
    });
    return { retry, failed };
  }

  return {
    async publish<E extends BusEvent>(events: readonly E[]): Promise<PublishResult<E>> {
      const skipped: SkippedEvent<E>[] = [];
      const failed: FailedEvent<E>[] = [];
      let pending: Pending<E>[] = [];
      for (const event of events) {
        const entry = toPutEventsEntry(event, busName);
        const size = computeEntrySize(entry);
        if (size > MAX_REQUEST_BYTES) {
          const reason = `entry is ${size} bytes, over the ${MAX_REQUEST_BYTES}-byte PutEvents limit`;
          logger?.warn('skipping an event too large for PutEvents', { ...identify(event), size });
          skipped.push({ event, reason });
        } else {
          pending.push({ event, entry, size, lastErrorCode: '' });
        }
      }
      const toSend = pending.length;
      const toFailed = (item: Pending<E>): FailedEvent<E> => ({
        event: item.event,
        errorCode: item.lastErrorCode,
        ...(item.lastErrorMessage ? { errorMessage: item.lastErrorMessage } : {}),
      });

      for (let attempt = 1; attempt <= maxAttempts && pending.length > 0; attempt += 1) {
        if (attempt > 1) {
          const ceiling = Math.min(maxDelayMs, baseDelayMs * 2 ** (attempt - 2));
          await sleep(Math.floor(random() * ceiling));
        }
        const retry: Pending<E>[] = [];
        for (const batch of packBatches(pending)) {
          const outcome = await sendBatch(batch);
          retry.push(...outcome.retry);
          failed.push(...outcome.failed.map(toFailed));
        }
        if (retry.length > 0) logger?.debug?.('resending failed PutEvents entries', { attempt, entries: retry.length });
        pending = retry;
      }
      if (pending.length > 0) {
        logger?.warn('PutEvents entries still failing after all attempts', { attempts: maxAttempts, entries: pending.length });
        failed.push(...pending.map(toFailed));
      }
      return { published: toSend - failed.length, skipped, failed };
    },
  };
}

function errorCodeOf(error: unknown): string {
  if (error instanceof Error) return error.name || 'Error';
  return 'UnknownError';
}

function identify(event: BusEvent): Record<string, unknown> {
  const { clusterId, kind, namespace, name, uid, resourceVersion } = event.detail;
  return { clusterId, kind, namespace, name, uid, resourceVersion };
}

/** The configuration a function's publisher is made from (`ControlPlaneConfig` has it). */
export interface BusConfig {
  region: string;
  eventBridgeEndpoint?: string;
  eventBusName: string;
}

/**
 * A function's publisher, made on first use rather than at cold start, and then kept for
 * the process so the client's connections are reused across invocations.
 */
export function lazyEventPublisher(logger: PublisherLogger): (config: BusConfig) => BusPublisher {
  let publisher: BusPublisher | undefined;
  return ({ region, eventBridgeEndpoint, eventBusName }) => {
    publisher ??= createEventPublisher({
      client: createEventBridgeClient({ region, ...(eventBridgeEndpoint ? { endpoint: eventBridgeEndpoint } : {}) }),
      busName: eventBusName,
      logger,
    });
    return publisher;
  };
}
