/**
 * The SQS adapter that puts a hint back on its queue: the queue URL comes from the function's
 * HINT_QUEUE_URL when it names the record's queue, else from the queue's ARN on the endpoint
 * the SDK resolves for the ARN's region (so in any partition); every send has a request
 * timeout. The SQS client is mocked with aws-sdk-client-mock, except where the timeout is
 * met on a server that never answers.
 */
import { SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { mockClient } from 'aws-sdk-client-mock';
import 'aws-sdk-client-mock-vitest/extend';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  HintRequeueError,
  SQS_MAX_ATTEMPTS,
  SQS_REQUEST_TIMEOUT_MS,
  createSqsClient,
  createSqsHintRequeue,
  parseQueueArn,
} from '../../../shared/adapters/sqs/hint-requeue';
import { InvalidInputError } from '../../../shared/domain/errors';
import { startSilentServer, type SilentServer } from '../../support/http-peer';

const hint = (queueArn: string) => ({ queueArn, body: '{"detail":{}}', delaySeconds: 7, attributes: { LeaseBusyRequeues: 2 } });

describe('Function: parseQueueArn', () => {
  it.each([
    ['arn:aws:sqs:eu-west-1:123456789012:svc-dev-PinHintQueue', { partition: 'aws', region: 'eu-west-1', accountId: '123456789012', name: 'svc-dev-PinHintQueue' }],
    ['arn:aws-cn:sqs:cn-north-1:123456789012:q', { partition: 'aws-cn', region: 'cn-north-1', accountId: '123456789012', name: 'q' }],
    ['arn:aws-us-gov:sqs:us-gov-west-1:123456789012:q', { partition: 'aws-us-gov', region: 'us-gov-west-1', accountId: '123456789012', name: 'q' }],
  ])('%s', (arn, parts) => {
    expect(parseQueueArn(arn)).toEqual(parts);
  });

  it.each(['https://sqs.eu-west-1.amazonaws.com/123456789012/q', 'arn:aws:sns:eu-west-1:123456789012:q', 'arn:aws:sqs:eu-west-1::q', 'arn:aws:sqs:eu-west-1:123456789012:q:extra'])(
    'refuses %s',
    (arn) => {
      expect(() => parseQueueArn(arn)).toThrow(InvalidInputError);
    },
  );
});

