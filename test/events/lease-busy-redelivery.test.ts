/**
 * A hint that finds its object's lease held comes back after about the lease's remaining
 * time, not after its queue's visibility timeout, and is not dead-lettered for waiting: the
 * hint handler sends a copy of it back to its queue with SQS SendMessage (here the local
 * bus, over HTTP, through the same adapter and SDK client as in AWS), delayed, and
 * acknowledges the original. Through DynamoDB Local: the lease refusal itself says how long
 * the other holder's lease runs.
 */
import { fileURLToPath } from 'node:url';
import { EventBridgeClient, PutEventsCommand } from '@aws-sdk/client-eventbridge';
import type { Context, SQSEvent } from 'aws-lambda';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureTable, startDynamoDbLocal } from '../../local/dynamodb-local';
import type { DynamoDbLocal } from '../../local/dynamodb-local';
import { isSqsEvent, startLocalBus } from '../../local/bus/index.js';
import type { LocalBus } from '../../local/bus/index.js';
import { createDynamoClient, createDynamoStores } from '../../shared/adapters/dynamodb';
import { HintRequeueError, createSqsHintRequeue } from '../../shared/adapters/sqs/hint-requeue';
import type { AppContext } from '../../shared/app/context';
import { LEASE_BUSY_MAX_WAIT_MS, LEASE_BUSY_REQUEUES_ATTRIBUTE, createHintHandler } from '../../shared/app/hint-handler';
import type { HintUseCase } from '../../shared/app/hint-handler';
import { objectLeaseKey, reconcileUnderLease } from '../../shared/use-cases/reconcile-under-lease';
import { UnavailableError } from '../../shared/domain/errors';
import { toHintEvent } from '../../shared/domain/hint-event';
import type { EventBridgeEnvelope, HintDetail } from '../../shared/domain/hint-event';
import { systemClock } from '../../shared/ports/clock';
import type { ClusterClient } from '../../shared/ports/cluster';
import type { Stores } from '../../shared/ports/store';

const serverlessYmlPath = fileURLToPath(new URL('../../serverless.yml', import.meta.url));
const BUS = 'ome-pinning-dev-bus';
const TABLE = 'lease-busy-redelivery';
/** pin's 180 s visibility timeout becomes 1.8 s; a second of lease, 10 ms. */
const TIME_SCALE = 0.01;
/** For the long waits: drift-check's 720 s visibility timeout becomes 0.144 s, a 31 s delay 6 ms. */
const LONG_WAIT_TIME_SCALE = 0.0002;
/** The other worker's lease, in real time (leases are not scaled). */
const HELD_FOR_MS = 5_000;

let local: DynamoDbLocal;
let dynamo: ReturnType<typeof createDynamoClient>;
let stores: Stores;
let bus: LocalBus;
let fastBus: LocalBus;
const savedEnv = { ...process.env };

beforeAll(async () => {
  // The adapter signs with the default credential chain; the local services take any key.
  Object.assign(process.env, { AWS_ACCESS_KEY_ID: 'local', AWS_SECRET_ACCESS_KEY: 'local', POWERTOOLS_LOG_LEVEL: 'SILENT', POWERTOOLS_METRICS_DISABLED: 'true' });
  local = await startDynamoDbLocal();
  dynamo = createDynamoClient({ endpoint: local.endpoint, region: 'us-east-1' });
  await ensureTable(dynamo, TABLE);
  stores = createDynamoStores(dynamo, { tableName: TABLE });
  bus = await startLocalBus({ serverlessYmlPath, schedules: false, timeScale: TIME_SCALE });
  fastBus = await startLocalBus({ serverlessYmlPath, schedules: false, timeScale: LONG_WAIT_TIME_SCALE });
}, 120_000);

afterAll(async () => {
  await bus?.stop();
  await fastBus?.stop();
  dynamo?.destroy();
  await local?.stop();
  process.env = savedEnv;
});

function hintName(event: SQSEvent, index: number): string {
  return (JSON.parse(event.Records[index]?.body ?? '{}') as EventBridgeEnvelope<HintDetail>).detail.name;
}

