/**
 * The hint handler as a hint queue's event source invokes it: a batch of SQS records whose
 * bodies are EventBridge hint events; the answer names only the records to redeliver.
 */
import type { Context } from 'aws-lambda';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { toSqsEvent } from '../../local/bus';
import type { AppContext } from '../../shared/app/context';
import { createHintHandler } from '../../shared/app/hint-handler';
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
});
