import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serveAdmissionHttp } from '../../functions/admission-webhook/handler';
import { startEmbeddedCluster, type EmbeddedCluster } from '../../local/cluster';
import { WEBHOOK_CONFIGURATION_TEMPLATE } from '../../infra/paths';
import { createRuntimeLookup, MalformedReviewError, reviewAdmission } from '../../shared/use-cases/admission/review-admission';
import { renderWebhookConfiguration } from '../../shared/use-cases/admission/webhook-configuration';
import { WebhookEnv } from '../../shared/domain/webhook/webhook-settings';
import { deriveWebhookToken } from '../../shared/domain/webhook/webhook-token';
import type { AppContext } from '../../shared/app/context';
import { InvalidInputError } from '../../shared/domain/errors';
import { Resources } from '../../shared/domain/model/resources';
import type { ClusterClient, KubeObject } from '../../shared/ports/cluster';
import { buildControllerRevision } from '../../shared/domain/runtime/revision';
import { Annotation, RuntimeKind, WebhookName } from '../../shared/domain/vocabulary';
import { KubectlHarness } from '../cluster/support';

const NS = 'llama-demo';
const RUNTIME = 'sglang-llama-3-2-3b';
const NAMING_DENIAL =
  'spec.runtime.revision "cr-sglang-llama-3-2-3b-590753e8" does not match the expected naming convention for runtime "sglang-llama-3-2-3b" (ServingRuntime); expected the form r-llama-demo-sglang-llama-3-2-3b-<8 lowercase hex chars>';
const MISSING_DENIAL =
  'runtime sglang-llama-3-2-3b does not support model llama-3-2-3b-instruct: ServingRuntime sglang-llama-3-2-3b not found in namespace llama-demo';
const denied = (webhook: string, reason: string) => `admission webhook "${webhook}" denied the request: ${reason}`;
/** The admission policy of the same rule (infra/k8s/policy-admission-checks.yaml) answers before the webhook. */
const refused = (policy: string, reason: string) => `ValidatingAdmissionPolicy '${policy}' with binding '${policy}' denied request: ${reason}`;
const REVISION_POLICY = 'ome-pinning-revision-immutability';

const runtimeSpec = { containers: [{ name: 'ome-container', image: 'lmsysorg/sglang:v0.4', args: ['--mem-frac=0.9'] }] };

function servingRuntime(name = RUNTIME): KubeObject {
  return { apiVersion: 'ome.io/v1beta1', kind: 'ServingRuntime', metadata: { name, namespace: NS }, spec: runtimeSpec };
}

function isvc(name: string, runtime: Record<string, unknown>): KubeObject {
  return {
    apiVersion: 'ome.io/v1beta1',
    kind: 'InferenceService',
    metadata: { name, namespace: NS },
    spec: { model: { name: 'llama-3-2-3b-instruct' }, runtime: { name: RUNTIME, kind: 'ServingRuntime', ...runtime }, engine: { minReplicas: 1, maxReplicas: 1 } },
  };
}

