/**
 * Publish faults: the real EventBridge publisher over a mocked client (per-entry control
 * of what PutEvents accepts), the embedded API server over HTTP and DynamoDB Local. Each
 * test checks nothing is lost, nothing is accepted twice, and the checkpoint never passes
 * a hint that was not accepted or deliberately skipped.
 */
import { EventBridgeClient, PutEventsCommand } from '@aws-sdk/client-eventbridge';
import type { PutEventsCommandInput, PutEventsCommandOutput } from '@aws-sdk/client-eventbridge';
import { mockClient } from 'aws-sdk-client-mock';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createEventPublisher } from '../../shared/adapters/eventbridge/publisher';
import type { HintDetail, HintEvent } from '../../shared/domain/hint-event';
import { runForwarder, listWatchedResources } from '../../shared/use-cases/forwarder';
import type { ForwarderStats } from '../../shared/use-cases/forwarder';
import { Resources } from '../../shared/domain/model/resources';
import type { KubeObject } from '../../shared/ports/cluster';
import type { EventPublisher } from '../../shared/ports/event-publisher';
import type { Stores } from '../../shared/ports/store';
import { createNamespace, eventually, expectAllForwarded, expectNoDuplicates, inferenceService, startForwarderWorld, testLogger } from './support';
import type { ForwarderWorld } from './support';

const eventBridge = mockClient(EventBridgeClient);
const isvcs = Resources.inferenceServices;
/** Only the InferenceService stream, in the test's namespace: a relist of ten objects is exactly one batch. */
const inferenceServicesIn = (namespace: string) =>
  listWatchedResources('ome')
    .filter((resource) => resource.type === isvcs)
    .map((resource) => ({ ...resource, namespace }));

let world: ForwarderWorld;

beforeAll(async () => {
  world = await startForwarderWorld();
});
afterAll(async () => world?.stop());
beforeEach(() => eventBridge.reset());

/** Every PutEvents call the mock received, as the hint details of its entries. */
function putCalls(): HintDetail[][] {
  return eventBridge.commandCalls(PutEventsCommand).map((call) => (call.args[0].input.Entries ?? []).map((entry) => JSON.parse(entry.Detail ?? '{}') as HintDetail));
}

function accept(input: PutEventsCommandInput, failing: (index: number) => boolean = () => false): PutEventsCommandOutput {
  const entries = (input.Entries ?? []).map((_entry, index) =>
    failing(index) ? { ErrorCode: 'InternalFailure', ErrorMessage: 'try again' } : { EventId: `id-${Math.random()}` },
  );
  return { FailedEntryCount: entries.filter((entry) => entry.ErrorCode).length, Entries: entries, $metadata: {} };
}

/** Hints EventBridge accepted, across all calls. */
function acceptedHints(outputs: Array<{ input: HintDetail[]; output: PutEventsCommandOutput }>): HintDetail[] {
  return outputs.flatMap(({ input, output }) => input.filter((_detail, index) => !output.Entries?.[index]?.ErrorCode));
}

async function prepare(ns: string, count: number): Promise<KubeObject[]> {
  await createNamespace(world.client, ns);
  const created: KubeObject[] = [];
  for (let i = 0; i < count; i += 1) created.push(await world.client.create(isvcs, inferenceService(ns, `isvc-${i}`)));
  return created;
}

function start(stores: Stores, clusterId: string, namespace: string, publisher: EventPublisher): { stop(): Promise<ForwarderStats> } {
  const controller = new AbortController();
  const done = runForwarder({
    clusterId,
    cluster: world.client,
    publisher,
    leases: stores.leases,
    checkpoints: stores.checkpoints,
    omeNamespace: 'ome',
    resources: inferenceServicesIn(namespace),
    leaseTtlMs: 5_000,
    lingerMs: 20,
    checkpointIntervalMs: 50,
    retryBaseDelayMs: 20,
    retryMaxDelayMs: 100,
    logger: testLogger,
    signal: controller.signal,
  });
  return {
    stop: async () => {
      controller.abort();
      return done;
    },
  };
}

const realPublisher = (maxAttempts = 5): EventPublisher =>
  createEventPublisher({ client: new EventBridgeClient({ region: 'us-east-1' }), busName: 'bus', maxAttempts, baseDelayMs: 5, maxDelayMs: 20 });

