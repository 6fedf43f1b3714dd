/**
 * The forwarder against the embedded API server over HTTP, DynamoDB Local for its lease
 * and checkpoints, and the real EventBridge publisher sending to the local bus. Each test
 * checks that no change is lost and no object version is forwarded twice.
 */
import { fileURLToPath } from 'node:url';
import { EventBridgeClient } from '@aws-sdk/client-eventbridge';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEventPublisher } from '../../shared/adapters/eventbridge/publisher';
import { runForwarder, runForwarderFor } from '../../shared/forwarder';
import type { ForwarderStats } from '../../shared/forwarder';
import { Resources } from '../../shared/model/resources';
import type { KubeObject } from '../../shared/ports/cluster';
import type { EventPublisher } from '../../shared/ports/event-publisher';
import type { Stores } from '../../shared/ports/store';
import { startLocalBus } from '../../local/bus';
import type { LocalBus } from '../../local/bus';
import {
  Freezer,
  RecordingPublisher,
  createNamespace,
  eventually,
  expectAllForwarded,
  expectNoDuplicates,
  inferenceService,
  servingRuntime,
  startForwarderWorld,
  testLogger,
  versionKey,
} from './support';
import type { ForwarderWorld } from './support';

const serverlessYmlPath = fileURLToPath(new URL('../../serverless.yml', import.meta.url));
const BUS = 'ome-pinning-dev-bus';
const LEASE_TTL_MS = 900;

let world: ForwarderWorld;
let bus: LocalBus;
let eventBridge: EventBridgeClient;
let busPublisher: EventPublisher;

beforeAll(async () => {
  [world, bus] = await Promise.all([
    startForwarderWorld({ watchWindow: 40 }),
    startLocalBus({ serverlessYmlPath, schedules: false, retryBaseDelayMs: 1, retryMaxDelayMs: 2 }),
  ]);
  eventBridge = new EventBridgeClient({ endpoint: bus.endpoint, region: bus.region, credentials: { accessKeyId: 'local', secretAccessKey: 'local' } });
  busPublisher = createEventPublisher({ client: eventBridge, busName: BUS, baseDelayMs: 5 });
});

afterAll(async () => {
  eventBridge?.destroy();
  await Promise.all([bus?.stop(), world?.stop()]);
});

interface Running {
  publisher: RecordingPublisher;
  freezer: Freezer;
  /** Stops it gracefully: flush, checkpoint, release. */
  stop(): Promise<ForwarderStats>;
  done: Promise<ForwarderStats>;
}

function startForwarder(stores: Stores, clusterId: string, holderId: string): Running {
  const publisher = new RecordingPublisher(busPublisher);
  const freezer = new Freezer();
  const controller = new AbortController();
  const done = runForwarder({
    clusterId,
    cluster: freezer.cluster(world.client),
    publisher: freezer.publisher(publisher),
    leases: freezer.leases(stores.leases),
    checkpoints: freezer.checkpoints(stores.checkpoints),
    omeNamespace: 'ome',
    holderId,
    leaseTtlMs: LEASE_TTL_MS,
    lingerMs: 20,
    checkpointIntervalMs: 50,
    retryBaseDelayMs: 50,
    retryMaxDelayMs: 300,
    logger: testLogger,
    signal: controller.signal,
  });
  return {
    publisher,
    freezer,
    done,
    stop: async () => {
      controller.abort();
      return done;
    },
  };
}

const isvcs = Resources.inferenceServices;
const rvOf = (object: KubeObject): { uid: string; resourceVersion: string } => ({ uid: object.metadata.uid ?? '', resourceVersion: object.metadata.resourceVersion ?? '' });

async function annotate(namespace: string, name: string, key: string, value: string): Promise<KubeObject> {
  return world.client.patch(isvcs, namespace, name, { metadata: { annotations: { [key]: value } } }, { type: 'merge' });
}

/** Waits until the checkpoint of a stream has reached at least `resourceVersion`. */
async function checkpointReaches(stores: Stores, clusterId: string, stream: string, resourceVersion: string): Promise<void> {
  await eventually(async () => {
    const saved = await stores.checkpoints.loadCheckpoint(clusterId, stream);
    expect(Number(saved ?? 0)).toBeGreaterThanOrEqual(Number(resourceVersion));
  });
}

describe('watch forwarder: recovery', () => {
  it('forwards each change once, and a status-only write by a function produces no event', async () => {
    const ns = 'fwd-loop';
    await createNamespace(world.client, ns);
    await world.client.create(Resources.servingRuntimes, servingRuntime(ns, 'sglang'));
    const created = await world.client.create(isvcs, inferenceService(ns, 'llama'));
    const stores = await world.newStores();
    const forwarder = startForwarder(stores, 'loop', 'a');

    await eventually(() => expect(forwarder.publisher.inNamespace(ns).map((d) => d.change)).toEqual(['relisted', 'relisted']));
    const requested = await annotate(ns, 'llama', 'ome.io/runtime-sync', 'token-1');
    await eventually(() => expect(forwarder.publisher.inNamespace(ns)).toHaveLength(3));
    // What a function writes back: status, and the GC mark. Neither is new work.
    const current = await world.client.get<KubeObject>(isvcs, ns, 'llama');
    const statusWrite = await world.client.replaceStatus(isvcs, { ...current, status: { pinnedRevisionName: 'r-fwd-loop-sglang-12345678' } });
    const marked = await annotate(ns, 'llama', 'ome.io/gc-eligible-since', '2026-01-01T00:00:00Z');
    const edited = await world.client.patch(isvcs, ns, 'llama', { spec: { engine: { minReplicas: 2, maxReplicas: 2 } } }, { type: 'merge' });
    await eventually(() => expect(forwarder.publisher.inNamespace(ns)).toHaveLength(4));
    const stats = await forwarder.stop();

    const hints = forwarder.publisher.inNamespace(ns);
    expectNoDuplicates(hints);
    expectAllForwarded(hints, [rvOf(created), rvOf(requested), rvOf(edited)]);
    const forwarded = new Set(hints.map(versionKey));
    expect(forwarded.has(versionKey(rvOf(statusWrite)))).toBe(false);
    expect(forwarded.has(versionKey(rvOf(marked)))).toBe(false);
    expect(hints.find((d) => d.resourceVersion === requested.metadata.resourceVersion)?.changed).toMatchObject({ runtimeSync: true, spec: false });
    expect(hints.at(-1)?.changed).toMatchObject({ spec: true, runtimeSync: false });
    expect(stats.dropped).toBeGreaterThanOrEqual(2);
    expect(stats).toMatchObject({ leaseAcquired: true, failed: 0, leaseLosses: 0 });
  });
});