describe('A hint whose lease is held', () => {
  it('is put back for about the lease\'s remaining time, comes back before a hint that waits for the visibility timeout, and takes effect once', async () => {
    // Prepare: another worker holds `busy`'s lease; `control` fails once with a plain retryable error.
    const busyKey = objectLeaseKey('c1', 'InferenceService', 'ns', 'busy');
    const other = await stores.leases.acquire(busyKey, 'other-worker', HELD_FOR_MS);
    expect(other).toBeDefined();
    const app = { config: { sqsEndpoint: bus.endpoint }, cluster: async (id: string) => ({ id, client: {} as ClusterClient, omeNamespace: 'ome' }) } as unknown as AppContext;
    const effects: string[] = [];
    let controlFailed = false;
    const handler = createHintHandler(
      async ({ hint, requestId }) => {
        if (hint.name === 'control' && !controlFailed) {
          controlFailed = true;
          throw new UnavailableError('cluster unreachable');
        }
        await reconcileUnderLease(
          { leases: stores.leases, clock: systemClock, holder: requestId, leaseTtlMs: 30_000, maxConflictRetries: 1, leaseWaitMs: 100 },
          objectLeaseKey(hint.clusterId, hint.kind, hint.namespace, hint.name),
          async () => {
            effects.push(hint.name);
          },
        );
      },
      { serviceName: 'pin', context: () => app, random: () => 0 },
    );
    const receives: Array<{ name: string; count: number; requeues: string | undefined; at: number }> = [];
    bus.registerTarget('pin', async (event, context) => {
      if (!isSqsEvent(event)) return undefined;
      const at = Date.now();
      event.Records.forEach((record, index) =>
        receives.push({ name: hintName(event, index), count: Number(record.attributes.ApproximateReceiveCount), requeues: record.messageAttributes[LEASE_BUSY_REQUEUES_ATTRIBUTE]?.stringValue, at }),
      );
      const response = await handler(event, context as Context);
      // The other worker finishes after the first refusal and gives its lease back.
      if (other && receives.some((receive) => receive.name === 'busy')) await stores.leases.release(other);
      return response;
    });
    const client = new EventBridgeClient({ endpoint: bus.endpoint, region: bus.region, credentials: { accessKeyId: 'local', secretAccessKey: 'local' } });
    const isvc = (name: string) => toHintEvent('c1', 'MODIFIED', { apiVersion: 'ome.io/v1beta1', kind: 'InferenceService', metadata: { name, namespace: 'ns', uid: `uid-${name}`, resourceVersion: '1' } });
    // Act
    await client.send(new PutEventsCommand({ Entries: [isvc('busy'), isvc('control')].map((event) => ({ EventBusName: BUS, Source: event.source, DetailType: event.detailType, Detail: JSON.stringify(event.detail) })) }));
    await bus.drain();
    client.destroy();
    // Assess: each took effect once; `busy` came back as a new message (first receive, put
    // back once) after at least a (scaled) second and before `control`, whose original
    // waited for the visibility timeout.
    expect(effects.sort()).toEqual(['busy', 'control']);
    const of = (name: string) => receives.filter((receive) => receive.name === name);
    expect(of('busy').map((receive) => [receive.count, receive.requeues])).toEqual([
      [1, undefined],
      [1, '1'],
    ]);
    expect(of('control').map((receive) => receive.count)).toEqual([1, 2]);
    const [busyFirst, busyAgain] = of('busy');
    const [, controlAgain] = of('control');
    expect((busyAgain?.at ?? 0) - (busyFirst?.at ?? 0)).toBeGreaterThanOrEqual(1_000 * TIME_SCALE);
    expect(busyAgain?.at ?? Infinity).toBeLessThan(controlAgain?.at ?? 0);
    expect(bus.deadLetters).toEqual([]);
  }, 60_000);

  it('waits for a holder that keeps its lease longer than maxReceiveCount receives would last, and takes effect once the lease is released', async () => {
    // Prepare: another worker holds `held-long`'s lease (its refusal says about 30 s more);
    // it gives the lease back only once the hint has been put back three times the queue's
    // maxReceiveCount, which the old redelivery would have dead-lettered on the way.
    const queue = fastBus.queues.find((candidate) => candidate.functionName === 'drift-check');
    const maxReceiveCount = queue?.maxReceiveCount ?? 0;
    expect(maxReceiveCount).toBeGreaterThan(0);
    const name = 'held-long';
    const key = objectLeaseKey('c1', 'ControllerRevision', 'ome', name);
    const other = await stores.leases.acquire(key, 'long-holder', 30_000);
    expect(other).toBeDefined();
    const effects: string[] = [];
    const handler = createHintHandler(leaseTakingUseCase(effects), { serviceName: 'drift-check', context: () => appOn(fastBus), random: () => 0 });
    const receives: Array<{ count: number; requeues: string | undefined }> = [];
    let released = false;
    fastBus.registerTarget('drift-check', async (event, context) => {
      if (!isSqsEvent(event)) return undefined;
      for (const record of event.Records) receives.push({ count: Number(record.attributes.ApproximateReceiveCount), requeues: record.messageAttributes[LEASE_BUSY_REQUEUES_ATTRIBUTE]?.stringValue });
      const response = await handler(event, context as Context);
      if (!released && other && receives.length >= 3 * maxReceiveCount) {
        released = true;
        await stores.leases.release(other);
      }
      return response;
    });
    // Act
    await publish(fastBus, [controllerRevisionDeleted(name)]);
    await fastBus.drain();
    // Assess: never dead-lettered; every receive the first of its message, each copy
    // counting one more re-queue; the hint took effect once, on the receive after the release.
    expect(fastBus.deadLetters).toEqual([]);
    expect(effects).toEqual([name]);
    expect(receives.length).toBe(3 * maxReceiveCount + 1);
    expect(receives.every((receive) => receive.count === 1)).toBe(true);
    expect(receives.map((receive) => receive.requeues)).toEqual([undefined, ...Array.from({ length: 3 * maxReceiveCount }, (_, index) => String(index + 1))]);
  }, 60_000);

  it('takes the ordinary path once it has waited an hour: redelivered and then dead-lettered, bookkeeping included', async () => {
    // Prepare: the lease is never released; the handler's clock jumps an hour after the
    // hint was first put back.
    const queue = fastBus.queues.find((candidate) => candidate.functionName === 'drift-check');
    const maxReceiveCount = queue?.maxReceiveCount ?? 0;
    const name = 'held-for-ever';
    const other = await stores.leases.acquire(objectLeaseKey('c1', 'ControllerRevision', 'ome', name), 'stuck-holder', 60_000);
    expect(other).toBeDefined();
    let offset = 0;
    const handler = createHintHandler(leaseTakingUseCase([]), { serviceName: 'drift-check', context: () => appOn(fastBus), random: () => 0, clock: { now: () => Date.now() + offset } });
    const receives: Array<{ count: number; requeues: string | undefined }> = [];
    fastBus.registerTarget('drift-check', async (event, context) => {
      if (!isSqsEvent(event)) return undefined;
      for (const record of event.Records) receives.push({ count: Number(record.attributes.ApproximateReceiveCount), requeues: record.messageAttributes[LEASE_BUSY_REQUEUES_ATTRIBUTE]?.stringValue });
      if (receives.length === 3) offset = LEASE_BUSY_MAX_WAIT_MS;
      return handler(event, context as Context);
    });
    // Act
    await publish(fastBus, [controllerRevisionDeleted(name)]);
    await fastBus.drain();
    if (other) await stores.leases.release(other);
    // Assess: put back twice, then the third copy was received maxReceiveCount times and
    // dead-lettered, carrying how many times it had been put back.
    expect(receives.map((receive) => [receive.count, receive.requeues])).toEqual([
      [1, undefined],
      [1, '1'],
      ...Array.from({ length: maxReceiveCount }, (_, index) => [index + 1, '2']),
    ]);
    expect(fastBus.deadLetters.map((letter) => [letter.functionName, letter.reason, letter.attempts])).toEqual([['drift-check', 'MaxReceiveCountExceeded', maxReceiveCount]]);
  }, 60_000);

  it('is refused by the bus as SQS refuses it: a queue that does not exist', async () => {
    // Prepare
    const requeue = createSqsHintRequeue({ endpoint: bus.endpoint });
    // Act
    const refused = requeue({ queueArn: 'arn:aws:sqs:us-east-1:000000000000:NoSuchHintQueue', body: '{}', delaySeconds: 5, attributes: {} });
    // Assess
    await expect(refused).rejects.toThrow(HintRequeueError);
    await expect(refused).rejects.toThrow(/QueueDoesNotExist/);
  });
});

