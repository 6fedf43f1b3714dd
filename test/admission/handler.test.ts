/**
 * The Lambda handler on function URL events (payload format 2.0): the token is checked
 * before the registry or a cluster is touched, and no answer carries error text.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { APIGatewayProxyEventV2, Context } from 'aws-lambda';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { handler, serveAdmissionHttp } from '../../functions/admission-webhook/handler';
import { WebhookMessage } from '../../shared/use-cases/admission/webhook-request';
import { WebhookEnv } from '../../shared/domain/webhook/webhook-settings';
import { deriveWebhookToken } from '../../shared/domain/webhook/webhook-token';
import { createAppContext, setAppContext } from '../../shared/app/context';
import type { ClusterConnector } from '../../shared/app/context';
import { loadConfig } from '../../shared/app/config';
import { createMemoryStores } from '../../shared/adapters/memory';

const KEY = 'handler-test-key-with-at-least-thirty-two-bytes';
const context = { functionName: 'admission-webhook', awsRequestId: 'req-1', getRemainingTimeInMillis: () => 10_000 } as unknown as Context;

function functionUrlEvent(path: string, body: string, options: { base64?: boolean; method?: string } = {}): APIGatewayProxyEventV2 {
  return {
    version: '2.0',
    routeKey: '$default',
    rawPath: path,
    rawQueryString: 'timeout=10s',
    queryStringParameters: { timeout: '10s' },
    headers: { 'content-type': 'application/json' },
    isBase64Encoded: options.base64 ?? false,
    body: options.base64 ? Buffer.from(body).toString('base64') : body,
    requestContext: { http: { method: options.method ?? 'POST', path } } as APIGatewayProxyEventV2['requestContext'],
  };
}

const pathFor = (clusterId: string, route = 'inferenceservice', token = deriveWebhookToken(Buffer.from(KEY), clusterId)) => `/clusters/${clusterId}/${token}/validate/${route}`;

const revision = (data: unknown) => ({
  metadata: { name: 'cr-srt-0123abcd', namespace: 'ome', labels: { 'ome.io/runtime-of': 'srt' }, annotations: { 'ome.io/created-by': 'ome-controller' } },
  data,
  revision: 1,
});

const revisionReview = JSON.stringify({
  apiVersion: 'admission.k8s.io/v1',
  kind: 'AdmissionReview',
  request: { uid: 'r-9', kind: { group: 'apps', version: 'v1', kind: 'ControllerRevision' }, operation: 'UPDATE', namespace: 'ome', oldObject: revision({ a: 1 }), object: revision({ a: 2 }) },
});

const isvcReview = JSON.stringify({
  apiVersion: 'admission.k8s.io/v1',
  kind: 'AdmissionReview',
  request: {
    uid: 'i-1',
    kind: { group: 'ome.io', version: 'v1beta1', kind: 'InferenceService' },
    operation: 'CREATE',
    namespace: 'llama-demo',
    object: { metadata: { name: 'llama', namespace: 'llama-demo' }, spec: { model: { name: 'm' }, runtime: { name: 'srt' }, engine: {} } },
  },
});

type Result = { statusCode: number; headers: Record<string, string>; body: string };

describe('admission-webhook handler', () => {
  const dir = mkdtempSync(join(tmpdir(), 'webhook-handler-'));
  const reads: string[] = [];
  const connects: string[] = [];
  const saved = { ...process.env };
  let registry: ReturnType<typeof createMemoryStores>;
  let connectCluster: ClusterConnector;

  beforeAll(async () => {
    writeFileSync(join(dir, 'key'), `${KEY}\n`, { mode: 0o600 });
    process.env[WebhookEnv.keyFile] = join(dir, 'key');
    delete process.env[WebhookEnv.keySecret];
    const stores = createMemoryStores();
    await stores.clusters.putCluster({ mode: 'standalone', id: 'prod-eu', server: 'https://127.0.0.1:1', credentials: { kind: 'kubeconfig', kubeconfig: 'apiVersion: v1\nkind: Config\n' }, omeNamespace: 'ome' });
    const getCluster = stores.clusters.getCluster.bind(stores.clusters);
    stores.clusters.getCluster = (id) => {
      reads.push(id);
      return getCluster(id);
    };
    connectCluster = (record) => {
      connects.push(record.id);
      throw new Error(`connect to ${record.server} with role arn:aws:iam::123:role/x refused`);
    };
    registry = stores;
  });

  // A context per test: it keeps a cluster's mode for a minute, and each test counts its own reads.
  beforeEach(() => {
    reads.length = 0;
    connects.length = 0;
    setAppContext(createAppContext({ config: loadConfig({ TABLE_NAME: 'unused' }), stores: registry, connectCluster }));
  });

  afterAll(() => {
    setAppContext(undefined);
    process.env = saved;
    rmSync(dir, { recursive: true, force: true });
  });

  it('answers an authenticated function URL event (base64 body) with the AdmissionReview response as JSON', async () => {
    // Act
    const result = (await handler(functionUrlEvent(pathFor('prod-eu', 'controllerrevision'), revisionReview, { base64: true }), context)) as Result;

    // Assess
    expect(result.statusCode).toBe(200);
    expect(result.headers['content-type']).toBe('application/json');
    expect(JSON.parse(result.body)).toEqual({
      apiVersion: 'admission.k8s.io/v1',
      kind: 'AdmissionReview',
      response: { uid: 'r-9', allowed: false, status: { code: 403, reason: 'Forbidden', message: 'ControllerRevision ome/cr-srt-0123abcd is owned by OME; .data is immutable' } },
    });
  });

  it.each([
    ['an unauthenticated review', functionUrlEvent('/clusters/prod-eu/validate/inferenceservice', isvcReview), 401],
    ['an unauthenticated review naming no cluster', functionUrlEvent('/validate/inferenceservice', isvcReview), 401],
    ["another cluster's token", functionUrlEvent(pathFor('prod-eu', 'inferenceservice', deriveWebhookToken(Buffer.from(KEY), 'prod-us')), isvcReview), 403],
    ['a wrong token', functionUrlEvent(pathFor('prod-eu', 'inferenceservice', 'A'.repeat(43)), isvcReview), 403],
    ['a malformed % escape', functionUrlEvent(`/clusters/%E0%A4%A/${'A'.repeat(43)}/validate/inferenceservice`, isvcReview), 400],
    ['a GET', functionUrlEvent(pathFor('prod-eu'), '', { method: 'GET' }), 405],
    ['a body that is not JSON', functionUrlEvent(pathFor('prod-eu'), 'not json'), 400],
  ])('refuses %s with %i before reading the registry or a cluster', async (_name, event, statusCode) => {
    // Act
    const result = (await handler(event, context)) as Result;

    // Assess
    expect(result.statusCode).toBe(statusCode);
    expect(Object.keys(JSON.parse(result.body))).toEqual(['message']);
    expect(result.body).not.toMatch(/prod-eu|arn:|registered/);
    expect(reads).toEqual([]);
    expect(connects).toEqual([]);
  });

  it('answers an authenticated review the same for an unregistered cluster and an unreachable one, without their error text', async () => {
    // Act
    const unregistered = (await handler(functionUrlEvent(pathFor('nowhere'), isvcReview), context)) as Result;
    const unreachable = (await handler(functionUrlEvent(pathFor('prod-eu'), isvcReview), context)) as Result;

    // Assess: the registry was read only now, after the token held (the mode, then the client).
    expect(reads).toEqual(['nowhere', 'prod-eu', 'prod-eu']);
    expect(connects).toEqual(['prod-eu']);
    expect(unregistered.body).toBe(unreachable.body);
    expect(JSON.parse(unreachable.body).response).toEqual({ uid: 'i-1', allowed: false, status: { code: 500, reason: 'InternalError', message: WebhookMessage.notChecked } });
  });

  it('answers 503 with a fixed body, reading nothing, when no key is configured', async () => {
    // Act
    const result = await serveAdmissionHttp({ method: 'POST', path: pathFor('prod-eu'), body: isvcReview }, { env: {} });

    // Assess
    expect(result.statusCode).toBe(503);
    expect(JSON.parse(result.body)).toEqual({ message: WebhookMessage.unavailable });
    expect(reads).toEqual([]);
  });
});
