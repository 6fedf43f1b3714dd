/**
 * Every function's handler, as Lambda invokes it, with its DynamoDB client signed as that
 * function and sent through the IAM-enforcing proxy: whatever path its code takes (a pin
 * that claims a sync token, a drift check that hands over to pin, a sweep, a forwarder run,
 * an admission review), the role in serverless.yml allows every call, and the calls are the
 * ones the role was written for. Handlers acknowledge terminal errors, and an
 * AccessDeniedException is one, so the proof is the proxy's record, not the handler's answer.
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Server } from 'node:http';
import type { Context } from 'aws-lambda';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { toSqsEvent } from '../../local/bus/sqs';
import { startEmbeddedCluster } from '../../local/cluster';
import type { EmbeddedCluster } from '../../local/cluster';
import { createDynamoStores } from '../../shared/adapters/dynamodb';
import { deriveWebhookToken } from '../../shared/domain/webhook/webhook-token';
import { WebhookEnv } from '../../shared/domain/webhook/webhook-settings';
import { createAppContext, setAppContext } from '../../shared/app/context';
import { loadConfig } from '../../shared/app/config';
import { Resources } from '../../shared/domain/model/resources';
import { annotateSync, applyRuntime, NS, RUNTIME, seedIsvc, seedRuntime } from '../pinning/support';
import { startIamWorld } from './support';
import type { IamWorld } from './support';

const CLUSTER_ID = 'c1';
const ISVC = 'isvc-under-roles';

type Handler = (event: unknown, context: Context) => Promise<unknown>;

function lambdaContext(functionName: string, remainingMs = 30_000): Context {
  return {
    awsRequestId: `${functionName}-request`,
    functionName: `ome-pinning-dev-${functionName}`,
    functionVersion: '$LATEST',
    invokedFunctionArn: `arn:aws:lambda:eu-west-1:000000000000:function:ome-pinning-dev-${functionName}`,
    memoryLimitInMB: '512',
    logGroupName: `/aws/lambda/ome-pinning-dev-${functionName}`,
    logStreamName: 'test',
    callbackWaitsForEmptyEventLoop: true,
    getRemainingTimeInMillis: () => remainingMs,
    done: () => undefined,
    fail: () => undefined,
    succeed: () => undefined,
  };
}

/** Each object's uid, as the forwarder would put it in the hint (handlers drop hints for a replaced object). */
const uids = new Map<string, string>();

function hint(kind: string, name: string, namespace: string | undefined, changed: Record<string, boolean> = {}, apiVersion = 'ome.io/v1beta1'): unknown {
  // As the function's event source delivers it: one SQS record holding the rule's event.
  return toSqsEvent([{
    version: '0',
    id: `${kind}-${name}`,
    'detail-type': 'Kubernetes Object Changed',
    source: 'ome.pinning',
    account: '000000000000',
    time: new Date().toISOString(),
    region: 'eu-west-1',
    resources: [],
    detail: {
      clusterId: CLUSTER_ID,
      apiVersion,
      kind,
      ...(namespace === undefined ? {} : { namespace }),
      name,
      uid: uids.get(`${kind}/${name}`) ?? '',
      resourceVersion: '1',
      change: 'modified',
      changed: { spec: true, runtimeSync: false, rolloutRepin: false, rolloutPromote: false, ...changed },
      observedAt: new Date().toISOString(),
    },
  }], { region: 'eu-west-1' });
}