/** The app context of a function behind `target`'s bus: SendMessage goes to the bus's endpoint. */
function appOn(target: LocalBus): AppContext {
  return { config: { sqsEndpoint: target.endpoint }, cluster: async (id: string) => ({ id, client: {} as ClusterClient, omeNamespace: 'ome' }) } as unknown as AppContext;
}

/** Takes the hint's object lease (waiting 50 ms at most) and records the hint's name under it. */
function leaseTakingUseCase(effects: string[]): HintUseCase<void> {
  return async ({ hint, requestId }) => {
    await reconcileUnderLease(
      { leases: stores.leases, clock: systemClock, holder: requestId, leaseTtlMs: 30_000, maxConflictRetries: 1, leaseWaitMs: 50 },
      objectLeaseKey(hint.clusterId, hint.kind, hint.namespace, hint.name),
      async () => {
        effects.push(hint.name);
      },
    );
  };
}

function controllerRevisionDeleted(name: string) {
  return toHintEvent('c1', 'DELETED', { apiVersion: 'apps/v1', kind: 'ControllerRevision', metadata: { name, namespace: 'ome', uid: `uid-${name}`, resourceVersion: '1' } });
}

async function publish(target: LocalBus, events: ReturnType<typeof toHintEvent>[]): Promise<void> {
  const client = new EventBridgeClient({ endpoint: target.endpoint, region: target.region, credentials: { accessKeyId: 'local', secretAccessKey: 'local' } });
  await client.send(new PutEventsCommand({ Entries: events.map((event) => ({ EventBusName: BUS, Source: event.source, DetailType: event.detailType, Detail: JSON.stringify(event.detail) })) }));
  client.destroy();
}
