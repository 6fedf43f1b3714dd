/**
 * The forwarder against the embedded API server over HTTP, DynamoDB Local for its lease
 * and checkpoints, and the real EventBridge publisher sending to the local bus. Each test
 * checks that no change is lost and no object version is forwarded twice.
 */
import { fileURLToPath } from 'node:url';
import { EventBridgeClient } from '@aws-sdk/client-eventbridge';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEventPublisher } from '../../shared/adapters/eventbridge/publisher';
import { runForwarder, runForwarderFor } from '../../shared/use-cases/forwarder';
import type { ForwarderStats } from '../../shared/use-cases/forwarder';
import { Resources } from '../../shared/domain/model/resources';
import type { KubeObject } from '../../shared/ports/cluster';
import type { EventPublisher } from '../../shared/ports/event-publisher';
import type { LeaseStore, Stores } from '../../shared/ports/store';
import type { Context } from 'aws-lambda';
import { handler } from '../../functions/forward-watch-events/handler';
import { createAppContext, setAppContext } from '../../shared/app/context';
import { loadConfig } from '../../shared/app/config';
import type { HintDetail } from '../../shared/domain/hint-event';
import { eventsOfInvocation, startLocalBus } from '../../local/bus';
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
/** Short, for the tests where a lease must expire; the others use a long one (DynamoDB Local is slow on a busy machine). */
const LEASE_TTL_MS = 1_500;
const RELAXED_LEASE_TTL_MS = 15_000;

let world: ForwarderWorld;
let bus: LocalBus;
let eventBridge: EventBridgeClient;
let busPublisher: EventPublisher;

