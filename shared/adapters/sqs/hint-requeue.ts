/**
 * SQS `SendMessage` of a copy of a hint back onto the queue it was received from, with a
 * per-message delay: what the hint handler does for a hint that met its object's lease
 * held (docs/decisions.md, decision 20). Queues are standard queues, so a per-message
 * `DelaySeconds` is allowed and no deduplication drops the copy.
 *
 * The queue URL is the one the function was given (`HINT_QUEUE_URL`, CloudFormation's `Ref`
 * of its queue) when it names the record's queue; otherwise it is derived from the queue's
 * ARN: on the endpoint override (the local bus, `<endpoint>/<account>/<name>` as SQS's own
 * URLs are), or on SQS's endpoint for the ARN's region as the SDK resolves it, so in any
 * partition (`sqs.cn-north-1.amazonaws.com.cn` for `arn:aws-cn:…`).
 */
import { SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import type { MessageAttributeValue } from '@aws-sdk/client-sqs';
import { ControlPlaneError, InvalidInputError } from '../../domain/errors';
import type { RequeueHint } from '../../ports/hint-queue';
import { boundedRequestHandler } from '../aws-request-handler';
import { sdkErrorShape } from '../sdk-error';

/** SQS's largest per-message delay, 15 minutes. */
export const MAX_DELAY_SECONDS = 900;
/**
 * Per-attempt timeout, in ms, of the whole request: one small message, and the hint is
 * still reported for redelivery if the send fails, so waiting longer only spends the
 * invocation's time.
 */
export const SQS_REQUEST_TIMEOUT_MS = 3_000;
export const SQS_CONNECTION_TIMEOUT_MS = 1_000;
/** Attempts per send, the first included (SDK standard retry). */
export const SQS_MAX_ATTEMPTS = 3;

export interface HintRequeueOptions {
  /** Overrides SQS's regional endpoint (the local bus); credentials then default to static local ones. */
  endpoint?: string;
  /** The function's own queue URL (HINT_QUEUE_URL); used for the records of that queue. */
  hintQueueUrl?: string;
  credentials?: { accessKeyId: string; secretAccessKey: string; sessionToken?: string };
  requestTimeoutMs?: number;
  maxAttempts?: number;
}

export interface QueueArn {
  partition: string;
  region: string;
  accountId: string;
  name: string;
}

/** The parts of an SQS queue ARN (`arn:<partition>:sqs:<region>:<account>:<name>`). */
export function parseQueueArn(arn: string): QueueArn {
  const [prefix, partition, service, region, accountId, name, ...rest] = arn.split(':');
  if (prefix !== 'arn' || !partition?.startsWith('aws') || service !== 'sqs' || !region || !accountId || !name || rest.length > 0) {
    throw new InvalidInputError(`not an SQS queue ARN: ${arn}`);
  }
  return { partition, region, accountId, name };
}

/** The sent copy may not have been accepted; the caller keeps the original instead. */
export class HintRequeueError extends ControlPlaneError {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, { retryable: true, ...(options?.cause === undefined ? {} : { cause: options.cause }) });
    this.name = 'HintRequeueError';
  }
}

/** The SQS client of one region, with the request timeout and retries every send gets. */
export function createSqsClient(region: string, options: HintRequeueOptions = {}): SQSClient {
  const credentials = options.credentials ?? (options.endpoint === undefined ? undefined : { accessKeyId: 'local', secretAccessKey: 'local' });
  return new SQSClient({
    region,
    ...(options.endpoint === undefined ? {} : { endpoint: options.endpoint }),
    ...(credentials === undefined ? {} : { credentials }),
    maxAttempts: options.maxAttempts ?? SQS_MAX_ATTEMPTS,
    retryMode: 'standard',
    // A queue that accepts the connection and never answers fails the send at its timeout.
    requestHandler: boundedRequestHandler({ connectionTimeoutMs: SQS_CONNECTION_TIMEOUT_MS, requestTimeoutMs: options.requestTimeoutMs ?? SQS_REQUEST_TIMEOUT_MS }),
  });
}

/** The URL of the queue `arn` names: `hintQueueUrl` when it is that queue's, else on `endpoint` or the client's regional endpoint. */
export function queueUrlOf(arn: string, client: SQSClient, options: Pick<HintRequeueOptions, 'endpoint' | 'hintQueueUrl'> = {}): string {
  const { region, accountId, name } = parseQueueArn(arn);
  const given = options.hintQueueUrl?.replace(/\/+$/, '');
  if (given !== undefined && given.endsWith(`/${accountId}/${name}`)) return given;
  const base = options.endpoint ?? client.config.endpointProvider({ Region: region, UseFIPS: false, UseDualStack: false }).url.origin;
  return `${base.replace(/\/+$/, '')}/${accountId}/${name}`;
}

const numberAttributes = (attributes: Record<string, number>): Record<string, MessageAttributeValue> =>
  Object.fromEntries(Object.entries(attributes).map(([name, value]) => [name, { DataType: 'Number', StringValue: String(value) }]));

/** A RequeueHint on SQS, with the function's role (the default credential chain); one client per queue region. */
export function createSqsHintRequeue(options: HintRequeueOptions = {}): RequeueHint {
  const clients = new Map<string, SQSClient>();
  const clientOf = (region: string): SQSClient => {
    let client = clients.get(region);
    if (!client) {
      client = createSqsClient(region, options);
      clients.set(region, client);
    }
    return client;
  };
  return async (hint) => {
    const client = clientOf(parseQueueArn(hint.queueArn).region);
    const queueUrl = queueUrlOf(hint.queueArn, client, options);
    const delaySeconds = Math.max(0, Math.min(MAX_DELAY_SECONDS, Math.round(hint.delaySeconds)));
    try {
      await client.send(new SendMessageCommand({ QueueUrl: queueUrl, MessageBody: hint.body, DelaySeconds: delaySeconds, MessageAttributes: numberAttributes(hint.attributes) }));
    } catch (error) {
      const { name, message } = sdkErrorShape(error);
      throw new HintRequeueError(`SendMessage to ${queueUrl} failed: ${name ?? 'Error'}: ${message ?? String(error)}`, { cause: error });
    }
  };
}
