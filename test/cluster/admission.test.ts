/**
 * Validating admission webhooks: the AdmissionReview the server sends, HTTPS trusting
 * caBundle, rule, namespace and object selectors, failurePolicy, timeouts and dry runs.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startEmbeddedCluster, type EmbeddedCluster } from '../../local/cluster';
import { InvalidInputError, UnavailableError } from '../../shared/domain/errors';
import type { KubeObject, ResourceType } from '../../shared/ports/cluster';
import { FIXTURE_CRDS } from './support';

const ISVC: ResourceType = { group: 'ome.io', version: 'v1beta1', plural: 'inferenceservices', kind: 'InferenceService', namespaced: true };
const REVISIONS: ResourceType = { group: 'apps', version: 'v1', plural: 'controllerrevisions', kind: 'ControllerRevision', namespaced: true };
const NAMESPACES: ResourceType = { group: '', version: 'v1', plural: 'namespaces', kind: 'Namespace', namespaced: false };
const WEBHOOKS: ResourceType = {
  group: 'admissionregistration.k8s.io', version: 'v1', plural: 'validatingwebhookconfigurations', kind: 'ValidatingWebhookConfiguration', namespaced: false,
};

interface Review {
  request: {
    uid: string;
    operation: string;
    name: string;
    namespace?: string;
    subResource?: string;
    dryRun: boolean;
    kind: { group: string; version: string; kind: string };
    resource: { group: string; version: string; resource: string };
    object: KubeObject | null;
    oldObject: KubeObject | null;
  };
}

function isvc(name: string, namespace = 'team-a'): KubeObject {
  return { apiVersion: 'ome.io/v1beta1', kind: 'InferenceService', metadata: { name, namespace }, spec: { model: { name: 'm' } } };
}

describe('validating admission webhooks', () => {
  let cluster: EmbeddedCluster;
  let server: https.Server;
  let url: string;
  let caBundle: string;
  const reviews: Review[] = [];
  let delayMs = 0;
  const dir = mkdtempSync(join(tmpdir(), 'embedded-webhook-'));

  beforeAll(async () => {
    execFileSync('openssl', [
      'req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '1', '-subj', '/CN=127.0.0.1',
      '-addext', 'subjectAltName=IP:127.0.0.1', '-keyout', join(dir, 'key.pem'), '-out', join(dir, 'cert.pem'),
    ], { stdio: 'ignore' });
    const cert = readFileSync(join(dir, 'cert.pem'));
    caBundle = cert.toString('base64');
    server = https.createServer({ key: readFileSync(join(dir, 'key.pem')), cert }, (req, res) => {
      let body = '';
      req.on('data', (chunk: Buffer) => (body += chunk.toString()));
      req.on('end', () => {
        const review = JSON.parse(body) as Review;
        reviews.push(review);
        const deny = review.request.object?.metadata.labels?.deny ?? review.request.oldObject?.metadata.labels?.deny;
        const response = deny
          ? { uid: review.request.uid, allowed: false, status: { code: 403, reason: 'Forbidden', message: `denied: ${deny}` } }
          : { uid: review.request.uid, allowed: true, warnings: ['checked by the test webhook'] };
        setTimeout(() => {
          res.writeHead(200, { 'Content-Type': 'application/json' });
          res.end(JSON.stringify({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', response }));
        }, delayMs);
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
    cluster = await startEmbeddedCluster({ crdDir: FIXTURE_CRDS, namespaces: ['default', 'team-a', 'team-b', 'ome'] });
    await cluster.client.patch(NAMESPACES, undefined, 'team-b', { metadata: { labels: { skip: 'true' } } }, { type: 'merge' });
  });

  afterAll(async () => {
    await cluster?.stop();
    await new Promise((resolve) => server?.close(resolve));
    rmSync(dir, { recursive: true, force: true });
  });

  beforeEach(async () => {
    reviews.length = 0;
    delayMs = 0;
    const existing = await cluster.client.list(WEBHOOKS);
    for (const item of existing.items) await cluster.client.delete(WEBHOOKS, undefined, item.metadata.name);
  });

  async function register(webhook: Record<string, unknown>): Promise<void> {
    await cluster.client.create(WEBHOOKS, {
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'ValidatingWebhookConfiguration',
      metadata: { name: 'test' },
      webhooks: [{ name: 'check.test.io', admissionReviewVersions: ['v1'], sideEffects: 'None', clientConfig: { url: `${url}/validate`, caBundle }, ...webhook }],
    });
  }

  it('sends an AdmissionReview over HTTPS trusting caBundle, and a denial fails the write', async () => {
    await register({ rules: [{ apiGroups: ['ome.io'], apiVersions: ['v1beta1'], operations: ['CREATE', 'UPDATE'], resources: ['inferenceservices'] }] });
    await cluster.client.create(ISVC, isvc('allowed'));
    expect(reviews).toHaveLength(1);
    expect(reviews[0]?.request).toMatchObject({
      operation: 'CREATE',
      name: 'allowed',
      namespace: 'team-a',
      dryRun: false,
      kind: { group: 'ome.io', version: 'v1beta1', kind: 'InferenceService' },
      resource: { group: 'ome.io', version: 'v1beta1', resource: 'inferenceservices' },
      oldObject: null,
    });
    const denied = await cluster.client.patch(ISVC, 'team-a', 'allowed', { metadata: { labels: { deny: 'yes' } } }, { type: 'merge' }).catch((e: unknown) => e);
    expect(denied).toBeInstanceOf(InvalidInputError);
    expect((denied as Error).message).toBe('admission webhook "check.test.io" denied the request: denied: yes');
    expect(reviews[1]?.request).toMatchObject({ operation: 'UPDATE', oldObject: { metadata: { name: 'allowed' } } });
    expect((await cluster.client.get(ISVC, 'team-a', 'allowed')).metadata.labels).toBeUndefined();
  });

  it('answers a denial over HTTP with the webhook Status and a Warning header for allowed writes', async () => {
    await register({ rules: [{ apiGroups: ['ome.io'], apiVersions: ['*'], operations: ['*'], resources: ['*'] }] });
    const path = '/apis/ome.io/v1beta1/namespaces/team-a/inferenceservices';
    const ok = await fetch(`${cluster.url}${path}`, { method: 'POST', headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${cluster.adminToken}` }, body: JSON.stringify(isvc('warned')) });
    expect(ok.status).toBe(201);
    expect(ok.headers.get('warning')).toBe('299 - "checked by the test webhook"');
    const denied = await fetch(`${cluster.url}${path}`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${cluster.adminToken}` },
      body: JSON.stringify({ ...isvc('refused'), metadata: { name: 'refused', labels: { deny: 'policy' } } }),
    });
    expect(denied.status).toBe(403);
    expect(await denied.json()).toEqual({
      kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure',
      message: 'admission webhook "check.test.io" denied the request: denied: policy', reason: 'Forbidden', code: 403,
    });
  });

  it('leaves the status subresource alone unless a rule names it, and calls DELETE rules with the old object', async () => {
    await register({ rules: [{ apiGroups: ['ome.io'], apiVersions: ['v1beta1'], operations: ['UPDATE', 'DELETE'], resources: ['inferenceservices'] }] });
    await cluster.client.create(ISVC, { ...isvc('status-only'), metadata: { name: 'status-only', namespace: 'team-a', labels: { deny: 'x' } } });
    await cluster.client.patch(ISVC, 'team-a', 'status-only', { status: { pinnedRevisionName: 'r' } }, { type: 'merge', subresource: 'status' });
    expect(reviews).toHaveLength(0);
    await expect(cluster.client.delete(ISVC, 'team-a', 'status-only')).rejects.toThrow('admission webhook "check.test.io" denied the request: denied: x');
    expect(reviews[0]?.request).toMatchObject({ operation: 'DELETE', object: null, oldObject: { metadata: { name: 'status-only' } } });
  });

  it('matches namespaceSelector and objectSelector against old and new objects', async () => {
    await register({
      rules: [{ apiGroups: ['apps'], apiVersions: ['v1'], operations: ['CREATE', 'UPDATE'], resources: ['controllerrevisions'] }],
      namespaceSelector: { matchExpressions: [{ key: 'skip', operator: 'DoesNotExist' }] },
      objectSelector: { matchExpressions: [{ key: 'ome.io/runtime-of', operator: 'Exists' }] },
    });
    const revision = (namespace: string, labels: Record<string, string>): KubeObject => ({
      apiVersion: 'apps/v1', kind: 'ControllerRevision', metadata: { name: 'r1', namespace, labels }, revision: 1, data: {},
    });
    await cluster.client.create(REVISIONS, revision('team-b', { 'ome.io/runtime-of': 'x', deny: 'ns' }));
    await cluster.client.create(REVISIONS, revision('team-a', { deny: 'unlabelled' }));
    expect(reviews).toHaveLength(0);
    await cluster.client.create(REVISIONS, revision('ome', { 'ome.io/runtime-of': 'x' }));
    expect(reviews).toHaveLength(1);
    const current = await cluster.client.get(REVISIONS, 'ome', 'r1');
    await expect(cluster.client.replace(REVISIONS, { ...current, metadata: { ...current.metadata, labels: { deny: 'label-removed' } } })).rejects.toThrow('denied: label-removed');
  });

  it('fails closed or open by failurePolicy, within timeoutSeconds', async () => {
    delayMs = 1500;
    await register({ rules: [{ apiGroups: ['ome.io'], apiVersions: ['v1beta1'], operations: ['CREATE'], resources: ['inferenceservices'] }], timeoutSeconds: 1, failurePolicy: 'Fail' });
    const error = await cluster.client.create(ISVC, isvc('slow')).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UnavailableError);
    expect((error as Error).message).toBe(`Internal error occurred: failed calling webhook "check.test.io": failed to call webhook: Post "${url}/validate?timeout=1s": context deadline exceeded`);
    await expect(cluster.client.get(ISVC, 'team-a', 'slow')).rejects.toThrow('not found');

    await cluster.client.delete(WEBHOOKS, undefined, 'test');
    await register({ rules: [{ apiGroups: ['ome.io'], apiVersions: ['v1beta1'], operations: ['CREATE'], resources: ['inferenceservices'] }], failurePolicy: 'Ignore', clientConfig: { url: 'http://127.0.0.1:1/unreachable' } });
    await cluster.client.create(ISVC, isvc('ignored'));
    expect((await cluster.client.get(ISVC, 'team-a', 'ignored')).metadata.name).toBe('ignored');
  });

  it('sends dry runs as such, and refuses them to webhooks with side effects', async () => {
    await register({ rules: [{ apiGroups: ['ome.io'], apiVersions: ['v1beta1'], operations: ['CREATE'], resources: ['inferenceservices'] }] });
    await cluster.client.create(ISVC, isvc('dry'), { dryRun: 'All' });
    expect(reviews[0]?.request.dryRun).toBe(true);
    await expect(cluster.client.get(ISVC, 'team-a', 'dry')).rejects.toThrow('not found');
    await cluster.client.delete(WEBHOOKS, undefined, 'test');
    await register({ rules: [{ apiGroups: ['ome.io'], apiVersions: ['v1beta1'], operations: ['CREATE'], resources: ['inferenceservices'] }], sideEffects: 'Some' });
    await expect(cluster.client.create(ISVC, isvc('dry'), { dryRun: 'All' })).rejects.toThrow('admission webhook "check.test.io" does not support dry run');
  });
});
