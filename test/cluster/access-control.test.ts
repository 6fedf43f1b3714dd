/**
 * Authentication and authorization, with the machine's real kubectl, on the embedded API
 * server and (in the real project) on a real kube-apiserver with the same manifests: each function's ServiceAccount token (from the identity kubeconfig the server
 * writes) is held to its role in infra/k8s, and to the owned-Deployments and plane-Events policies; requests
 * without a valid token get 401; the operator may impersonate (`--as`, `auth can-i`).
 */
import { readFileSync, statSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse, stringify } from 'yaml';
import { FUNCTION_SERVICE_ACCOUNTS, SERVICE_ACCOUNT_NAMESPACE } from '../../infra/identities';
import { connectionFromKubeconfigText, createClusterClient } from '../../shared/adapters/kubernetes';
import { createEventRecorder } from '../../shared/use-cases/record-event';
import { Resources } from '../../shared/domain/model/resources';
import { ON_SERVER, startTestCluster, type TestCluster } from '../support/test-cluster';
import { KubectlHarness } from './support';

const NS = 'team-a';
/** The user a function's ServiceAccount authenticates as. */
const userOf = (account: string): string => `system:serviceaccount:${SERVICE_ACCOUNT_NAMESPACE}:${account}`;
const PIN = userOf(FUNCTION_SERVICE_ACCOUNTS.pin);
const POLICY_DENIAL = "is forbidden: ValidatingAdmissionPolicy 'ome-pinning-owned-deployments' with binding 'ome-pinning-owned-deployments' denied request: ";
const EVENTS_DENIAL = "ValidatingAdmissionPolicy 'ome-pinning-plane-events' with binding 'ome-pinning-plane-events' denied request: ";
const ISVC_REF = { apiVersion: 'ome.io/v1beta1', kind: 'InferenceService', name: 'llama', namespace: NS, uid: '7d7c1f43-0000-4000-8000-000000000001' };

/**
 * A core/v1 Event as the plane's recorder writes it (shared/use-cases/record-event.ts),
 * or with `eventTime` in the newer form, whose namespaces kube-apiserver does not compare.
 */
function event(name: string, namespace: string, involvedObject: Record<string, unknown>, form: 'legacy' | 'eventTime' = 'legacy'): string {
  const at = '2026-03-01T10:00:00Z';
  return JSON.stringify({
    apiVersion: 'v1',
    kind: 'Event',
    metadata: { name, namespace },
    involvedObject,
    type: 'Warning',
    reason: 'RuntimePinError',
    message: 'probe',
    ...(form === 'legacy'
      ? { source: { component: 'ome-pinning-pin' }, firstTimestamp: at, lastTimestamp: at, count: 1 }
      : { eventTime: '2026-03-01T10:00:00.000000Z', reportingComponent: 'ome-pinning-pin', reportingInstance: 'probe', action: 'Pin' }),
  });
}

/**
 * The uid of the InferenceService `llama` the owned Deployments name as their controller: a
 * real one, so that a real kube-apiserver's garbage collector does not delete them as orphans
 * while the tests run.
 */
let llamaUid = '';
const llamaOwner = () => [{ apiVersion: 'ome.io/v1beta1', kind: 'InferenceService', name: 'llama', uid: llamaUid, controller: true }];

function deployment(name: string, owned: boolean): string {
  const metadata = owned
    ? { name, namespace: NS, labels: { 'ome.io/inferenceservice': 'llama' }, ownerReferences: llamaOwner() }
    : { name, namespace: NS, labels: { app: name } };
  return JSON.stringify({
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata,
    spec: { selector: { matchLabels: { app: name } }, template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'c', image: 'busybox' }] } } },
  });
}

