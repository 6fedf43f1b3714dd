/**
 * Forwarder shards against the embedded API server and DynamoDB Local: a scheduled run
 * (through the local bus, with its rule's input) forwards exactly its shard's clusters; two
 * runs of one shard that overlap hand the shard over by its lease and lose nothing (as do
 * two runs of a forwarder on its own, by the cluster's lease); the lag counts from when a
 * change was made.
 */
import { fileURLToPath } from 'node:url';
import type { Context } from 'aws-lambda';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { handler } from '../../functions/forward-watch-events/handler';
import type { ForwarderResult } from '../../functions/forward-watch-events/handler';
import { startLocalBus } from '../../local/bus';
import type { LocalBus } from '../../local/bus';
import { createAppContext, setAppContext } from '../../shared/app/context';
import { loadConfig } from '../../shared/app/config';
import type { HintDetail } from '../../shared/domain/hint-event';
import { assignShard, listWatchedResources, runForwarder, runForwarderFor, runForwarderShardOnce } from '../../shared/use-cases/forwarder';
import type { ForwarderStats } from '../../shared/use-cases/forwarder';
import { Resources } from '../../shared/domain/model/resources';
import type { ClusterClient, KubeObject, ResourceType, WatchEvent, WatchOptions } from '../../shared/ports/cluster';
import { RecordingPublisher, createNamespace, eventually, expectAllForwarded, inferenceService, startForwarderWorld, testLogger } from './support';
import type { ForwarderWorld } from './support';

const serverlessYmlPath = fileURLToPath(new URL('../../serverless.yml', import.meta.url));
const BUS = 'ome-pinning-dev-bus';
const SHARDS = 4;
const isvcs = Resources.inferenceServices;

let world: ForwarderWorld;
let bus: LocalBus;

beforeAll(async () => {
  [world, bus] = await Promise.all([startForwarderWorld({ watchWindow: 200 }), startLocalBus({ serverlessYmlPath, schedules: false, timeScale: 1e-4 })]);
});

afterAll(async () => {
  await Promise.all([bus?.stop(), world?.stop()]);
});

const rvOf = (object: KubeObject): { uid: string; resourceVersion: string } => ({ uid: object.metadata.uid ?? '', resourceVersion: object.metadata.resourceVersion ?? '' });

/** A client whose watch events carry managedFields dated `ageMs` ago, as a real API server records the last write. */
function datingWrites(client: ClusterClient, ageMs: number): ClusterClient {
  return {
    ...client,
    get: client.get.bind(client),
    list: client.list.bind(client),
    create: client.create.bind(client),
    replace: client.replace.bind(client),
    replaceStatus: client.replaceStatus.bind(client),
    patch: client.patch.bind(client),
    delete: client.delete.bind(client),
    watch: <T extends KubeObject>(type: ResourceType, options: WatchOptions, onEvent: (event: WatchEvent<T>) => void | Promise<void>) =>
      client.watch<T>(type, options, (event) => {
        if (event.type === 'BOOKMARK') return onEvent(event);
        const time = new Date(Date.now() - ageMs).toISOString().replace(/\.\d+Z$/, 'Z');
        const metadata = { ...event.object.metadata, managedFields: [{ manager: 'kubectl', operation: 'Update', time }] };
        return onEvent({ ...event, object: { ...event.object, metadata } });
      }),
  };
}

/**
 * Two runs that overlap as consecutive minutes' do, while InferenceServices are created in
 * `ns` every 50 ms: the second starts once the first forwarded something, and writing stops
 * once the second has. Resolves with what was made and each run's result.
 */
