import { fileURLToPath } from 'node:url';
import { EventBridgeClient, PutEventsCommand } from '@aws-sdk/client-eventbridge';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createEventPublisher } from '../../shared/adapters/eventbridge/publisher.js';
import { toHintEvent } from '../../shared/events/hint-event.js';
import type { EventBridgeEnvelope, HintDetail, HintEvent } from '../../shared/events/hint-event.js';
import { startLocalBus } from '../../local/bus/index.js';
import type { LocalBus } from '../../local/bus/index.js';
import type { KubeObject } from '../../shared/ports/cluster.js';

const serverlessYmlPath = fileURLToPath(new URL('../../serverless.yml', import.meta.url));
const BUS = 'ome-pinning-dev-bus';

function object(kind: string, name: string, extra: Partial<KubeObject['metadata']> = {}): KubeObject {
  return {
    apiVersion: kind === 'ControllerRevision' ? 'apps/v1' : 'ome.io/v1beta1',
    kind,
    metadata: { name, namespace: 'ns', uid: `uid-${name}`, resourceVersion: '1', ...extra },
    spec: {},
  };
}

function clientFor(bus: LocalBus, maxAttempts = 3): EventBridgeClient {
  return new EventBridgeClient({
    endpoint: bus.endpoint,
    region: bus.region,
    maxAttempts,
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
  });
}

async function put(client: EventBridgeClient, events: HintEvent[]) {
  return client.send(
    new PutEventsCommand({
      Entries: events.map((event) => ({ EventBusName: BUS, Source: event.source, DetailType: event.detailType, Detail: JSON.stringify(event.detail) })),
    }),
  );
}

/** Registers a recording target for each function. */
function record(bus: LocalBus, names: string[]): Record<string, EventBridgeEnvelope<HintDetail>[]> {
  const seen: Record<string, EventBridgeEnvelope<HintDetail>[]> = {};
  for (const name of names) {
    seen[name] = [];
    bus.registerTarget(name, (event) => {
      seen[name]?.push(event as EventBridgeEnvelope<HintDetail>);
    });
  }
  return seen;
}

const CONSUMERS = ['pin', 'drift-check', 'repin-apply', 'rollout-run', 'revision-gc'];

