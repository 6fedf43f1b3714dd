import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { EventBridgeClient, PutEventsCommand } from '@aws-sdk/client-eventbridge';
import type { SQSEvent } from 'aws-lambda';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createEventPublisher } from '../../shared/adapters/eventbridge/publisher.js';
import type { AppContext } from '../../shared/app/context.js';
import { createHintHandler } from '../../shared/app/hint-handler.js';
import { UnavailableError } from '../../shared/domain/errors.js';
import { toHintEvent } from '../../shared/domain/hint-event.js';
import { rolloutTransitionsOf, toNotificationEvent } from '../../shared/domain/notification.js';
import type { EventBridgeEnvelope, HintDetail, HintEvent } from '../../shared/domain/hint-event.js';
import { isSqsEvent, startLocalBus } from '../../local/bus/index.js';
import type { LocalBus, LocalQueue } from '../../local/bus/index.js';
import type { ClusterClient, KubeObject } from '../../shared/ports/cluster.js';

const serverlessYmlPath = fileURLToPath(new URL('../../serverless.yml', import.meta.url));
const BUS = 'ome-pinning-dev-bus';

/** An object of `kind`; `spec` replaces its empty spec, the rest is metadata. */
function object(kind: string, name: string, extra: Partial<KubeObject['metadata']> & { spec?: Record<string, unknown> } = {}): KubeObject {
  const { spec = {}, ...metadata } = extra;
  return {
    apiVersion: kind === 'ControllerRevision' || kind === 'Deployment' ? 'apps/v1' : 'ome.io/v1beta1',
    kind,
    metadata: { name, namespace: 'ns', uid: `uid-${name}`, resourceVersion: '1', ...metadata },
    spec,
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

/** The EventBridge events inside an SQS batch. */
function eventsOf(batch: SQSEvent): EventBridgeEnvelope<HintDetail>[] {
  return batch.Records.map((record) => JSON.parse(record.body) as EventBridgeEnvelope<HintDetail>);
}

/** Registers a recording target for each function. */
function record(bus: LocalBus, names: string[]): Record<string, EventBridgeEnvelope<HintDetail>[]> {
  const seen: Record<string, EventBridgeEnvelope<HintDetail>[]> = {};
  for (const name of names) {
    seen[name] = [];
    bus.registerTarget(name, (event) => {
      if (isSqsEvent(event)) seen[name]?.push(...eventsOf(event));
    });
  }
  return seen;
}

function queueOf(bus: LocalBus, functionName: string): LocalQueue {
  const queue = bus.queues.find((candidate) => candidate.functionName === functionName);
  if (!queue) throw new Error(`no queue for ${functionName}`);
  return queue;
}

/**
 * Waits scaled this much: 180 s of visibility timeout become 18 ms, a simulated hour 360 ms.
 * Counts and order do not depend on it; a slow machine only makes fewer receives fit in
 * the simulated hour.
 */
const TIME_SCALE = 1e-4;

const CONSUMERS = ['pin', 'drift-check', 'repin-apply', 'rollout-run'];

describe('Local bus', () => {
  let bus: LocalBus;
  let client: EventBridgeClient;

  beforeEach(async () => {
    bus = await startLocalBus({ serverlessYmlPath, schedules: false, timeScale: TIME_SCALE });
    client = clientFor(bus);
  });

  afterEach(async () => {
    client.destroy();
    await bus.stop();
  });

  it('reads every rule of serverless.yml: pattern rules feed a hint queue, schedules invoke directly, each with its dead-letter queue', () => {
    const functionNames = new Set(bus.functions.map((fn) => fn.name));
    expect([...functionNames].sort()).toEqual(['admission-webhook', 'drift-check', 'forward-watch-events', 'pin', 'repin-apply', 'resync', 'revision-gc', 'rollout-run']);
    for (const rule of bus.rules) {
      expect(functionNames.has(rule.functionName), rule.name).toBe(true);
      expect(rule.pattern ?? rule.schedule, rule.name).toBeDefined();
      expect(rule.deadLetterQueue, rule.name).toMatch(/DeadLetterQueue$/);
      // A pattern rule puts hints on the queue its function reads; a schedule invokes the function.
      if (rule.pattern) expect(rule.queue, rule.name).toBe(queueOf(bus, rule.functionName).name);
      else expect(rule.queue, rule.name).toBeUndefined();
    }
    expect(bus.rules.filter((rule) => rule.pattern).every((rule) => rule.eventBusName === BUS)).toBe(true);
    expect(bus.rules.filter((rule) => rule.schedule).map((rule) => [rule.functionName, rule.schedule])).toEqual([
      // One per forwarder shard.
      ['forward-watch-events', 'rate(1 minute)'],
      ['forward-watch-events', 'rate(1 minute)'],
      ['forward-watch-events', 'rate(1 minute)'],
      ['forward-watch-events', 'rate(1 minute)'],
      ['rollout-run', 'rate(1 minute)'],
      ['revision-gc', 'rate(5 minutes)'],
      ['resync', 'rate(10 minutes)'],
    ]);
  });

  it.each(CONSUMERS)('%s: its hint queue retries for well over an hour, never while an invocation may still run, then dead-letters', (name) => {
    const queue = queueOf(bus, name);
    const fn = bus.functions.find((candidate) => candidate.name === name);
    expect(queue.reportBatchItemFailures).toBe(true);
    expect(queue.deadLetterQueue).toMatch(/DeadLetterQueue$/);
    expect(queue.visibilityTimeoutSeconds).toBeGreaterThanOrEqual(6 * (fn?.timeoutSeconds ?? Infinity));
    // Receives come one visibility timeout apart: the last is this long after the first.
    expect(((queue.maxReceiveCount ?? 0) - 1) * queue.visibilityTimeoutSeconds).toBeGreaterThanOrEqual(2 * 3600);
    expect(queue.messageRetentionSeconds).toBe(4 * 86_400);
  });

  it.each<[string, HintEvent, string[]]>([
    ['InferenceService added', toHintEvent('c1', 'ADDED', object('InferenceService', 'a')), ['pin']],
    ['InferenceService added with a rollout', toHintEvent('c1', 'ADDED', object('InferenceService', 'a', { spec: { rollout: { groups: [] } } })), ['pin', 'rollout-run']],
    ['InferenceService relisted', toHintEvent('c1', 'RELISTED', object('InferenceService', 'a')), ['pin', 'rollout-run']],
    ['InferenceService runtime-sync token', toHintEvent('c1', 'MODIFIED', object('InferenceService', 'a', { annotations: { 'ome.io/runtime-sync': 't1' } }), object('InferenceService', 'a')), ['pin']],
    ['InferenceService spec.runtime edited', toHintEvent('c1', 'MODIFIED', object('InferenceService', 'a', { spec: { runtime: { name: 'srt', revision: 'r2' } } }), object('InferenceService', 'a', { spec: { runtime: { name: 'srt', revision: 'r1' } } })), ['pin']],
    ['InferenceService with a rollout, spec.runtime edited', toHintEvent('c1', 'MODIFIED', object('InferenceService', 'a', { spec: { runtime: { name: 'srt', revision: 'r2' }, rollout: {} } }), object('InferenceService', 'a', { spec: { runtime: { name: 'srt', revision: 'r1' }, rollout: {} } })), ['pin']],
    ['InferenceService with a rollout, its plan edited', toHintEvent('c1', 'MODIFIED', object('InferenceService', 'a', { spec: { rollout: { groups: [{ name: 'g' }] } } }), object('InferenceService', 'a', { spec: { rollout: {} } })), ['pin', 'rollout-run']],
    ['InferenceService label changed', toHintEvent('c1', 'MODIFIED', object('InferenceService', 'a', { labels: { team: 'b' } }), object('InferenceService', 'a', { labels: { team: 'a' } })), ['pin']],
    ['InferenceService repin request', toHintEvent('c1', 'MODIFIED', object('InferenceService', 'a', { annotations: { 'ome.io/rollout-repin': 'now' } }), object('InferenceService', 'a')), ['repin-apply']],
    ['InferenceService promote request', toHintEvent('c1', 'MODIFIED', object('InferenceService', 'a', { annotations: { 'ome.io/rollout-promote': 'r2' } }), object('InferenceService', 'a')), ['repin-apply']],
    ['InferenceService rollback request', toHintEvent('c1', 'MODIFIED', object('InferenceService', 'a', { annotations: { 'ome.io/rollout-rollback': 'r1' } }), object('InferenceService', 'a')), ['rollout-run']],
    ['InferenceService paused', toHintEvent('c1', 'MODIFIED', object('InferenceService', 'a', { annotations: { 'ome.io/rollout-paused': 'true' } }), object('InferenceService', 'a')), ['rollout-run']],
    ['InferenceService resumed', toHintEvent('c1', 'MODIFIED', object('InferenceService', 'a'), object('InferenceService', 'a', { annotations: { 'ome.io/rollout-paused': 'true' } })), ['rollout-run']],
    ['InferenceService deleted', toHintEvent('c1', 'DELETED', object('InferenceService', 'a')), []],
    ['rendered Deployment seen first', toHintEvent('c1', 'ADDED', object('Deployment', 'a-engine')), ['rollout-run']],
    ['rendered Deployment readiness moved', toHintEvent('c1', 'MODIFIED', object('Deployment', 'a-engine'), object('Deployment', 'a-engine'), { readinessMoved: true }), ['rollout-run']],
    ['ServingRuntime changed', toHintEvent('c1', 'MODIFIED', object('ServingRuntime', 'srt')), ['drift-check']],
    ['ClusterServingRuntime relisted', toHintEvent('c1', 'RELISTED', object('ClusterServingRuntime', 'csr')), ['drift-check']],
    ['ControllerRevision deleted', toHintEvent('c1', 'DELETED', object('ControllerRevision', 'cr-x')), ['drift-check']],
    ['ControllerRevision added', toHintEvent('c1', 'ADDED', object('ControllerRevision', 'cr-x')), []],
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

  it('redelivers a failing hint once per visibility timeout and dead-letters it after exactly maxReceiveCount receives', async () => {
    // Prepare
    const receives: number[] = [];
    bus.registerTarget('pin', (event) => {
      if (!isSqsEvent(event)) return undefined;
      receives.push(...event.Records.map((record) => Number(record.attributes.ApproximateReceiveCount)));
      throw new Error('cluster unreachable');
    });
    const event = toHintEvent('c1', 'ADDED', object('InferenceService', 'doomed'));
    const { maxReceiveCount } = queueOf(bus, 'pin');
    // Act
    await put(client, [event]);
    await bus.drain();
    // Assess: receive counts 1, 2, … maxReceiveCount (41 in serverless.yml), then the dead-letter queue.
    expect(maxReceiveCount).toBe(41);
    expect(receives).toEqual(Array.from({ length: 41 }, (_, i) => i + 1));
    expect(bus.deadLetters).toEqual([
      expect.objectContaining({ ruleName: 'ome-pinning-dev-pin-isvc', functionName: 'pin', deadLetterQueue: 'PinDeadLetterQueue', attempts: 41, reason: 'MaxReceiveCountExceeded', error: 'cluster unreachable' }),
    ]);
    expect(bus.deadLetters[0]?.event.detail).toEqual(event.detail);
  });

  it('redelivers only the hints a batch reported as failed', async () => {
    // Prepare: the function fails one named hint once, through batchItemFailures.
    const handled: string[] = [];
    let failedOnce = false;
    bus.registerTarget('pin', (event) => {
      if (!isSqsEvent(event)) return undefined;
      const batchItemFailures: Array<{ itemIdentifier: string }> = [];
      for (const record of event.Records) {
        const { name } = (JSON.parse(record.body) as EventBridgeEnvelope<HintDetail>).detail;
        if (name === 'b-3' && !failedOnce) {
          failedOnce = true;
          batchItemFailures.push({ itemIdentifier: record.messageId });
        } else {
          handled.push(`${name}#${record.attributes.ApproximateReceiveCount}`);
        }
      }
      return { batchItemFailures };
    });
    const events = Array.from({ length: 5 }, (_, i) => toHintEvent('c1', 'ADDED', object('InferenceService', `b-${i}`)));
    // Act
    await put(client, events);
    await bus.drain();
    // Assess: each handled once; only b-3 was received twice.
    expect(handled.sort()).toEqual(['b-0#1', 'b-1#1', 'b-2#1', 'b-3#2', 'b-4#1']);
    expect(bus.deadLetters).toEqual([]);
  });

  it('redelivers the whole batch when the invocation throws, or names a message it was not given', async () => {
    // Prepare
    const receives = new Map<string, number>();
    let invocations = 0;
    bus.registerTarget('pin', (event) => {
      if (!isSqsEvent(event)) return undefined;
      invocations += 1;
      for (const hint of eventsOf(event)) receives.set(hint.detail.name, (receives.get(hint.detail.name) ?? 0) + 1);
      if (invocations === 1) throw new Error('function crashed');
      if (invocations === 2) return { batchItemFailures: [{ itemIdentifier: 'not-in-this-batch' }] };
      return { batchItemFailures: [] };
    });
    // Act
    await put(client, [toHintEvent('c1', 'ADDED', object('InferenceService', 'w-1')), toHintEvent('c1', 'ADDED', object('InferenceService', 'w-2'))]);
    await bus.drain();
    // Assess: both received three times, done in the third.
    expect(invocations).toBe(3);
    expect(Object.fromEntries(receives)).toEqual({ 'w-1': 3, 'w-2': 3 });
    expect(bus.deadLetters).toEqual([]);
  });

  it('loses no hint while a cluster is down for an hour: the hint handler reports it failed until the cluster is back', async () => {
    // Prepare: the hint handler over a use-case whose cluster answers only after a simulated hour.
    process.env.POWERTOOLS_LOG_LEVEL = 'SILENT';
    const downForMs = 3600 * 1000 * TIME_SCALE;
    let downSince: number | undefined;
    const attempts: Array<{ name: string; outcome: 'down' | 'done' }> = [];
    const cluster = { id: 'c1', client: {} as ClusterClient, omeNamespace: 'ome' };
    const app = { cluster: async () => cluster } as unknown as AppContext;
    const pin = createHintHandler(
      async ({ hint }) => {
        downSince ??= Date.now();
        if (Date.now() - downSince < downForMs) {
          attempts.push({ name: hint.name, outcome: 'down' });
          throw new UnavailableError('connect ECONNREFUSED (API server down)');
        }
        attempts.push({ name: hint.name, outcome: 'done' });
      },
      { serviceName: 'pin', context: () => app },
    );
    bus.registerTarget('pin', (event, context) => (isSqsEvent(event) ? pin(event, context) : undefined));
    const events = ['o-1', 'o-2', 'o-3'].map((name) => toHintEvent('c1', 'ADDED', object('InferenceService', name)));
    // Act
    await put(client, events);
    await bus.drain();
    delete process.env.POWERTOOLS_LOG_LEVEL;
    // Assess: each hint handled exactly once after the outage and none dead-lettered; each
    // was received again and again through the hour (how often depends on how late this
    // machine's timers fire; the table above shows the receives span two hours).
    const done = attempts.filter((attempt) => attempt.outcome === 'done').map((attempt) => attempt.name);
    expect(done.sort()).toEqual(['o-1', 'o-2', 'o-3']);
    expect(bus.deadLetters).toEqual([]);
    const { maxReceiveCount } = queueOf(bus, 'pin');
    for (const name of ['o-1', 'o-2', 'o-3']) {
      const failedReceives = attempts.filter((attempt) => attempt.name === name && attempt.outcome === 'down').length;
      expect(failedReceives, name).toBeGreaterThan(1);
      expect(failedReceives, name).toBeLessThan(maxReceiveCount ?? 0);
    }
  });

  it('retries a failed scheduled invocation as Lambda does (the function’s maximumRetryAttempts), then sends it to onError', async () => {
    // Prepare: rollout-run allows two asynchronous retries.
    let invocations = 0;
    bus.registerTarget('rollout-run', () => {
      invocations += 1;
      throw new Error('sweep failed');
    });
    // Act
    bus.triggerSchedule('ome-pinning-dev-rollout-run-schedule');
    await bus.drain();
    // Assess
    expect(invocations).toBe(3);
    expect(bus.deadLetters).toEqual([
      expect.objectContaining({ ruleName: 'ome-pinning-dev-rollout-run-schedule', functionName: 'rollout-run', deadLetterQueue: 'RolloutRunDeadLetterQueue', attempts: 3, reason: 'RetriesExhausted', error: 'sweep failed' }),
    ]);
  });

  it('fires a schedule with a Scheduled Event', async () => {
    const seen: EventBridgeEnvelope[] = [];
    bus.registerTarget('revision-gc', (event) => {
      if (!isSqsEvent(event)) seen.push(event);
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

  it('sends notifications to the notification topic, once each, and no hint there nor a notification to any function', async () => {
    // Prepare
    const seen = record(bus, CONSUMERS);
    bus.faults.set({ duplicate: 1, seed: 5 });
    const publisher = createEventPublisher({ client, busName: BUS, maxAttempts: 3, baseDelayMs: 1, maxDelayMs: 2 });
    const isvc = object('InferenceService', 'chat');
    const [closing] = rolloutTransitionsOf(
      { rollout: { activeRun: { runID: 'r1', openedAt: 't0', pinnedAt: 't0', plan: {} } } },
      { rollout: { lastRun: { outcome: 'RolledBack', closedAt: 't1' } } },
    );
    if (!closing) throw new Error('fixture');
    // Act
    await publisher.publish([toNotificationEvent('c1', isvc, closing, '2026-12-05T10:00:00Z')]);
    await publisher.publish([toHintEvent('c1', 'ADDED', isvc)]);
    await bus.drain();
    // Assess
    expect(bus.topicRules.map((rule) => `${rule.name} -> ${rule.topic}`)).toEqual(['ome-pinning-dev-notifications -> NotificationTopic']);
    expect(bus.topicMessages('NotificationTopic').map((event) => [event['detail-type'], (event.detail as { outcome?: string }).outcome])).toEqual([['RolloutRunClosed', 'RolledBack']]);
    expect(Object.values(seen).flat().map((event) => event['detail-type'])).not.toContain('RolloutRunClosed');
    expect(seen.pin?.length).toBe(2);
  });

  it('refuses a target for a function serverless.yml does not define', () => {
    expect(() => bus.registerTarget('pinn', () => undefined)).toThrow(/no function pinn/);
  });
});

describe('Local bus: a queue whose retention ends before its receives do', () => {
  const yml = `
service: svc
provider: { name: aws, timeout: 5 }
functions:
  a:
    handler: functions/a/handler.handler
    events:
      - sqs: { arn: { 'Fn::GetAtt': [AQueue, Arn] }, functionResponseType: ReportBatchItemFailures }
resources:
  Resources:
    Bus: { Type: AWS::Events::EventBus, Properties: { Name: svc-bus } }
    ARule:
      Type: AWS::Events::Rule
      Properties:
        Name: svc-a
        EventBusName: { 'Fn::GetAtt': [Bus, Name] }
        EventPattern: { source: [ome.pinning] }
        Targets: [{ Id: AQueue, Arn: { 'Fn::GetAtt': [AQueue, Arn] } }]
    AQueue:
      Type: AWS::SQS::Queue
      Properties:
        VisibilityTimeout: 30
        MessageRetentionPeriod: 100
        RedrivePolicy: { deadLetterTargetArn: { 'Fn::GetAtt': [ADeadLetters, Arn] }, maxReceiveCount: 1000 }
    ADeadLetters: { Type: AWS::SQS::Queue }
`;

  it('drops the message when it outlives the retention, without dead-lettering it', async () => {
    // Prepare
    const dir = await mkdtemp(join(tmpdir(), 'ome-bus-'));
    await writeFile(join(dir, 'serverless.yml'), yml);
    const bus = await startLocalBus({ serverlessYmlPath: join(dir, 'serverless.yml'), schedules: false, timeScale: 1e-3 });
    const client = clientFor(bus);
    let receives = 0;
    bus.registerTarget('a', () => {
      receives += 1;
      throw new Error('still failing');
    });
    try {
      // Act
      await client.send(new PutEventsCommand({ Entries: [{ EventBusName: 'svc-bus', Source: 'ome.pinning', DetailType: 'd', Detail: '{}' }] }));
      await bus.drain();
      // Assess: received every 30 simulated seconds until 100 had passed; then gone.
      expect(receives).toBeGreaterThanOrEqual(1);
      expect(receives).toBeLessThanOrEqual(4);
      expect(bus.deadLetters).toEqual([]);
      expect(bus.expired).toEqual([expect.objectContaining({ functionName: 'a', reason: 'RetentionPeriodExceeded', attempts: receives, error: 'still failing' })]);
    } finally {
      client.destroy();
      await bus.stop();
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe('Local bus: an event source with maximumConcurrency', () => {
  const yml = `
service: svc
provider: { name: aws, timeout: 5 }
functions:
  a:
    handler: functions/a/handler.handler
    events:
      - sqs: { arn: { 'Fn::GetAtt': [AQueue, Arn] }, batchSize: 1, maximumConcurrency: 2, functionResponseType: ReportBatchItemFailures }
resources:
  Resources:
    Bus: { Type: AWS::Events::EventBus, Properties: { Name: svc-bus } }
    ARule:
      Type: AWS::Events::Rule
      Properties:
        Name: svc-a
        EventBusName: { 'Fn::GetAtt': [Bus, Name] }
        EventPattern: { source: [ome.pinning] }
        Targets: [{ Id: AQueue, Arn: { 'Fn::GetAtt': [AQueue, Arn] } }]
    AQueue: { Type: AWS::SQS::Queue, Properties: { VisibilityTimeout: 30 } }
`;

  it('hands the function no more batches at once than maximumConcurrency, and delivers the rest as batches are answered', async () => {
    // Prepare
    const dir = await mkdtemp(join(tmpdir(), 'ome-bus-'));
    await writeFile(join(dir, 'serverless.yml'), yml);
    const bus = await startLocalBus({ serverlessYmlPath: join(dir, 'serverless.yml'), schedules: false, timeScale: 1e-3 });
    const client = clientFor(bus);
    let running = 0;
    let mostAtOnce = 0;
    let delivered = 0;
    bus.registerTarget('a', async () => {
      running += 1;
      mostAtOnce = Math.max(mostAtOnce, running);
      await new Promise((wake) => setTimeout(wake, 20));
      running -= 1;
      delivered += 1;
    });
    try {
      // Act
      await client.send(new PutEventsCommand({ Entries: Array.from({ length: 6 }, () => ({ EventBusName: 'svc-bus', Source: 'ome.pinning', DetailType: 'd', Detail: '{}' })) }));
      await bus.drain();
      // Assess
      expect(queueOf(bus, 'a').maximumConcurrency).toBe(2);
      expect(delivered).toBe(6);
      expect(mostAtOnce).toBe(2);
    } finally {
      client.destroy();
      await bus.stop();
      await rm(dir, { recursive: true, force: true });
    }
  });
});
