/**
 * The wiring every event-driven function shares: a middy handler for the SQS event source
 * of the function's hint queue. Each record's body is the EventBridge event a rule put on
 * the queue; the handler gives the use-case its dependencies, logs with the object's
 * identity, and maps each hint's outcome onto the queue's retry contract: a terminal
 * error is logged and acknowledged (redelivery would fail the same way), a retryable one
 * is reported in `batchItemFailures`, so SQS redelivers that message (and only that one)
 * after the visibility timeout and, after `maxReceiveCount` receives, dead-letters it.
 *
 * Hints for different objects run concurrently; hints for the same object run one after
 * the other in batch order, so they do not contend for its lease within one invocation.
 */
import middy from '@middy/core';
import { Logger } from '@aws-lambda-powertools/logger';
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import { Metrics } from '@aws-lambda-powertools/metrics';
import type { Context, SQSBatchItemFailure, SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import { isRetryable } from '../errors';
import { readHintDetail } from '../events/hint-event';
import type { HintDetail } from '../events/hint-event';
import type { AppContext, ClusterHandle } from './context';
import { getAppContext, runWithinInvocation } from './context';
import { publishMetrics } from './publish-metrics';

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
