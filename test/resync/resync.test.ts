/**
 * The periodic resync against the embedded API server (over HTTPS; in the real project a
 * real kube-apiserver) and the local bus: it
 * relists every registered cluster's watched objects, pages through them, publishes one
 * `relisted` hint per object with the real EventBridge publisher, and the rules route them
 * as any other hint. A hint lost for good (dead-lettered) is replaced: the real pin
 * function pins an InferenceService it never heard of once the resync runs.
 */
import { fileURLToPath } from 'node:url';
import { EventBridgeClient } from '@aws-sdk/client-eventbridge';
import type { PutEventsCommand } from '@aws-sdk/client-eventbridge';
import type { SQSEvent } from 'aws-lambda';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventsOfInvocation, startLocalBus } from '../../local/bus';
import type { LocalBus } from '../../local/bus';
import { startTestCluster, type TestCluster } from '../support/test-cluster';
import { createEventPublisher } from '../../shared/adapters/eventbridge/publisher';
import { createAppContext, setAppContext } from '../../shared/app/context';
import type { AppContext } from '../../shared/app/context';
import type { ControlPlaneConfig } from '../../shared/app/config';
import type { HintDetail } from '../../shared/domain/hint-event';
import { Resources } from '../../shared/domain/model/resources';
import type { EventPublisher } from '../../shared/ports/event-publisher';
import { resyncClusters } from '../../shared/use-cases/resync/resync-clusters';
import { createMemoryStores } from '../../shared/adapters/memory';
import { applyRuntime, NS, pinColumns, REV_090, RUNTIME, seedIsvc, seedRuntime } from '../pinning/support';

const serverlessYmlPath = fileURLToPath(new URL('../../serverless.yml', import.meta.url));
const BUS = 'ome-pinning-dev-bus';
const CONFIG: ControlPlaneConfig = { tableName: 't', eventBusName: BUS, region: 'us-east-1', omeNamespace: 'ome', revisionRetention: 10, revisionGracePeriodMs: 86_400_000, renderWorkloads: true, leaseTtlMs: 30_000, maxConflictRetries: 5 };

let cluster: TestCluster;
let bus: LocalBus;
let client: EventBridgeClient;
let publisher: EventPublisher;
let app: AppContext;
/** PutEvents calls the publisher made, and the entries in each. */
const calls: number[] = [];

beforeAll(async () => {
  process.env.POWERTOOLS_LOG_LEVEL = 'SILENT';
  process.env.POWERTOOLS_METRICS_DISABLED = 'true';
  [cluster, bus] = await Promise.all([startTestCluster({ namespaces: [NS], embedded: { workloadReadyDelayMs: 5 } }), startLocalBus({ serverlessYmlPath, schedules: false, timeScale: 1e-3 })]);
  client = new EventBridgeClient({ endpoint: bus.endpoint, region: bus.region, credentials: { accessKeyId: 'local', secretAccessKey: 'local' } });
  client.middlewareStack.add(
    (next) => async (args) => {
      if (args.input && 'Entries' in (args.input as object)) calls.push(((args.input as PutEventsCommand['input']).Entries ?? []).length);
      return next(args);
    },
    { step: 'initialize' },
  );
  publisher = createEventPublisher({ client, busName: BUS, baseDelayMs: 5 });
  const stores = createMemoryStores();
  // One API server registered twice: two clusters as far as the resync can tell.
  for (const id of ['east', 'west']) {
    await stores.clusters.putCluster({ id, mode: 'standalone', server: cluster.httpsUrl, credentials: { kind: 'kubeconfig', kubeconfig: cluster.kubeconfig }, omeNamespace: 'ome' });
  }
  app = createAppContext({ config: CONFIG, stores });
  await applyRuntime(cluster.client, seedRuntime('0.9'));
});

afterAll(async () => {
  delete process.env.POWERTOOLS_LOG_LEVEL;
  delete process.env.POWERTOOLS_METRICS_DISABLED;
  setAppContext(undefined);
  client?.destroy();
  await Promise.all([bus?.stop(), cluster?.stop()]);
});

/** Registers recording targets; returns what each function received, as `cluster/kind/name:change`. */
function recordTargets(names: string[]): { seen: Record<string, string[]>; unregister(): void } {
  const seen: Record<string, string[]> = {};
  const unregisters = names.map((name) => {
    seen[name] = [];
    return bus.registerTarget(name, (event) => {
      for (const { detail } of eventsOfInvocation(event as SQSEvent)) {
        const hint = detail as HintDetail;
        seen[name]?.push(`${hint.clusterId}/${hint.kind}/${hint.name}:${hint.change}`);
      }
    });
  });
  return { seen, unregister: () => unregisters.forEach((unregister) => unregister()) };
}

