/**
 * The webhook as `npm start` serves it: the key in the data directory (mode 0600), each
 * embedded cluster registered with its token, the real kubectl creating an InferenceService
 * through an authenticated review, and the same endpoint refusing callers without a token.
 */
import { execFile } from 'node:child_process';
import { request as httpsRequest } from 'node:https';
import { readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LOCAL_ORIGIN_SECRET_FILE, LOCAL_WEBHOOK_KEY_FILE } from '../../local/webhook-key';
import { WebhookMessage } from '../../shared/use-cases/admission/webhook-request';
import { deriveWebhookToken, ORIGIN_SECRET_HEADER } from '../../shared/domain/webhook/webhook-token';
import { WebhookName } from '../../shared/domain/vocabulary';
import { ISVC, NS, START_TIMEOUT_MS, kubectl, seedManifests, startObservedControlPlane, type ObservedControlPlane } from '../control-plane/support';
import { ON_SERVER } from '../support/test-cluster';

function kubectlResult(kubeconfig: string, args: string[], stdin: string): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = execFile('kubectl', ['--kubeconfig', kubeconfig, ...args], { timeout: 30_000 }, (error, stdout, stderr) => {
      resolve({ code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, stdout, stderr });
    });
    child.stdin?.end(stdin);
  });
}

const jsonOf = (text: string): unknown => (text === '' ? undefined : (JSON.parse(text) as unknown));

/** POSTs JSON: over TLS trusting `caData` (a real cluster's webhook), or plain HTTP. */
function postJson(url: string, body: unknown, caData?: string, headers: Record<string, string> = {}): Promise<{ status: number; json: unknown }> {
  const allHeaders = { 'content-type': 'application/json', ...headers };
  if (!caData) return fetch(url, { method: 'POST', headers: allHeaders, body: JSON.stringify(body) }).then(async (response) => ({ status: response.status, json: jsonOf(await response.text()) }));
  return new Promise((resolve, reject) => {
    const request = httpsRequest(url, { method: 'POST', ca: Buffer.from(caData, 'base64'), headers: allHeaders }, (response) => {
      let text = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => (text += chunk));
      response.on('end', () => resolve({ status: response.statusCode ?? 0, json: jsonOf(text) }));
    });
    request.on('error', reject);
    request.end(JSON.stringify(body));
  });
}

describe(`admission webhook in the local control plane${ON_SERVER}`, () => {
  let observed: ObservedControlPlane;
  let kubeconfig: string;
  let key: Buffer;

  beforeAll(async () => {
    observed = await startObservedControlPlane();
    kubeconfig = observed.plane.clusters[0]?.kubeconfigPath ?? '';
    key = Buffer.from((await readFile(join(observed.dataDir, LOCAL_WEBHOOK_KEY_FILE), 'utf8')).trim());
  }, START_TIMEOUT_MS);

  afterAll(async () => {
    await observed?.stop();
  });

  it('keeps the key in the data directory, readable by its owner only, and out of the registry', async () => {
    // Act
    const { mode } = await stat(join(observed.dataDir, LOCAL_WEBHOOK_KEY_FILE));
    const records = await observed.plane.app.stores.clusters.listClusters();

    // Assess
    expect(mode & 0o777).toBe(0o600);
    expect(key.byteLength).toBeGreaterThanOrEqual(32);
    expect(JSON.stringify(records)).not.toContain(key.toString('utf8'));
  });

  it("registers each webhook with the cluster's token in its URL", async () => {
    // Act
    const configuration = JSON.parse(await kubectl(kubeconfig, ['get', 'validatingwebhookconfiguration', 'ome-pinning-webhook', '-o', 'json'])) as {
      webhooks: Array<{ name: string; clientConfig: { url: string } }>;
    };

    // Assess
    const token = deriveWebhookToken(key, 'local');
    expect(configuration.webhooks.map((webhook) => [webhook.name, webhook.clientConfig.url])).toEqual([
      [WebhookName.inferenceService, `${observed.plane.webhookUrl}/clusters/local/${token}/validate/inferenceservice`],
      [WebhookName.controllerRevisionImmutability, `${observed.plane.webhookUrl}/clusters/local/${token}/validate/controllerrevision`],
    ]);
  });

  it('lets kubectl create an InferenceService whose runtime the webhook looked up, and deny one whose runtime is missing', async () => {
    // Act
    const created = await kubectlResult(kubeconfig, ['apply', '-f', '-'], seedManifests('0.9'));
    const missing = seedManifests('0.9', ['no-runtime']).replaceAll('name: sglang-llama-3-2-3b\n    kind: ServingRuntime', 'name: no-such-runtime\n    kind: ServingRuntime');
    const denied = await kubectlResult(kubeconfig, ['apply', '-f', '-'], missing);

    // Assess
    expect(created).toMatchObject({ code: 0, stderr: '' });
    expect(created.stdout).toContain(`inferenceservice.ome.io/${ISVC} created`);
    expect(denied.code).toBe(1);
    expect(denied.stderr).toContain(
      `admission webhook "${WebhookName.inferenceService}" denied the request: runtime no-such-runtime does not support model llama-3-2-3b-instruct: ServingRuntime no-such-runtime not found in namespace ${NS}`,
    );
  });

  const review = { apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', request: { uid: 'u', kind: { group: 'ome.io', version: 'v1beta1', kind: 'InferenceService' }, operation: 'CREATE' } };
  const refusals = [
    ['without a token', (): string => '/clusters/local/validate/inferenceservice', 403, 401, WebhookMessage.unauthorized],
    ["with another cluster's token", (): string => `/clusters/local/${deriveWebhookToken(key, 'local-2')}/validate/inferenceservice`, 403, 403, WebhookMessage.forbidden],
    ['with a malformed % escape', (): string => `/clusters/%E0%A4%A/${deriveWebhookToken(key, 'local')}/validate/inferenceservice`, 400, 400, WebhookMessage.badRequest],
  ] as const;

  it.each(refusals)('answers a review %s at the front door (%i), without calling the function', async (_name, path, frontDoorStatus) => {
    // Arrange
    const before = observed.plane.webhook?.invocations().invocations;

    // Act
    const response = await postJson(`${observed.plane.webhookUrl}${path()}?timeout=10s`, review, observed.plane.clusters[0]?.real?.caData);

    // Assess
    expect(response).toEqual({ status: frontDoorStatus, json: undefined });
    expect(observed.plane.webhook?.invocations().invocations).toBe(before);
  });

  it.each(refusals)('refuses a review %s at the function itself too, with %i then %i and a fixed body', async (_name, path, _frontDoorStatus, statusCode, message) => {
    // Arrange: the front door's own header, as if it had let the call through.
    const originSecret = (await readFile(join(observed.dataDir, LOCAL_ORIGIN_SECRET_FILE), 'utf8')).trim();

    // Act
    const response = await postJson(`${observed.plane.webhook?.functionUrl}${path()}?timeout=10s`, review, undefined, { [ORIGIN_SECRET_HEADER]: originSecret });

    // Assess
    expect(response).toEqual({ status: statusCode, json: { message } });
  });

  it('refuses a call that did not come through the front door, with the cluster\'s own token', async () => {
    // Act
    const response = await postJson(`${observed.plane.webhook?.functionUrl}/clusters/local/${deriveWebhookToken(key, 'local')}/validate/inferenceservice?timeout=10s`, review);

    // Assess
    expect(response).toEqual({ status: 403, json: { message: WebhookMessage.forbidden } });
  });
});
