/**
 * The revision-immutability webhook follows the cluster's OME namespace (its registry
 * record's `omeNamespace`), here `ome-system`: the rendered configuration selects that
 * namespace, and through the embedded API server a change to an OME revision there is
 * denied while a revision-shaped object in `ome` is not OME's and is not sent. The webhook
 * alone: the admission policy of the same rule (infra/k8s/policy-admission-checks.yaml,
 * which the embedded server installs for `ome`) is unbound here; register points it at the
 * cluster's OME namespace (test/cli/admin-cluster.test.ts).
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serveAdmissionHttp } from '../../functions/admission-webhook/handler';
import { WEBHOOK_CONFIGURATION_TEMPLATE } from '../../infra/paths';
import { resourceTypeOf } from '../../cli/admin/cluster-kinds';
import { startEmbeddedCluster, type EmbeddedCluster } from '../../local/cluster';
import { renderWebhookConfiguration } from '../../shared/use-cases/admission/webhook-configuration';
import { WebhookEnv } from '../../shared/domain/webhook/webhook-settings';
import { deriveWebhookToken } from '../../shared/domain/webhook/webhook-token';
import type { AppContext } from '../../shared/app/context';
import { InvalidInputError } from '../../shared/domain/errors';
import { Resources } from '../../shared/domain/model/resources';
import { buildControllerRevision } from '../../shared/domain/runtime/revision';
import { RuntimeKind, WebhookName } from '../../shared/domain/vocabulary';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const OME_NAMESPACE = 'ome-system';
const POLICY_BINDINGS = resourceTypeOf('ValidatingAdmissionPolicyBinding');
const KEY = 'ome-namespace-test-key-of-more-than-32-bytes';
const template = readFileSync(WEBHOOK_CONFIGURATION_TEMPLATE, 'utf8');
const render = (omeNamespace: string, baseUrl = 'https://hooks.example') =>
  renderWebhookConfiguration(template, { baseUrl, clusterId: 'eu-1', omeNamespace, token: deriveWebhookToken(Buffer.from(KEY), 'eu-1') });

describe('renderWebhookConfiguration: the OME namespace', () => {
  it('selects the configured namespace for the revision webhook only', () => {
    const webhooks = render(OME_NAMESPACE).webhooks as Array<{ name: string; namespaceSelector?: unknown; objectSelector?: unknown }>;
    expect(webhooks.map(({ name, namespaceSelector }) => [name, namespaceSelector])).toEqual([
      [WebhookName.inferenceService, undefined],
      [WebhookName.controllerRevisionImmutability, { matchLabels: { 'kubernetes.io/metadata.name': OME_NAMESPACE } }],
    ]);
    expect(webhooks[1]?.objectSelector).toEqual({ matchExpressions: [{ key: 'ome.io/runtime-of', operator: 'Exists' }] });
  });

  it.each(['', 'OME', 'ome_system', `${'a'.repeat(64)}`])('refuses %j, which is not a namespace name', (name) => {
    expect(() => render(name)).toThrow(new InvalidInputError(`OME namespace ${JSON.stringify(name)} is not a namespace name`));
  });
});

describe('the revision webhook of a cluster whose OME namespace is ome-system', () => {
  let cluster: EmbeddedCluster;
  let server: http.Server;
  const keyDir = mkdtempSync(join(tmpdir(), 'webhook-key-'));
  const spec = { containers: [{ name: 'ome-container', image: 'lmsysorg/sglang:v0.4' }] };
  const revisionIn = (omeNamespace: string) =>
    buildControllerRevision({ kind: RuntimeKind.cluster, namespace: '', runtimeName: 'srt', mergedSpec: spec, omeNamespace });

  beforeAll(async () => {
    writeFileSync(join(keyDir, 'key'), KEY, { mode: 0o600 });
    const env = { [WebhookEnv.keyFile]: join(keyDir, 'key') };
    cluster = await startEmbeddedCluster();
    const app = {
      cluster: async (id: string) => ({ id, client: cluster.client, omeNamespace: OME_NAMESPACE, mode: 'standalone' }),
      clusterMode: async () => 'standalone',
    } as unknown as AppContext;
    server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        const url = new URL(req.url ?? '/', 'http://localhost');
        const request = { method: req.method ?? '', path: url.pathname, query: Object.fromEntries(url.searchParams), body: Buffer.concat(chunks).toString('utf8') };
        void serveAdmissionHttp(request, { appOf: () => app, env }).then((result) => {
          res.writeHead(result.statusCode, result.headers);
          res.end(result.body);
        });
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    await cluster.client.create(Resources.namespaces, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: OME_NAMESPACE } });
    await cluster.client.delete(POLICY_BINDINGS, undefined, 'ome-pinning-revision-immutability');
    await cluster.client.create(Resources.validatingWebhookConfigurations, render(OME_NAMESPACE, `http://127.0.0.1:${(server.address() as AddressInfo).port}`));
  });

  afterAll(async () => {
    await new Promise((resolve) => server?.close(resolve));
    await cluster?.stop();
    rmSync(keyDir, { recursive: true, force: true });
  });

  it('denies a change to an OME revision in ome-system', async () => {
    const revision = await cluster.client.create(Resources.controllerRevisions, revisionIn(OME_NAMESPACE));
    const { name } = revision.metadata;

    // .labels: the API server keeps .data immutable on its own, before any webhook is called.
    await expect(cluster.client.patch(Resources.controllerRevisions, OME_NAMESPACE, name, { metadata: { labels: { 'ome.io/runtime-of': 'x' } } }, { type: 'merge' })).rejects.toThrow(
      `admission webhook "${WebhookName.controllerRevisionImmutability}" denied the request: ControllerRevision ${OME_NAMESPACE}/${name} is owned by OME; .labels are immutable`,
    );
  });

  it('does not guard the ome namespace, which is not OME\'s in this cluster', async () => {
    const revision = await cluster.client.create(Resources.controllerRevisions, revisionIn('ome'));

    const patched = await cluster.client.patch(Resources.controllerRevisions, 'ome', revision.metadata.name, { metadata: { labels: { 'ome.io/runtime-of': 'x' } } }, { type: 'merge' });

    expect(patched.metadata.labels?.['ome.io/runtime-of']).toBe('x');
  });
});