describe(`who may do what${ON_SERVER}`, () => {
  let cluster: TestCluster;
  let kubectl: KubectlHarness;
  let identities: string;

  beforeAll(async () => {
    cluster = await startTestCluster({ namespaces: [NS] });
    kubectl = new KubectlHarness(cluster);
    identities = kubectl.file('identities', '');
    await cluster.writeIdentityKubeconfig(identities);
    const runtime = JSON.stringify({ apiVersion: 'ome.io/v1beta1', kind: 'ServingRuntime', metadata: { name: 'sglang', namespace: NS }, spec: {} });
    const llama = { apiVersion: 'ome.io/v1beta1', kind: 'InferenceService', metadata: { name: 'llama', namespace: NS }, spec: { model: { name: 'm' } } };
    expect((await kubectl.run('apply', '-f', kubectl.file('llama.yaml', stringify(llama)))).stderr).toBe('');
    llamaUid = (await kubectl.run('get', 'inferenceservice', 'llama', '-n', NS, '-o', 'jsonpath={.metadata.uid}')).stdout;
    expect(llamaUid).toMatch(/^[0-9a-f-]{36}$/);
    const admin = await kubectl.run('apply', '-f', kubectl.file('objects.yaml', [deployment('unowned', false), deployment('owned', true), runtime].map((json) => stringify(JSON.parse(json))).join('---\n')));
    expect(admin.stderr).toBe('');
  });

  afterAll(async () => {
    await cluster?.stop();
    kubectl?.cleanup();
  });

  const as = (context: string, ...args: string[]): ReturnType<KubectlHarness['run']> => kubectl.run('--kubeconfig', identities, '--context', context, ...args);

  it('writes one context per function with its ServiceAccount token, the operator current, mode 0600', async () => {
    const config = parse(readFileSync(identities, 'utf8')) as { 'current-context': string; contexts: Array<{ name: string }>; users: Array<{ name: string; user: { token?: string } }> };
    expect(statSync(identities).mode & 0o777).toBe(0o600);
    expect(config['current-context']).toBe('embedded');
    expect(config.contexts.map((c) => c.name).sort()).toEqual(['embedded', ...Object.keys(FUNCTION_SERVICE_ACCOUNTS)].sort());
    const pinUser = config.users.find((u) => u.name === 'pin');
    expect(pinUser?.user.token).toMatch(/^\S{20,}$/);
    const whoami = await kubectl.run('--kubeconfig', identities, '--context', 'pin', 'auth', 'whoami', '-o', 'jsonpath={.status.userInfo.username}');
    expect(whoami.stdout).toBe(PIN);
  });

  it("refuses pin's token a Deployment in kube-system, with the server's text", async () => {
    const result = await kubectl.run('--token', await cluster.serviceAccountToken(SERVICE_ACCOUNT_NAMESPACE, FUNCTION_SERVICE_ACCOUNTS.pin), 'create', 'deployment', 'x', '--image=busybox', '-n', 'kube-system');
    expect(result.code).toBe(1);
    expect(result.stderr).toBe(
      `error: failed to create deployment: deployments.apps "x" ${POLICY_DENIAL}the OME pinning control plane does not write Deployments in system namespaces\n`,
    );
  });

  it('refuses a role without create the same Deployment by RBAC, with the real 403 text', async () => {
    const result = await as('rollout-run', 'create', 'deployment', 'x', '--image=busybox', '-n', 'kube-system');
    expect(result.stderr).toBe(
      `error: failed to create deployment: deployments.apps is forbidden: User "${userOf(FUNCTION_SERVICE_ACCOUNTS['rollout-run'])}" cannot create resource "deployments" in API group "apps" in the namespace "kube-system"\n`,
    );
  });

  it('refuses pin an update of a Deployment it does not own, and allows one it owns', async () => {
    // A validation without `reason` denies as Invalid (422): kubectl prints its one cause.
    const denied = await as('pin', 'annotate', 'deployment', 'unowned', '-n', NS, 'touched=yes');
    expect(denied.stderr).toBe(
      `The deployments "unowned" is invalid: : ${POLICY_DENIAL.replace('is forbidden: ', '')}the OME pinning control plane changes and deletes only Deployments it owns (label ome.io/inferenceservice and a controller reference to an InferenceService)\n`,
    );
    const adopted = await as('pin', 'label', 'deployment', 'unowned', '-n', NS, 'ome.io/inferenceservice=llama');
    expect(adopted.code).toBe(1);
    expect((await as('pin', 'annotate', 'deployment', 'owned', '-n', NS, 'touched=yes')).stdout).toBe('deployment.apps/owned annotated\n');
    const annotations = await kubectl.run('get', 'deployment', 'unowned', '-n', NS, '-o', 'jsonpath={.metadata.annotations.touched}{.metadata.labels}');
    expect(annotations.stdout).toBe('{"app":"unowned"}');
  });

  it('lets admission-webhook read runtimes and nothing else', async () => {
    expect((await as('admission-webhook', 'get', 'servingruntime', 'sglang', '-n', NS, '-o', 'name')).stdout).toBe('servingruntime.ome.io/sglang\n');
    const write = await as('admission-webhook', 'annotate', 'servingruntime', 'sglang', '-n', NS, 'touched=yes');
    expect(write.stderr).toBe(
      `Error from server (Forbidden): servingruntimes.ome.io "sglang" is forbidden: User "${userOf(FUNCTION_SERVICE_ACCOUNTS['admission-webhook'])}" cannot patch resource "servingruntimes" in API group "ome.io" in the namespace "${NS}"\n`,
    );
    const deployments = await as('admission-webhook', 'delete', 'deployment', 'owned', '-n', NS);
    expect(deployments.stderr).toContain('cannot delete resource "deployments" in API group "apps"');
  });

  it('answers 401 to a token it did not mint, 403 to no token (system:anonymous), but serves health and version', async () => {
    const bare = await cluster.get('/api/v1/namespaces');
    expect(bare.status).toBe(403);
    expect(JSON.parse(bare.body)).toEqual({
      kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure',
      message: 'namespaces is forbidden: User "system:anonymous" cannot list resource "namespaces" in API group "" at the cluster scope',
      reason: 'Forbidden', details: { kind: 'namespaces' }, code: 403,
    });
    const forged = await cluster.get('/apis', 'not-a-token');
    expect(forged.status).toBe(401);
    expect(JSON.parse(forged.body)).toEqual({ kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: 'Unauthorized', reason: 'Unauthorized', code: 401 });
    expect((await cluster.get('/healthz')).status).toBe(200);
    expect((await cluster.get('/version')).status).toBe(200);
    const result = await kubectl.run('--token', 'not-a-token', 'get', 'namespaces');
    expect(result.stderr).toContain('error: You must be logged in to the server');
  });

  it('grants canary analysis only its reads: the inferenceservice-config ConfigMap by name, and token Secrets by get to rollout-run alone, where a namespace opted in', async () => {
    const can = async (user: string, ...args: string[]): Promise<string> => (await kubectl.run('auth', 'can-i', ...args, `--as=${userOf(`ome-pinning-${user}`)}`)).stdout;
    for (const user of ['pin', 'drift-check', 'repin-apply', 'rollout-run']) {
      expect(await can(user, 'get', 'configmaps/inferenceservice-config', '-n', 'ome')).toBe('yes\n');
      expect(await can(user, 'get', 'configmaps/other', '-n', 'ome')).toBe('no\n');
    }
    // No namespace consented yet: not even get, in the InferenceService's namespace or a system one.
    expect(await can('rollout-run', 'get', 'secrets/prometheus-bearer', '-n', NS)).toBe('no\n');
    expect(await can('rollout-run', 'get', 'secrets/anything', '-n', 'kube-system')).toBe('no\n');
    const allowed = await kubectl.plugin('admin', 'analysis-secrets', 'allow', '-n', NS);
    expect([allowed.code, allowed.stdout, allowed.stderr]).toEqual([0, `rolebinding.rbac.authorization.k8s.io/ome-pinning-analysis-secrets created in ${NS}\n`, '']);
    expect(await can('rollout-run', 'get', 'secrets/prometheus-bearer', '-n', NS)).toBe('yes\n');
    expect(await can('rollout-run', 'get', 'secrets/anything', '-n', 'kube-system')).toBe('no\n');
    expect(await can('rollout-run', 'list', 'secrets', '-n', NS)).toBe('no\n');
    expect(await can('rollout-run', 'watch', 'secrets', '-n', NS)).toBe('no\n');
    expect(await can('pin', 'get', 'secrets/prometheus-bearer', '-n', NS)).toBe('no\n');
    expect(await can('repin-apply', 'get', 'secrets/prometheus-bearer', '-n', NS)).toBe('no\n');
    const revoked = await kubectl.plugin('admin', 'analysis-secrets', 'revoke', '-n', NS);
    expect([revoked.code, revoked.stdout]).toEqual([0, `rolebinding.rbac.authorization.k8s.io/ome-pinning-analysis-secrets deleted in ${NS}\n`]);
    expect(await can('rollout-run', 'get', 'secrets/prometheus-bearer', '-n', NS)).toBe('no\n');
  });

  it("refuses rollout-run's token a Secret in kube-system: Forbidden, not NotFound", async () => {
    const result = await as('rollout-run', 'get', 'secret', 'bootstrap-token-abcdef', '-n', 'kube-system');
    expect(result.stderr).toBe(
      `Error from server (Forbidden): secrets "bootstrap-token-abcdef" is forbidden: User "${userOf(FUNCTION_SERVICE_ACCOUNTS['rollout-run'])}" cannot get resource "secrets" in API group "" in the namespace "kube-system"\n`,
    );
  });

  describe("refuses pin's token a Deployment that is not what the renderer writes", () => {
    const owned = (name: string, podSpec: Record<string, unknown>, label = 'llama', namespace = NS): string =>
      JSON.stringify({
        apiVersion: 'apps/v1',
        kind: 'Deployment',
        metadata: { name, namespace, labels: { 'ome.io/inferenceservice': label }, ownerReferences: llamaOwner() },
        spec: { selector: { matchLabels: { app: name } }, template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'c', image: 'busybox' }], ...podSpec } } },
      });
    const refusal = (why: string): string => `The deployments "x" is invalid: : ${POLICY_DENIAL.replace('is forbidden: ', '')}${why}\n`;
    const create = (json: string) => kubectl.run('--kubeconfig', identities, '--context', 'pin', 'create', '-f', kubectl.file('deployment.json', json));

    it.each([
      ['runs as another ServiceAccount (the plane\'s own)', { serviceAccountName: 'ome-pinning-rollout-run' }, 'the OME pinning control plane renders pods that run as their namespace\'s default ServiceAccount, never another'],
      ['runs as another ServiceAccount (the deprecated field)', { serviceAccount: 'builder' }, 'the OME pinning control plane renders pods that run as their namespace\'s default ServiceAccount, never another'],
      ['uses the host network', { hostNetwork: true }, 'the OME pinning control plane renders no pod that uses the host\'s network, PID or IPC namespace or mounts a host path'],
      ['uses the host PID namespace', { hostPID: true }, 'the OME pinning control plane renders no pod that uses the host\'s network, PID or IPC namespace or mounts a host path'],
      ['mounts a host path', { volumes: [{ name: 'root', hostPath: { path: '/' } }] }, 'the OME pinning control plane renders no pod that uses the host\'s network, PID or IPC namespace or mounts a host path'],
      ['runs a privileged container', { containers: [{ name: 'c', image: 'busybox', securityContext: { privileged: true } }] }, 'the OME pinning control plane renders no privileged container'],
    ])('%s', async (_, podSpec, why) => {
      const result = await create(owned('x', podSpec));
      expect(result.stderr).toBe(refusal(why));
    });

    // The plane's own namespace holds its ServiceAccounts; OME's holds OME's controller and
    // the revisions. Even a Deployment the renderer would write is refused there.
    it.each([
      ["in the plane's own namespace, beside its ServiceAccounts", SERVICE_ACCOUNT_NAMESPACE],
      ["in OME's namespace", 'ome'],
    ])('is %s', async (_, namespace) => {
      const result = await create(owned('x', {}, 'llama', namespace));
      expect(result.stderr).toBe(refusal("the OME pinning control plane does not write Deployments in its own namespace (ome-pinning-system) or OME's (ome)"));
      const left = await kubectl.run('get', 'deployments', '-n', namespace, '-o', 'name');
      expect(left.stdout).toBe('');
    });

    it('claims one InferenceService in its label and is controlled by another', async () => {
      const result = await create(owned('x', {}, 'other'));
      expect(result.stderr).toBe(
        refusal('the OME pinning control plane creates and updates only Deployments it owns (label ome.io/inferenceservice naming the InferenceService that controls it)'),
      );
    });

    it('and lets it create the one the renderer would', async () => {
      const result = await create(owned('rendered', {}));
      expect([result.code, result.stdout]).toEqual([0, 'deployment.apps/rendered created\n']);
    });
  });

  describe("holds pin's token to Events about an InferenceService in its namespace", () => {
    const create = (json: string) => kubectl.run('--kubeconfig', identities, '--context', 'pin', 'create', '-f', kubectl.file('event.json', json));

    it('lets the recorder, under its token, record one about an InferenceService and bump its count', async () => {
      // The plane's own recorder: it patches a repeat without reading it (pin may not get Events).
      const client = createClusterClient(connectionFromKubeconfigText('local', readFileSync(identities, 'utf8'), 'pin'), { requestTimeoutMs: 10_000 });
      try {
        const isvc = { apiVersion: ISVC_REF.apiVersion, kind: ISVC_REF.kind, metadata: { name: ISVC_REF.name, namespace: NS, uid: ISVC_REF.uid } };
        const spec = { type: 'Warning' as const, reason: 'RuntimePinError', message: 'probe', reportingController: 'ome-pinning-pin' };
        const recorder = createEventRecorder(client);
        const created = await recorder.record(isvc, spec);
        const bumped = await recorder.record(isvc, spec);
        expect([created.count, bumped.count, bumped.metadata.name]).toEqual([1, 2, created.metadata.name]);
      } finally {
        client.close();
      }
    });

    it.each([
      ['about a Secret', event('x', NS, { apiVersion: 'v1', kind: 'Secret', name: 'db', namespace: NS }), 'the OME pinning control plane writes only Events about an InferenceService in the Event\'s own namespace'],
      ['about a Pod', event('x', NS, { apiVersion: 'v1', kind: 'Pod', name: 'llama-0', namespace: NS }), 'the OME pinning control plane writes only Events about an InferenceService in the Event\'s own namespace'],
      // kube-apiserver itself refuses a legacy Event whose namespaces differ; the policy also holds the newer form.
      ['about an InferenceService in another namespace', event('x', NS, { ...ISVC_REF, namespace: 'default' }, 'eventTime'), 'the OME pinning control plane writes only Events about an InferenceService in the Event\'s own namespace'],
      ['in kube-system, even about an InferenceService there', event('x', 'kube-system', { ...ISVC_REF, namespace: 'kube-system' }), 'the OME pinning control plane does not write Events in system namespaces'],
    ])('refuses one %s', async (_name, json, why) => {
      const result = await create(json);
      expect(result.code).toBe(1);
      expect(result.stderr).toBe(`The events "x" is invalid: : ${EVENTS_DENIAL}${why}\n`);
    });

    it("refuses it a rewrite of another's Event into one about an InferenceService", async () => {
      const admin = await kubectl.run('create', '-f', kubectl.file('pod-event.json', event('pod.probe', NS, { apiVersion: 'v1', kind: 'Pod', name: 'llama-0', namespace: NS })));
      expect(admin.code).toBe(0);
      const client = createClusterClient(connectionFromKubeconfigText('local', readFileSync(identities, 'utf8'), 'pin'), { requestTimeoutMs: 10_000 });
      try {
        const rewrite = client.patch(Resources.events, NS, 'pod.probe', { involvedObject: ISVC_REF }, { type: 'merge' });
        await expect(rewrite).rejects.toThrow(`${EVENTS_DENIAL}the OME pinning control plane changes only Events about an InferenceService in the Event's own namespace`);
      } finally {
        client.close();
      }
      const kept = await kubectl.run('get', 'event', 'pod.probe', '-n', NS, '-o', 'jsonpath={.involvedObject.kind}');
      expect(kept.stdout).toBe('Pod');
    });
  });

  it('answers kubectl auth can-i and --as for the operator, and refuses impersonation to others', async () => {
    expect((await kubectl.run('auth', 'can-i', 'create', 'deployments', '-n', NS, `--as=${PIN}`)).stdout).toBe('yes\n');
    expect((await kubectl.run('auth', 'can-i', 'patch', 'inferenceservices.ome.io', '--subresource=status', '-n', NS, `--as=${PIN}`)).stdout).toBe('yes\n');
    expect((await kubectl.run('auth', 'can-i', 'create', 'controllerrevisions', '-n', 'default', `--as=${PIN}`)).stdout).toBe('no\n');
    expect((await kubectl.run('auth', 'can-i', 'create', 'controllerrevisions', '-n', 'ome', `--as=${PIN}`)).stdout).toBe('yes\n');
    const revisionGc = userOf(FUNCTION_SERVICE_ACCOUNTS['revision-gc']);
    const impersonated = await kubectl.run('get', 'deployments', '-n', NS, `--as=${revisionGc}`);
    expect(impersonated.stderr).toBe(
      `Error from server (Forbidden): deployments.apps is forbidden: User "${revisionGc}" cannot list resource "deployments" in API group "apps" in the namespace "${NS}"\n`,
    );
    const escalation = await as('pin', 'get', 'namespaces', '--as=alice');
    // kube-apiserver 1.36 names its constrained-impersonation check (impersonate-on:user-info:list
    // on namespaces); the embedded server names the user (docs/embedded-cluster.md).
    expect(escalation.code).toBe(1);
    expect(escalation.stderr).toMatch(new RegExp(`is forbidden: User "${PIN}" cannot impersonate\\S* resource "(users|namespaces)" in API group "" at the cluster scope`));
  });

  it('serves RBAC objects to kubectl and applies a new binding at once, in its namespace only', async () => {
    expect((await kubectl.run('auth', 'can-i', 'patch', 'inferenceservices.ome.io', '-n', NS, '--as=alice')).stdout).toBe('no\n');
    const created = await kubectl.run('create', 'rolebinding', 'alice-ome', '-n', NS, '--clusterrole=ome-pinning-kubectl-ome', '--user=alice');
    expect(created.stdout).toBe('rolebinding.rbac.authorization.k8s.io/alice-ome created\n');
    expect((await kubectl.run('auth', 'can-i', 'patch', 'inferenceservices.ome.io', '-n', NS, '--as=alice')).stdout).toBe('yes\n');
    expect((await kubectl.run('auth', 'can-i', 'patch', 'inferenceservices.ome.io', '-n', 'default', '--as=alice')).stdout).toBe('no\n');
    const bindings = await kubectl.run('get', 'rolebinding', 'alice-ome', '-n', NS, '-o', 'jsonpath={.roleRef.kind}/{.roleRef.name} {.subjects[0].kind}/{.subjects[0].name}');
    expect(bindings.stdout).toBe('ClusterRole/ome-pinning-kubectl-ome User/alice');
    expect((await kubectl.run('delete', 'rolebinding', 'alice-ome', '-n', NS)).code).toBe(0);
    expect((await kubectl.run('auth', 'can-i', 'patch', 'inferenceservices.ome.io', '-n', NS, '--as=alice')).stdout).toBe('no\n');
  });

  it("stops authenticating a ServiceAccount's token once it is deleted", async () => {
    const token = await cluster.serviceAccountToken(SERVICE_ACCOUNT_NAMESPACE, FUNCTION_SERVICE_ACCOUNTS['revision-gc']);
    expect((await cluster.get('/apis/ome.io/v1beta1/inferenceservices', token)).status).toBe(200);
    expect((await kubectl.run('delete', 'serviceaccount', FUNCTION_SERVICE_ACCOUNTS['revision-gc'], '-n', SERVICE_ACCOUNT_NAMESPACE)).code).toBe(0);
    // A real server's token cache may answer from memory for up to 10 s after the deletion.
    const deadline = Date.now() + 15_000;
    let status = 200;
    while (status !== 401 && Date.now() < deadline) {
      status = (await cluster.get('/apis/ome.io/v1beta1/inferenceservices', token)).status;
      if (status !== 401) await new Promise((resolveDelay) => setTimeout(resolveDelay, 250));
    }
    expect(status).toBe(401);
  });
});
