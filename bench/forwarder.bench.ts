/**
 * Forwarder throughput: 10,000 changes in the embedded API server's watch history, read
 * and forwarded to the local bus through the real EventBridge publisher, in events per
 * second, with the mean entries per PutEvents call; and again to a client that counts and
 * accepts PutEvents calls without sending them, which isolates the forwarder's own cost
 * from the local bus's. Baseline: a bare watch over the same
 * HTTP client reading the same 10,000 changes, in the same run. Both start from the same
 * resourceVersion, so the figure is the forwarder's cost per change (deciding, batching,
 * publishing, checkpointing), not the speed of the writes. Lease and checkpoints are the
 * in-memory stores: their few writes per second are not what is measured here.
 */
import { fileURLToPath } from 'node:url';
import { EventBridgeClient } from '@aws-sdk/client-eventbridge';
import { createEventPublisher } from '../shared/adapters/eventbridge/publisher';
import { connectionFromRecord, createClusterClient } from '../shared/adapters/kubernetes';
import type { HintEvent } from '../shared/domain/hint-event';
import { forwarderLeaseKey, listWatchedResources, runForwarder } from '../shared/use-cases/forwarder';
import { Resources } from '../shared/domain/model/resources';
import type { ClusterClient, KubeObject } from '../shared/ports/cluster';
import type { EventPublisher } from '../shared/ports/event-publisher';
import { createMemoryStores } from '../shared/adapters/memory';
import { startLocalBus } from '../local/bus';
import { startEmbeddedCluster } from '../local/cluster';
import { benchSize, compare } from './harness';
import type { BenchResult, BenchSuite } from './harness';

const CHANGES = benchSize(10_000, 300);
const OBJECTS = 100;
const NAMESPACE = 'bench-forwarder';
const BUS = 'ome-pinning-dev-bus';
const serverlessYmlPath = fileURLToPath(new URL('../serverless.yml', import.meta.url));
const isvcs = Resources.inferenceServices;

function inferenceService(name: string): KubeObject {
  return {
    apiVersion: 'ome.io/v1beta1',
    kind: 'InferenceService',
    metadata: { name, namespace: NAMESPACE },
    spec: { model: { name }, runtime: { name: 'sglang', kind: 'ServingRuntime', autoSync: false }, engine: { minReplicas: 1, maxReplicas: 1 } },
  };
}

/** Reads the InferenceService watch from `since` until `count` events arrived; returns events per second. */
async function bareWatchRate(client: ClusterClient, since: string, count: number): Promise<number> {
  const controller = new AbortController();
  let seen = 0;
  const started = process.hrtime.bigint();
  let finished = started;
  await client.watch(isvcs, { namespace: NAMESPACE, resourceVersion: since, signal: controller.signal }, () => {
    seen += 1;
    if (seen === count) {
      finished = process.hrtime.bigint();
      controller.abort();
    }
  });
  return (count * 1e9) / Number(finished - started);
}

interface CountedClient {
  client: EventBridgeClient;
  calls: number;
  entries: number;
}

/** Counts PutEvents calls and entries; with `answerLocally` it also answers them itself (every entry accepted). */
function countPutEvents(client: EventBridgeClient, answerLocally: boolean): CountedClient {
  const counted: CountedClient = { client, calls: 0, entries: 0 };
  client.middlewareStack.add(
    (next) => async (args) => {
      const entries = (args.input as { Entries?: unknown[] }).Entries ?? [];
      counted.calls += 1;
      counted.entries += entries.length;
      if (!answerLocally) return next(args);
      const output = { FailedEntryCount: 0, Entries: entries.map((_entry, i) => ({ EventId: `local-${counted.calls}-${i}` })), $metadata: {} };
      return { output, response: {} } as Awaited<ReturnType<typeof next>>;
    },
    { step: 'initialize', name: 'countPutEvents' },
  );
  return counted;
}

