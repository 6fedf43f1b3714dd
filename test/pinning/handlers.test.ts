/**
 * The `pin` and `drift-check` functions as Lambda invokes them: an EventBridge envelope
 * of a hint, the process context with a registered cluster, and the Kubernetes adapter
 * over HTTP to the embedded API server.
 */
import type { Context } from 'aws-lambda';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmbeddedCluster, type EmbeddedCluster } from '../../local/cluster';
import { createAppContext, setAppContext } from '../../shared/app/context';
import type { EventBridgeEnvelope, HintDetail } from '../../shared/events/hint-event';
import { Resources } from '../../shared/model/resources';
import { createMemoryStores } from '../../shared/stores/memory';
import { applyRuntime, engineView, getIsvc, ISVC, NS, pinColumns, REV_090, RUNTIME, seedIsvc, seedRuntime } from './support';

let cluster: EmbeddedCluster;
type Handler = (event: EventBridgeEnvelope<HintDetail>, context: Context) => Promise<unknown>;
let pin: Handler;
let driftCheck: Handler;
const context = { functionName: 'pin', awsRequestId: 'req-1', getRemainingTimeInMillis: () => 30_000 } as unknown as Context;

function envelope(detail: Partial<HintDetail> & Pick<HintDetail, 'kind' | 'name' | 'uid'>): EventBridgeEnvelope<HintDetail> {
  return {
    version: '0',
    id: 'event-1',
    'detail-type': 'Kubernetes Object Changed',
    source: 'ome.pinning',
    account: '000000000000',
    time: new Date().toISOString(),
    region: 'us-east-1',
    resources: [],
    detail: {
      clusterId: 'local',
      apiVersion: 'ome.io/v1beta1',
      resourceVersion: '1',
      change: 'modified',
      changed: { spec: true, runtimeSync: false, rolloutRepin: false, rolloutPromote: false },
      observedAt: new Date().toISOString(),
      ...detail,
    },
  };
}

beforeAll(async () => {
  // The handlers build their logger and metrics at import: quiet them first.
  process.env.POWERTOOLS_LOG_LEVEL = 'SILENT';
  process.env.POWERTOOLS_METRICS_DISABLED = 'true';
  ({ handler: pin } = await import('../../functions/pin/handler'));
  ({ handler: driftCheck } = await import('../../functions/drift-check/handler'));
  cluster = await startEmbeddedCluster({ workloadReadyDelayMs: 5 });
  const stores = createMemoryStores();
  await stores.clusters.putCluster({ id: 'local', server: cluster.url, credentials: { kind: 'kubeconfig', kubeconfig: cluster.kubeconfig }, omeNamespace: 'ome' });
  setAppContext(
    createAppContext({
      config: { tableName: 't', eventBusName: 'b', region: 'us-east-1', omeNamespace: 'ome', revisionRetention: 10, revisionGracePeriodMs: 86_400_000, renderWorkloads: true, leaseTtlMs: 30_000, maxConflictRetries: 5 },
      stores,
    }),
  );
  await cluster.client.create(Resources.namespaces, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } });
  await applyRuntime(cluster.client, seedRuntime('0.9'));
});

afterAll(async () => {
  delete process.env.POWERTOOLS_LOG_LEVEL;
  delete process.env.POWERTOOLS_METRICS_DISABLED;
  setAppContext(undefined);
  await cluster?.stop();
});

describe('functions', () => {
  it('pin: pins the InferenceService of the hint and renders its Deployment', async () => {
    const created = await cluster.client.create(Resources.inferenceServices, seedIsvc());
    const result = await pin(envelope({ kind: 'InferenceService', namespace: NS, name: ISVC, uid: created.metadata.uid ?? '' }), context);
    expect(result).toMatchObject({ outcome: 'pinned', pinnedRevisionName: REV_090 });
    expect(await pinColumns(cluster.client)).toMatchObject({ pinned: REV_090, drifted: '<none>' });
    expect(await engineView(cluster.client)).toMatchObject({ renderedFrom: REV_090 });
  });

  it('pin: acknowledges a hint for an object that has since been replaced', async () => {
    const result = await pin(envelope({ kind: 'InferenceService', namespace: NS, name: ISVC, uid: 'an-older-uid' }), context);
    expect(result).toMatchObject({ outcome: 'gone' });
  });

  it('drift-check: reports drift after a runtime change', async () => {
    const runtime = await applyRuntime(cluster.client, seedRuntime('0.85'));
    const report = await driftCheck(envelope({ kind: 'ServingRuntime', namespace: NS, name: RUNTIME, uid: runtime.metadata.uid ?? '' }), context);
    expect(report).toMatchObject({ statusWrites: 1 });
    expect((await getIsvc(cluster.client)).status?.conditions?.[0]).toMatchObject({ type: 'RuntimeDrifted', reason: 'RevisionMismatch' });
  });

  it('pin: a retryable failure is rethrown for redelivery', async () => {
    await cluster.client.create(Resources.inferenceServices, { ...seedIsvc('missing-runtime'), spec: { ...seedIsvc().spec, runtime: { name: 'absent', kind: 'ServingRuntime', autoSync: false } } });
    await expect(pin(envelope({ kind: 'InferenceService', namespace: NS, name: 'missing-runtime', uid: '' }), context)).rejects.toMatchObject({ name: 'RuntimePinError' });
  });
});