beforeAll(async () => {
  [world, bus] = await Promise.all([
    startForwarderWorld({ watchWindow: 40 }),
    startLocalBus({ serverlessYmlPath, schedules: false, timeScale: 1e-4 }),
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

function startForwarder(stores: Stores, clusterId: string, holderId: string, leaseTtlMs = RELAXED_LEASE_TTL_MS): Running {
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
    leaseTtlMs,
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

/** A lease store that counts the acquire attempts made through it, granted or refused. */
function observeAcquires(leases: LeaseStore): { store: LeaseStore; acquired: () => number; refused: () => number } {
  let acquired = 0;
  let refused = 0;
  const store: LeaseStore = {
    acquire: async (...args) => {
      const lease = await leases.acquire(...args);
      if (lease) acquired += 1;
      else refused += 1;
      return lease;
    },
    renew: (...args) => leases.renew(...args),
    release: (...args) => leases.release(...args),
  };
  return { store, acquired: () => acquired, refused: () => refused };
}

/** Waits until the checkpoint of a stream has reached at least `resourceVersion`. */
async function checkpointReaches(stores: Stores, clusterId: string, stream: string, resourceVersion: string): Promise<void> {
  await eventually(async () => {
    const saved = (await stores.checkpoints.loadCheckpoints(clusterId))[stream];
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

  it('resumes from the checkpoint after being killed, forwarding exactly what changed while it was dead', async () => {
    const ns = 'fwd-restart';
    await createNamespace(world.client, ns);
    const first = await world.client.create(isvcs, inferenceService(ns, 'one'));
    const stores = await world.newStores();
    const killed = startForwarder(stores, 'restart', 'a', LEASE_TTL_MS);
    await eventually(() => expect(killed.publisher.inNamespace(ns)).toHaveLength(1));
    const edited = await annotate(ns, 'one', 'ome.io/runtime-sync', 'token-1');
    await eventually(() => expect(killed.publisher.inNamespace(ns)).toHaveLength(2));
    await checkpointReaches(stores, 'restart', 'inferenceservices', edited.metadata.resourceVersion ?? '');
    killed.freezer.freeze();

    // While no forwarder runs: a create, an edit and a delete.
    const second = await world.client.create(isvcs, inferenceService(ns, 'two'));
    const editedAgain = await world.client.patch(isvcs, ns, 'one', { spec: { engine: { minReplicas: 3, maxReplicas: 3 } } }, { type: 'merge' });
    await world.client.delete(isvcs, ns, 'two');

    const restarted = startForwarder(stores, 'restart', 'b', LEASE_TTL_MS);
    await eventually(() => expect(restarted.publisher.inNamespace(ns)).toHaveLength(3), 20_000);
    const stats = await restarted.stop();

    const all = [...killed.publisher.inNamespace(ns), ...restarted.publisher.inNamespace(ns)];
    expectNoDuplicates(all);
    expectAllForwarded(all, [rvOf(first), rvOf(edited), rvOf(second), rvOf(editedAgain)]);
    expect(restarted.publisher.inNamespace(ns).map((d) => `${d.name}:${d.change}`)).toEqual(['two:added', 'one:modified', 'two:deleted']);
    expect(stats.relists).toBe(0);
  });

  it('keeps a second forwarder waiting while the first holds the lease, and lets it take over after expiry', async () => {
    const ns = 'fwd-takeover';
    await createNamespace(world.client, ns);
    const stores = await world.newStores();
    const first = startForwarder(stores, 'takeover', 'a', LEASE_TTL_MS);
    const created = await world.client.create(isvcs, inferenceService(ns, 'one'));
    await eventually(() => expect(first.publisher.inNamespace(ns)).toHaveLength(1));
    const standbyLeases = observeAcquires(stores.leases);
    const standby = startForwarder({ ...stores, leases: standbyLeases.store }, 'takeover', 'b', LEASE_TTL_MS);
    const edited = await annotate(ns, 'one', 'ome.io/runtime-sync', 'token-1');
    await eventually(() => expect(first.publisher.inNamespace(ns)).toHaveLength(2));
    // The standby has tried for the lease and been refused twice, once after the edit:
    // it is running, and kept out by the lease, not merely not started yet.
    const refusedBefore = standbyLeases.refused();
    await eventually(() => expect(standbyLeases.refused()).toBeGreaterThanOrEqual(Math.max(2, refusedBefore + 1)), 20_000);
    expect(standbyLeases.acquired()).toBe(0);
    expect(standby.publisher.accepted).toHaveLength(0);

    await checkpointReaches(stores, 'takeover', 'inferenceservices', edited.metadata.resourceVersion ?? '');
    first.freezer.freeze();
    const killedAt = Date.now();
    const later = await world.client.create(isvcs, inferenceService(ns, 'two'));
    await eventually(() => expect(standby.publisher.inNamespace(ns)).toHaveLength(1), 20_000);
    expect(Date.now() - killedAt).toBeGreaterThanOrEqual(LEASE_TTL_MS / 3);
    const stats = await standby.stop();

    const all = [...first.publisher.inNamespace(ns), ...standby.publisher.inNamespace(ns)];
    expectNoDuplicates(all);
    expectAllForwarded(all, [rvOf(created), rvOf(edited), rvOf(later)]);
    expect(stats).toMatchObject({ leaseAcquired: true, relists: 0 });
  });

  it('stops a forwarder whose lease renewals hang once its lease expires, before the standby takes over', async () => {
    const ns = 'fwd-paused';
    await createNamespace(world.client, ns);
    const stores = await world.newStores();
    let release: () => void = () => undefined;
    let paused: Promise<void> | undefined;
    // Renewals that hang, as when the store is unreachable or the process is paused.
    const hangingLeases: LeaseStore = {
      acquire: (...args) => stores.leases.acquire(...args),
      renew: async (...args) => {
        if (paused) await paused;
        return stores.leases.renew(...args);
      },
      release: (...args) => stores.leases.release(...args),
    };
    const first = startForwarder({ ...stores, leases: hangingLeases }, 'paused', 'a', LEASE_TTL_MS);
    const created = await world.client.create(isvcs, inferenceService(ns, 'one'));
    await eventually(() => expect(first.publisher.inNamespace(ns)).toHaveLength(1));
    await checkpointReaches(stores, 'paused', 'inferenceservices', created.metadata.resourceVersion ?? '');
    paused = new Promise((resolve) => (release = resolve));
    const standbyLeases = observeAcquires(stores.leases);
    const standby = startForwarder({ ...stores, leases: standbyLeases.store }, 'paused', 'b', LEASE_TTL_MS);
    await eventually(() => expect(first.publisher.inNamespace(ns).length + standby.publisher.inNamespace(ns).length).toBe(1));
    // Wait for the standby to hold the lease (it can only once the first's has expired,
    // and the first stops at that expiry), then change something: only it may forward that.
    await eventually(() => expect(standbyLeases.acquired()).toBe(1), 20_000);
    const later = await world.client.create(isvcs, inferenceService(ns, 'two'));
    await eventually(() => expect(standby.publisher.inNamespace(ns)).toHaveLength(1), 20_000);
    paused = undefined;
    release();
    const [firstStats, standbyStats] = await Promise.all([first.stop(), standby.stop()]);

    expect(first.publisher.inNamespace(ns).map((d) => d.name)).toEqual(['one']);
    const all = [...first.publisher.inNamespace(ns), ...standby.publisher.inNamespace(ns)];
    expectNoDuplicates(all);
    expectAllForwarded(all, [rvOf(created), rvOf(later)]);
    expect(firstStats.leaseLosses).toBe(1);
    expect(standbyStats).toMatchObject({ leaseAcquired: true, relists: 0 });
  });

  it('forwards readiness changes of the Deployments we render in a rollout group, and nothing of other Deployments', async () => {
    const ns = 'fwd-workload';
    await createNamespace(world.client, ns);
    const stores = await world.newStores();
    const forwarder = startForwarder(stores, 'workload', 'a');
    const deployment = (name: string, labels: Record<string, string>): KubeObject => ({
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name, namespace: ns, labels },
      spec: {
        replicas: 1,
        selector: { matchLabels: { app: name } },
        template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'engine', image: 'lmsysorg/sglang:v0.4' }] } },
      },
    });
    // Once the InferenceService's hint is out, the forwarder is watching.
    await world.client.create(isvcs, inferenceService(ns, 'llama'));
    await eventually(() => expect(forwarder.publisher.inNamespace(ns)).toHaveLength(1));
    await world.client.create(Resources.deployments, deployment('other', { app: 'other' }));
    // Rendered, but its component is in no rollout group: no run waits on it.
    await world.client.create(Resources.deployments, deployment('llama-decoder', { 'ome.io/inferenceservice': 'llama', 'ome.io/component': 'decoder' }));
    const ours = await world.client.create(Resources.deployments, deployment('llama-engine', { 'ome.io/inferenceservice': 'llama', 'ome.io/component': 'engine', 'ome.io/rollout-grouped': 'true' }));
    // The server's workload controller reports the replica ready shortly after: a status-only change.
    await eventually(async () => {
      const current = await world.client.get<KubeObject>(Resources.deployments, ns, 'llama-engine');
      expect((current.status as { readyReplicas?: number } | undefined)?.readyReplicas).toBe(1);
    });
    const deploymentHints = () => forwarder.publisher.inNamespace(ns).filter((d) => d.kind === 'Deployment');
    await eventually(() => expect(deploymentHints().length).toBeGreaterThanOrEqual(2));
    await forwarder.stop();

    const hints = deploymentHints();
    expectNoDuplicates(hints);
    expect(new Set(hints.map((d) => d.name))).toEqual(new Set(['llama-engine']));
    expect(hints[0]).toMatchObject({ uid: ours.metadata.uid, change: 'added' });
    expect(hints.slice(1).every((d) => d.change === 'modified' && !d.changed.spec)).toBe(true);
  });

  it('relists after 410 Gone and forwards what changed or disappeared while the watch was down', async () => {
    const ns = 'fwd-gone';
    await createNamespace(world.client, ns);
    const names = ['steady', 'edited', 'deleted', 'recreated', 'status-only'];
    const before = new Map<string, KubeObject>();
    for (const name of names) before.set(name, await world.client.create(isvcs, inferenceService(ns, name)));
    const stores = await world.newStores();
    const forwarder = startForwarder(stores, 'gone', 'a');
    await eventually(() => expect(forwarder.publisher.inNamespace(ns)).toHaveLength(names.length));

    // Cut the watches and keep the InferenceService watch from coming back while things change.
    world.cluster.faults.inject({ verb: 'watch', resource: 'inferenceservices', count: 1_000, status: 500 });
    world.cluster.faults.closeWatches();
    const edited = await world.client.patch(isvcs, ns, 'edited', { spec: { engine: { minReplicas: 2, maxReplicas: 2 } } }, { type: 'merge' });
    await world.client.delete(isvcs, ns, 'deleted');
    await world.client.delete(isvcs, ns, 'recreated');
    const recreated = await world.client.create(isvcs, inferenceService(ns, 'recreated'));
    const current = await world.client.get<KubeObject>(isvcs, ns, 'status-only');
    const statusWrite = await world.client.replaceStatus(isvcs, { ...current, status: { pinnedRevisionName: 'r-fwd-gone-sglang-12345678' } });
    // Enough other writes (well over the server's window of 40 and its slack) that the watch's resourceVersion falls out of it.
    for (let i = 0; i < 120; i += 1) {
      await world.cluster.client.patch(Resources.namespaces, undefined, ns, { metadata: { labels: { churn: String(i) } } }, { type: 'merge' });
    }
    world.cluster.faults.clear();

    await eventually(() => expect(forwarder.publisher.inNamespace(ns)).toHaveLength(names.length + 4), 20_000);
    const stats = await forwarder.stop();

    const hints = forwarder.publisher.inNamespace(ns);
    expectNoDuplicates(hints);
    const afterGone = hints.slice(names.length).map((d) => `${d.name}:${d.change}`).sort();
    expect(afterGone).toEqual(['deleted:deleted', 'edited:relisted', 'recreated:deleted', 'recreated:relisted']);
    expectAllForwarded(hints, [rvOf(edited), rvOf(recreated)]);
    const gone = hints.filter((d) => d.change === 'deleted').map((d) => d.uid).sort();
    expect(gone).toEqual([before.get('deleted'), before.get('recreated')].map((o) => o?.metadata.uid).sort());
    expect(hints.some((d) => d.resourceVersion === statusWrite.metadata.resourceVersion)).toBe(false);
    // One initial list per watched kind, and at least one more after the 410.
    expect(stats.relists).toBeGreaterThanOrEqual(7);
  });

  it('tells an object deleted and recreated under the same name from the old one by uid', async () => {
    const ns = 'fwd-recreate';
    await createNamespace(world.client, ns);
    const old = await world.client.create(isvcs, inferenceService(ns, 'llama'));
    const stores = await world.newStores();
    const forwarder = startForwarder(stores, 'recreate', 'a');
    await eventually(() => expect(forwarder.publisher.inNamespace(ns)).toHaveLength(1));
    await world.client.delete(isvcs, ns, 'llama');
    const fresh = await world.client.create(isvcs, inferenceService(ns, 'llama'));
    await eventually(() => expect(forwarder.publisher.inNamespace(ns)).toHaveLength(3));
    await forwarder.stop();

    const hints = forwarder.publisher.inNamespace(ns);
    expectNoDuplicates(hints);
    expect(hints.map((d) => [d.uid, d.change])).toEqual([
      [old.metadata.uid, 'relisted'],
      [old.metadata.uid, 'deleted'],
      [fresh.metadata.uid, 'added'],
    ]);
    expect(fresh.metadata.uid).not.toBe(old.metadata.uid);
  });

  it('works for a bounded time, checkpoints, releases the lease, and the next run resumes', async () => {
    const ns = 'fwd-bounded';
    await createNamespace(world.client, ns);
    const created = await world.client.create(isvcs, inferenceService(ns, 'llama'));
    const stores = await world.newStores();
    const publisher = new RecordingPublisher(busPublisher);
    const run = (holderId: string, leases: LeaseStore = stores.leases) =>
      runForwarderFor({
        clusterId: 'bounded',
        cluster: world.client,
        publisher,
        leases,
        checkpoints: stores.checkpoints,
        omeNamespace: 'ome',
        holderId,
        leaseTtlMs: 10_000,
        lingerMs: 20,
        logger: testLogger,
        budgetMs: 1_500,
      });
    const first = await run('run-1');
    const edited = await annotate(ns, 'llama', 'ome.io/runtime-sync', 'token-1');
    // The lease was released: the next run's first try takes it, although its TTL is 10 s
    // (a lease left held would be refused until it expired).
    const secondLeases = observeAcquires(stores.leases);
    const second = await run('run-2', secondLeases.store);
    expect({ acquired: secondLeases.acquired(), refused: secondLeases.refused() }).toEqual({ acquired: 1, refused: 0 });

    const hints = publisher.inNamespace(ns);
    expectNoDuplicates(hints);
    expectAllForwarded(hints, [rvOf(created), rvOf(edited)]);
    expect(hints.map((d) => d.change)).toEqual(['relisted', 'modified']);
    expect(first).toMatchObject({ leaseAcquired: true, failed: 0 });
    expect(first.relists).toBeGreaterThan(0);
    expect(second).toMatchObject({ leaseAcquired: true, failed: 0, relists: 0 });
  });

  it('runs as the scheduled function: one bounded run for the cluster named in the event, within the invocation time', async () => {
    const ns = 'fwd-handler';
    await createNamespace(world.client, ns);
    const created = await world.client.create(isvcs, inferenceService(ns, 'llama'));
    const stores = await world.newStores();
    await stores.clusters.putCluster({ mode: 'standalone', id: 'scheduled', server: world.cluster.url, omeNamespace: 'ome', credentials: { kind: 'kubeconfig', kubeconfig: world.cluster.kubeconfig } });
    const config = { ...loadConfig({ TABLE_NAME: 'unused', EVENT_BUS_NAME: BUS, EVENTBRIDGE_ENDPOINT: bus.endpoint, LEASE_TTL: '5s' }) };
    const seen: string[] = [];
    const unregister = bus.registerTarget('pin', (event) => {
      for (const hint of eventsOfInvocation(event)) {
        const detail = hint.detail as HintDetail;
        if (detail.clusterId === 'scheduled' && detail.namespace === ns) seen.push(`${detail.uid}@${detail.resourceVersion}:${detail.change}`);
      }
    });
    setAppContext(createAppContext({ config, stores }));
    try {
      const context = { functionName: 'forward-watch-events', awsRequestId: 'req-1', getRemainingTimeInMillis: () => 5_000 } as unknown as Context;
      // Beside it, on the same machine at the same moment, a bounded run given 4 of the
      // invocation's 5 s: the handler's run, which keeps back a margin for Lambda, ends first.
      const finished: string[] = [];
      const invocation = handler({ detail: { clusterId: 'scheduled' } }, context).then((result) => {
        finished.push('handler');
        return result as { clusters: ForwarderStats[] };
      });
      const fourSecondRun = runForwarderFor({
        clusterId: 'scheduled-beside',
        cluster: world.client,
        publisher: new RecordingPublisher(busPublisher),
        leases: stores.leases,
        checkpoints: stores.checkpoints,
        omeNamespace: 'ome',
        holderId: 'beside',
        leaseTtlMs: config.leaseTtlMs,
        leasePollMs: 1_000,
        logger: testLogger,
        budgetMs: 4_000,
      }).then((stats) => {
        finished.push('four-second run');
        return stats;
      });
      const [result, beside] = await Promise.all([invocation, fourSecondRun]);
      expect(finished).toEqual(['handler', 'four-second run']);
      expect(beside).toMatchObject({ leaseAcquired: true, failed: 0 });
      expect(result.clusters).toHaveLength(1);
      expect(result.clusters[0]).toMatchObject({ clusterId: 'scheduled', leaseAcquired: true, failed: 0 });
      await bus.drain();
      expect(seen).toEqual([`${created.metadata.uid}@${created.metadata.resourceVersion}:relisted`]);
      // The run relisted and its one hint was accepted: the checkpoint is at least there.
      expect(Number((await stores.checkpoints.loadCheckpoints('scheduled')).inferenceservices)).toBeGreaterThanOrEqual(Number(created.metadata.resourceVersion));
    } finally {
      unregister();
      setAppContext(undefined);
    }
  });
});