describe('Local bus', () => {
  let bus: LocalBus;
  let client: EventBridgeClient;

  beforeEach(async () => {
    bus = await startLocalBus({ serverlessYmlPath, schedules: false, retryBaseDelayMs: 1, retryMaxDelayMs: 2 });
    client = clientFor(bus);
  });

  afterEach(async () => {
    client.destroy();
    await bus.stop();
  });

  it('reads every rule of serverless.yml: existing targets, valid patterns, retry policies and dead-letter queues', () => {
    const functionNames = new Set(bus.functions.map((fn) => fn.name));
    expect([...functionNames].sort()).toEqual(['admission-webhook', 'drift-check', 'forward-watch-events', 'pin', 'repin-apply', 'revision-gc', 'rollout-run']);
    for (const rule of bus.rules) {
      expect(functionNames.has(rule.functionName), rule.name).toBe(true);
      expect(rule.pattern ?? rule.schedule, rule.name).toBeDefined();
      expect(rule.deadLetterQueue, rule.name).toMatch(/DeadLetterQueue$/);
      expect(rule.retryPolicy.maximumEventAgeSeconds, rule.name).toBeLessThanOrEqual(3600);
    }
    expect(bus.rules.filter((rule) => rule.pattern).every((rule) => rule.eventBusName === BUS)).toBe(true);
    expect(bus.rules.filter((rule) => rule.schedule).map((rule) => [rule.functionName, rule.schedule])).toEqual([
      ['forward-watch-events', 'rate(1 minute)'],
      ['rollout-run', 'rate(1 minute)'],
      ['revision-gc', 'rate(5 minutes)'],
    ]);
  });

  it.each<[string, HintEvent, string[]]>([
    ['InferenceService added', toHintEvent('c1', 'ADDED', object('InferenceService', 'a')), ['pin', 'rollout-run']],
    ['InferenceService repin request', toHintEvent('c1', 'MODIFIED', object('InferenceService', 'a', { annotations: { 'ome.io/rollout-repin': 'now' } }), object('InferenceService', 'a')), ['pin', 'repin-apply', 'rollout-run']],
    ['InferenceService promote request', toHintEvent('c1', 'MODIFIED', object('InferenceService', 'a', { annotations: { 'ome.io/rollout-promote': 'r2' } }), object('InferenceService', 'a')), ['pin', 'repin-apply', 'rollout-run']],
    ['InferenceService deleted', toHintEvent('c1', 'DELETED', object('InferenceService', 'a')), []],
    ['ServingRuntime changed', toHintEvent('c1', 'MODIFIED', object('ServingRuntime', 'srt')), ['drift-check']],
    ['ClusterServingRuntime relisted', toHintEvent('c1', 'RELISTED', object('ClusterServingRuntime', 'csr')), ['drift-check']],
    ['ControllerRevision deleted', toHintEvent('c1', 'DELETED', object('ControllerRevision', 'cr-x')), ['drift-check']],
    ['ControllerRevision added', toHintEvent('c1', 'ADDED', object('ControllerRevision', 'cr-x')), ['revision-gc']],
    ['RolloutPolicy changed', toHintEvent('c1', 'MODIFIED', object('RolloutPolicy', 'rp')), ['repin-apply']],
  ])('routes %s through PutEvents to exactly its rules, once each', async (_name, event, expected) => {
    // Prepare
    const seen = record(bus, CONSUMERS);
    // Act
    const response = await put(client, [event]);
    await bus.drain();
    // Assess
    expect(response.FailedEntryCount).toBe(0);
    const reached = CONSUMERS.filter((name) => (seen[name]?.length ?? 0) > 0).sort();
    expect(reached).toEqual(expected);
    for (const name of expected) {
      expect(seen[name]).toHaveLength(1);
      expect(seen[name]?.[0]).toMatchObject({ source: 'ome.pinning', 'detail-type': 'Kubernetes Object Changed', account: '000000000000', detail: event.detail });
    }
  });

  it('under duplication, reordering and delay, still delivers every event at least once', async () => {
    // Prepare
    const seen = record(bus, ['pin']);
    bus.faults.set({ duplicate: 0.5, reorderWindow: 5, delayMs: [0, 20], seed: 7 });
    const events = Array.from({ length: 30 }, (_, i) => toHintEvent('c1', 'ADDED', object('InferenceService', `isvc-${i}`)));
    // Act
    for (let i = 0; i < events.length; i += 10) await put(client, events.slice(i, i + 10));
    await bus.drain();
    // Assess
    const names = (seen.pin ?? []).map((event) => event.detail.name);
    expect(new Set(names)).toEqual(new Set(events.map((event) => event.detail.name)));
    expect(names.length).toBeGreaterThan(events.length);
    expect(names).not.toEqual([...names].sort((a, b) => Number(a.split('-')[1]) - Number(b.split('-')[1])));
  });

  it('makes the same choices for the same seed', async () => {
    const runOnce = async () => {
      const seen = record(bus, ['pin']);
      bus.faults.set({ duplicate: 0.5, seed: 42 });
      await put(client, Array.from({ length: 10 }, (_, i) => toHintEvent('c1', 'ADDED', object('InferenceService', `s-${i}`))));
      await bus.drain();
      return (seen.pin ?? []).map((event) => event.detail.name).sort();
    };
    expect(await runOnce()).toEqual(await runOnce());
  });

  it('retries a failing target under the rule retry policy, then dead-letters the event', async () => {
    // Prepare: pin's rule allows 20 retries
    let attempts = 0;
    bus.registerTarget('pin', () => {
      attempts += 1;
      throw new Error('cluster unreachable');
    });
    const event = toHintEvent('c1', 'ADDED', object('InferenceService', 'doomed'));
    // Act
    await put(client, [event]);
    await bus.drain();
    // Assess
    expect(attempts).toBe(21);
    expect(bus.deadLetters).toEqual([
      expect.objectContaining({ ruleName: 'ome-pinning-dev-pin-isvc', functionName: 'pin', attempts: 21, reason: 'RetriesExhausted', error: 'cluster unreachable' }),
    ]);
    expect(bus.deadLetters[0]?.event.detail).toEqual(event.detail);
  });

  it('redelivers after a transient failure without dead-lettering', async () => {
    let attempts = 0;
    bus.registerTarget('pin', () => {
      attempts += 1;
      if (attempts < 3) throw new Error('lease busy');
    });
    await put(client, [toHintEvent('c1', 'ADDED', object('InferenceService', 'x'))]);
    await bus.drain();
    expect(attempts).toBe(3);
    expect(bus.deadLetters).toEqual([]);
  });

  it('fires a schedule with a Scheduled Event', async () => {
    const seen: EventBridgeEnvelope[] = [];
    bus.registerTarget('revision-gc', (event) => {
      seen.push(event);
    });
    bus.triggerSchedule('ome-pinning-dev-revision-gc-schedule');
    await bus.drain();
    expect(seen).toEqual([expect.objectContaining({ source: 'aws.events', 'detail-type': 'Scheduled Event', resources: [expect.stringContaining(':rule/ome-pinning-dev-revision-gc-schedule')] })]);
  });

  it('answers PutEvents errors the way EventBridge does', async () => {
    // More than 10 entries: the call fails
    const many = Array.from({ length: 11 }, (_, i) => toHintEvent('c1', 'ADDED', object('InferenceService', `m-${i}`)));
    await expect(put(client, many)).rejects.toMatchObject({ name: 'ValidationException' });
    // Unknown bus and malformed detail: per-entry failures
    const response = await client.send(
      new PutEventsCommand({
        Entries: [
          { EventBusName: 'nope', Source: 's', DetailType: 'd', Detail: '{}' },
          { EventBusName: BUS, Source: 's', DetailType: 'd', Detail: 'not json' },
          { EventBusName: BUS, Source: 's', DetailType: 'd', Detail: '{}' },
        ],
      }),
    );
    expect(response.FailedEntryCount).toBe(2);
    expect(response.Entries?.map((entry) => entry.ErrorCode ?? 'ok')).toEqual(['InvalidArgument', 'MalformedDetail', 'ok']);
    // Throttling
    bus.faults.set({ throttle: 1 });
    const once = clientFor(bus, 1);
    await expect(put(once, many.slice(0, 1))).rejects.toMatchObject({ name: 'ThrottlingException' });
    once.destroy();
  });

  it('with the publisher, entries failed by the bus are resent until all arrive exactly once', async () => {
    // Prepare
    const seen = record(bus, ['pin']);
    bus.faults.set({ failEntries: 0.3, seed: 3 });
    const publisher = createEventPublisher({ client, busName: BUS, maxAttempts: 10, baseDelayMs: 1, maxDelayMs: 2 });
    const events = Array.from({ length: 25 }, (_, i) => toHintEvent('c1', 'ADDED', object('InferenceService', `p-${i}`)));
    // Act
    const result = await publisher.publish(events);
    await bus.drain();
    // Assess
    expect(result).toEqual({ published: 25, skipped: [], failed: [] });
    const names = (seen.pin ?? []).map((event) => event.detail.name).sort();
    expect(names).toEqual(events.map((event) => event.detail.name).sort());
  });

  it('refuses a target for a function serverless.yml does not define', () => {
    expect(() => bus.registerTarget('pinn', () => undefined)).toThrow(/no function pinn/);
  });
});
