/**
 * The hint handler as a hint queue's event source invokes it: a batch of SQS records whose
 * bodies are EventBridge hint events; the answer names only the records to redeliver. A
 * hint that met a held lease is put back on its queue with SendMessage (the SQS client
 * mocked with aws-sdk-client-mock) and acknowledged. What it logs and the metrics it
 * publishes are read from the JSON lines Powertools writes.
 */
import { SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { MetricUnit } from '../../shared/app/metrics';
import type { Context, SQSEvent, SQSRecord } from 'aws-lambda';
import { mockClient } from 'aws-sdk-client-mock';
import 'aws-sdk-client-mock-vitest/extend';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { toSqsEvent } from '../../local/bus';
import type { AppContext } from '../../shared/app/context';
import { setAppContext } from '../../shared/app/context';
import {
  LEASE_BUSY_MAX_DELAY_SECONDS,
  LEASE_BUSY_MAX_REQUEUES,
  LEASE_BUSY_MAX_WAIT_MS,
  LEASE_BUSY_REQUEUES_ATTRIBUTE,
  LEASE_BUSY_SINCE_ATTRIBUTE,
  createHintHandler,
  groupByObject,
  leaseBusyDelaySeconds,
  mayRequeueForLease,
  readLeaseBusyState,
} from '../../shared/app/hint-handler';
import { LeaseBusyError } from '../../shared/use-cases/reconcile-under-lease';
import { InvalidInputError, NotFoundError, UnavailableError } from '../../shared/domain/errors';
import { readHintDetail, toHintEvent } from '../../shared/domain/hint-event';
import type { EventBridgeEnvelope } from '../../shared/domain/hint-event';
import type { HintHandlerOptions, HintInvocation } from '../../shared/app/hint-handler';
import type { ClusterClient, KubeObject } from '../../shared/ports/cluster';
import type { NotificationEvent } from '../../shared/domain/notification';
import type { RequeuedHint } from '../../shared/ports/hint-queue';

const context = { functionName: 'pin', awsRequestId: 'req-1', getRemainingTimeInMillis: () => 30_000 } as unknown as Context;
const app = { cluster: async (id: string) => ({ id, client: {} as ClusterClient, omeNamespace: 'ome' }) } as unknown as AppContext;

function hint(name: string, resourceVersion = '1', namespace = 'ns'): EventBridgeEnvelope {
  const event = toHintEvent('c1', 'MODIFIED', { apiVersion: 'ome.io/v1beta1', kind: 'InferenceService', metadata: { name, namespace, uid: `uid-${name}`, resourceVersion } });
  return { version: '0', id: `${name}@${resourceVersion}`, 'detail-type': event.detailType, source: event.source, account: '0', time: 't', region: 'r', resources: [], detail: event.detail };
}

/** A handler whose use-case fails with `error` for the hint named `target` and succeeds for every other. */
function failingOn(error: Error | undefined, options: Partial<HintHandlerOptions> = {}) {
  return createHintHandler(
    async ({ hint: detail }) => {
      if (detail.name === 'target' && error) throw error;
    },
    { serviceName: 'test', context: () => app, ...options },
  );
}

/** `error` wrapped `times` times, each wrapper naming the one inside as its cause. */
function wrapped(error: Error, times: number): Error {
  return times === 0 ? error : wrapped(new Error('wrapped', { cause: error }), times - 1);
}

/** One JSON log line of the handler's logger. */
interface LogLine {
  level: string;
  message: string;
  [key: string]: unknown;
}

/** One EMF document as Powertools writes it to stdout. */
interface EmfDocument {
  _aws: { CloudWatchMetrics: Array<{ Namespace: string; Metrics: Array<{ Name: string; Unit: string }> }> };
  [key: string]: unknown;
}

/**
 * Runs `act` with what the handler writes to stdout and stderr captured: its log lines (at
 * INFO and above) and its EMF metric documents. Powertools reads the log level, and whether
 * metrics are on, when a Logger or Metrics is constructed, so `act` creates the handler.
 */
async function captured<T>(act: () => Promise<T>): Promise<{ result: T; logs: LogLine[]; metrics: EmfDocument[] }> {
  const lines: string[] = [];
  const keep = (chunk: string | Uint8Array): boolean => {
    lines.push(...String(chunk).split('\n').filter((line) => line !== ''));
    return true;
  };
  process.env.POWERTOOLS_LOG_LEVEL = 'INFO';
  delete process.env.POWERTOOLS_METRICS_DISABLED;
  const spies = [vi.spyOn(process.stdout, 'write').mockImplementation(keep), vi.spyOn(process.stderr, 'write').mockImplementation(keep)];
  try {
    const result = await act();
    const documents = lines.map((line) => JSON.parse(line) as Record<string, unknown>);
    return {
      result,
      logs: documents.filter((document): document is LogLine => 'level' in document),
      metrics: documents.filter((document): document is EmfDocument => '_aws' in document),
    };
  } finally {
    for (const spy of spies) spy.mockRestore();
    process.env.POWERTOOLS_LOG_LEVEL = 'SILENT';
    process.env.POWERTOOLS_METRICS_DISABLED = 'true';
  }
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
    const handler = failingOn(error);
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
    ['a held lease with 4 s left, drawing no jitter', new LeaseBusyError('k', 4_000), 4],
    ['a held lease wrapped as the cause of another error', new Error('pin failed', { cause: new LeaseBusyError('k', 4_200) }), 5],
    ['a held lease four causes deep', wrapped(new LeaseBusyError('k', 4_200), 4), 5],
    ['a held lease whose holder is past its expiry', new LeaseBusyError('k', 0), 1],
    ['a held lease the store said nothing about', new LeaseBusyError('k'), LEASE_BUSY_MAX_DELAY_SECONDS],
  ])('%s: put back on its own queue, delayed, and acknowledged', async (_name, error, seconds) => {
    // Prepare
    const sent: RequeuedHint[] = [];
    const handler = failingOn(error, { random: () => 0, clock: { now: () => 1_000_000 }, requeue: async (hint) => void sent.push(hint) });
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

  it.each<[string, () => Error]>([
    ['a held lease five causes deep', () => wrapped(new LeaseBusyError('k', 4_200), 5)],
    [
      'an error whose causes run in a circle',
      () => {
        const error = new Error('pin failed');
        error.cause = new Error('retry failed', { cause: error });
        return error;
      },
    ],
  ])('%s: an ordinary retryable error, reported for redelivery and not put back', async (_name, errorOf) => {
    // Prepare
    const sent: RequeuedHint[] = [];
    const handler = failingOn(errorOf(), { random: () => 0, requeue: async (hint) => void sent.push(hint) });
    const batch = toSqsEvent([hint('target')]);
    // Act
    const response = await handler(batch, context);
    // Assess
    expect(response).toEqual({ batchItemFailures: [{ itemIdentifier: batch.Records[0]?.messageId }] });
    expect(sent).toEqual([]);
  });

  it('reports a held-lease hint for redelivery, and sends nothing, when its record does not name the queue it came from', async () => {
    // Prepare
    const sent: RequeuedHint[] = [];
    const handler = failingOn(new LeaseBusyError('k', 1_000), { requeue: async (hint) => void sent.push(hint) });
    const batch = toSqsEvent([hint('target')]);
    const [record] = batch.Records;
    if (record) record.eventSourceARN = '';
    // Act
    const response = await handler(batch, context);
    // Assess
    expect(response).toEqual({ batchItemFailures: [{ itemIdentifier: record?.messageId }] });
    expect(sent).toEqual([]);
  });

  it("gives the use-case the invocation's remaining time and a worker id naming the invocation and the message", async () => {
    // Prepare
    const invocations: HintInvocation[] = [];
    const handler = createHintHandler(async (invocation) => void invocations.push(invocation), { serviceName: 'test', context: () => app });
    const batch = toSqsEvent([hint('target')]);
    const timed = { ...context, getRemainingTimeInMillis: () => 12_345 } as Context;
    // Act
    await handler(batch, timed);
    // Assess
    expect(invocations.map(({ requestId, remainingTimeMs }) => ({ requestId, remaining: remainingTimeMs?.() }))).toEqual([
      { requestId: `req-1/${batch.Records[0]?.messageId}`, remaining: 12_345 },
    ]);
  });

  it('gives the use-case no remaining time when the invocation cannot tell it (a local call)', async () => {
    // Prepare
    const invocations: HintInvocation[] = [];
    const handler = createHintHandler(async (invocation) => void invocations.push(invocation), { serviceName: 'test', context: () => app });
    const untimed = { functionName: 'pin', awsRequestId: 'req-1' } as unknown as Context;
    // Act
    const response = await handler(toSqsEvent([hint('target')]), untimed);
    // Assess
    expect(response).toEqual({ batchItemFailures: [] });
    expect(invocations).toHaveLength(1);
    expect(invocations[0]?.remainingTimeMs).toBeUndefined();
  });

  it('runs on the process-wide context when it is given none', async () => {
    // Prepare
    const apps: AppContext[] = [];
    setAppContext(app);
    try {
      const handler = createHintHandler(async (invocation) => void apps.push(invocation.app), { serviceName: 'test' });
      // Act
      const response = await handler(toSqsEvent([hint('target')]), context);
      // Assess
      expect(response).toEqual({ batchItemFailures: [] });
      expect(apps).toEqual([app]);
    } finally {
      setAppContext(undefined);
    }
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

describe('Function: createHintHandler, what it logs and records', () => {
  it.each<[string, Error | undefined, Array<Record<string, unknown>>]>([
    ['success', undefined, []],
    ['a retryable error', new UnavailableError('down'), [{ level: 'WARN', message: 'retrying later', error: { name: 'UnavailableError', message: 'down' } }]],
    ['a terminal error', new NotFoundError('gone'), [{ level: 'ERROR', message: 'giving up on this event', error: { name: 'NotFoundError', message: 'gone' } }]],
  ])('%s: logs the outcome that is not a success, with its error', async (_name, error, lines) => {
    // Act
    const { logs } = await captured(() => failingOn(error)(toSqsEvent([hint('target')]), context));
    // Assess
    expect(logs).toMatchObject(lines);
  });

  it("logs a hint's lines, the use-case's and its own, with the service, the object, the message and its receive count", async () => {
    // Prepare
    const batch = toSqsEvent([hint('target', '1', 'team-a')]);
    const [record] = batch.Records;
    if (record) record.attributes.ApproximateReceiveCount = '3';
    const identity = { service: 'pin-runtime', cluster: 'c1', kind: 'InferenceService', namespace: 'team-a', name: 'target', messageId: record?.messageId, receiveCount: 3 };
    // Act
    const { logs } = await captured(() =>
      createHintHandler(
        async ({ logger }) => {
          logger.info('pinning');
          throw new UnavailableError('down');
        },
        { serviceName: 'pin-runtime', context: () => app },
      )(batch, context),
    );
    // Assess
    expect(logs).toMatchObject([
      { message: 'pinning', ...identity },
      { message: 'retrying later', ...identity },
    ]);
  });

  it('logs the record that is not a hint event, by its message id and why it could not be read', async () => {
    // Prepare
    const batch = toSqsEvent([hint('x')]);
    const [record] = batch.Records;
    if (record) record.body = 'not json';
    // Act
    const { logs } = await captured(() => failingOn(undefined)(batch, context));
    // Assess
    expect(logs).toMatchObject([{ level: 'ERROR', message: 'dropping a message that is not a hint event', messageId: record?.messageId, error: { name: 'SyntaxError' } }]);
  });

  it('answers an event without records with no failures, and logs nothing', async () => {
    // Act
    const { result, logs } = await captured(() => failingOn(undefined)({} as SQSEvent, context));
    // Assess
    expect(result).toEqual({ batchItemFailures: [] });
    expect(logs).toEqual([]);
  });

  it('logs a held-lease hint put back, with its delay and how many times it has been put back', async () => {
    // Act
    const { logs } = await captured(() =>
      failingOn(new LeaseBusyError('k', 4_200), { random: () => 0, requeue: async () => undefined })(toSqsEvent([hint('target')]), context),
    );
    // Assess
    expect(logs).toMatchObject([{ level: 'INFO', message: 'lease held: hint put back on its queue', delaySeconds: 5, leaseBusyRequeues: 1 }]);
  });

  it('logs why a held-lease hint could not be put back, then reports it for redelivery', async () => {
    // Prepare
    const requeue = async (): Promise<void> => {
      throw new UnavailableError('queue down');
    };
    // Act
    const { result, logs } = await captured(() => failingOn(new LeaseBusyError('k', 4_200), { requeue })(toSqsEvent([hint('target')]), context));
    // Assess
    expect(result.batchItemFailures).toHaveLength(1);
    expect(logs).toMatchObject([
      { level: 'WARN', message: 'could not put the hint back on its queue', error: { name: 'UnavailableError', message: 'queue down' } },
      { level: 'WARN', message: 'retrying later', error: { name: 'LeaseBusyError' } },
    ]);
  });

  it('logs only the redelivery of a held-lease hint when there is no queue to send to', async () => {
    // Prepare: a local configuration without SQS_ENDPOINT.
    const local = { ...app, config: { mode: 'local' } } as unknown as AppContext;
    // Act
    const { logs } = await captured(() => failingOn(new LeaseBusyError('k', 1_000), { context: () => local })(toSqsEvent([hint('target')]), context));
    // Assess
    expect(logs).toMatchObject([{ level: 'WARN', message: 'retrying later' }]);
  });

  it("publishes the metrics a hint's use-case records, under the control plane's namespace and the service", async () => {
    // Prepare
    const handler = () =>
      createHintHandler(async ({ metrics }) => metrics.addMetric('RuntimePinned', MetricUnit.Count, 1), { serviceName: 'pin-runtime', context: () => app });
    // Act
    const { metrics } = await captured(() => handler()(toSqsEvent([hint('target')]), context));
    // Assess
    expect(metrics).toHaveLength(1);
    expect(metrics[0]?._aws.CloudWatchMetrics[0]).toMatchObject({ Namespace: 'OmePinning', Metrics: [{ Name: 'RuntimePinned', Unit: 'Count' }] });
    expect(metrics[0]).toMatchObject({ service: 'pin-runtime', RuntimePinned: 1 });
  });
});

describe('Function: createHintHandler, notifications', () => {
  const clocked = { ...app, clock: { now: () => Date.parse('2026-12-05T10:00:00Z') } } as unknown as AppContext;
  const isvc = (status: object, resourceVersion: string) => ({ apiVersion: 'ome.io/v1beta1', kind: 'InferenceService', metadata: { name: 'target', namespace: 'ns', resourceVersion }, status });
  const opened = { rollout: { activeRun: { runID: 'r1', openedAt: 't', pinnedAt: 't', plan: {} } } };

  /** A handler whose use-case commits the given writes, then fails with `error` when given one. */
  function committing(writes: Array<[object, object]>, error?: Error) {
    const published: NotificationEvent[][] = [];
    const handler = createHintHandler(
      async ({ notifications }) => {
        for (const [before, after] of writes) notifications.committed(before as KubeObject, after as KubeObject);
        if (error) throw error;
      },
      {
        serviceName: 'test',
        context: () => clocked,
        publisher: () => ({
          async publish(events) {
            published.push([...events]);
            return { published: events.length, skipped: [], failed: [] };
          },
        }),
      },
    );
    return { handler, published };
  }

  it.each<[string, Error | undefined, boolean]>([
    ['the hint succeeds', undefined, false],
    ['a later step fails and the hint is retried', new UnavailableError('down'), true],
  ])('publishes what a committed write changed once the hint is done: %s', async (_name, error, redelivered) => {
    // Prepare
    const { handler, published } = committing([[isvc({}, '1'), isvc(opened, '2')]], error);
    const batch = toSqsEvent([hint('target')]);
    // Act
    const response = await handler(batch, context);
    // Assess
    expect(published.map((events) => events.map((event) => `${event.detailType} ${event.detail.name}@${event.detail.resourceVersion}`))).toEqual([['RolloutRunOpened target@2']]);
    expect(response.batchItemFailures.length).toBe(redelivered ? 1 : 0);
  });

  it('does not call the bus for a hint whose writes changed nothing worth announcing', async () => {
    // Prepare
    const { handler, published } = committing([[isvc(opened, '2'), isvc(opened, '3')]]);
    // Act
    await handler(toSqsEvent([hint('target'), hint('other')]), context);
    // Assess
    expect(published).toEqual([]);
  });

  it('reports the hint for redelivery, and publishes nothing, when its context cannot even be read', async () => {
    // Prepare
    const handler = createHintHandler(async () => undefined, {
      serviceName: 'test',
      context: () => {
        throw new UnavailableError('configuration not loaded');
      },
    });
    const batch = toSqsEvent([hint('target')]);
    // Act
    const response = await handler(batch, context);
    // Assess
    expect(response).toEqual({ batchItemFailures: [{ itemIdentifier: batch.Records[0]?.messageId }] });
  });

  it('acknowledges the hint, and logs why, when the bus cannot even be chosen', async () => {
    // Prepare
    const handler = () =>
      createHintHandler(async ({ notifications }) => notifications.committed(isvc({}, '1') as KubeObject, isvc(opened, '2') as KubeObject), {
        serviceName: 'test',
        context: () => clocked,
        publisher: () => {
          throw new Error('no bus configured');
        },
      });
    // Act
    const { result, logs } = await captured(async () => handler()(toSqsEvent([hint('target')]), context));
    // Assess
    expect(result).toEqual({ batchItemFailures: [] });
    expect(logs).toEqual(expect.arrayContaining([expect.objectContaining({ level: 'WARN', message: 'notifications not published', error: expect.objectContaining({ message: 'no bus configured' }) })]));
  });

  it('acknowledges the hint when the bus refuses its notifications: the work is done, only the announcement is lost', async () => {
    // Prepare
    const handler = createHintHandler(
      async ({ notifications }) => notifications.committed(isvc({}, '1') as KubeObject, isvc(opened, '2') as KubeObject),
      { serviceName: 'test', context: () => clocked, publisher: () => ({ publish: () => Promise.reject(new Error('AccessDeniedException')) }) },
    );
    // Act
    const response = await handler(toSqsEvent([hint('target')]), context);
    // Assess
    expect(response).toEqual({ batchItemFailures: [] });
  });
});

describe('Rule: groupByObject', () => {
  type Entry = Parameters<typeof groupByObject>[0][number];
  const readable = (envelope: EventBridgeEnvelope, messageId: string): Entry => ({ record: { ...toSqsEvent([envelope]).Records[0], messageId } as SQSRecord, hint: readHintDetail(envelope) });
  const unreadable = (messageId: string): Entry => ({ record: { ...toSqsEvent([hint('x')]).Records[0], messageId, body: 'not json' } as SQSRecord, problem: new SyntaxError('not json') });

  it.each<[string, Entry[], string[][]]>([
    ['two versions of one object: one group, in batch order', [readable(hint('a', '2'), 'm1'), readable(hint('a', '1'), 'm2')], [['m1', 'm2']]],
    ['one name in two namespaces: two objects', [readable(hint('a', '1', 'ns1'), 'm1'), readable(hint('a', '1', 'ns2'), 'm2')], [['m1'], ['m2']]],
    ['namespaces and names that run together alike: two objects', [readable(hint('sa', '1', 'n'), 'm1'), readable(hint('a', '1', 'ns'), 'm2')], [['m1'], ['m2']]],
    ['two records that are not hints: each alone', [unreadable('m1'), unreadable('m2')], [['m1'], ['m2']]],
  ])('%s', (_name, entries, groups) => {
    expect(groupByObject(entries).map((group) => group.map((entry) => entry.record.messageId))).toEqual(groups);
  });
});

describe('Function: createHintHandler, a held lease on SQS', () => {
  const sqs = mockClient(SQSClient);
  const QUEUE_URL = 'https://sqs.eu-west-1.amazonaws.com/123456789012/svc-dev-PinHintQueue';
  const deployed = { ...app, config: { mode: 'deployed', hintQueueUrl: QUEUE_URL } } as unknown as AppContext;
  const NOW = Date.parse('2026-01-01T00:00:00Z');

  function heldLeaseHandler(appContext: AppContext = deployed) {
    return createHintHandler(
      async () => {
        throw new LeaseBusyError('k', 4_200);
      },
      { serviceName: 'test', context: () => appContext, random: () => 0, clock: { now: () => NOW } },
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
    // Prepare: the hint was put back 7 times, the first 10 minutes ago. The attribute names
    // are spelled out: copies already on a queue are read by the next release.
    sqs.on(SendMessageCommand).resolves({ MessageId: 'copy-8' });
    const since = NOW - 600_000;
    const { batch } = recordOf({ LeaseBusyRequeues: '7', LeaseBusySince: String(since) });
    // Act
    const response = await heldLeaseHandler()(batch, context);
    // Assess
    expect(response).toEqual({ batchItemFailures: [] });
    expect(sqs).toReceiveCommandWith(SendMessageCommand, {
      MessageAttributes: {
        LeaseBusyRequeues: { DataType: 'Number', StringValue: '8' },
        LeaseBusySince: { DataType: 'Number', StringValue: String(since) },
      },
    });
  });

  it.each<[string, AppContext, string]>([
    ['the queue URL the function was given for its own queue', { ...app, config: { mode: 'deployed', hintQueueUrl: 'https://eu-west-1.queue.amazonaws.com/123456789012/svc-dev-PinHintQueue' } } as unknown as AppContext, 'https://eu-west-1.queue.amazonaws.com/123456789012/svc-dev-PinHintQueue'],
    ['the local bus that SQS_ENDPOINT names', { ...app, config: { mode: 'local', sqsEndpoint: 'http://127.0.0.1:9324' } } as unknown as AppContext, 'http://127.0.0.1:9324/123456789012/svc-dev-PinHintQueue'],
  ])('sends the copy to %s', async (_name, appContext, queueUrl) => {
    // Prepare
    sqs.on(SendMessageCommand).resolves({ MessageId: 'copy-1' });
    const { batch } = recordOf();
    // Act
    const response = await heldLeaseHandler(appContext)(batch, context);
    // Assess
    expect(response).toEqual({ batchItemFailures: [] });
    expect(sqs).toReceiveCommandTimes(SendMessageCommand, 1);
    expect(sqs).toReceiveCommandWith(SendMessageCommand, { QueueUrl: queueUrl });
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

  it.each<[string, Record<string, string>, { leaseBusyRequeues: number; leaseBusySince: string }]>([
    [
      'an hour after it first met a held lease',
      { [LEASE_BUSY_REQUEUES_ATTRIBUTE]: '150', [LEASE_BUSY_SINCE_ATTRIBUTE]: String(NOW - LEASE_BUSY_MAX_WAIT_MS) },
      { leaseBusyRequeues: 150, leaseBusySince: '2025-12-31T23:00:00.000Z' },
    ],
    [
      'after the most re-queues',
      { [LEASE_BUSY_REQUEUES_ATTRIBUTE]: String(LEASE_BUSY_MAX_REQUEUES), [LEASE_BUSY_SINCE_ATTRIBUTE]: String(NOW - 60_000) },
      { leaseBusyRequeues: LEASE_BUSY_MAX_REQUEUES, leaseBusySince: '2025-12-31T23:59:00.000Z' },
    ],
    // Garbled bookkeeping reads as both bounds reached.
    ['with bookkeeping that is not a number', { [LEASE_BUSY_REQUEUES_ATTRIBUTE]: 'many' }, { leaseBusyRequeues: LEASE_BUSY_MAX_REQUEUES, leaseBusySince: '2025-12-31T23:00:00.000Z' }],
  ])('%s: sends nothing, logs its bookkeeping, and takes the ordinary path (redelivery, then the dead-letter queue)', async (_name, attributes, bookkeeping) => {
    // Prepare
    sqs.on(SendMessageCommand).resolves({ MessageId: 'never' });
    const { batch, record } = recordOf(attributes);
    // Act
    const { result, logs } = await captured(() => heldLeaseHandler()(batch, context));
    // Assess
    expect(sqs).toReceiveCommandTimes(SendMessageCommand, 0);
    expect(result).toEqual({ batchItemFailures: [{ itemIdentifier: record.messageId }] });
    expect(logs).toMatchObject([
      { level: 'WARN', message: "lease held for too long: the hint is left to its queue's redelivery", ...bookkeeping },
      { level: 'WARN', message: 'retrying later' },
    ]);
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
    ['an empty count', { [count]: '', [since]: String(now) }, false],
    ['a time of 15 digits (leading zeros)', { [count]: '1', [since]: String(now).padStart(15, '0') }, true],
    ['a time of 16 digits', { [count]: '1', [since]: String(now).padStart(16, '0') }, false],
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
