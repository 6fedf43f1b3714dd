import { EventBridgeClient, PutEventsCommand } from '@aws-sdk/client-eventbridge';
import type { PutEventsRequestEntry } from '@aws-sdk/client-eventbridge';
import { mockClient } from 'aws-sdk-client-mock';
import { allCustomMatcher } from 'aws-sdk-client-mock-vitest';
import 'aws-sdk-client-mock-vitest/extend';
import { beforeEach, describe, expect, it } from 'vitest';
import {
  MAX_REQUEST_BYTES,
  computeEntrySize,
  createEventPublisher,
  packBatches,
} from '../../shared/adapters/eventbridge/publisher.js';
import { HINT_EVENT_SOURCE, HintDetailType } from '../../shared/domain/hint-event.js';
import type { HintEvent } from '../../shared/domain/hint-event.js';

expect.extend(allCustomMatcher);

const eventBridge = mockClient(EventBridgeClient);

function hint(index: number, nameLength = 8): HintEvent {
  return {
    source: HINT_EVENT_SOURCE,
    detailType: HintDetailType.objectChanged,
    detail: {
      clusterId: 'c1',
      apiVersion: 'ome.io/v1beta1',
      kind: 'InferenceService',
      namespace: 'ns',
      name: `isvc-${index}`.padEnd(nameLength, 'x'),
      uid: `uid-${index}`,
      resourceVersion: String(index),
      change: 'modified',
      changed: { spec: true, runtimeSync: false, rolloutRepin: false, rolloutPromote: false },
      observedAt: '2026-01-01T00:00:00.000Z',
    },
  };
}

const uidsOf = (entries: PutEventsRequestEntry[] | undefined) =>
  (entries ?? []).map((entry) => (JSON.parse(entry.Detail ?? '{}') as { uid: string }).uid);

function sentBatches(): string[][] {
  return eventBridge.commandCalls(PutEventsCommand).map((call) => uidsOf(call.args[0].input.Entries));
}

function newPublisher(options: { maxAttempts?: number } = {}) {
  const sleeps: number[] = [];
  const warnings: string[] = [];
  const publisher = createEventPublisher({
    client: new EventBridgeClient({ region: 'eu-west-1' }),
    busName: 'ome-bus',
    maxAttempts: options.maxAttempts ?? 4,
    random: () => 0.5,
    sleep: async (ms) => {
      sleeps.push(ms);
    },
    logger: { warn: (message) => warnings.push(message) },
  });
  return { publisher, sleeps, warnings };
}

/** A PutEvents mock that accepts every entry. */
function acceptAll() {
  eventBridge.on(PutEventsCommand).callsFake((input: { Entries: PutEventsRequestEntry[] }) => ({
    FailedEntryCount: 0,
    Entries: input.Entries.map((_, i) => ({ EventId: `id-${i}` })),
  }));
}

describe('Function: computeEntrySize', () => {
  it('counts as AWS documents: 14 bytes for Time plus UTF-8 bytes of the strings', () => {
    const entry: PutEventsRequestEntry = { Source: 'ome.pinning', DetailType: 'Typé', Detail: '{"a":"€"}', Resources: ['r1'], Time: new Date() };
    expect(computeEntrySize(entry)).toBe(14 + 11 + 5 + 11 + 2);
  });

  it('packs by count and by size', () => {
    const small = Array.from({ length: 23 }, () => ({ size: 100 }));
    expect(packBatches(small).map((batch) => batch.length)).toEqual([10, 10, 3]);
    const large = Array.from({ length: 5 }, () => ({ size: 100 * 1024 }));
    expect(packBatches(large).map((batch) => batch.length)).toEqual([2, 2, 1]);
  });
});