describe('watch forwarder: publish faults', () => {
  it('resends only the 3 of 10 entries that PutEvents failed', async () => {
    const created = await prepare('fwd-partial', 10);
    const calls: Array<{ input: HintDetail[]; output: PutEventsCommandOutput }> = [];
    eventBridge.on(PutEventsCommand).callsFake((input: PutEventsCommandInput) => {
      const output = accept(input, (index) => calls.length === 0 && [1, 4, 8].includes(index));
      calls.push({ input: (input.Entries ?? []).map((entry) => JSON.parse(entry.Detail ?? '{}') as HintDetail), output });
      return output;
    });
    const stores = await world.newStores();
    const forwarder = start(stores, 'partial', 'fwd-partial', realPublisher());
    await eventually(() => expect(acceptedHints(calls)).toHaveLength(10));
    const stats = await forwarder.stop();

    const [first, resend, ...rest] = putCalls();
    expect(first).toHaveLength(10);
    expect(resend?.map((detail) => detail.name)).toEqual([1, 4, 8].map((i) => first?.[i]?.name));
    expect(rest).toEqual([]);
    const accepted = acceptedHints(calls);
    expectNoDuplicates(accepted);
    expectAllForwarded(accepted, created.map((object) => ({ uid: object.metadata.uid ?? '', resourceVersion: object.metadata.resourceVersion ?? '' })));
    expect(stats).toMatchObject({ forwarded: 10, failed: 0, batches: 1, entriesPerBatch: 10 });
  });

  it('backs off while PutEvents is throttled and holds the checkpoint until the hints are accepted', async () => {
    const created = await prepare('fwd-throttled', 4);
    let throttled = true;
    const calls: Array<{ input: HintDetail[]; output: PutEventsCommandOutput }> = [];
    eventBridge.on(PutEventsCommand).callsFake((input: PutEventsCommandInput) => {
      if (throttled) throw Object.assign(new Error('Rate exceeded'), { name: 'ThrottlingException' });
      const output = accept(input);
      calls.push({ input: (input.Entries ?? []).map((entry) => JSON.parse(entry.Detail ?? '{}') as HintDetail), output });
      return output;
    });
    const stores = await world.newStores();
    // One attempt per publish: the forwarder's own backoff does the resending.
    const forwarder = start(stores, 'throttled', 'fwd-throttled', realPublisher(1));
    // Six refused attempts span several backoffs (20-100 ms) and checkpoint intervals
    // (50 ms): the forwarder has been running, so a missing checkpoint means held back.
    await eventually(() => expect(eventBridge.commandCalls(PutEventsCommand).length).toBeGreaterThanOrEqual(6));
    expect((await stores.checkpoints.loadCheckpoints('throttled')).inferenceservices).toBeUndefined();
    throttled = false;
    await eventually(() => expect(acceptedHints(calls)).toHaveLength(4));
    const lastAccepted = Math.max(...acceptedHints(calls).map((detail) => Number(detail.resourceVersion)));
    await eventually(async () =>
      expect(Number((await stores.checkpoints.loadCheckpoints('throttled')).inferenceservices)).toBeGreaterThanOrEqual(lastAccepted),
    );
    const stats = await forwarder.stop();

    const accepted = acceptedHints(calls);
    expectNoDuplicates(accepted);
    expectAllForwarded(accepted, created.map((object) => ({ uid: object.metadata.uid ?? '', resourceVersion: object.metadata.resourceVersion ?? '' })));
    expect(stats.retries).toBeGreaterThanOrEqual(8);
    expect(stats).toMatchObject({ forwarded: 4, failed: 0 });
  });

  it('skips an oversized entry without blocking the rest or the checkpoint', async () => {
    const created = await prepare('fwd-oversized', 3);
    eventBridge.on(PutEventsCommand).callsFake((input: PutEventsCommandInput) => accept(input));
    const real = realPublisher();
    // A hint can only outgrow PutEvents' 256 KB if it carried more than identity: make one do so.
    const inflating: EventPublisher = {
      publish: (events) =>
        real.publish(events.map((event): HintEvent => (event.detail.name === 'isvc-1' ? { ...event, detail: { ...event.detail, padding: 'x'.repeat(300 * 1024) } as HintDetail } : event))),
    };
    const skipped: HintEvent[] = [];
    const recording: EventPublisher = {
      publish: async (events) => {
        const result = await inflating.publish(events);
        skipped.push(...result.skipped.map((entry) => entry.event));
        // The forwarder settles by identity: hand back its own objects.
        return { ...result, skipped: result.skipped.map((entry) => ({ ...entry, event: events.find((e) => e.detail.uid === entry.event.detail.uid) ?? entry.event })) };
      },
    };
    const stores = await world.newStores();
    const forwarder = start(stores, 'oversized', 'fwd-oversized', recording);
    await eventually(() => expect(putCalls().flat()).toHaveLength(2));
    const later = await world.client.patch(isvcs, 'fwd-oversized', 'isvc-2', { spec: { engine: { minReplicas: 2, maxReplicas: 2 } } }, { type: 'merge' });
    await eventually(() => expect(putCalls().flat()).toHaveLength(3));
    await eventually(async () =>
      expect(Number((await stores.checkpoints.loadCheckpoints('oversized')).inferenceservices)).toBeGreaterThanOrEqual(Number(later.metadata.resourceVersion)),
    );
    const stats = await forwarder.stop();

    const sent = putCalls().flat();
    expectNoDuplicates(sent);
    expect(sent.map((detail) => detail.name)).not.toContain('isvc-1');
    expect(skipped.map((event) => event.detail.name)).toEqual(['isvc-1']);
    const expected = [created[0], created[2], later].map((object) => ({ uid: object?.metadata.uid ?? '', resourceVersion: object?.metadata.resourceVersion ?? '' }));
    expectAllForwarded(sent, expected);
    expect(stats).toMatchObject({ forwarded: 3, skipped: 1, failed: 0 });
  });
});
