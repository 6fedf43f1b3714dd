/**
 * The hint handler as a hint queue's event source invokes it: a batch of SQS records whose
 * bodies are EventBridge hint events; the answer names only the records to redeliver. A
 * hint that met a held lease is put back on its queue with SendMessage (the SQS client
 * mocked with aws-sdk-client-mock) and acknowledged.
 */
import { SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import type { Context, SQSRecord } from 'aws-lambda';
import { mockClient } from 'aws-sdk-client-mock';
import 'aws-sdk-client-mock-vitest/extend';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { toSqsEvent } from '../../local/bus';
import type { AppContext } from '../../shared/app/context';
import {
  LEASE_BUSY_MAX_DELAY_SECONDS,
  LEASE_BUSY_MAX_REQUEUES,
  LEASE_BUSY_MAX_WAIT_MS,
  LEASE_BUSY_REQUEUES_ATTRIBUTE,
  LEASE_BUSY_SINCE_ATTRIBUTE,
  createHintHandler,
  leaseBusyDelaySeconds,
  mayRequeueForLease,
  readLeaseBusyState,
} from '../../shared/app/hint-handler';
import { LeaseBusyError } from '../../shared/use-cases/reconcile-under-lease';
import { InvalidInputError, NotFoundError, UnavailableError } from '../../shared/domain/errors';
import { toHintEvent } from '../../shared/domain/hint-event';
import type { EventBridgeEnvelope } from '../../shared/domain/hint-event';
import type { ClusterClient } from '../../shared/ports/cluster';
import type { RequeuedHint } from '../../shared/ports/hint-queue';

const context = { functionName: 'pin', awsRequestId: 'req-1', getRemainingTimeInMillis: () => 30_000 } as unknown as Context;
const app = { cluster: async (id: string) => ({ id, client: {} as ClusterClient, omeNamespace: 'ome' }) } as unknown as AppContext;

function hint(name: string, resourceVersion = '1'): EventBridgeEnvelope {
  const event = toHintEvent('c1', 'MODIFIED', { apiVersion: 'ome.io/v1beta1', kind: 'InferenceService', metadata: { name, namespace: 'ns', uid: `uid-${name}`, resourceVersion } });
  return { version: '0', id: `${name}@${resourceVersion}`, 'detail-type': event.detailType, source: event.source, account: '0', time: 't', region: 'r', resources: [], detail: event.detail };
}

beforeAll(() => {
  process.env.POWERTOOLS_LOG_LEVEL = 'SILENT';
  process.env.POWERTOOLS_METRICS_DISABLED = 'true';
});
afterAll(() => {
  delete process.env.POWERTOOLS_LOG_LEVEL;
  delete process.env.POWERTOOLS_METRICS_DISABLED;
});

describe('Function: createHintHandler', () => {
  it.each<[string, Error | undefined, boolean]>([
    ['success', undefined, false],
    ['a retryable error (cluster unavailable)', new UnavailableError('down'), true],
    ['an unknown error (counts as retryable)', new Error('boom'), true],
    ['a terminal error (not found)', new NotFoundError('gone'), false],
    ['a terminal error (invalid input)', new InvalidInputError('bad'), false],
  ])('%s: redelivered only when retryable', async (_name, error, redelivered) => {
    // Prepare
    const handler = createHintHandler(
      async ({ hint: detail }) => {
        if (detail.name === 'target' && error) throw error;
      },
      { serviceName: 'test', context: () => app },
    );
    const batch = toSqsEvent([hint('other'), hint('target')]);
    // Act
    const response = await handler(batch, context);
    // Assess
    expect(response).toEqual({ batchItemFailures: redelivered ? [{ itemIdentifier: batch.Records[1]?.messageId }] : [] });
  });

  it('runs hints of one object one after the other, in batch order, and hints of different objects side by side', async () => {
    // Prepare: each hint yields once while it runs, so overlaps are visible; the record's
    // message id (the second half of the lease holder id) names the hint.
    const running = new Set<string>();
    const overlaps: string[][] = [];
    const order: string[] = [];
    const batch = toSqsEvent([hint('a', '1'), hint('b', '1'), hint('a', '2'), hint('a', '3')]);
    for (const record of batch.Records) record.messageId = `${(JSON.parse(record.body) as EventBridgeEnvelope).id}`;
    const concurrent = createHintHandler(
      async (invocation) => {
        const { requestId } = invocation;
        running.add(requestId.split('/')[1] ?? '');
        overlaps.push([...running]);
        order.push(requestId.split('/')[1] ?? '');
        await new Promise((resolve) => setImmediate(resolve));
        running.delete(requestId.split('/')[1] ?? '');
      },
      { serviceName: 'test', context: () => app },
    );
    // Act
    const response = await concurrent(batch, context);
    // Assess: a's hints in order; never two of a's at once; b alongside a.
    expect(response).toEqual({ batchItemFailures: [] });
    expect(order.filter((id) => id.startsWith('a@'))).toEqual(['a@1', 'a@2', 'a@3']);
    for (const running of overlaps) expect(running.filter((id) => id.startsWith('a@')).length).toBeLessThanOrEqual(1);
    expect(overlaps.some((running) => running.includes('a@1') && running.includes('b@1'))).toBe(true);
  });

  it('acknowledges a record that is not a hint event, and still handles the rest', async () => {
    // Prepare
    const handled: string[] = [];
    const handler = createHintHandler(
      async ({ hint: detail }) => {
        handled.push(detail.name);
      },
      { serviceName: 'test', context: () => app },
    );
    const batch = toSqsEvent([hint('x'), hint('y')]);
    if (batch.Records[0]) batch.Records[0].body = 'not json';
    // Act
    const response = await handler(batch, context);
    // Assess
    expect(response).toEqual({ batchItemFailures: [] });
    expect(handled).toEqual(['y']);
  });

  it.each<[string, Error, number]>([
    ['a held lease with 4.2 s left', new LeaseBusyError('k', 4_200), 5],
    ['a held lease wrapped as the cause of another error', new Error('pin failed', { cause: new LeaseBusyError('k', 4_200) }), 5],
    ['a held lease whose holder is past its expiry', new LeaseBusyError('k', 0), 1],
    ['a held lease the store said nothing about', new LeaseBusyError('k'), LEASE_BUSY_MAX_DELAY_SECONDS],
  ])('%s: put back on its own queue, delayed, and acknowledged', async (_name, error, seconds) => {
    // Prepare
    const sent: RequeuedHint[] = [];
    const handler = createHintHandler(
      async ({ hint: detail }) => {
        if (detail.name === 'target') throw error;
      },
      { serviceName: 'test', context: () => app, random: () => 0, clock: { now: () => 1_000_000 }, requeue: async (hint) => void sent.push(hint) },
    );
    const batch = toSqsEvent([hint('other'), hint('target')], { queueName: 'svc-dev-PinHintQueue' });
    const target = batch.Records[1];
    // Act
    const response = await handler(batch, context);
    // Assess: only the held hint, to the queue it came from, with its body unchanged.
    expect(response).toEqual({ batchItemFailures: [] });
    expect(sent).toEqual([
      { queueArn: 'arn:aws:sqs:us-east-1:000000000000:svc-dev-PinHintQueue', body: target?.body, delaySeconds: seconds, attributes: { [LEASE_BUSY_REQUEUES_ATTRIBUTE]: 1, [LEASE_BUSY_SINCE_ATTRIBUTE]: 1_000_000 } },
    ]);
  });

  it('reports another retryable error for redelivery and sends nothing', async () => {
    // Prepare
    const sent: RequeuedHint[] = [];
    const handler = createHintHandler(
      async () => {
        throw new UnavailableError('down');
      },
      { serviceName: 'test', context: () => app, requeue: async (hint) => void sent.push(hint) },
    );
    const batch = toSqsEvent([hint('target')]);
    // Act
    const response = await handler(batch, context);
    // Assess
    expect(response).toEqual({ batchItemFailures: [{ itemIdentifier: batch.Records[0]?.messageId }] });
    expect(sent).toEqual([]);
  });

  it('reports a held-lease hint for redelivery when no queue can be sent to (a local process without the bus)', async () => {
    // Prepare: a local configuration without SQS_ENDPOINT.
    const handler = createHintHandler(
      async () => {
        throw new LeaseBusyError('k', 1_000);
      },
      { serviceName: 'test', context: () => ({ ...app, config: { mode: 'local' } }) as unknown as AppContext },
    );
    const batch = toSqsEvent([hint('target')]);
    // Act
    const response = await handler(batch, context);
    // Assess
    expect(response).toEqual({ batchItemFailures: [{ itemIdentifier: batch.Records[0]?.messageId }] });
  });
});

describe('Function: createHintHandler, a held lease on SQS', () => {
  const sqs = mockClient(SQSClient);
  const QUEUE_URL = 'https://sqs.eu-west-1.amazonaws.com/123456789012/svc-dev-PinHintQueue';
  const deployed = { ...app, config: { mode: 'deployed', hintQueueUrl: QUEUE_URL } } as unknown as AppContext;
  const NOW = Date.parse('2026-01-01T00:00:00Z');

  function heldLeaseHandler() {
    return createHintHandler(
      async () => {
        throw new LeaseBusyError('k', 4_200);
      },
      { serviceName: 'test', context: () => deployed, random: () => 0, clock: { now: () => NOW } },
    );
  }

  function recordOf(attributes: Record<string, string> = {}): { batch: ReturnType<typeof toSqsEvent>; record: SQSRecord } {
    const batch = toSqsEvent([hint('target')], { region: 'eu-west-1', accountId: '123456789012', queueName: 'svc-dev-PinHintQueue' });
    const record = batch.Records[0] as SQSRecord;
    record.messageAttributes = Object.fromEntries(
      Object.entries(attributes).map(([name, value]) => [name, { dataType: 'Number', stringValue: value, stringListValues: [], binaryListValues: [] }]),
    );
    return { batch, record };
  }

  beforeEach(() => {
    sqs.reset();
  });
  afterEach(() => {
    sqs.reset();
  });

  it('sends a copy to its own queue with the delay and the first re-queue counted, and acknowledges the original', async () => {
    // Prepare
    sqs.on(SendMessageCommand).resolves({ MessageId: 'copy-1' });
    const { batch, record } = recordOf();
    // Act
    const response = await heldLeaseHandler()(batch, context);
    // Assess
    expect(response).toEqual({ batchItemFailures: [] });
    expect(sqs).toReceiveCommandTimes(SendMessageCommand, 1);
    expect(sqs).toReceiveCommandWith(SendMessageCommand, {
      QueueUrl: QUEUE_URL,
      MessageBody: record.body,
      DelaySeconds: 5,
      MessageAttributes: {
        [LEASE_BUSY_REQUEUES_ATTRIBUTE]: { DataType: 'Number', StringValue: '1' },
        [LEASE_BUSY_SINCE_ATTRIBUTE]: { DataType: 'Number', StringValue: String(NOW) },
      },
    });
  });

  it('counts on from the copy it received, keeping when the hint first met a held lease', async () => {
    // Prepare: the hint was put back 7 times, the first 10 minutes ago.
    sqs.on(SendMessageCommand).resolves({ MessageId: 'copy-8' });
    const since = NOW - 600_000;
    const { batch } = recordOf({ [LEASE_BUSY_REQUEUES_ATTRIBUTE]: '7', [LEASE_BUSY_SINCE_ATTRIBUTE]: String(since) });
    // Act
    const response = await heldLeaseHandler()(batch, context);
    // Assess
    expect(response).toEqual({ batchItemFailures: [] });
    expect(sqs).toReceiveCommandWith(SendMessageCommand, {
      MessageAttributes: {
        [LEASE_BUSY_REQUEUES_ATTRIBUTE]: { DataType: 'Number', StringValue: '8' },
        [LEASE_BUSY_SINCE_ATTRIBUTE]: { DataType: 'Number', StringValue: String(since) },
      },
    });
  });

  it('reports the original for redelivery when SendMessage fails, so the hint is never lost', async () => {
    // Prepare
    sqs.on(SendMessageCommand).rejects(Object.assign(new Error('Access to the resource is denied.'), { name: 'AccessDenied', $fault: 'client' }));
    const { batch, record } = recordOf();
    // Act
    const response = await heldLeaseHandler()(batch, context);
    // Assess
    expect(sqs).toReceiveCommandTimes(SendMessageCommand, 1);
    expect(response).toEqual({ batchItemFailures: [{ itemIdentifier: record.messageId }] });
  });

  it.each<[string, Record<string, string>]>([
    ['an hour after it first met a held lease', { [LEASE_BUSY_REQUEUES_ATTRIBUTE]: '150', [LEASE_BUSY_SINCE_ATTRIBUTE]: String(NOW - LEASE_BUSY_MAX_WAIT_MS) }],
    ['after the most re-queues', { [LEASE_BUSY_REQUEUES_ATTRIBUTE]: String(LEASE_BUSY_MAX_REQUEUES), [LEASE_BUSY_SINCE_ATTRIBUTE]: String(NOW - 60_000) }],
    ['with bookkeeping that is not a number', { [LEASE_BUSY_REQUEUES_ATTRIBUTE]: 'many' }],
  ])('%s: sends nothing and takes the ordinary path (redelivery, then the dead-letter queue)', async (_name, attributes) => {
    // Prepare
    sqs.on(SendMessageCommand).resolves({ MessageId: 'never' });
    const { batch, record } = recordOf(attributes);
    // Act
    const response = await heldLeaseHandler()(batch, context);
    // Assess
    expect(sqs).toReceiveCommandTimes(SendMessageCommand, 0);
    expect(response).toEqual({ batchItemFailures: [{ itemIdentifier: record.messageId }] });
  });
});

describe('Rule: mayRequeueForLease', () => {
  const now = 10_000_000;
  const count = LEASE_BUSY_REQUEUES_ATTRIBUTE;
  const since = LEASE_BUSY_SINCE_ATTRIBUTE;
  it.each<[string, Record<string, string> | undefined, boolean]>([
    ['no bookkeeping yet', undefined, true],
    ['put back once, just now', { [count]: '1', [since]: String(now - 30_000) }, true],
    ['59 minutes of waiting', { [count]: '120', [since]: String(now - 59 * 60_000) }, true],
    ['an hour of waiting', { [count]: '120', [since]: String(now - LEASE_BUSY_MAX_WAIT_MS) }, false],
    ['one re-queue short of the bound', { [count]: String(LEASE_BUSY_MAX_REQUEUES - 1), [since]: String(now) }, true],
    ['the bound of re-queues', { [count]: String(LEASE_BUSY_MAX_REQUEUES), [since]: String(now) }, false],
    ['a count without a time (the time starts now)', { [count]: '3' }, true],
    ['a garbled count', { [count]: '-1', [since]: String(now) }, false],
    ['a garbled time', { [count]: '1', [since]: '1e12' }, false],
  ])('%s: may be put back again: %s', (_name, attributes, allowed) => {
    const messageAttributes =
      attributes === undefined ? undefined : Object.fromEntries(Object.entries(attributes).map(([key, value]) => [key, { dataType: 'Number', stringValue: value, stringListValues: [], binaryListValues: [] }]));
    expect(mayRequeueForLease(readLeaseBusyState(messageAttributes, now), now)).toBe(allowed);
  });
});

describe('Rule: leaseBusyDelaySeconds', () => {
  it.each<[number, number, number]>([
    // remaining ms, jitter draw, seconds
    [0, 0, 1],
    [-500, 0, 1],
    [400, 0, 1],
    [1_000, 0, 1],
    [1_001, 0, 2],
    [4_200, 0, 5],
    [4_200, 0.5, 5],
    [4_200, 0.81, 6],
    [29_999, 0.99, 31],
    [59_500, 0.9, LEASE_BUSY_MAX_DELAY_SECONDS],
    [600_000, 0, LEASE_BUSY_MAX_DELAY_SECONDS],
  ])('%i ms left, jitter %f: %i s', (remainingMs, jitter, seconds) => {
    expect(leaseBusyDelaySeconds(remainingMs, jitter)).toBe(seconds);
  });

  it('waits the longest when the store did not say how long the lease runs', () => {
    expect(leaseBusyDelaySeconds(undefined, 0.5)).toBe(LEASE_BUSY_MAX_DELAY_SECONDS);
  });
});
