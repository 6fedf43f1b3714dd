import { describe, expect, it } from 'vitest';
import { eventsOfInvocation, failedMessageIds, isSqsEvent, toSqsEvent } from '../../local/bus/index.js';
import type { EventBridgeEnvelope } from '../../shared/domain/hint-event.js';

const BATCH = [{ messageId: 'm1' }, { messageId: 'm2' }, { messageId: 'm3' }];

describe('Function: failedMessageIds (how Lambda reads an SQS event source answer)', () => {
  it.each<[string, Parameters<typeof failedMessageIds>[1], boolean, string[]]>([
    ['the invocation threw', { threw: true }, true, ['m1', 'm2', 'm3']],
    ['no answer', { threw: false, result: undefined }, true, []],
    ['null', { threw: false, result: null }, true, []],
    ['an empty list', { threw: false, result: { batchItemFailures: [] } }, true, []],
    ['two named', { threw: false, result: { batchItemFailures: [{ itemIdentifier: 'm3' }, { itemIdentifier: 'm1' }] } }, true, ['m1', 'm3']],
    ['an id not in the batch', { threw: false, result: { batchItemFailures: [{ itemIdentifier: 'm9' }] } }, true, ['m1', 'm2', 'm3']],
    ['an empty id', { threw: false, result: { batchItemFailures: [{ itemIdentifier: '' }] } }, true, ['m1', 'm2', 'm3']],
    ['a list that is not a list', { threw: false, result: { batchItemFailures: 'm1' } }, true, ['m1', 'm2', 'm3']],
    ['named failures without ReportBatchItemFailures', { threw: false, result: { batchItemFailures: [{ itemIdentifier: 'm1' }] } }, false, []],
    ['a throw without ReportBatchItemFailures', { threw: true }, false, ['m1', 'm2', 'm3']],
  ])('%s', (_name, outcome, reportBatchItemFailures, expected) => {
    expect([...failedMessageIds(BATCH, outcome, reportBatchItemFailures)].sort()).toEqual(expected);
  });
});

describe('Function: toSqsEvent / eventsOfInvocation', () => {
  const event: EventBridgeEnvelope = { version: '0', id: 'e1', 'detail-type': 'd', source: 's', account: '0', time: 't', region: 'r', resources: [], detail: { a: 1 } };

  it('wraps EventBridge events as SQS records and reads them back; an event invoking directly is itself', () => {
    const batch = toSqsEvent([event, { messageId: 'm2', event, receiveCount: 3, sentAt: 1, firstReceivedAt: 2 }], { queueName: 'Q' });
    expect(isSqsEvent(batch)).toBe(true);
    expect(batch.Records[1]).toMatchObject({ messageId: 'm2', eventSource: 'aws:sqs', eventSourceARN: 'arn:aws:sqs:us-east-1:000000000000:Q', attributes: { ApproximateReceiveCount: '3', SentTimestamp: '1' } });
    expect(eventsOfInvocation(batch)).toEqual([event, event]);
    expect(isSqsEvent(event)).toBe(false);
    expect(eventsOfInvocation(event)).toEqual([event]);
  });
});
