/**
 * The machine's real kubectl against the embedded API server: every command of the
 * seeds and the acceptance list, compared with what kubectl prints.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmbeddedCluster, type EmbeddedCluster } from '../../local/cluster';
import type { KubeObject, ResourceType } from '../../shared/ports/cluster';
import { collect, eventually, FIXTURE_CRDS, KubectlHarness, maskAges } from './support';

const ISVC: ResourceType = { group: 'ome.io', version: 'v1beta1', plural: 'inferenceservices', kind: 'InferenceService', namespaced: true };
const REVISIONS: ResourceType = { group: 'apps', version: 'v1', plural: 'controllerrevisions', kind: 'ControllerRevision', namespaced: true };
const EVENTS: ResourceType = { group: '', version: 'v1', plural: 'events', kind: 'Event', namespaced: true };

const NS = 'llama-demo';
const NAME = 'llama-3-2-3b-instruct';
const SEED_COLUMNS =
  'custom-columns=NAME:.metadata.name,PINNED:.status.pinnedRevisionName,DRIFTED:.status.conditions[?(@.type=="RuntimeDrifted")].status,REASON:.status.conditions[?(@.type=="RuntimeDrifted")].reason';
const WEBHOOK_NAME = 'inferenceservice.ome-webhook-server.validator';
const DENIAL =
  'spec.runtime.revision "cr-sglang-llama-3-2-3b-590753e8" does not match the expected naming convention for runtime "sglang-llama-3-2-3b" (ServingRuntime); expected the form r-llama-demo-sglang-llama-3-2-3b-<8 lowercase hex chars>';

function isvcManifest(maxReplicas: number): string {
  return `apiVersion: ome.io/v1beta1
kind: InferenceService
metadata:
  name: ${NAME}
  namespace: ${NS}
spec:
  model:
    name: llama-3-2-3b-instruct
  runtime:
    name: sglang-llama-3-2-3b
    kind: ServingRuntime
    autoSync: false
  engine:
    minReplicas: 1
    maxReplicas: ${maxReplicas}
`;
}

describe('kubectl against the embedded API server', () => {
  let cluster: EmbeddedCluster;
  let kubectl: KubectlHarness;
  let webhook: http.Server;

  beforeAll(async () => {
    cluster = await startEmbeddedCluster({ crdDir: FIXTURE_CRDS });
    kubectl = new KubectlHarness(cluster);
    webhook = http.createServer((req, res) => {
      let body = '';
      req.on('data', (chunk: Buffer) => (body += chunk.toString()));
      req.on('end', () => {
        const review = JSON.parse(body) as { request: { uid: string; object: { spec?: { runtime?: { revision?: string } } } } };
        const revision = review.request.object.spec?.runtime?.revision;
        const response = revision?.startsWith('cr-')
          ? { uid: review.request.uid, allowed: false, status: { code: 403, reason: 'Forbidden', message: DENIAL } }
          : { uid: review.request.uid, allowed: true };
        res.writeHead(200, { 'Content-Type': 'application/json' });
        res.end(JSON.stringify({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', response }));
      });
    });
    await new Promise<void>((resolve) => webhook.listen(0, '127.0.0.1', resolve));
  });

  afterAll(async () => {
    await cluster?.stop();
    await new Promise((resolve) => webhook?.close(resolve));
    kubectl?.cleanup();
  });

  it('reports a v1.32 server version, which picks kubectl 1.32', async () => {
    const result = await kubectl.run('version');
    expect(result.stdout).toMatch(/^Client Version: v1\.32\.\d+.*\nKustomize Version: v\S+\nServer Version: v1\.32\.4\n$/);
  });

  it('creates a namespace', async () => {
    expect(await kubectl.run('create', 'namespace', NS)).toEqual({ stdout: `namespace/${NS} created\n`, stderr: '', code: 0 });
    const again = await kubectl.run('create', 'namespace', NS);
    expect(again).toMatchObject({ stderr: `Error from server (AlreadyExists): namespaces "${NS}" already exists\n`, code: 1 });
  });

  it('applies a manifest, leaves it unchanged, then configures a change', async () => {
    const file = kubectl.file('isvc.yaml', isvcManifest(1));
    expect((await kubectl.run('apply', '-f', file)).stdout).toBe(`inferenceservice.ome.io/${NAME} created\n`);
    expect((await kubectl.run('apply', '-f', file)).stdout).toBe(`inferenceservice.ome.io/${NAME} unchanged\n`);
    kubectl.file('isvc.yaml', isvcManifest(2));
    expect(await kubectl.run('apply', '-f', file)).toEqual({ stdout: `inferenceservice.ome.io/${NAME} configured\n`, stderr: '', code: 0 });
    const stored = await cluster.client.get<KubeObject>(ISVC, NS, NAME);
    expect(stored.metadata.generation).toBe(2);
    expect(stored.spec).toEqual({
      model: { name: 'llama-3-2-3b-instruct' },
      runtime: { name: 'sglang-llama-3-2-3b', kind: 'ServingRuntime', autoSync: false },
      engine: { minReplicas: 1, maxReplicas: 2 },
    });
  });

  it('prints the CRD printer columns as a table, priority columns only with -o wide', async () => {
    const table = await kubectl.run('get', 'isvc', '-n', NS);
    expect(maskAges(table.stdout)).toBe(
      'NAME                    READY   BASEMODEL               RUNTIME               AGE\n' +
        'llama-3-2-3b-instruct           llama-3-2-3b-instruct   sglang-llama-3-2-3b   <age>\n',
    );
    const wide = await kubectl.run('get', 'inferenceservices.ome.io', NAME, '-n', NS, '-o', 'wide');
    expect(maskAges(wide.stdout)).toBe(
      'NAME                    READY   BASEMODEL               RUNTIME               MINREPLICAS   AGE\n' +
        'llama-3-2-3b-instruct           llama-3-2-3b-instruct   sglang-llama-3-2-3b   1             <age>\n',
    );
  });

  it("prints the seed's custom columns before and after the controller reports drift", async () => {
    const before = await kubectl.run('get', 'inferenceservice', NAME, '-n', NS, '-o', SEED_COLUMNS);
    expect(before.stdout).toBe(
      'NAME                    PINNED   DRIFTED   REASON\n' + 'llama-3-2-3b-instruct   <none>   <none>    <none>\n',
    );
    await cluster.client.patch(ISVC, NS, NAME, {
      status: {
        pinnedRevisionName: 'r-llama-demo-sglang-llama-3-2-3b-590753e8',
        conditions: [
          { type: 'Ready', status: 'True' },
          {
            type: 'RuntimeDrifted',
            status: 'True',
            reason: 'RevisionMismatch',
            message: 'pinned r-llama-demo-sglang-llama-3-2-3b-590753e8, live spec differs; bump ome.io/runtime-sync annotation to advance',
          },
        ],
      },
    }, { type: 'merge', subresource: 'status' });
    const after = await kubectl.run('get', 'inferenceservice', NAME, '-n', NS, '-o', SEED_COLUMNS);
    expect(after.stdout).toBe(
      'NAME                    PINNED                                      DRIFTED   REASON\n' +
        'llama-3-2-3b-instruct   r-llama-demo-sglang-llama-3-2-3b-590753e8   True      RevisionMismatch\n',
    );
  });

  it('evaluates -o jsonpath filters', async () => {
    const result = await kubectl.run('get', 'inferenceservice', NAME, '-n', NS, '-o', 'jsonpath={.status.conditions[?(@.type=="RuntimeDrifted")].message}');
    expect(result.stdout).toBe('pinned r-llama-demo-sglang-llama-3-2-3b-590753e8, live spec differs; bump ome.io/runtime-sync annotation to advance');
    const ready = await kubectl.run('get', 'isvc', '-n', NS);
    expect(ready.stdout.split('\n')[1]).toMatch(/^llama-3-2-3b-instruct {3}True {4}llama-3-2-3b-instruct/);
  });

  it('annotates with --overwrite and labels', async () => {
    const first = await kubectl.run('annotate', 'inferenceservice', NAME, '-n', NS, 'ome.io/runtime-sync=mem-frac-0-85', '--overwrite');
    expect(first).toEqual({ stdout: `inferenceservice.ome.io/${NAME} annotated\n`, stderr: '', code: 0 });
    const second = await kubectl.run('annotate', 'inferenceservice', NAME, '-n', NS, 'ome.io/runtime-sync=mem-frac-0-86', '--overwrite');
    expect(second.stdout).toBe(`inferenceservice.ome.io/${NAME} annotated\n`);
    expect((await kubectl.run('label', 'isvc', NAME, '-n', NS, 'team=llm')).stdout).toBe(`inferenceservice.ome.io/${NAME} labeled\n`);
    const stored = await cluster.client.get<KubeObject>(ISVC, NS, NAME);
    expect(stored.metadata.annotations?.['ome.io/runtime-sync']).toBe('mem-frac-0-86');
    expect(stored.metadata.labels).toEqual({ team: 'llm' });
    expect(stored.metadata.generation).toBe(2);
    expect((stored.status as { pinnedRevisionName?: string }).pinnedRevisionName).toBe('r-llama-demo-sglang-llama-3-2-3b-590753e8');
  });

  it('patches with --type merge and --type json, and reports a failed test operation', async () => {
    const merge = ['patch', 'isvc', NAME, '-n', NS, '--type', 'merge', '-p', '{"spec":{"engine":{"minReplicas":2}}}'];
    expect((await kubectl.run(...merge)).stdout).toBe(`inferenceservice.ome.io/${NAME} patched\n`);
    expect((await kubectl.run(...merge)).stdout).toBe(`inferenceservice.ome.io/${NAME} patched (no change)\n`);
    const json = '[{"op":"test","path":"/spec/engine/minReplicas","value":2},{"op":"replace","path":"/spec/engine/minReplicas","value":3}]';
    expect((await kubectl.run('patch', 'isvc', NAME, '-n', NS, '--type', 'json', '-p', json)).stdout).toBe(`inferenceservice.ome.io/${NAME} patched\n`);
    const failed = await kubectl.run('patch', 'isvc', NAME, '-n', NS, '--type', 'json', '-p', json);
    expect(failed).toEqual({ stdout: '', stderr: 'The request is invalid: the server rejected our request due to an error in our request\n', code: 1 });
    const strategic = await kubectl.run('patch', 'isvc', NAME, '-n', NS, '-p', '{"spec":{"engine":{"minReplicas":4}}}');
    expect(strategic.stderr).toBe(
      'error: application/strategic-merge-patch+json is not supported by ome.io/v1beta1, Kind=InferenceService: the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml\n',
    );
    const stored = await cluster.client.get<KubeObject & { spec: { engine: { minReplicas: number } } }>(ISVC, NS, NAME);
    expect(stored.spec.engine.minReplicas).toBe(3);
    expect(stored.metadata.generation).toBe(4);
  });

  it('dry-runs a patch on the server without storing it', async () => {
    const before = await cluster.client.get<KubeObject>(ISVC, NS, NAME);
    const dry = await kubectl.run('patch', 'isvc', NAME, '-n', NS, '--type', 'merge', '-p', '{"spec":{"engine":{"minReplicas":9}}}', '--dry-run=server');
    // kubectl 1.32 words a server dry run like a real patch; the server stored nothing.
    expect(dry.stdout).toBe(`inferenceservice.ome.io/${NAME} patched\n`);
    expect((await cluster.client.get<KubeObject>(ISVC, NS, NAME)).metadata.resourceVersion).toBe(before.metadata.resourceVersion);
  });

  it('streams a change to get -w', async () => {
    const watcher = kubectl.spawn('get', 'isvc', NAME, '-n', NS, '-w', '-o', 'custom-columns=NAME:.metadata.name,TEAM:.metadata.labels.team');
    const out = collect(watcher.stdout);
    try {
      await eventually(() => out.text().split('\n').length >= 3, out.text);
      await cluster.client.patch(ISVC, NS, NAME, { metadata: { labels: { team: 'serving' } } }, { type: 'merge' });
      await eventually(() => out.text().includes('serving'), out.text);
      expect(out.text()).toBe('NAME                    TEAM\nllama-3-2-3b-instruct   llm\nllama-3-2-3b-instruct   serving\n');
    } finally {
      watcher.kill();
    }
  });

  it('streams table rows to get -w without repeating the header', async () => {
    const watcher = kubectl.spawn('get', 'isvc', '-n', NS, '-w');
    const out = collect(watcher.stdout);
    try {
      await eventually(() => out.text().split('\n').length >= 3, out.text);
      await cluster.client.patch(ISVC, NS, NAME, { spec: { model: { name: 'llama-3-2-3b' } } }, { type: 'merge' });
      await eventually(() => out.text().split('\n').length >= 4, out.text);
      const lines = maskAges(out.text()).split('\n');
      expect(lines[0]).toBe('NAME                    READY   BASEMODEL               RUNTIME               AGE');
      expect(lines[2]).toBe('llama-3-2-3b-instruct   True    llama-3-2-3b            sglang-llama-3-2-3b   <age>');
    } finally {
      watcher.kill();
    }
  });

  it('lists revisions by label, sorted by creation time, with custom columns', async () => {
    const revision = (name: string, runtime: string): KubeObject => ({
      apiVersion: 'apps/v1',
      kind: 'ControllerRevision',
      metadata: { name, namespace: 'ome', labels: { 'ome.io/runtime-of': runtime } },
      data: { spec: { containers: [] } },
      revision: 1,
    });
    const newer = 'r-llama-demo-sglang-llama-3-2-3b-590753e8';
    const older = 'r-llama-demo-sglang-llama-3-2-3b-af9539ac';
    const first = await cluster.client.create(REVISIONS, revision(older, 'sglang-llama-3-2-3b'));
    await cluster.client.create(REVISIONS, revision('cr-other-runtime-00000000', 'other-runtime'));
    await new Promise((resolve) => setTimeout(resolve, 1100));
    const second = await cluster.client.create(REVISIONS, revision(newer, 'sglang-llama-3-2-3b'));
    const result = await kubectl.run(
      'get', 'controllerrevisions', '-n', 'ome', '-l', 'ome.io/runtime-of=sglang-llama-3-2-3b', '--sort-by=.metadata.creationTimestamp',
      '-o', 'custom-columns=NAME:.metadata.name,CREATED:.metadata.creationTimestamp',
    );
    expect(result.stdout).toBe(
      'NAME                                        CREATED\n' +
        `${older}   ${first.metadata.creationTimestamp ?? ''}\n` +
        `${newer}   ${second.metadata.creationTimestamp ?? ''}\n`,
    );
    const table = await kubectl.run('get', 'controllerrevisions', '-n', 'ome', '-l', 'ome.io/runtime-of notin (sglang-llama-3-2-3b)');
    expect(maskAges(table.stdout)).toBe('NAME                        CONTROLLER   REVISION   AGE\ncr-other-runtime-00000000   <none>       1          <age>\n');
  });

  it('lists events, also by field selector', async () => {
    const target = await cluster.client.get<KubeObject>(ISVC, NS, NAME);
    const now = new Date().toISOString().replace(/\.\d{3}Z$/, 'Z');
    await cluster.client.create(EVENTS, {
      apiVersion: 'v1',
      kind: 'Event',
      metadata: { name: `${NAME}.pin`, namespace: NS },
      involvedObject: { apiVersion: 'ome.io/v1beta1', kind: 'InferenceService', name: NAME, namespace: NS, uid: target.metadata.uid },
      reason: 'RuntimePinError',
      type: 'Warning',
      message: 'resolve live runtime sglang-llama-3-2-3b: not found',
      firstTimestamp: now,
      lastTimestamp: now,
      count: 1,
      source: { component: 'ome-pinning-pin' },
    });
    const expected =
      'LAST SEEN   TYPE      REASON            OBJECT                                   MESSAGE\n' +
      '<age>          Warning   RuntimePinError   inferenceservice/llama-3-2-3b-instruct   resolve live runtime sglang-llama-3-2-3b: not found\n';
    const all = await kubectl.run('get', 'events', '-n', NS);
    expect(all.stdout.replace(/^\d+s {2,}/m, '<age>          ')).toBe(expected);
    const selected = await kubectl.run('get', 'events', '-n', NS, '--field-selector', `involvedObject.name=${NAME},reason=RuntimePinError`, '-o', 'jsonpath={.items[*].reason}');
    expect(selected.stdout).toBe('RuntimePinError');
    const none = await kubectl.run('get', 'events', '-n', NS, '--field-selector', 'reason=Other');
    expect(none).toMatchObject({ stdout: '', stderr: `No resources found in ${NS} namespace.\n` });
  });

  it("prints a webhook's denial as a real server does", async () => {
    const url = `http://127.0.0.1:${(webhook.address() as AddressInfo).port}/validate`;
    const config = kubectl.file('webhook.yaml', `apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
metadata:
  name: ome-pinning-webhook
webhooks:
  - name: ${WEBHOOK_NAME}
    admissionReviewVersions: [v1]
    sideEffects: None
    failurePolicy: Fail
    timeoutSeconds: 5
    clientConfig:
      url: ${url}
    rules:
      - apiGroups: [ome.io]
        apiVersions: [v1beta1]
        operations: [CREATE, UPDATE]
        resources: [inferenceservices]
        scope: Namespaced
`);
    expect((await kubectl.run('apply', '-f', config)).stdout).toBe('validatingwebhookconfiguration.admissionregistration.k8s.io/ome-pinning-webhook created\n');
    // The admission policy of the same rule answers first (infra/k8s/policy-admission-checks.yaml),
    // as kube-apiserver runs policies before webhooks; a name it admits reaches the webhook.
    const refused = await kubectl.run('patch', 'isvc', NAME, '-n', NS, '--type', 'merge', '-p', '{"spec":{"runtime":{"revision":"cr-sglang-llama-3-2-3b-590753e8"}}}');
    expect(refused).toEqual({
      stdout: '',
      stderr: `The inferenceservices "${NAME}" is invalid: : ValidatingAdmissionPolicy 'ome-pinning-runtime-revision-pin' with binding 'ome-pinning-runtime-revision-pin' denied request: ${DENIAL}\n`,
      code: 1,
    });
    const denied = await kubectl.run('patch', 'isvc', NAME, '-n', NS, '--type', 'merge', '-p', '{"spec":{"runtime":{"kind":"ClusterServingRuntime","revision":"cr-sglang-llama-3-2-3b-590753e8"}}}');
    expect(denied).toEqual({ stdout: '', stderr: `Error from server (Forbidden): admission webhook "${WEBHOOK_NAME}" denied the request: ${DENIAL}\n`, code: 1 });
    const allowed = await kubectl.run('patch', 'isvc', NAME, '-n', NS, '--type', 'merge', '-p', '{"spec":{"runtime":{"revision":"r-llama-demo-sglang-llama-3-2-3b-590753e8"}}}');
    expect(allowed.stdout).toBe(`inferenceservice.ome.io/${NAME} patched\n`);
    await kubectl.run('delete', 'validatingwebhookconfiguration', 'ome-pinning-webhook');
  });

  it('rejects bad input with the real messages', async () => {
    expect((await kubectl.run('get', 'widgets')).stderr).toBe('error: the server doesn\'t have a resource type "widgets"\n');
    const invalid = await kubectl.run('create', 'configmap', 'Bad_Name', '-n', NS);
    expect(invalid.stderr).toBe(
      'error: failed to create configmap: ConfigMap "Bad_Name" is invalid: metadata.name: Invalid value: "Bad_Name": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, \'-\' or \'.\', and must start and end with an alphanumeric character (e.g. \'example.com\', regex used for validation is \'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\')\n',
    );
    const schema = kubectl.file('bad.yaml', isvcManifest(2).replace('minReplicas: 1', 'minReplicas: -1').replace(NAME, 'bad-replicas'));
    const rejected = await kubectl.run('apply', '-f', schema);
    expect(rejected.stderr).toBe(
      `The InferenceService "bad-replicas" is invalid: spec.engine.minReplicas: Invalid value: -1: spec.engine.minReplicas in body should be greater than or equal to 0\n`,
    );
  });

  it('creates, rolls out and lists a Deployment', async () => {
    expect((await kubectl.run('create', 'deployment', 'web', '--image=nginx', '--replicas=2', '-n', NS)).stdout).toBe('deployment.apps/web created\n');
    const rollout = await kubectl.run('rollout', 'status', 'deployment/web', '-n', NS, '--timeout=10s');
    expect(rollout.stdout).toContain('deployment "web" successfully rolled out');
    const table = await kubectl.run('get', 'deploy', '-n', NS);
    expect(maskAges(table.stdout)).toBe('NAME   READY   UP-TO-DATE   AVAILABLE   AGE\nweb    2/2     2            2           <age>\n');
  });

  it('deletes, then reports NotFound', async () => {
    expect((await kubectl.run('delete', 'isvc', NAME, '-n', NS)).stdout).toBe(`inferenceservice.ome.io "${NAME}" deleted\n`);
    expect((await kubectl.run('get', 'isvc', NAME, '-n', NS)).stderr).toBe(`Error from server (NotFound): inferenceservices.ome.io "${NAME}" not found\n`);
    expect((await kubectl.run('delete', 'namespace', NS)).stdout).toBe(`namespace "${NS}" deleted\n`);
    expect((await kubectl.run('get', 'namespace', NS)).stderr).toBe(`Error from server (NotFound): namespaces "${NS}" not found\n`);
  });
});
