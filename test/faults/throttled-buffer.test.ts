/**
 * Case 5: PutEvents throttled or failing with 5xx for a long stretch. The forwarder's
 * batcher, over the real EventBridge publisher (the client mocked per call), must back off,
 * keep its buffer bounded — the producer waits instead of queueing without end — and,
 * once the bus recovers, deliver every hint exactly once, settling (letting the checkpoint
 * pass) each hint only after the bus accepted it.
 */
import { EventBridgeClient, PutEventsCommand, type PutEventsCommandInput, type PutEventsCommandOutput } from '@aws-sdk/client-eventbridge';
import { mockClient } from 'aws-sdk-client-mock';
import { afterEach, describe, expect, it } from 'vitest';
import { createEventPublisher } from '../../shared/adapters/eventbridge/publisher';
import { HINT_EVENT_SOURCE, HintDetailType, type HintDetail, type HintEvent } from '../../shared/domain/hint-event';
import { HintBatcher, type BatcherCounters } from '../../shared/use-cases/forwarder/hint-batcher';

const eventBridge = mockClient(EventBridgeClient);
afterEach(() => eventBridge.reset());

const MAX_BATCH = 10;
const MAX_IN_FLIGHT = 2;
const HINTS = 300;

function hint(i: number): HintEvent {
  const detail: HintDetail = {
    clusterId: 'c1',
    apiVersion: 'ome.io/v1beta1',
    kind: 'InferenceService',
    namespace: 'prod',
    name: `isvc-${i}`,
    uid: `uid-${i}`,
    resourceVersion: String(1000 + i),
    change: 'modified',
    changed: {},
    observedAt: new Date(0).toISOString(),
  } as HintDetail;
  return { source: HINT_EVENT_SOURCE, detailType: HintDetailType.objectChanged, detail };
}

describe('a throttled bus (case 5)', () => {
  it.each([
    ['throttled (ThrottlingException)', () => Object.assign(new Error('Rate exceeded'), { name: 'ThrottlingException', $fault: 'client' })],
    ['failing with 500', () => Object.assign(new Error('internal'), { name: 'InternalException', $fault: 'server', $metadata: { httpStatusCode: 500 } })],
  ])('backs off with a bounded buffer while %s, then delivers every hint once', async (_label, failure) => {
    // Prepare: the first 40 PutEvents calls fail; then the bus accepts.
    let calls = 0;
    const accepted: string[] = [];
    let outstanding = 0;
    let maxOutstanding = 0;
    eventBridge.on(PutEventsCommand).callsFake((input: PutEventsCommandInput): PutEventsCommandOutput => {
      calls += 1;
      if (calls <= 40) throw failure();
      const entries = input.Entries ?? [];
      for (const entry of entries) accepted.push((JSON.parse(entry.Detail ?? '{}') as HintDetail).uid);
      return { FailedEntryCount: 0, Entries: entries.map((_e, i) => ({ EventId: `e-${calls}-${i}` })), $metadata: {} };
    });
    const publisher = createEventPublisher({ client: new EventBridgeClient({ region: 'us-east-1' }), busName: 'bus', maxAttempts: 1, baseDelayMs: 1, maxDelayMs: 2 });
    const counters: BatcherCounters = { forwarded: 0, skipped: 0, batches: 0, entries: 0, retries: 0 };
    const batcher = new HintBatcher({
      publisher,
      maxBatchSize: MAX_BATCH,
      maxInFlight: MAX_IN_FLIGHT,
      lingerMs: 5,
      retryBaseDelayMs: 1,
      retryMaxDelayMs: 5,
      signal: new AbortController().signal,
      counters,
    });
    const settledBeforeAccepted: string[] = [];
    const settled = new Map<string, number>();

    // Act: one producer (a watch stream) adds hints as fast as the batcher lets it.
    for (let i = 0; i < HINTS; i += 1) {
      const event = hint(i);
      outstanding += 1;
      await batcher.add({
        event,
        settle: () => {
          outstanding -= 1;
          settled.set(event.detail.uid, (settled.get(event.detail.uid) ?? 0) + 1);
          if (!accepted.includes(event.detail.uid)) settledBeforeAccepted.push(event.detail.uid);
        },
      });
      maxOutstanding = Math.max(maxOutstanding, outstanding);
    }
    await batcher.flushAll();

    // Assess: bounded (never more than the batches in flight plus one forming), backed off,
    // nothing lost, nothing sent twice, nothing settled before the bus took it.
    expect(maxOutstanding).toBeLessThanOrEqual(MAX_BATCH * (MAX_IN_FLIGHT + 1));
    expect(counters.retries).toBeGreaterThanOrEqual(40);
    expect(new Set(accepted).size).toBe(HINTS);
    expect(accepted).toHaveLength(HINTS);
    expect([...settled.values()].every((n) => n === 1)).toBe(true);
    expect(settled.size).toBe(HINTS);
    expect(settledBeforeAccepted).toEqual([]);
  });
});
