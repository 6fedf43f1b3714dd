/**
 * The hint handler as a hint queue's event source invokes it: a batch of SQS records whose
 * bodies are EventBridge hint events; the answer names only the records to redeliver.
 */
import type { Context } from 'aws-lambda';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { toSqsEvent } from '../../local/bus';
import type { AppContext } from '../../shared/app/context';
import { LEASE_BUSY_MAX_VISIBILITY_SECONDS, createHintHandler, leaseBusyVisibilitySeconds } from '../../shared/app/hint-handler';
import { LeaseBusyError } from '../../shared/app/reconcile';
import { InvalidInputError, NotFoundError, UnavailableError } from '../../shared/errors';
import { toHintEvent } from '../../shared/events/hint-event';
import type { EventBridgeEnvelope } from '../../shared/events/hint-event';
import type { ClusterClient } from '../../shared/ports/cluster';

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

  it.each<[string, Error, number | undefined]>([
    ['a held lease with 4.2 s left', new LeaseBusyError('k', 4_200), 5],
    ['a held lease wrapped as the cause of another error', new Error('pin failed', { cause: new LeaseBusyError('k', 4_200) }), 5],
    ['a held lease whose holder is past its expiry', new LeaseBusyError('k', 0), 1],
    ['a held lease the store said nothing about', new LeaseBusyError('k'), undefined],
    ['another retryable error', new UnavailableError('down'), undefined],
  ])('%s: reported for redelivery; visibility shortened only for a lease whose end is known', async (_name, error, seconds) => {
    // Prepare
    const calls: Array<[{ queueArn: string; receiptHandle: string }, number]> = [];
    const handler = createHintHandler(
      async ({ hint: detail }) => {
        if (detail.name === 'target') throw error;
      },
      { serviceName: 'test', context: () => app, random: () => 0, changeVisibility: async (message, timeout) => void calls.push([message, timeout]) },
    );
    const batch = toSqsEvent([hint('other'), hint('target')], { queueName: 'svc-dev-PinHintQueue' });
    const target = batch.Records[1];
    // Act
    const response = await handler(batch, context);
    // Assess: only the failed message, on its own queue, with its own receipt handle.
    expect(response).toEqual({ batchItemFailures: [{ itemIdentifier: target?.messageId }] });
    expect(calls).toEqual(seconds === undefined ? [] : [[{ queueArn: 'arn:aws:sqs:us-east-1:000000000000:svc-dev-PinHintQueue', receiptHandle: target?.receiptHandle }, seconds]]);
  });

  it('still reports the hint for redelivery when shortening its visibility fails', async () => {
    // Prepare
    const handler = createHintHandler(
      async () => {
        throw new LeaseBusyError('k', 1_000);
      },
      {
        serviceName: 'test',
        context: () => app,
        changeVisibility: async () => {
          throw new Error('AccessDenied');
        },
      },
    );
    const batch = toSqsEvent([hint('target')]);
    // Act
    const response = await handler(batch, context);
    // Assess
    expect(response).toEqual({ batchItemFailures: [{ itemIdentifier: batch.Records[0]?.messageId }] });
  });
});

describe('Rule: leaseBusyVisibilitySeconds', () => {
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
    [59_500, 0.9, LEASE_BUSY_MAX_VISIBILITY_SECONDS],
    [600_000, 0, LEASE_BUSY_MAX_VISIBILITY_SECONDS],
  ])('%i ms left, jitter %f: %i s', (remainingMs, jitter, seconds) => {
    expect(leaseBusyVisibilitySeconds(remainingMs, jitter)).toBe(seconds);
  });
});