/** Runs the forwarder from `since` until all changes are accepted; returns events per second. */
async function forwardRate(cluster: ClusterClient, counted: CountedClient, since: string): Promise<{ rate: number; note: string }> {
  const stores = createMemoryStores();
  const seed = await stores.leases.acquire(forwarderLeaseKey('bench'), 'seed', 1_000);
  if (!seed) throw new Error('bench lease unexpectedly held');
  const resources = listWatchedResources('ome')
    .filter((resource) => resource.type === isvcs)
    .map((resource) => ({ ...resource, namespace: NAMESPACE }));
  await stores.checkpoints.saveCheckpoints('bench', { [resources[0]?.name ?? '']: since }, seed);
  await stores.leases.release(seed);
  const real = createEventPublisher({ client: counted.client, busName: BUS });
  let accepted = 0;
  let done: () => void = () => undefined;
  const allAccepted = new Promise<void>((resolve) => (done = resolve));
  const counting: EventPublisher = {
    async publish(events: readonly HintEvent[]) {
      const result = await real.publish(events);
      accepted += result.published;
      if (accepted >= CHANGES) done();
      return result;
    },
  };
  const controller = new AbortController();
  const started = process.hrtime.bigint();
  const running = runForwarder({ clusterId: 'bench', cluster, publisher: counting, ...stores, omeNamespace: 'ome', resources, signal: controller.signal });
  await allAccepted;
  const rate = (CHANGES * 1e9) / Number(process.hrtime.bigint() - started);
  controller.abort();
  const stats = await running;
  const perCall = counted.calls === 0 ? 0 : counted.entries / counted.calls;
  return { rate, note: `${perCall.toFixed(2)} entries per PutEvents call over ${counted.calls} calls; forwarded ${stats.forwarded}` };
}

const suite: BenchSuite = {
  name: 'forwarder',
  async run(): Promise<BenchResult[]> {
    const cluster = await startEmbeddedCluster({ watchWindow: CHANGES * 2, bookmarkIntervalMs: 1_000 });
    const bus = await startLocalBus({ serverlessYmlPath, schedules: false });
    for (const fn of bus.functions) bus.registerTarget(fn.name, () => undefined);
    const client = createClusterClient(
      connectionFromRecord({ mode: 'standalone', id: 'bench', server: cluster.url, omeNamespace: 'ome', credentials: { kind: 'kubeconfig', kubeconfig: cluster.kubeconfig } }),
    );
    const options = { region: bus.region, credentials: { accessKeyId: 'local', secretAccessKey: 'local' } };
    const toBus = countPutEvents(new EventBridgeClient({ ...options, endpoint: bus.endpoint }), false);
    const counter = countPutEvents(new EventBridgeClient(options), true);
    try {
      await cluster.client.create(Resources.namespaces, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NAMESPACE } });
      for (let i = 0; i < OBJECTS; i += 1) await cluster.client.create(isvcs, inferenceService(`isvc-${i}`));
      const since = (await cluster.client.list(isvcs, { namespace: NAMESPACE, limit: 1 })).resourceVersion;
      // Each change is a new sync token: worth a hint, as a user's edits are.
      for (let i = 0; i < CHANGES; i += 1) {
        const patch = { metadata: { annotations: { 'ome.io/runtime-sync': `token-${i}` } } };
        await cluster.client.patch(isvcs, NAMESPACE, `isvc-${i % OBJECTS}`, patch, { type: 'merge' });
      }

      const watchBefore = await bareWatchRate(client, since, CHANGES);
      const viaBus = await forwardRate(client, toBus, since);
      await bus.drain();
      const viaCounter = await forwardRate(client, counter, since);
      const watchAfter = await bareWatchRate(client, since, CHANGES);
      const baseline = { name: 'bare watch, same changes', value: (watchBefore + watchAfter) / 2, unit: 'events/s' };
      return [
        compare('forwarder', { name: `forwarder to the local bus, ${CHANGES} changes`, value: viaBus.rate, unit: 'events/s' }, baseline, viaBus.note),
        compare('forwarder', { name: `forwarder to a counting client, ${CHANGES} changes`, value: viaCounter.rate, unit: 'events/s' }, baseline, viaCounter.note),
      ];
    } finally {
      client.close();
      toBus.client.destroy();
      counter.client.destroy();
      await bus.stop();
      await cluster.stop();
    }
  },
};

export default suite;
