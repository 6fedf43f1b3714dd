/**
 * The wiring every event-driven function shares: a middy handler for the SQS event source
 * of the function's hint queue. Each record's body is the EventBridge event a rule put on
 * the queue; the handler gives the use-case its dependencies, logs with the object's
 * identity, and maps each hint's outcome onto the queue's retry contract: a terminal
 * error is logged and acknowledged (redelivery would fail the same way), a retryable one
 * is reported in `batchItemFailures`, so SQS redelivers that message (and only that one)
 * after the visibility timeout and, after `maxReceiveCount` receives, dead-letters it.
 * A hint that found its object's lease held by another worker comes back sooner: before
 * reporting it, the handler sets that message's visibility to about the lease's remaining
 * time (`ChangeMessageVisibility`, on the function's own queue only; docs/decisions.md).
 *
 * Hints for different objects run concurrently; hints for the same object run one after
 * the other in batch order, so they do not contend for its lease within one invocation.
 */
import middy from '@middy/core';
import { Logger } from '@aws-lambda-powertools/logger';
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import { Metrics } from '@aws-lambda-powertools/metrics';
import type { Context, SQSBatchItemFailure, SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import { createSqsMessageVisibility } from '../adapters/sqs/message-visibility';
import type { ChangeMessageVisibility } from '../adapters/sqs/message-visibility';
import { isRetryable } from '../errors';
import { readHintDetail } from '../events/hint-event';
import type { HintDetail } from '../events/hint-event';
import type { AppContext, ClusterHandle } from './context';
import { getAppContext, runWithinInvocation } from './context';
import { publishMetrics } from './publish-metrics';
import { LeaseBusyError } from './reconcile';

/**
 * A hint whose lease was held comes back after the lease's remaining time plus up to
 * LEASE_BUSY_JITTER_MS (so the waiters of one object do not return together), at least
 * one second and at most LEASE_BUSY_MAX_VISIBILITY_SECONDS: the holder renews while it
 * works, and a long holder is better met again in a minute than after the queue's timeout.
 */
export const LEASE_BUSY_JITTER_MS = 1_000;
export const LEASE_BUSY_MAX_VISIBILITY_SECONDS = 60;

/** The visibility timeout, in whole seconds, for a hint that met a lease held `retryAfterMs` more; `jitter` in [0, 1). */
export function leaseBusyVisibilitySeconds(retryAfterMs: number, jitter: number): number {
  const seconds = Math.ceil((Math.max(0, retryAfterMs) + jitter * LEASE_BUSY_JITTER_MS) / 1000);
  return Math.min(LEASE_BUSY_MAX_VISIBILITY_SECONDS, Math.max(1, seconds));
}

/** The LeaseBusyError behind `error` (itself or a cause), when the store said how long the lease runs. */
function leaseBusyRetryAfterMs(error: unknown): number | undefined {
  for (let cause = error, depth = 0; cause instanceof Error && depth < 5; cause = cause.cause, depth += 1) {
    if (cause instanceof LeaseBusyError) return cause.retryAfterMs;
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
}

export type HintUseCase<R> = (invocation: HintInvocation) => Promise<R>;

export interface HintHandlerOptions {
  serviceName: string;
  /** Overrides the process context (the local control plane passes its own). */
  context?: () => AppContext;
  /** Overrides the SQS call that shortens a held-lease hint's visibility (tests). */
  changeVisibility?: ChangeMessageVisibility;
  /** Draws the jitter of that visibility, in [0, 1) (default Math.random). */
  random?: () => number;
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
  const logger = new Logger({ serviceName: options.serviceName });
  const metrics = new Metrics({ serviceName: options.serviceName, namespace: 'OmePinning' });
  const appOf = options.context ?? (() => getAppContext());
  const random = options.random ?? Math.random;
  let defaultChangeVisibility: ChangeMessageVisibility | undefined;
  /** SQS in AWS, the local bus where SQS_ENDPOINT names it; none for a local process without one (no queue to change). */
  const changeVisibilityOf = (app: AppContext): ChangeMessageVisibility | undefined => {
    if (options.changeVisibility) return options.changeVisibility;
    const { mode, sqsEndpoint } = app.config;
    if (sqsEndpoint === undefined && mode !== 'deployed') return undefined;
    return (defaultChangeVisibility ??= createSqsMessageVisibility(sqsEndpoint === undefined ? {} : { endpoint: sqsEndpoint }));
  };

  /** Brings a held-lease hint back after the lease's remaining time instead of the queue's visibility timeout. */
  const shortenVisibility = async (record: SQSRecord, retryAfterMs: number, hintLogger: Logger): Promise<void> => {
    const changeVisibility = changeVisibilityOf(appOf());
    if (!changeVisibility) return;
    const seconds = leaseBusyVisibilitySeconds(retryAfterMs, random());
    try {
      await changeVisibility({ queueArn: record.eventSourceARN, receiptHandle: record.receiptHandle }, seconds);
      hintLogger.info('lease held: hint comes back sooner', { visibilityTimeoutSeconds: seconds });
    } catch (error) {
      // The message still comes back, after the queue's own visibility timeout.
      hintLogger.warn('could not shorten the hint\'s visibility', { error: error as Error });
    }
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
    try {
      const app = appOf();
      const cluster = await app.cluster(hint.clusterId);
      await useCase({ hint, app, cluster, logger: hintLogger, metrics, requestId: `${context.awsRequestId}/${record.messageId}`,
        ...(typeof context.getRemainingTimeInMillis === 'function' ? { remainingTimeMs: () => context.getRemainingTimeInMillis() } : {}),
      });
      return false;
    } catch (error) {
      if (isRetryable(error)) {
        hintLogger.warn('retrying later', { error: error as Error });
        const retryAfterMs = leaseBusyRetryAfterMs(error);
        if (retryAfterMs !== undefined && record.eventSourceARN && record.receiptHandle) await shortenVisibility(record, retryAfterMs, hintLogger);
        return true;
      }
      hintLogger.error('giving up on this event', { error: error as Error });
      return false;
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