describe('Method: publish', () => {
  beforeEach(() => {
    eventBridge.reset();
  });

  it('sends 25 events as 10 + 10 + 5 on the configured bus', async () => {
    // Prepare
    acceptAll();
    const { publisher } = newPublisher();
    // Act
    const result = await publisher.publish(Array.from({ length: 25 }, (_, i) => hint(i)));
    // Assess
    expect(result).toEqual({ published: 25, skipped: [], failed: [] });
    expect(sentBatches().map((batch) => batch.length)).toEqual([10, 10, 5]);
    expect(eventBridge).toHaveReceivedCommandWith(PutEventsCommand, {
      Entries: expect.arrayContaining([expect.objectContaining({ EventBusName: 'ome-bus', Source: 'ome.pinning', DetailType: 'Kubernetes Object Changed' })]),
    });
  });

  it('resends only the 3 entries of 10 that failed', async () => {
    // Prepare: entries 2, 5 and 7 fail the first time
    const failing = new Set([2, 5, 7]);
    eventBridge
      .on(PutEventsCommand)
      .resolvesOnce({
        FailedEntryCount: 3,
        Entries: Array.from({ length: 10 }, (_, i) =>
          failing.has(i) ? { ErrorCode: 'InternalFailure', ErrorMessage: 'try again' } : { EventId: `id-${i}` },
        ),
      })
      .callsFake((input: { Entries: PutEventsRequestEntry[] }) => ({ FailedEntryCount: 0, Entries: input.Entries.map((_, i) => ({ EventId: `r-${i}` })) }));
    const { publisher, sleeps } = newPublisher();
    // Act
    const result = await publisher.publish(Array.from({ length: 10 }, (_, i) => hint(i)));
    // Assess
    expect(result).toEqual({ published: 10, skipped: [], failed: [] });
    expect(sentBatches()).toEqual([Array.from({ length: 10 }, (_, i) => `uid-${i}`), ['uid-2', 'uid-5', 'uid-7']]);
    expect(sleeps).toHaveLength(1);
  });

  it('backs off and retries a throttled call, with growing delays', async () => {
    // Prepare
    const throttled = Object.assign(new Error('Rate exceeded'), { name: 'ThrottlingException' });
    eventBridge.on(PutEventsCommand).rejectsOnce(throttled).rejectsOnce(throttled).callsFake((input: { Entries: PutEventsRequestEntry[] }) => ({
      FailedEntryCount: 0,
      Entries: input.Entries.map(() => ({ EventId: 'x' })),
    }));
    const { publisher, sleeps } = newPublisher();
    // Act
    const result = await publisher.publish([hint(1), hint(2)]);
    // Assess: full jitter with random()=0.5 over ceilings of 100 and 200 ms
    expect(result.published).toBe(2);
    expect(eventBridge).toHaveReceivedCommandTimes(PutEventsCommand, 3);
    expect(sleeps).toEqual([50, 100]);
  });

  it('skips an oversized entry and still sends the rest', async () => {
    // Prepare
    acceptAll();
    const { publisher, warnings } = newPublisher();
    const oversized = hint(99, MAX_REQUEST_BYTES + 1);
    // Act
    const result = await publisher.publish([hint(1), oversized, hint(2)]);
    // Assess
    expect(result.published).toBe(2);
    expect(result.skipped).toEqual([{ event: oversized, reason: expect.stringContaining('over the 262144-byte PutEvents limit') }]);
    expect(sentBatches()).toEqual([['uid-1', 'uid-2']]);
    expect(warnings).toContain('skipping an event too large for PutEvents');
  });

  it('returns what still fails after maxAttempts instead of dropping it', async () => {
    // Prepare: entry 0 always fails, entry 1 is accepted
    eventBridge.on(PutEventsCommand).callsFake((input: { Entries: PutEventsRequestEntry[] }) => ({
      FailedEntryCount: 1,
      Entries: input.Entries.map((entry) =>
        uidsOf([entry])[0] === 'uid-0' ? { ErrorCode: 'InternalFailure', ErrorMessage: 'boom' } : { EventId: 'ok' },
      ),
    }));
    const { publisher } = newPublisher({ maxAttempts: 3 });
    // Act
    const result = await publisher.publish([hint(0), hint(1)]);
    // Assess
    expect(result.published).toBe(1);
    expect(result.failed).toEqual([{ event: hint(0), errorCode: 'InternalFailure', errorMessage: 'boom' }]);
    expect(sentBatches()).toEqual([['uid-0', 'uid-1'], ['uid-0'], ['uid-0']]);
  });

  it('does not resend an entry EventBridge rejects as malformed', async () => {
    eventBridge.on(PutEventsCommand).resolves({ FailedEntryCount: 1, Entries: [{ ErrorCode: 'MalformedDetail', ErrorMessage: 'bad json' }] });
    const { publisher } = newPublisher();
    const result = await publisher.publish([hint(0)]);
    expect(result.failed.map((item) => item.errorCode)).toEqual(['MalformedDetail']);
    expect(eventBridge).toHaveReceivedCommandTimes(PutEventsCommand, 1);
  });

  it('does not retry a call refused for permissions, and reports every entry as failed', async () => {
    eventBridge.on(PutEventsCommand).rejects(Object.assign(new Error('denied'), { name: 'AccessDeniedException' }));
    const { publisher } = newPublisher();
    const result = await publisher.publish([hint(0), hint(1)]);
    expect(result).toMatchObject({ published: 0, failed: [{ errorCode: 'AccessDeniedException' }, { errorCode: 'AccessDeniedException' }] });
    expect(eventBridge).toHaveReceivedCommandTimes(PutEventsCommand, 1);
  });
});