describe('resync', () => {
  it('relists every cluster, page by page, and publishes one relisted hint per object, routed by the rules', async () => {
    // Prepare: five InferenceServices beside the runtime (and its namespace's other objects).
    const names = Array.from({ length: 5 }, (_, i) => `resync-${i}`);
    for (const name of names) await cluster.client.create(Resources.inferenceServices, seedIsvc(name));
    const { seen, unregister } = recordTargets(['pin', 'drift-check', 'revision-gc', 'repin-apply']);
    calls.length = 0;

    // Act: two objects per list page.
    const outcomes = await resyncClusters({ app, publisher, pageSize: 2 });
    await bus.drain();
    unregister();

    // Assess: every object of both clusters once, relisted; pages published as they come.
    expect(outcomes.map((outcome) => outcome.outcome)).toEqual(['resynced', 'resynced']);
    const expectedPins = ['east', 'west'].flatMap((id) => names.map((name) => `${id}/InferenceService/${name}:relisted`));
    expect([...(seen.pin ?? [])].sort()).toEqual(expectedPins.sort());
    expect([...(seen['drift-check'] ?? [])].sort()).toEqual([`east/ServingRuntime/${RUNTIME}:relisted`, `west/ServingRuntime/${RUNTIME}:relisted`]);
    // No rule wants a relisted revision, and InferenceServices without a request do not wake repin-apply.
    expect(seen['revision-gc']).toEqual([]);
    expect(seen['repin-apply']).toEqual([]);
    for (const outcome of outcomes) expect(outcome.stats).toMatchObject({ published: outcome.stats.listed, skipped: 0, failed: 0 });
    expect(Math.max(...calls)).toBeLessThanOrEqual(2);
    for (const name of names) await cluster.client.delete(Resources.inferenceServices, NS, name);
  });

  it('stores each cluster\'s drift report from the InferenceServices it relisted', async () => {
    // Prepare: one InferenceService drifting (status as its controller wrote it), one in sync.
    const drifting = await cluster.client.create(Resources.inferenceServices, seedIsvc('drift-report-a', {}, { 'ome.io/runtime-sync': 'ticket-7' }));
    await cluster.client.replaceStatus(Resources.inferenceServices, {
      ...drifting,
      status: { pinnedRevisionName: REV_090, conditions: [{ type: 'RuntimeDrifted', status: 'True', reason: 'RevisionMismatch', message: `pinned ${REV_090}, live spec differs; bump ome.io/runtime-sync annotation to advance` }] },
    });
    await cluster.client.create(Resources.inferenceServices, seedIsvc('drift-report-b'));

    // Act
    const before = app.clock.now();
    const outcomes = await resyncClusters({ app, publisher, pageSize: 1 });
    await bus.drain();

    // Assess: one report per cluster, the drifting one listed with its reason.
    expect(outcomes.map((outcome) => outcome.driftReportError)).toEqual([undefined, undefined]);
    const reports = await app.stores.fleet.listDriftReports();
    expect(reports.map((report) => report.clusterId)).toEqual(['east', 'west']);
    for (const report of reports) {
      expect(report).toMatchObject({ inferenceServices: 2, drifted: 1 });
      expect(report.observedAt).toBeGreaterThanOrEqual(before);
      expect(report.rows).toEqual([
        { namespace: NS, name: 'drift-report-a', runtimeKind: 'ServingRuntime', runtime: RUNTIME, pinnedRevision: REV_090, reason: 'RevisionMismatch', message: `pinned ${REV_090}, live spec differs; bump ome.io/runtime-sync annotation to advance`, syncToken: 'ticket-7' },
      ]);
    }
    for (const name of ['drift-report-a', 'drift-report-b']) await cluster.client.delete(Resources.inferenceServices, NS, name);
  });

  it('replaces a hint that was lost for good: the pin function pins an InferenceService it never heard of', async () => {
    // Prepare: an InferenceService whose hints never arrived (say, dead-lettered), and the real pin function.
    await cluster.client.create(Resources.inferenceServices, seedIsvc());
    expect((await pinColumns(cluster.client)).pinned).toBe('<none>');
    setAppContext(app);
    const { handler: pin } = await import('../../functions/pin/handler');
    const unregister = bus.registerTarget('pin', (event, context) => pin(event as SQSEvent, context));

    // Act: one resync of one cluster, as a manual invoke would ask.
    const { runResync } = await import('../../functions/resync/handler');
    await runResync({ detail: { clusterId: 'east' } }, app, publisher);
    await bus.drain();
    unregister();

    // Assess
    expect((await pinColumns(cluster.client)).pinned).toBe(REV_090);
    expect(bus.deadLetters).toEqual([]);
  });
});