/** EventBridge's PutEvents, accepting every entry: the forwarder publishes its hints here. */
async function startEventBridgeStub(): Promise<{ endpoint: string; server: Server }> {
  const server = createServer((request, response) => {
    let body = '';
    request.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')));
    request.on('end', () => {
      const entries = ((JSON.parse(body || '{}') as { Entries?: unknown[] }).Entries ?? []).map((_, index) => ({ EventId: `e${index}` }));
      response.writeHead(200, { 'content-type': 'application/x-amz-json-1.1' });
      response.end(JSON.stringify({ FailedEntryCount: 0, Entries: entries }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  return { endpoint: `http://127.0.0.1:${typeof address === 'object' && address !== null ? address.port : 0}`, server };
}

/** `dynamodb:Action` on `FAMILY`: what each allowed call did, by item family. */
function callsOf(world: IamWorld, functionName: string, since: number): string[] {
  const families = (key: string) => (key === 'REGISTRY' || key === 'FLEET' ? key : `${key.split('#')[0]}#*`);
  return [
    ...new Set(
      world
        .decisionsOf(functionName, since)
        .flatMap((decision) => decision.requests.map((request) => `${request.action} on ${(request.context?.['dynamodb:LeadingKeys'] ?? []).map(families).join(',')}`)),
    ),
  ].sort();
}

describe('Every function handler under its own role', () => {
  let world: IamWorld;
  let cluster: EmbeddedCluster;
  let bus: { endpoint: string; server: Server };
  const handlers = new Map<string, Handler>();

  /** Installs the process context the handlers read: this function's identity, the test's endpoints. */
  function actAs(functionName: string): void {
    const config = loadConfig({
      TABLE_NAME: world.roles.tableName,
      AWS_REGION: world.roles.region,
      EVENT_BUS_NAME: 'ome-pinning-dev-bus',
      EVENTBRIDGE_ENDPOINT: bus.endpoint,
      // Long enough to list every stream on a loaded machine, so the run ends with checkpoints.
      FORWARDER_MAX_RUNTIME: '2s',
    });
    setAppContext(createAppContext({ config, stores: createDynamoStores(world.clientAs(functionName), { tableName: world.roles.tableName }) }));
  }

  /** Runs one handler as `functionName`; returns its answer and the DynamoDB calls it made. */
  async function invoke(functionName: string, event: unknown, remainingMs?: number): Promise<{ answer: unknown; calls: string[] }> {
    actAs(functionName);
    const since = world.proxy.decisions.length;
    const handler = handlers.get(functionName);
    if (handler === undefined) throw new Error(`no handler for ${functionName}`);
    const answer = await handler(event, lambdaContext(functionName, remainingMs));
    expect(world.decisionsOf(functionName, since).filter((decision) => !decision.allowed), `${functionName}: refused calls`).toEqual([]);
    return { answer, calls: callsOf(world, functionName, since) };
  }

  beforeAll(async () => {
    // The handlers' loggers read their level at import: keep the report readable.
    process.env.POWERTOOLS_LOG_LEVEL = process.env.DEBUG_UNDER_ROLES ? 'DEBUG' : 'SILENT';
    process.env.POWERTOOLS_METRICS_DISABLED = 'true';
    world = await startIamWorld();
    cluster = await startEmbeddedCluster({ workloadReadyDelayMs: 5 });
    bus = await startEventBridgeStub();
    await cluster.client.create(Resources.namespaces, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } });
    await applyRuntime(cluster.client, seedRuntime('0.9'));
    await cluster.client.create(Resources.inferenceServices, seedIsvc(ISVC));
    uids.set(`InferenceService/${ISVC}`, (await cluster.client.get(Resources.inferenceServices, NS, ISVC)).metadata.uid ?? '');
    uids.set(`ServingRuntime/${RUNTIME}`, (await cluster.client.get(Resources.servingRuntimes, NS, RUNTIME)).metadata.uid ?? '');
    // Registration: an operator's write, straight to the table.
    await createDynamoStores(world.direct, { tableName: world.roles.tableName }).clusters.putCluster({
      mode: 'standalone', id: CLUSTER_ID,
      server: cluster.url,
      omeNamespace: 'ome',
      credentials: { kind: 'kubeconfig', kubeconfig: cluster.kubeconfig },
    });
    for (const name of world.roles.functions.keys()) {
      const module = (await import(`../../functions/${name}/handler.ts`)) as { handler: Handler };
      handlers.set(name, module.handler);
    }
  }, 120_000);

  afterAll(async () => {
    setAppContext(undefined);
    await new Promise((resolve) => bus?.server.close(resolve));
    await cluster?.stop();
    await world?.stop();
  });

  it('pin: pins, then claims and completes a sync token', async () => {
    // Act: the first pin, then a roll-forward request.
    const first = await invoke('pin', hint('InferenceService', ISVC, NS));
    await applyRuntime(cluster.client, seedRuntime('0.85'));
    await annotateSync(cluster.client, ISVC, 'under-roles-1');
    const second = await invoke('pin', hint('InferenceService', ISVC, NS, { runtimeSync: true }));

    // Assess
    expect(first.answer).toEqual({ batchItemFailures: [] });
    expect(second.answer).toEqual({ batchItemFailures: [] });
    const isvc = await cluster.client.get(Resources.inferenceServices, NS, ISVC);
    expect((isvc.status as { lastRuntimeSyncToken?: string } | undefined)?.lastRuntimeSyncToken).toBe('under-roles-1');
    expect(second.calls).toEqual(['dynamodb:GetItem on REGISTRY', 'dynamodb:PutItem on IDEMPOTENCY#*', 'dynamodb:UpdateItem on IDEMPOTENCY#*', 'dynamodb:UpdateItem on LEASE#*']);
  }, 60_000);

  it('drift-check: a runtime change reaches the pinned InferenceService and its waiting sync token', async () => {
    // Prepare
    await applyRuntime(cluster.client, seedRuntime('0.9'));
    await annotateSync(cluster.client, ISVC, 'under-roles-2');

    // Act
    const { calls } = await invoke('drift-check', hint('ServingRuntime', RUNTIME, NS));

    // Assess: a fan-out that fits one list page keeps no continuation (a longer one's
    // CONTINUATION#* calls are proven in test/pinning/handlers.test.ts and the template tests)
    expect(calls).toEqual([
      'dynamodb:GetItem on REGISTRY',
      'dynamodb:PutItem on IDEMPOTENCY#*',
      'dynamodb:UpdateItem on IDEMPOTENCY#*',
      'dynamodb:UpdateItem on LEASE#*',
    ]);
  }, 60_000);

  it('repin-apply: a repin request is handled under the object lease', async () => {
    const { calls } = await invoke('repin-apply', hint('InferenceService', ISVC, NS, { rolloutRepin: true }));
    expect(calls).toContain('dynamodb:GetItem on REGISTRY');
    expect(calls).toContain('dynamodb:UpdateItem on LEASE#*');
  }, 60_000);

  it('rollout-run: a hint takes the lease, the schedule lists the registry', async () => {
    const onHint = await invoke('rollout-run', hint('InferenceService', ISVC, NS));
    const onSchedule = await invoke('rollout-run', { source: 'aws.events', 'detail-type': 'Scheduled Event', detail: {} });
    expect(onHint.calls).toEqual(['dynamodb:GetItem on REGISTRY', 'dynamodb:UpdateItem on LEASE#*']);
    expect(onSchedule.calls).toEqual(['dynamodb:GetItem on REGISTRY', 'dynamodb:Query on REGISTRY']);
  }, 60_000);

  it('revision-gc: the scheduled sweep of every cluster', async () => {
    const { answer, calls } = await invoke('revision-gc', { source: 'aws.events', 'detail-type': 'Scheduled Event', detail: {} });
    expect(answer).toEqual({ clusters: 1, failed: 0 });
    expect(calls).toEqual(['dynamodb:GetItem on CONTINUATION#*', 'dynamodb:GetItem on REGISTRY', 'dynamodb:Query on REGISTRY', 'dynamodb:UpdateItem on LEASE#*']);
  }, 60_000);

  it('resync: relists the registered cluster as hints, stores its drift report and lists the sync waves', async () => {
    const { answer, calls } = await invoke('resync', { source: 'aws.events', 'detail-type': 'Scheduled Event', detail: {} });
    expect(answer).toMatchObject({ clusters: 1, failed: 0, waves: 0 });
    expect((answer as { published: number }).published).toBeGreaterThan(0);
    expect(calls).toEqual(['dynamodb:GetItem on REGISTRY', 'dynamodb:PutItem on FLEET', 'dynamodb:Query on FLEET', 'dynamodb:Query on REGISTRY']);
  }, 60_000);

  it('forward-watch-events: a run forwards, checkpoints and releases its lease', async () => {
    const { answer, calls } = await invoke('forward-watch-events', { source: 'aws.events', 'detail-type': 'Scheduled Event', detail: {} }, 5_000);
    expect((answer as { clusters: unknown[] }).clusters).toHaveLength(1);
    // A first run: the batched load finds no checkpoints item and reads the cluster's partition.
    expect(calls).toEqual([
      'dynamodb:BatchGetItem on CHECKPOINT#*',
      'dynamodb:BatchWriteItem on CHECKPOINT#*',
      'dynamodb:GetItem on REGISTRY',
      'dynamodb:Query on CHECKPOINT#*',
      'dynamodb:Query on REGISTRY',
      'dynamodb:UpdateItem on LEASE#*',
    ]);
  }, 60_000);

  it('admission-webhook: a review that looks the runtime up reads the registry only', async () => {
    // Prepare
    const review = {
      apiVersion: 'admission.k8s.io/v1',
      kind: 'AdmissionReview',
      request: { uid: 'under-roles', kind: { group: 'ome.io', version: 'v1beta1', kind: 'InferenceService' }, operation: 'CREATE', namespace: NS, object: seedIsvc('new-isvc') },
    };
    const key = randomBytes(32).toString('base64url');
    const keyFile = join(await mkdtemp(join(tmpdir(), 'ome-webhook-key-')), 'key');
    await writeFile(keyFile, key, { mode: 0o600 });
    process.env[WebhookEnv.keyFile] = keyFile;
    const token = deriveWebhookToken(Buffer.from(key, 'utf8'), CLUSTER_ID);
    const path = `/clusters/${CLUSTER_ID}/${token}/validate/inferenceservice`;

    // Act
    const { answer, calls } = await invoke('admission-webhook', {
      version: '2.0',
      routeKey: '$default',
      rawPath: path,
      rawQueryString: '',
      headers: { 'content-type': 'application/json' },
      requestContext: { http: { method: 'POST', path } },
      body: JSON.stringify(review),
      isBase64Encoded: false,
    });

    // Assess
    expect(JSON.parse((answer as { body: string }).body)).toMatchObject({ response: { uid: 'under-roles', allowed: true } });
    expect(calls).toEqual(['dynamodb:GetItem on REGISTRY']);
    delete process.env[WebhookEnv.keyFile];
  }, 60_000);
});
