/**
 * The wiring every event-driven function shares: a middy handler for the SQS event source
 * of the function's hint queue. Each record's body is the EventBridge event a rule put on
 * the queue; the handler gives the use-case its dependencies, logs with the object's
 * identity, and maps each hint's outcome onto the queue's retry contract: a terminal
 * error is logged and acknowledged (redelivery would fail the same way), a retryable one
 * is reported in `batchItemFailures`, so SQS redelivers that message (and only that one)
 * after the visibility timeout and, after `maxReceiveCount` receives, dead-letters it.
 *
 * A hint that found its object's lease held by another worker is not failed: nothing is
 * wrong, it only has to wait, and every receive would count towards `maxReceiveCount`.
 * The handler sends a copy of it back to the queue it came from (`SendMessage`, on the
 * function's own queue only), delayed by about the lease's remaining time and counting
 * its re-queues in message attributes, and acknowledges the original only once SQS has
 * accepted the copy. If the send fails, or the hint has waited an hour (LEASE_BUSY_MAX_WAIT_MS),
 * it takes the ordinary path above, so a lease that is never released still ends in the
 * dead-letter queue (docs/decisions.md, decision 20).
 *
 * Hints for different objects run concurrently; hints for the same object run one after
 * the other in batch order, so they do not contend for its lease within one invocation.
 */
import middy from '@middy/core';
import { createLogger, injectLambdaContext, type Logger } from './logger';
import { Metrics } from './metrics';
import type { Context, SQSBatchItemFailure, SQSBatchResponse, SQSEvent, SQSMessageAttributes, SQSRecord } from 'aws-lambda';
import { createSqsHintRequeue } from '../adapters/sqs/hint-requeue';
import { isRetryable } from '../domain/errors';
import { readHintDetail } from '../domain/hint-event';
import type { HintDetail } from '../domain/hint-event';
import { systemClock } from '../ports/clock';
import type { Clock } from '../ports/clock';
import type { RequeueHint } from '../ports/hint-queue';
import type { AppContext, ClusterHandle } from './context';
import { getAppContext, runWithinInvocation } from './context';
import { publishMetrics } from './publish-metrics';
import { createNotificationOutbox, notificationBus } from './notifications';
import type { EventPublisher } from '../ports/event-publisher';
import type { StatusTransitions } from '../ports/notifications';
import type { NotificationEvent } from '../domain/notification';
import { LeaseBusyError } from '../use-cases/reconcile-under-lease';

/**
 * A hint whose lease was held comes back after the lease's remaining time plus up to
 * LEASE_BUSY_JITTER_MS (so the waiters of one object do not return together), at least
 * one second and at most LEASE_BUSY_MAX_DELAY_SECONDS (also when the store did not say
 * how long the lease runs): the holder renews while it works, and a long holder is better
 * met again in a minute than after the queue's visibility timeout.
 */
export const LEASE_BUSY_JITTER_MS = 1_000;
export const LEASE_BUSY_MAX_DELAY_SECONDS = 60;

/**
 * Message attributes of a copy put back for a held lease: how many times the hint has been
 * put back so far, and when it first met a held lease (ms since the epoch).
 */
export const LEASE_BUSY_REQUEUES_ATTRIBUTE = 'LeaseBusyRequeues';
export const LEASE_BUSY_SINCE_ATTRIBUTE = 'LeaseBusySince';
/**
 * How long a hint is put back for held leases before it takes the ordinary failure path
 * (redelivery, then the dead-letter queue): an hour, far beyond any healthy holder (the
 * revision-gc sweep holds leases for up to its 300 s timeout).
 */
export const LEASE_BUSY_MAX_WAIT_MS = 3_600_000;
/**
 * The same bound in re-queues, for when the time cannot be trusted: each delay is at
 * least a second, so it never cuts the hour short.
 */
export const LEASE_BUSY_MAX_REQUEUES = 3_600;

/** The delay, in whole seconds, for a hint that met a lease held `retryAfterMs` more (unknown: the longest); `jitter` in [0, 1). */
export function leaseBusyDelaySeconds(retryAfterMs: number | undefined, jitter: number): number {
  if (retryAfterMs === undefined) return LEASE_BUSY_MAX_DELAY_SECONDS;
  const seconds = Math.ceil((Math.max(0, retryAfterMs) + jitter * LEASE_BUSY_JITTER_MS) / 1000);
  return Math.min(LEASE_BUSY_MAX_DELAY_SECONDS, Math.max(1, seconds));
}

/** A hint's lease-busy bookkeeping: re-queues so far and when it first met a held lease. */
export interface LeaseBusyState {
  requeues: number;
  since: number;
}

/**
 * Reads the bookkeeping from a record's message attributes; a hint that carries none meets
 * a held lease for the first time `now`. An attribute that is present but not a whole
 * number reads as the bound reached, so a garbled copy is never put back again.
 */