function review(request: Record<string, unknown>): string {
  return JSON.stringify({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', request: { uid: 'u-1', ...request } });
}

describe('admission webhook', () => {
  let cluster: EmbeddedCluster;
  let client: ClusterClient;
  let server: http.Server;
  let kubectl: KubectlHarness;
  const keyDir = mkdtempSync(join(tmpdir(), 'webhook-key-'));
  const key = 'review-admission-test-key-of-more-than-32-bytes';

  beforeAll(async () => {
    writeFileSync(join(keyDir, 'key'), key, { mode: 0o600 });
    const env = { [WebhookEnv.keyFile]: join(keyDir, 'key') };
    cluster = await startEmbeddedCluster();
    client = cluster.client;
    const app = { cluster: async (id: string) => ({ id, client, omeNamespace: 'ome', mode: 'standalone' }), clusterMode: async () => 'standalone' } as unknown as AppContext;
    // The webhook served over HTTP, as the local control plane serves it.
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
    // Register the shipped template, rendered for this cluster with its token.
    const configuration = renderWebhookConfiguration(readFileSync(WEBHOOK_CONFIGURATION_TEMPLATE, 'utf8'), {
      baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
      clusterId: 'local',
      omeNamespace: 'ome',
      token: deriveWebhookToken(Buffer.from(key), 'local'),
    });
    await client.create(Resources.validatingWebhookConfigurations, configuration);
    await client.create(Resources.namespaces, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } });
    await client.create(Resources.servingRuntimes, servingRuntime());
    kubectl = new KubectlHarness(cluster);
  });

  afterAll(async () => {
    kubectl?.cleanup();
    await new Promise((resolve) => server?.close(resolve));
    await cluster?.stop();
    rmSync(keyDir, { recursive: true, force: true });
  });

  describe('InferenceService checks through the API server', () => {
    it("denies a kubectl apply of a cluster runtime's revision for a ServingRuntime with the seed's text", async () => {
      const file = kubectl.file(
        'isvc.yaml',
        `apiVersion: ome.io/v1beta1
kind: InferenceService
metadata:
  name: llama-3-2-3b-instruct
  namespace: ${NS}
spec:
  model:
    name: llama-3-2-3b-instruct
  runtime:
    name: ${RUNTIME}
    kind: ServingRuntime
    autoSync: false
    revision: cr-sglang-llama-3-2-3b-590753e8
  engine:
    minReplicas: 1
    maxReplicas: 1
`,
      );

      const result = await kubectl.run('apply', '-f', file);

      expect(result.code).toBe(1);
      expect(result.stderr).toBe(`Error from server (Forbidden): error when creating "${file}": ${denied(WebhookName.inferenceService, NAMING_DENIAL)}\n`);
    });

    it('denies a kubectl apply of a canary group on a RawDeployment engine with upstream\'s CanaryRequiresOMENative text', async () => {
      const file = kubectl.file(
        'raw-canary.yaml',
        `apiVersion: ome.io/v1beta1
kind: InferenceService
metadata:
  name: raw-canary
  namespace: ${NS}
spec:
  deploymentMode: RawDeployment
  model:
    name: llama-3-2-3b-instruct
  runtime:
    name: ${RUNTIME}
    kind: ServingRuntime
  engine:
    minReplicas: 1
    maxReplicas: 1
  rollout:
    groups:
      - components: [engine]
        canary:
          steps:
            - {capacity: 25%, traffic: 10, pause: {}}
            - {capacity: 100%, traffic: 100}
`,
      );

      const result = await kubectl.run('apply', '-f', file);

      expect(result.code).toBe(1);
      expect(result.stderr).toBe(
        `Error from server (Forbidden): error when creating "${file}": ${denied(WebhookName.inferenceService, 'spec.rollout.groups[0]: component "engine" has deploymentMode="RawDeployment"; canary requires OMENative (CanaryRequiresOMENative)')}\n`,
      );
    });

    it.each([
      ['a revision without autoSync false', { revision: 'r-llama-demo-sglang-llama-3-2-3b-590753e8' }, 'spec.runtime.revision requires spec.runtime.autoSync=false; AutoSync=true would silently ignore the pin'],
      ['a revision of another form', { autoSync: false, revision: 'cr-sglang-llama-3-2-3b-590753e8' }, NAMING_DENIAL],
    ])('denies a create with %s', async (_name, runtime, reason) => {
      await expect(client.create(Resources.inferenceServices, isvc('denied', runtime))).rejects.toThrow(denied(WebhookName.inferenceService, reason));
    });

    it('admits a well-formed pin, whether or not the revision exists', async () => {
      const created = await client.create(Resources.inferenceServices, isvc('pinned', { autoSync: false, revision: 'r-llama-demo-sglang-llama-3-2-3b-590753e8' }));
      expect(created.metadata.uid).toBeDefined();
    });

    it("denies every update while the runtime is missing, with the seed's reason, and admits again once it is back", async () => {
      await client.create(Resources.inferenceServices, isvc('follows', { autoSync: false }));
      await client.delete(Resources.servingRuntimes, NS, RUNTIME);
      try {
        const update = client.patch(Resources.inferenceServices, NS, 'follows', { spec: { engine: { minReplicas: 2 } } }, { type: 'merge' });
        await expect(update).rejects.toThrow(InvalidInputError);
        await expect(update).rejects.toThrow(denied(WebhookName.inferenceService, MISSING_DENIAL));
      } finally {
        await client.create(Resources.servingRuntimes, servingRuntime());
      }
      await expect(client.patch(Resources.inferenceServices, NS, 'follows', { spec: { engine: { minReplicas: 2 } } }, { type: 'merge' })).resolves.toBeDefined();
    });

    it('denies an ISVC whose cluster runtime is disabled, and one whose runtime exists nowhere', async () => {
      await client.create(Resources.clusterServingRuntimes, { apiVersion: 'ome.io/v1beta1', kind: 'ClusterServingRuntime', metadata: { name: 'srt-off' }, spec: { ...runtimeSpec, disabled: true } });
      const onDisabled = isvc('on-disabled', { name: 'srt-off', kind: 'ClusterServingRuntime' });
      await expect(client.create(Resources.inferenceServices, onDisabled)).rejects.toThrow(
        denied(WebhookName.inferenceService, 'runtime srt-off does not support model llama-3-2-3b-instruct: cluster-scoped runtime srt-off is disabled'),
      );
      await expect(client.create(Resources.inferenceServices, isvc('on-nothing', { name: 'nowhere', kind: undefined }))).rejects.toThrow(
        'runtime nowhere does not support model llama-3-2-3b-instruct: runtime nowhere not found in namespace llama-demo or at cluster scope',
      );
    });

    it('finds a ServingRuntime of the name in the namespace for kind ClusterServingRuntime, as the runtime selector does', async () => {
      const lookup = createRuntimeLookup(client);
      await expect(lookup(RUNTIME, RuntimeKind.cluster, NS)).resolves.toEqual({ found: true, kind: RuntimeKind.namespaced, disabled: false });
      await expect(lookup(RUNTIME, RuntimeKind.namespaced, 'elsewhere')).resolves.toEqual({ found: false });
    });
  });

  describe('ControllerRevision immutability through the API server', () => {
    it("denies a change to an OME revision's data or labels, and admits the GC's annotation", async () => {
      const revision = await client.create(
        Resources.controllerRevisions,
        buildControllerRevision({ kind: RuntimeKind.namespaced, namespace: NS, runtimeName: RUNTIME, mergedSpec: runtimeSpec, omeNamespace: 'ome' }),
      );
      const name = revision.metadata.name;

      // The API server itself keeps .data immutable (as kube-apiserver does); the webhook's own
      // .data rule is covered by the reviewAdmission tables below.
      await expect(client.patch(Resources.controllerRevisions, 'ome', name, { data: { containers: [] } }, { type: 'merge' })).rejects.toThrow(
        `ControllerRevision.apps "${name}" is invalid: data: Invalid value: {"containers":[]}: field is immutable`,
      );
      await expect(client.patch(Resources.controllerRevisions, 'ome', name, { metadata: { labels: { 'ome.io/runtime-of': 'x' } } }, { type: 'merge' })).rejects.toThrow(
        refused(REVISION_POLICY, `ControllerRevision ome/${name} is owned by OME; .labels are immutable`),
      );
      const marked = await client.patch(Resources.controllerRevisions, 'ome', name, { metadata: { annotations: { [Annotation.gcEligibleSince]: '2026-09-29T00:00:00Z' } } }, { type: 'merge' });
      expect(marked.metadata.annotations?.[Annotation.gcEligibleSince]).toBe('2026-09-29T00:00:00Z');
    });
  });

  describe('Method: reviewAdmission', () => {
    const noLookup = { lookupRuntime: () => Promise.reject(new Error('no lookup expected')) };

    it.each([
      ['JSON that is not a review', [1, 2], 'the request body is not a JSON object; expected an AdmissionReview', undefined],
      ['another kind', { apiVersion: 'v1', kind: 'Pod' }, 'expected an AdmissionReview of apiVersion admission.k8s.io/v1, got kind "Pod" of apiVersion "v1"', undefined],
      ['a review without uid', { apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', request: {} }, 'the AdmissionReview request has no uid', undefined],
      ['an InferenceService review without object', JSON.parse(review({ kind: { group: 'ome.io', version: 'v1beta1', kind: 'InferenceService' }, operation: 'CREATE' })), 'request.object must be an object with metadata.name', 'u-1'],
      [
        'an InferenceService whose spec.runtime is not an object',
        JSON.parse(review({ kind: { group: 'ome.io', version: 'v1beta1', kind: 'InferenceService' }, operation: 'UPDATE', object: { metadata: { name: 'x' }, spec: { runtime: 'srt' } } })),
        'spec.runtime must be an object',
        'u-1',
      ],
    ])('throws MalformedReviewError for %s', async (_name, body, message, uid) => {
      const error = await reviewAdmission(body, noLookup).catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(MalformedReviewError);
      expect((error as MalformedReviewError).message).toBe(message);
      expect((error as MalformedReviewError).uid).toBe(uid);
    });

    it('echoes the uid, admits kinds and operations it does not check, and lets a failed lookup propagate', async () => {
      const other = await reviewAdmission(JSON.parse(review({ uid: 'abc', kind: { group: '', version: 'v1', kind: 'Pod' }, operation: 'CREATE' })), noLookup);
      expect(other).toEqual({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', response: { uid: 'abc', allowed: true } });
      const deletion = await reviewAdmission(JSON.parse(review({ kind: { group: 'ome.io', version: 'v1beta1', kind: 'InferenceService' }, operation: 'DELETE' })), noLookup);
      expect(deletion.response.allowed).toBe(true);

      await expect(reviewAdmission(JSON.parse(review({ kind: { group: 'ome.io', version: 'v1beta1', kind: 'InferenceService' }, operation: 'CREATE', object: isvc('x', {}) })), noLookup)).rejects.toThrow('no lookup expected');
    });
  });
});
