/**
 * The `pin` and `drift-check` functions as Lambda invokes them: an SQS batch from the
 * function's hint queue whose record is the EventBridge envelope of a hint, the process
 * context with a registered cluster, and the Kubernetes adapter over HTTP to the embedded
 * API server. The answer names the records to redeliver (`batchItemFailures`).
 */
import { createServer, type Server } from 'node:http';
import type { Context, SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { toSqsEvent } from '../../local/bus';
import { startEmbeddedCluster, type EmbeddedCluster } from '../../local/cluster';
import { createAppContext, setAppContext } from '../../shared/app/context';
import type { EventBridgeEnvelope, HintDetail } from '../../shared/domain/hint-event';
import { Resources } from '../../shared/domain/model/resources';
import { createMemoryStores } from '../../shared/adapters/memory';
import { applyRuntime, engineView, getIsvc, NS, pinColumns, REV_090, seedIsvc, seedRuntime } from './support';

let cluster: EmbeddedCluster;
type Handler = (event: SQSEvent, context: Context) => Promise<SQSBatchResponse>;
let pinHandler: Handler;
let driftCheckHandler: Handler;
const NO_FAILURES: SQSBatchResponse = { batchItemFailures: [] };

/** Invokes with a batch of one hint; resolves with the response and the record's message id. */
async function invoke(handler: Handler, hint: EventBridgeEnvelope<HintDetail>): Promise<{ response: SQSBatchResponse; messageId: string }> {
  const batch = toSqsEvent([hint]);
  return { response: await handler(batch, context), messageId: batch.Records[0]?.messageId ?? '' };
}
const pin = async (hint: EventBridgeEnvelope<HintDetail>) => (await invoke(pinHandler, hint)).response;
const driftCheck = async (hint: EventBridgeEnvelope<HintDetail>) => (await invoke(driftCheckHandler, hint)).response;
const context = { functionName: 'pin', awsRequestId: 'req-1', getRemainingTimeInMillis: () => 30_000 } as unknown as Context;

/** EventBridge's PutEvents, accepting every entry and keeping what was published (continuation hints). */
let bus: Server;
const published: Array<{ DetailType?: string; Detail?: string }> = [];
async function startEventBridgeStub(): Promise<string> {
  bus = createServer((request, response) => {
    let body = '';
    request.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')));
    request.on('end', () => {
      const entries = (JSON.parse(body || '{}') as { Entries?: Array<{ DetailType?: string; Detail?: string }> }).Entries ?? [];
      published.push(...entries);
      response.writeHead(200, { 'content-type': 'application/x-amz-json-1.1' });
      response.end(JSON.stringify({ FailedEntryCount: 0, Entries: entries.map((_, index) => ({ EventId: `e${index}` })) }));
    });
  });
  await new Promise<void>((resolve) => bus.listen(0, '127.0.0.1', resolve));
  const address = bus.address();
  return `http://127.0.0.1:${typeof address === 'object' && address !== null ? address.port : 0}`;
}

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
  ({ handler: pinHandler } = await import('../../functions/pin/handler'));
  ({ handler: driftCheckHandler } = await import('../../functions/drift-check/handler'));
  cluster = await startEmbeddedCluster({ workloadReadyDelayMs: 5 });
  const eventBridgeEndpoint = await startEventBridgeStub();
  process.env.AWS_ACCESS_KEY_ID ??= 'test';
  process.env.AWS_SECRET_ACCESS_KEY ??= 'test';
  const stores = createMemoryStores();
  await stores.clusters.putCluster({ mode: 'standalone', id: 'local', server: cluster.url, credentials: { kind: 'kubeconfig', kubeconfig: cluster.kubeconfig }, omeNamespace: 'ome' });
  setAppContext(
    createAppContext({
      config: { tableName: 't', eventBusName: 'b', eventBridgeEndpoint, region: 'us-east-1', omeNamespace: 'ome', revisionRetention: 10, revisionGracePeriodMs: 86_400_000, renderWorkloads: true, leaseTtlMs: 30_000, maxConflictRetries: 5 },
      stores,
    }),
  );
  await cluster.client.create(Resources.namespaces, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } });
});

afterAll(async () => {
  delete process.env.POWERTOOLS_LOG_LEVEL;
  delete process.env.POWERTOOLS_METRICS_DISABLED;
  setAppContext(undefined);
  await cluster?.stop();
  bus?.closeAllConnections();
  await new Promise((resolve) => bus?.close(resolve));
});

/**
 * Each test arranges its own objects (its own InferenceService, and its own runtime when
 * it changes one), so it passes or fails the same run alone or in any order.
 */
