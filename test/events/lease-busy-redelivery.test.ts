/**
 * A hint that finds its object's lease held comes back after about the lease's remaining
 * time, not after its queue's visibility timeout: the hint handler calls SQS
 * ChangeMessageVisibility (here the local bus, over HTTP, through the same adapter as in
 * AWS) before reporting the hint in batchItemFailures. Through DynamoDB Local: the lease
 * refusal itself says how long the other holder's lease runs.
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
import { ChangeVisibilityError, createSqsMessageVisibility } from '../../shared/adapters/sqs/message-visibility';
import type { AppContext } from '../../shared/app/context';
import { createHintHandler } from '../../shared/app/hint-handler';
import { objectLeaseKey, reconcileUnderLease } from '../../shared/app/reconcile';
import { UnavailableError } from '../../shared/errors';
import { toHintEvent } from '../../shared/events/hint-event';
import type { EventBridgeEnvelope, HintDetail } from '../../shared/events/hint-event';
import { systemClock } from '../../shared/ports/clock';
import type { ClusterClient } from '../../shared/ports/cluster';
import type { Stores } from '../../shared/ports/store';

const serverlessYmlPath = fileURLToPath(new URL('../../serverless.yml', import.meta.url));
const BUS = 'ome-pinning-dev-bus';
const TABLE = 'lease-busy-redelivery';
/** pin's 180 s visibility timeout becomes 1.8 s; a second of lease, 10 ms. */
const TIME_SCALE = 0.01;
/** The other worker's lease, in real time (leases are not scaled). */
const HELD_FOR_MS = 5_000;

let local: DynamoDbLocal;
let dynamo: ReturnType<typeof createDynamoClient>;
let stores: Stores;
let bus: LocalBus;
const savedEnv = { ...process.env };

beforeAll(async () => {
  // The adapter signs with the default credential chain; the local services take any key.
  Object.assign(process.env, { AWS_ACCESS_KEY_ID: 'local', AWS_SECRET_ACCESS_KEY: 'local', POWERTOOLS_LOG_LEVEL: 'SILENT', POWERTOOLS_METRICS_DISABLED: 'true' });
  local = await startDynamoDbLocal();
  dynamo = createDynamoClient({ endpoint: local.endpoint, region: 'us-east-1' });
  await ensureTable(dynamo, TABLE);
  stores = createDynamoStores(dynamo, { tableName: TABLE });
  bus = await startLocalBus({ serverlessYmlPath, schedules: false, timeScale: TIME_SCALE });
}, 120_000);

afterAll(async () => {
  await bus?.stop();
  dynamo?.destroy();
  await local?.stop();
  process.env = savedEnv;
});

function hintName(event: SQSEvent, index: number): string {
  return (JSON.parse(event.Records[index]?.body ?? '{}') as EventBridgeEnvelope<HintDetail>).detail.name;
}

describe('A hint whose lease is held', () => {
  it('is redelivered after about the lease\'s remaining time, before a hint that waits for the visibility timeout, and takes effect once', async () => {
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
    const receives: Array<{ name: string; count: number; at: number }> = [];
    bus.registerTarget('pin', async (event, context) => {
      if (!isSqsEvent(event)) return undefined;
      const at = Date.now();
      event.Records.forEach((record, index) => receives.push({ name: hintName(event, index), count: Number(record.attributes.ApproximateReceiveCount), at }));
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
    // Assess: each took effect once, each on its second receive; `busy` came back after at
    // least a (scaled) second and before `control`, which waited for the visibility timeout.
    expect(effects.sort()).toEqual(['busy', 'control']);
    const of = (name: string) => receives.filter((receive) => receive.name === name);
    expect(of('busy').map((receive) => receive.count)).toEqual([1, 2]);
    expect(of('control').map((receive) => receive.count)).toEqual([1, 2]);
    const [busyFirst, busyAgain] = of('busy');
    const [, controlAgain] = of('control');
    expect((busyAgain?.at ?? 0) - (busyFirst?.at ?? 0)).toBeGreaterThanOrEqual(1_000 * TIME_SCALE);
    expect(busyAgain?.at ?? Infinity).toBeLessThan(controlAgain?.at ?? 0);
    expect(bus.deadLetters).toEqual([]);
  }, 60_000);

  it('is refused by the bus as SQS refuses it: a receipt handle of no received message', async () => {
    // Prepare
    const queue = bus.queues.find((candidate) => candidate.functionName === 'pin');
    const changeVisibility = createSqsMessageVisibility({ endpoint: bus.endpoint, credentials: { accessKeyId: 'local', secretAccessKey: 'local' } });
    // Act
    const refused = changeVisibility({ queueArn: `arn:aws:sqs:us-east-1:000000000000:${queue?.name}`, receiptHandle: 'no-such-message#1' }, 5);
    // Assess
    await expect(refused).rejects.toThrow(ChangeVisibilityError);
    await expect(refused).rejects.toThrow(/ReceiptHandleIsInvalid/);
  });
});