export function readLeaseBusyState(attributes: SQSMessageAttributes | undefined, now: number): LeaseBusyState {
  const read = (name: string): number | undefined | null => {
    const text = attributes?.[name]?.stringValue;
    if (text === undefined) return undefined;
    return /^\d{1,15}$/.test(text) ? Number(text) : null;
  };
  const requeues = read(LEASE_BUSY_REQUEUES_ATTRIBUTE);
  const since = read(LEASE_BUSY_SINCE_ATTRIBUTE);
  if (requeues === null || since === null) return { requeues: LEASE_BUSY_MAX_REQUEUES, since: now - LEASE_BUSY_MAX_WAIT_MS };
  return { requeues: requeues ?? 0, since: since ?? now };
}

/** True while a hint may still be put back for a held lease. */
export function mayRequeueForLease(state: LeaseBusyState, now: number): boolean {
  return state.requeues < LEASE_BUSY_MAX_REQUEUES && now - state.since < LEASE_BUSY_MAX_WAIT_MS;
}

/** The LeaseBusyError behind `error` (itself or a cause). */
function leaseBusyOf(error: unknown): LeaseBusyError | undefined {
  for (let cause = error, depth = 0; cause instanceof Error && depth < 5; cause = cause.cause, depth += 1) {
    if (cause instanceof LeaseBusyError) return cause;
  }
  return undefined;
}

export interface HintInvocation {
  hint: HintDetail;
  app: AppContext;
  cluster: ClusterHandle;
  logger: Logger;
  metrics: Metrics;
  /** Identifies this worker in lease records: the invocation and the message, so two hints of one batch never share it. */
  requestId: string;
  /** Milliseconds the invocation has left (Lambda's `getRemainingTimeInMillis`): bounds in-progress claims. */
  remainingTimeMs?: () => number;
  /** Collects what this hint's status writes changed; published once the hint is done (shared/app/notifications.ts). */
  notifications: StatusTransitions;
}

export type HintUseCase<R> = (invocation: HintInvocation) => Promise<R>;

export interface HintHandlerOptions {
  serviceName: string;
  /** Overrides the process context (the local control plane passes its own). */
  context?: () => AppContext;
  /** Overrides the SQS call that puts a held-lease hint back on its queue (tests). */
  requeue?: RequeueHint;
  /** Draws the jitter of that delay, in [0, 1) (default Math.random). */
  random?: () => number;
  /** Dates the lease-busy bookkeeping (default the system clock). */
  clock?: Clock;
  /**
   * The bus notifications go to (default: EventBridge in AWS, or the local bus where
   * EVENTBRIDGE_ENDPOINT names one; none for a local process without one).
   */
  publisher?: (app: AppContext) => EventPublisher<NotificationEvent> | undefined;
}

/** One record of the batch, its hint read (or why it could not be). */
type ReadRecord = { record: SQSRecord; hint: HintDetail } | { record: SQSRecord; problem: unknown };

function readRecord(record: SQSRecord): ReadRecord {
  try {
    return { record, hint: readHintDetail(JSON.parse(record.body) as unknown) };
  } catch (problem) {
    return { record, problem };
  }
}

/** Hints grouped by the object they name, each group in batch order; unreadable records alone. */
export function groupByObject(records: readonly ReadRecord[]): ReadRecord[][] {
  const groups = new Map<string, ReadRecord[]>();
  for (const entry of records) {
    const key = 'hint' in entry ? [entry.hint.clusterId, entry.hint.kind, entry.hint.namespace ?? '', entry.hint.name].join('/') : `message:${entry.record.messageId}`;
    const group = groups.get(key);
    if (group) group.push(entry);
    else groups.set(key, [entry]);
  }
  return [...groups.values()];
}