describe('functions', () => {
  beforeEach(async () => {
    await applyRuntime(cluster.client, seedRuntime('0.9'));
  });

  it('pin: pins the InferenceService of the hint and renders its Deployment', async () => {
    const created = await cluster.client.create(Resources.inferenceServices, seedIsvc('pinned-by-hint'));
    const result = await pin(envelope({ kind: 'InferenceService', namespace: NS, name: 'pinned-by-hint', uid: created.metadata.uid ?? '' }));
    expect(result).toEqual(NO_FAILURES);
    expect(await pinColumns(cluster.client, 'pinned-by-hint')).toMatchObject({ pinned: REV_090, drifted: '<none>' });
    expect(await engineView(cluster.client, 'pinned-by-hint')).toMatchObject({ renderedFrom: REV_090 });
  });

  it('pin: acknowledges a hint for an object that has since been replaced, and leaves the new one alone', async () => {
    const older = await cluster.client.create(Resources.inferenceServices, seedIsvc('replaced'));
    await cluster.client.delete(Resources.inferenceServices, NS, 'replaced');
    const newer = await cluster.client.create(Resources.inferenceServices, seedIsvc('replaced'));
    expect(newer.metadata.uid).not.toBe(older.metadata.uid);
    const result = await pin(envelope({ kind: 'InferenceService', namespace: NS, name: 'replaced', uid: older.metadata.uid ?? '' }));
    expect(result).toEqual(NO_FAILURES);
    // The hint was about the deleted object: the new one is neither pinned nor rendered.
    const after = await getIsvc(cluster.client, 'replaced');
    expect(after.status?.pinnedRevisionName).toBeUndefined();
    expect(after.metadata.resourceVersion).toBe(newer.metadata.resourceVersion);
    expect(await engineView(cluster.client, 'replaced')).toBeUndefined();
  });

  it('drift-check: reports drift after a runtime change', async () => {
    const runtimeName = 'drift-check-runtime';
    await applyRuntime(cluster.client, seedRuntime('0.9', { name: runtimeName }));
    const created = await cluster.client.create(Resources.inferenceServices, seedIsvc('drift-checked', { name: runtimeName }));
    expect(await pin(envelope({ kind: 'InferenceService', namespace: NS, name: 'drift-checked', uid: created.metadata.uid ?? '' }))).toEqual(NO_FAILURES);
    expect(await pinColumns(cluster.client, 'drift-checked')).toMatchObject({ drifted: '<none>' });
    const runtime = await applyRuntime(cluster.client, seedRuntime('0.85', { name: runtimeName }));
    const report = await driftCheck(envelope({ kind: 'ServingRuntime', namespace: NS, name: runtimeName, uid: runtime.metadata.uid ?? '' }));
    expect(report).toEqual(NO_FAILURES);
    expect((await getIsvc(cluster.client, 'drift-checked')).status?.conditions?.find((c) => c.type === 'RuntimeDrifted')).toMatchObject({ status: 'True', reason: 'RevisionMismatch' });
  });

  it('drift-check: a fan-out out of time publishes its hint with its continuation, and that hint finishes it', async () => {
    const runtimeName = 'continued-runtime';
    await applyRuntime(cluster.client, seedRuntime('0.9', { name: runtimeName }));
    for (const name of ['continued-a', 'continued-b']) {
      const created = await cluster.client.create(Resources.inferenceServices, seedIsvc(name, { name: runtimeName }));
      expect(await pin(envelope({ kind: 'InferenceService', namespace: NS, name, uid: created.metadata.uid ?? '' }))).toEqual(NO_FAILURES);
    }
    const runtime = await applyRuntime(cluster.client, seedRuntime('0.85', { name: runtimeName }));
    published.length = 0;

    // An invocation with no time left beyond the margin evaluates one InferenceService (so
    // every invocation moves the fan-out on), saves its place and publishes.
    const outOfTime = { ...context, getRemainingTimeInMillis: () => 1_000 } as unknown as Context;
    const hint = envelope({ kind: 'ServingRuntime', namespace: NS, name: runtimeName, uid: runtime.metadata.uid ?? '' });
    expect(await driftCheckHandler(toSqsEvent([hint]), outOfTime)).toEqual(NO_FAILURES);
    expect(await pinColumns(cluster.client, 'continued-a')).toMatchObject({ drifted: 'True' });
    expect(await pinColumns(cluster.client, 'continued-b')).toMatchObject({ drifted: '<none>' });
    // Besides the continuation hint, the bus carries the drift the pass wrote (notifications).
    const hints = () => published.filter((entry) => entry.DetailType === 'Kubernetes Object Changed');
    const driftReported = () => published.filter((entry) => entry.DetailType === 'DriftReported').map((entry) => (JSON.parse(entry.Detail ?? '{}') as { name: string }).name);
    expect(hints()).toHaveLength(1);
    expect(driftReported()).toEqual(['continued-a']);
    const detail = JSON.parse(hints()[0]?.Detail ?? '{}') as HintDetail;
    expect(detail).toMatchObject({ kind: 'ServingRuntime', name: runtimeName, uid: runtime.metadata.uid, continuation: 2 });

    // The continuation hint resumes and finishes the fan-out; a duplicate of it does nothing.
    expect(await driftCheck({ ...hint, detail })).toEqual(NO_FAILURES);
    expect(await pinColumns(cluster.client, 'continued-b')).toMatchObject({ drifted: 'True', reason: 'RevisionMismatch' });
    expect(await driftCheck({ ...hint, detail })).toEqual(NO_FAILURES);
    expect(hints()).toHaveLength(1);
    expect(driftReported()).toEqual(['continued-a', 'continued-b']);
  });

  it('pin: a retryable failure names its record for redelivery', async () => {
    const created = await cluster.client.create(Resources.inferenceServices, { ...seedIsvc('missing-runtime'), spec: { ...seedIsvc().spec, runtime: { name: 'absent', kind: 'ServingRuntime', autoSync: false } } });
    const { response, messageId } = await invoke(pinHandler, envelope({ kind: 'InferenceService', namespace: NS, name: 'missing-runtime', uid: created.metadata.uid ?? '' }));
    expect(response).toEqual({ batchItemFailures: [{ itemIdentifier: messageId }] });
  });

  it('pin: acknowledges a record that is not a hint, without retrying it forever', async () => {
    const batch = toSqsEvent([envelope({ kind: 'InferenceService', namespace: NS, name: 'not-a-hint', uid: 'x' })]);
    const record = batch.Records[0];
    if (record) record.body = '{"detail": "not a hint"}';
    expect(await pinHandler(batch, context)).toEqual(NO_FAILURES);
  });
});