async function overlappingRuns<T>(ns: string, run: (holderId: string, budgetMs: number, publisher: RecordingPublisher) => Promise<T>) {
  await createNamespace(world.client, ns);
  const made: KubeObject[] = [];
  let writing = true;
  const writer = (async () => {
    for (let index = 0; writing; index += 1) {
      made.push(await world.client.create(isvcs, inferenceService(ns, `isvc-${index}`)));
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  })();
  const first = new RecordingPublisher();
  const second = new RecordingPublisher();
  const firstRun = run('minute-1', 4_000, first);
  await eventually(() => expect(first.inNamespace(ns).length).toBeGreaterThan(0));
  const secondRun = run('minute-2', 8_000, second);
  const firstResult = await firstRun;
  await eventually(() => expect(second.inNamespace(ns).length).toBeGreaterThan(0));
  writing = false;
  await writer;
  return { made, first, second, firstResult, secondResult: await secondRun };
}

describe('watch forwarder: shards', () => {
  it('runs as the scheduled function: the rule of shard s forwards exactly the clusters assigned to s, read from the registry', async () => {
    // Prepare: eight ids for the one API server, spread over the shards.
    const stores = await world.newStores();
    const ids = Array.from({ length: 8 }, (_, index) => `fleet-${index}`);
    for (const id of ids) {
      await stores.clusters.putCluster({ id, server: world.cluster.url, omeNamespace: 'ome', credentials: { kind: 'kubeconfig', kubeconfig: world.cluster.kubeconfig }, mode: 'standalone' });
    }
    const shard = assignShard('fleet-0', SHARDS);
    const config = loadConfig({ TABLE_NAME: 'unused', EVENT_BUS_NAME: BUS, EVENTBRIDGE_ENDPOINT: bus.endpoint, LEASE_TTL: '5s', FORWARDER_SHARDS: String(SHARDS) });
    setAppContext(createAppContext({ config, stores }));
    const results: ForwarderResult[] = [];
    const unregister = bus.registerTarget('forward-watch-events', async (event) => {
      // The bus's own context would allow the function's 90 s; two are plenty here.
      const context = { functionName: 'forward-watch-events', awsRequestId: `shard-${shard}`, getRemainingTimeInMillis: () => 5_000 } as unknown as Context;
      results.push((await handler(event as Parameters<typeof handler>[0], context)) as ForwarderResult);
    });

    try {
      // Act
      bus.triggerSchedule(`ome-pinning-dev-forward-schedule-${shard}`);
      await bus.drain();

      // Assess
      expect(results).toHaveLength(1);
      expect(results[0]).toMatchObject({ shard, shardCount: SHARDS });
      const forwarded = results[0]?.clusters.map((stats) => stats.clusterId);
      expect(forwarded).toEqual(ids.filter((id) => assignShard(id, SHARDS) === shard));
      expect(forwarded).toContain('fleet-0');
      expect(results[0]?.clusters.every((stats) => stats.leaseAcquired && stats.failed === 0)).toBe(true);
    } finally {
      unregister();
      setAppContext(undefined);
    }
  });

  it('refuses an invocation without a shard when there are several', async () => {
    const stores = await world.newStores();
    setAppContext(createAppContext({ config: loadConfig({ TABLE_NAME: 'unused', FORWARDER_SHARDS: '2' }), stores }));
    try {
      const context = { functionName: 'forward-watch-events', awsRequestId: 'no-shard', getRemainingTimeInMillis: () => 2_000 } as unknown as Context;
      await expect(handler({}, context)).rejects.toThrow('the forwarder runs in 2 shards (FORWARDER_SHARDS); the event must name one as {"shard": 0..1}');
    } finally {
      setAppContext(undefined);
    }
  });

  it('hands a shard over by its lease between overlapping runs: the next run, already waiting, takes every cluster over from its checkpoint and nothing is lost', async () => {
    // Prepare: two clusters of one shard, both served by the one API server
    const ns = 'fwd-shard-handover';
    const stores = await world.newStores();
    const clusterIds = ['handover-a', 'handover-b'];
    const renewals: string[] = [];
    const leases = { ...stores.leases, acquire: stores.leases.acquire.bind(stores.leases), release: stores.leases.release.bind(stores.leases), renew: (lease: Parameters<typeof stores.leases.renew>[0], ttlMs: number) => (renewals.push(lease.key), stores.leases.renew(lease, ttlMs)) };
    const run = (holderId: string, budgetMs: number, publisher: RecordingPublisher) =>
      runForwarderShardOnce({
        shard: 0,
        shardCount: 1,
        listClusterIds: async () => clusterIds,
        leases,
        holderId,
        leaseTtlMs: 900,
        leasePollMs: 100,
        clock: { now: () => Date.now() },
        signal: AbortSignal.timeout(budgetMs * 0.8),
        forwardCluster: (clusterId, sharedLease) =>
          runForwarderFor({
            clusterId,
            cluster: world.client,
            publisher,
            leases,
            sharedLease,
            checkpoints: stores.checkpoints,
            omeNamespace: 'ome',
            lingerMs: 20,
            budgetMs,
            reserveMs: 1_000,
            logger: testLogger,
          }),
      });

    // Act: the second run starts while the first still works, as the next minute's does.
    const { made, first, second, firstResult, secondResult } = await overlappingRuns(ns, run);

    // Assess: each run held the shard in turn, both clusters under it, and every change was forwarded once per cluster.
    for (const result of [firstResult, secondResult]) {
      expect(result).toMatchObject({ leaseAcquired: true, clusterIds });
      for (const stats of result.results) expect(stats).toMatchObject({ leaseAcquired: true, leaseLosses: 0, failed: 0 });
    }
    expect(secondResult.results.every((stats) => stats.relists === 0)).toBe(true);
    for (const clusterId of clusterIds) {
      const forwarded = [...first.inNamespace(ns), ...second.inNamespace(ns)].filter((detail) => detail.clusterId === clusterId);
      expectAllForwarded(forwarded, made.map(rvOf));
    }
    // One heartbeat for the shard, never one per cluster.
    expect(new Set(renewals)).toEqual(new Set(['forwarder-shard#1/0']));
  });

  it('ends a cluster\'s run at its first save when the shard\'s lease expired unnoticed, instead of watching again on the stale lease', async () => {
    // Prepare: a newer holder of the shard's lease (token 5) saved this cluster's
    // checkpoints; this run still holds token 4, which expired while it was paused and
    // which it has not noticed it lost.
    const ns = 'fwd-stale-shard';
    await createNamespace(world.client, ns);
    await world.client.create(isvcs, inferenceService(ns, 'isvc-0'));
    const stores = await world.newStores();
    const key = 'forwarder-shard#1/0';
    await stores.checkpoints.saveCheckpoints('stale-shard', { inferenceservices: '1' }, { key, holder: 'newer', fencingToken: 5, expiresAt: Date.now() + 60_000 });
    const staleLease = { current: () => ({ key, holder: 'older', fencingToken: 4, expiresAt: Date.now() - 1 }), lost: new AbortController().signal };
    const publisher = new RecordingPublisher();
    const startedAt = Date.now();

    // Act
    const stats = await runForwarderFor({
      clusterId: 'stale-shard',
      cluster: world.client,
      publisher,
      leases: stores.leases,
      sharedLease: staleLease,
      checkpoints: stores.checkpoints,
      omeNamespace: 'ome',
      resources: listWatchedResources('ome')
        .filter((resource) => resource.type === isvcs)
        .map((resource) => ({ ...resource, namespace: ns })),
      lingerMs: 20,
      checkpointIntervalMs: 50,
      budgetMs: 20_000,
      reserveMs: 1_000,
      logger: testLogger,
    });

    // Assess: one loss, and the run ended there, long before its budget; the newer
    // holder's checkpoint stands.
    expect(stats).toMatchObject({ leaseAcquired: true, leaseLosses: 1 });
    expect(Date.now() - startedAt).toBeLessThan(10_000);
    expect((await stores.checkpoints.loadCheckpoints('stale-shard')).inferenceservices).toBe('1');
  });

  it('hands a cluster over by its lease between overlapping runs: the next run, already waiting, takes over from the checkpoint and nothing is lost', async () => {
    // Prepare
    const ns = 'fwd-handover';
    const stores = await world.newStores();
    const run = (holderId: string, budgetMs: number, publisher: RecordingPublisher): Promise<ForwarderStats> =>
      runForwarderFor({
        clusterId: 'handover',
        cluster: world.client,
        publisher,
        leases: stores.leases,
        checkpoints: stores.checkpoints,
        omeNamespace: 'ome',
        holderId,
        leaseTtlMs: 15_000,
        leasePollMs: 100,
        lingerMs: 20,
        budgetMs,
        reserveMs: 1_000,
        logger: testLogger,
      });

    // Act: the second run starts while the first still works, as the next minute's does.
    const { made, first, second, firstResult: firstStats, secondResult: secondStats } = await overlappingRuns(ns, run);

    // Assess: each run held the lease in turn, never lost it, and every change was forwarded.
    expect(firstStats).toMatchObject({ leaseAcquired: true, leaseLosses: 0, failed: 0 });
    expect(secondStats).toMatchObject({ leaseAcquired: true, leaseLosses: 0, failed: 0, relists: 0 });
    expectAllForwarded([...first.inNamespace(ns), ...second.inNamespace(ns)], made.map(rvOf));
    const handedOver = made.filter((object) => second.inNamespace(ns).some((detail) => detail.uid === object.metadata.uid));
    expect(handedOver.length).toBeGreaterThan(0);
  });

  it('reports the lag from when a change was made, as the API server dated it', async () => {
    // Prepare
    const ns = 'fwd-lag';
    await createNamespace(world.client, ns);
    const stores = await world.newStores();
    const publisher = new RecordingPublisher();
    const stop = new AbortController();
    const running = runForwarder({
      clusterId: 'lagging',
      cluster: datingWrites(world.client, 120_000),
      publisher,
      leases: stores.leases,
      checkpoints: stores.checkpoints,
      omeNamespace: 'ome',
      lingerMs: 20,
      signal: stop.signal,
      logger: testLogger,
    });
    await eventually(async () => expect((await stores.checkpoints.loadCheckpoints('lagging')).inferenceservices).toBeDefined());

    // Act: a change the server dates two minutes back (made while nobody watched).
    const created = await world.client.create(isvcs, inferenceService(ns, 'late'));
    await eventually(() => expect(publisher.inNamespace(ns).map((detail: HintDetail) => detail.uid)).toContain(created.metadata.uid));
    stop.abort();
    const stats = await running;

    // Assess
    expect(stats.maxLagMs).toBeGreaterThanOrEqual(119_000);
    expect(stats.maxLagMs).toBeLessThan(180_000);
  });
});