/** Wraps a use-case as the Lambda handler of a hint queue (SQS event source, ReportBatchItemFailures). */
export function createHintHandler<R>(useCase: HintUseCase<R>, options: HintHandlerOptions) {
  const logger = createLogger(options.serviceName);
  const metrics = new Metrics({ serviceName: options.serviceName, namespace: 'OmePinning' });
  const appOf = options.context ?? (() => getAppContext());
  const random = options.random ?? Math.random;
  const clock = options.clock ?? systemClock;
  let defaultRequeue: RequeueHint | undefined;
  /** SQS in AWS, the local bus where SQS_ENDPOINT names it; none for a local process without one (no queue to send to). */
  const requeueOf = (app: AppContext): RequeueHint | undefined => {
    if (options.requeue) return options.requeue;
    const { mode, sqsEndpoint, hintQueueUrl } = app.config;
    if (sqsEndpoint === undefined && mode !== 'deployed') return undefined;
    return (defaultRequeue ??= createSqsHintRequeue({ ...(sqsEndpoint === undefined ? {} : { endpoint: sqsEndpoint }), ...(hintQueueUrl === undefined ? {} : { hintQueueUrl }) }));
  };
  const publisherOf = options.publisher ?? notificationBus(logger);

  /**
   * Puts a hint that met a held lease back on its queue, delayed by about the lease's
   * remaining time; true once the queue has accepted the copy, and only then may the
   * original be acknowledged (at least once: a crash between the two leaves two copies of
   * a hint, which is harmless, never none).
   */
  const requeueForLease = async (record: SQSRecord, busy: LeaseBusyError, hintLogger: Logger): Promise<boolean> => {
    const requeue = requeueOf(appOf());
    if (!requeue || !record.eventSourceARN) return false;
    const now = clock.now();
    const state = readLeaseBusyState(record.messageAttributes, now);
    if (!mayRequeueForLease(state, now)) {
      hintLogger.warn('lease held for too long: the hint is left to its queue\'s redelivery', { leaseBusyRequeues: state.requeues, leaseBusySince: new Date(state.since).toISOString() });
      return false;
    }
    const delaySeconds = leaseBusyDelaySeconds(busy.retryAfterMs, random());
    const requeues = state.requeues + 1;
    try {
      await requeue({ queueArn: record.eventSourceARN, body: record.body, delaySeconds, attributes: { [LEASE_BUSY_REQUEUES_ATTRIBUTE]: requeues, [LEASE_BUSY_SINCE_ATTRIBUTE]: state.since } });
    } catch (error) {
      // The original is reported instead: it comes back after the queue's visibility timeout.
      hintLogger.warn('could not put the hint back on its queue', { error: error as Error });
      return false;
    }
    hintLogger.info('lease held: hint put back on its queue', { delaySeconds, leaseBusyRequeues: requeues });
    return true;
  };

  /** Runs one hint; true when it should be redelivered. */
  const runOne = async (entry: ReadRecord, context: Context): Promise<boolean> => {
    const { record } = entry;
    if (!('hint' in entry)) {
      // A malformed message will never become a valid hint: acknowledge it, never retry forever.
      logger.error('dropping a message that is not a hint event', { messageId: record.messageId, error: entry.problem as Error });
      return false;
    }
    const { hint } = entry;
    const hintLogger = logger.createChild({
      persistentKeys: {
        cluster: hint.clusterId,
        kind: hint.kind,
        namespace: hint.namespace,
        name: hint.name,
        messageId: record.messageId,
        receiveCount: Number(record.attributes.ApproximateReceiveCount),
      },
    });
    let publishNotifications: (() => Promise<void>) | undefined;
    try {
      const app = appOf();
      const notifications = createNotificationOutbox(hint.clusterId, app.clock, hintLogger);
      // Most hints change nothing worth announcing: the bus is looked up only when something is.
      publishNotifications = async () => (notifications.pending.length === 0 ? undefined : notifications.flush(publisherOf(app)));
      const cluster = await app.cluster(hint.clusterId);
      await useCase({ hint, app, cluster, logger: hintLogger, metrics, requestId: `${context.awsRequestId}/${record.messageId}`, notifications,
        ...(typeof context.getRemainingTimeInMillis === 'function' ? { remainingTimeMs: () => context.getRemainingTimeInMillis() } : {}),
      });
      return false;
    } catch (error) {
      if (isRetryable(error)) {
        const busy = leaseBusyOf(error);
        if (busy && (await requeueForLease(record, busy, hintLogger))) return false;
        hintLogger.warn('retrying later', { error: error as Error });
        return true;
      }
      hintLogger.error('giving up on this event', { error: error as Error });
      return false;
    } finally {
      // What was committed happened, whether or not the rest of the hint's work did.
      await publishNotifications?.().catch((error: unknown) => hintLogger.warn('notifications not published', { error: error as Error }));
    }
  };

  const run = async (event: SQSEvent, context: Context): Promise<SQSBatchResponse> => {
    const entries = (event.Records ?? []).map(readRecord);
    const retry = new Set<string>();
    await Promise.all(
      groupByObject(entries).map(async (group) => {
        for (const entry of group) if (await runOne(entry, context)) retry.add(entry.record.messageId);
      }),
    );
    const batchItemFailures: SQSBatchItemFailure[] = entries.filter((entry) => retry.has(entry.record.messageId)).map((entry) => ({ itemIdentifier: entry.record.messageId }));
    return { batchItemFailures };
  };

  // Cluster requests cap their waits (rate limit, Retry-After) by the invocation's remaining time.
  return middy((event: SQSEvent, context: Context) => runWithinInvocation(context, () => run(event, context)))
    .use(injectLambdaContext(logger))
    .use(publishMetrics(metrics));
}
