/**
 * What a Lambda SQS event source hands a function, and how it reads the answer: a batch of
 * records whose bodies are the EventBridge events a rule put on the queue, and (with
 * `ReportBatchItemFailures`) a response naming the records that failed. The local bus
 * builds its invocations here; tests build theirs with `toSqsEvent`.
 */
import { createHash, randomUUID } from 'node:crypto';
import type { SQSBatchResponse, SQSEvent, SQSMessageAttributes, SQSRecord } from 'aws-lambda';
import type { EventBridgeEnvelope } from '../../shared/domain/hint-event.js';

export interface SqsMessageView {
  messageId: string;
  event: EventBridgeEnvelope;
  /** How many times it has been received, this receive included. */
  receiveCount: number;
  sentAt: number;
  firstReceivedAt: number;
  /** The message attributes it was sent with (a function's SendMessage; EventBridge sends none). */
  attributes?: SQSMessageAttributes;
}

export interface SqsEventOptions {
  region?: string;
  accountId?: string;
  queueName?: string;
}

/** The receipt handle of one receive of a message: a new one each receive, as in SQS. */
export function receiptHandleOf(messageId: string, receiveCount: number): string {
  return `${messageId}#${receiveCount}`;
}

/** One SQS event source batch, as Lambda delivers it. */
export function toSqsEvent(messages: ReadonlyArray<SqsMessageView | EventBridgeEnvelope>, options: SqsEventOptions = {}): SQSEvent {
  const region = options.region ?? 'us-east-1';
  const queueArn = `arn:aws:sqs:${region}:${options.accountId ?? '000000000000'}:${options.queueName ?? 'local-queue'}`;
  const now = Date.now();
  return {
    Records: messages.map((message): SQSRecord => {
      const view: SqsMessageView = 'messageId' in message ? message : { messageId: randomUUID(), event: message, receiveCount: 1, sentAt: now, firstReceivedAt: now };
      const body = JSON.stringify(view.event);
      return {
        messageId: view.messageId,
        receiptHandle: receiptHandleOf(view.messageId, view.receiveCount),
        body,
        attributes: {
          ApproximateReceiveCount: String(view.receiveCount),
          SentTimestamp: String(view.sentAt),
          SenderId: 'AIDAEVENTBRIDGE',
          ApproximateFirstReceiveTimestamp: String(view.firstReceivedAt),
        },
        messageAttributes: view.attributes ?? {},
        md5OfBody: createHash('md5').update(body).digest('hex'),
        eventSource: 'aws:sqs',
        eventSourceARN: queueArn,
        awsRegion: region,
      };
    }),
  };
}

/** True for an SQS event source batch (as opposed to an EventBridge event invoking directly). */
export function isSqsEvent(event: unknown): event is SQSEvent {
  return typeof event === 'object' && event !== null && Array.isArray((event as { Records?: unknown }).Records);
}

/**
 * The message ids of `batch` that failed, read from a function's outcome the way Lambda
 * does: a thrown error fails the whole batch; without partial batch responses any return
 * succeeds; with them, a response that names an id not in the batch (or an empty one)
 * fails the whole batch, and otherwise only the named ids failed.
 */
export function failedMessageIds(
  batch: ReadonlyArray<{ messageId: string }>,
  outcome: { threw: true } | { threw: false; result: unknown },
  reportBatchItemFailures: boolean,
): Set<string> {
  const all = new Set(batch.map((message) => message.messageId));
  if (outcome.threw) return all;
  if (!reportBatchItemFailures) return new Set();
  const failures = (outcome.result as Partial<SQSBatchResponse> | null | undefined)?.batchItemFailures;
  if (failures === undefined || failures === null) return new Set();
  if (!Array.isArray(failures)) return all;
  const failed = new Set<string>();
  for (const failure of failures) {
    const id = (failure as { itemIdentifier?: unknown } | null)?.itemIdentifier;
    if (typeof id !== 'string' || !all.has(id)) return all;
    failed.add(id);
  }
  return failed;
}

/** The EventBridge events an invocation carries: each record's body of an SQS batch, or the event itself. */
export function eventsOfInvocation(event: SQSEvent | EventBridgeEnvelope): EventBridgeEnvelope[] {
  return isSqsEvent(event) ? event.Records.map((record) => JSON.parse(record.body) as EventBridgeEnvelope) : [event];
}