describe('Function: createSqsHintRequeue', () => {
  const sqs = mockClient(SQSClient);

  beforeEach(() => {
    sqs.reset();
    sqs.on(SendMessageCommand).resolves({ MessageId: 'copy' });
  });
  afterAll(() => {
    sqs.restore();
  });

  it.each([
    ['aws', 'arn:aws:sqs:eu-west-1:123456789012:q', 'eu-west-1', 'https://sqs.eu-west-1.amazonaws.com/123456789012/q'],
    ['aws-cn', 'arn:aws-cn:sqs:cn-north-1:123456789012:q', 'cn-north-1', 'https://sqs.cn-north-1.amazonaws.com.cn/123456789012/q'],
    ['aws-us-gov', 'arn:aws-us-gov:sqs:us-gov-west-1:123456789012:q', 'us-gov-west-1', 'https://sqs.us-gov-west-1.amazonaws.com/123456789012/q'],
  ])('partition %s: sends to the queue URL of the ARN\'s partition and region, from a client of that region', async (_partition, arn, region, url) => {
    // Prepare
    const requeue = createSqsHintRequeue();
    // Act
    await requeue(hint(arn));
    // Assess
    expect(sqs).toReceiveCommandWith(SendMessageCommand, {
      QueueUrl: url,
      MessageBody: '{"detail":{}}',
      DelaySeconds: 7,
      MessageAttributes: { LeaseBusyRequeues: { DataType: 'Number', StringValue: '2' } },
    });
    const client = sqs.send.getCall(0).thisValue as SQSClient;
    await expect(client.config.region()).resolves.toBe(region);
  });

  it('sends to the queue URL it was given when that URL names the record\'s queue, and derives it for any other', async () => {
    // Prepare
    const given = 'https://sqs.eu-west-1.amazonaws.com/123456789012/svc-dev-PinHintQueue';
    const requeue = createSqsHintRequeue({ hintQueueUrl: given });
    // Act
    await requeue(hint('arn:aws:sqs:eu-west-1:123456789012:svc-dev-PinHintQueue'));
    await requeue(hint('arn:aws:sqs:eu-west-1:123456789012:other'));
    // Assess
    expect(sqs).toReceiveNthCommandWith(SendMessageCommand, 1, { QueueUrl: given });
    expect(sqs).toReceiveNthCommandWith(SendMessageCommand, 2, { QueueUrl: 'https://sqs.eu-west-1.amazonaws.com/123456789012/other' });
  });

  it('sends to `<endpoint>/<account>/<queue>` on an endpoint override (the local bus)', async () => {
    // Prepare
    const requeue = createSqsHintRequeue({ endpoint: 'http://127.0.0.1:4010/' });
    // Act
    await requeue(hint('arn:aws:sqs:us-east-1:000000000000:PinHintQueue'));
    // Assess
    expect(sqs).toReceiveCommandWith(SendMessageCommand, { QueueUrl: 'http://127.0.0.1:4010/000000000000/PinHintQueue' });
  });

  it.each([
    [0.4, 0],
    [-3, 0],
    [7.6, 8],
    [3_600, 900],
  ])('delay %f s is sent as %i s (SQS takes whole seconds up to 900)', async (asked, sent) => {
    // Act
    await createSqsHintRequeue()({ ...hint('arn:aws:sqs:eu-west-1:123456789012:q'), delaySeconds: asked });
    // Assess
    expect(sqs).toReceiveCommandWith(SendMessageCommand, { DelaySeconds: sent });
  });

  it('turns a refused send into a retryable HintRequeueError naming the queue', async () => {
    // Prepare
    sqs.on(SendMessageCommand).rejects(Object.assign(new Error('Access to the resource is denied.'), { name: 'AccessDenied' }));
    // Act
    const sent = createSqsHintRequeue()(hint('arn:aws:sqs:eu-west-1:123456789012:q'));
    // Assess
    await expect(sent).rejects.toThrow(HintRequeueError);
    await expect(sent).rejects.toThrow('SendMessage to https://sqs.eu-west-1.amazonaws.com/123456789012/q failed: AccessDenied');
    await expect(sent).rejects.toMatchObject({ retryable: true });
  });
});

describe('Function: createSqsClient', () => {
  let silent: SilentServer;

  beforeAll(async () => {
    silent = await startSilentServer();
  });
  afterEach(() => {
    silent.reset();
  });
  afterAll(async () => {
    await silent.close();
  });

  it('retries a failed send with the standard retry mode', async () => {
    const client = createSqsClient('eu-west-1');
    await expect(client.config.maxAttempts()).resolves.toBe(SQS_MAX_ATTEMPTS);
    expect(client.config.retryMode).toBe('standard');
    client.destroy();
  });

  it('gives up on a queue that does not answer after the request timeout, instead of waiting for the invocation to end', async () => {
    // Prepare: one attempt, the default timeout.
    const requeue = createSqsHintRequeue({ endpoint: silent.endpoint, maxAttempts: 1 });
    const started = Date.now();
    // Act
    const sent = requeue(hint('arn:aws:sqs:us-east-1:000000000000:PinHintQueue'));
    // Assess
    await expect(sent).rejects.toThrow(HintRequeueError);
    const elapsed = Date.now() - started;
    expect(elapsed).toBeGreaterThanOrEqual(SQS_REQUEST_TIMEOUT_MS - 100);
    expect(elapsed).toBeLessThan(SQS_REQUEST_TIMEOUT_MS + 2_000);
  }, 15_000);
});
