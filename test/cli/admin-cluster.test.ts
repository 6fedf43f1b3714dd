/** The rules of `admin cluster`: flags, ids, what is installed, and the EKS access entries. */
import { describe, expect, it } from 'vitest';

import { isOnboardingFile, loadOnboardingManifests } from '../../cli/admin/cluster-manifests';
import {
  boundGroups,
  buildClusterRecord,
  checkClusterId,
  deregisterCluster,
  eksAccessEntryCommands,
  FUNCTION_ROLES,
  parseClusterMode,
  registerCluster,
  type AdminClusterClient,
  type RegisterInput,
} from '../../cli/admin/cluster-onboarding';
import { SERVICE_ACCOUNT_NAMESPACE } from '../../infra/identities';
import { NotFoundError } from '../../shared/domain/errors';
import type { KubeObject } from '../../shared/ports/cluster';
import type { ClusterMode, ClusterRecord } from '../../shared/ports/store';

describe('admin cluster rules', () => {
  it.each([
    [undefined, '--mode is required: standalone or delegate'],
    ['', '--mode is required: standalone or delegate'],
    ['both', 'invalid argument "both" for "--mode" flag: must be standalone or delegate'],
  ])('refuses --mode %j', (raw, message) => {
    expect(() => parseClusterMode(raw)).toThrow(message);
  });

  it.each(['standalone', 'delegate'])('takes --mode %s', (mode) => {
    expect(parseClusterMode(mode)).toBe(mode);
  });

  it.each([
    ['prod-eu-1', true],
    ['a', true],
    ['Prod', false],
    ['-edge', false],
    ['edge_1', false],
    ['x'.repeat(64), false],
  ])('cluster id %s valid: %s', (id, valid) => {
    if (valid) expect(checkClusterId(id)).toBe(id);
    else expect(() => checkClusterId(id)).toThrow('must be a DNS label');
  });

  it.each([
    ['infra/crds/ome.io_inferenceservices.yaml', true],
    ['infra/k8s/namespace.yaml', true],
    ['infra/k8s/rbac-pin.yaml', true],
    ['infra/k8s/policy-owned-deployments.yaml', true],
    ['infra/k8s/policy-plane-events.yaml', true],
    ['infra/k8s/policy-admission-checks.yaml', true],
    ['infra/k8s/webhook.yaml.tmpl', true],
    ['infra/k8s/README.md', false],
    ['infra/k8s/webhook.yaml', false],
  ])('installs %s: %s', (path, installed) => {
    expect(isOnboardingFile(path)).toBe(installed);
  });

  it('writes the mode into the record', () => {
    expect(buildClusterRecord({ id: 'edge-1', mode: 'delegate', server: 'https://x', credentials: { kind: 'secret' }, omeNamespace: 'ome' })).toEqual({
      id: 'edge-1',
      mode: 'delegate',
      server: 'https://x',
      credentials: { kind: 'secret' },
      omeNamespace: 'ome',
    });
  });
});

describe('the manifests register installs', () => {
  it('has the namespace, every rbac and policy manifest, the CRDs, and a role for every bound function group', async () => {
    const manifests = await loadOnboardingManifests();
    expect(manifests.crds.map((crd) => crd.metadata.name)).toContain('inferenceservices.ome.io');
    const kinds = new Set(manifests.access.map((object) => object.kind));
    expect([...kinds].sort()).toEqual(['ClusterRole', 'ClusterRoleBinding', 'Namespace', 'Role', 'RoleBinding', 'ServiceAccount', 'ValidatingAdmissionPolicy', 'ValidatingAdmissionPolicyBinding']);
    expect(manifests.access.some((object) => object.kind === 'ValidatingWebhookConfiguration')).toBe(false);
    // Every group the RBAC binds has a role of the stack to map to it.
    expect(boundGroups(manifests).filter((group) => !FUNCTION_ROLES[group])).toEqual([]);
  });

  it('prints one access entry command per function group', async () => {
    const manifests = await loadOnboardingManifests();
    const commands = eksAccessEntryCommands(manifests, { clusterName: 'prod-eu-1', region: 'eu-west-1', stack: 'ome-pinning-prod' });
    expect(commands).toHaveLength(boundGroups(manifests).length);
    expect(commands.find((command) => command.includes('--kubernetes-groups ome-pinning:pin '))).toContain('--logical-resource-id PinRole');
    for (const command of commands) expect(command).toMatch(/^aws eks create-access-entry --region eu-west-1 --cluster-name prod-eu-1 /);
  });
});

describe('register by mode', () => {
  /** A cluster that has nothing yet, recording what register creates. */
  function emptyCluster(): { client: AdminClusterClient; created: KubeObject[] } {
    const created: KubeObject[] = [];
    const client = {
      get: async () => Promise.reject(new NotFoundError('absent')),
      create: async (_type: unknown, object: KubeObject) => {
        created.push(object);
        return object;
      },
      replace: async (_type: unknown, object: KubeObject) => object,
      delete: async () => undefined,
    } as unknown as AdminClusterClient;
    return { client, created };
  }
  const webhook = { baseUrl: 'https://hooks.example/prod', key: Buffer.alloc(32, 1) };
  const input = (mode: ClusterMode): RegisterInput => ({
    id: 'edge-1',
    mode,
    server: 'https://edge-1.example',
    credentials: { kind: 'secret' },
    omeNamespace: 'ome-system',
    webhook,
  });

  it.each([
    ['standalone', 1],
    ['delegate', 0],
  ] as const)('a %s cluster gets %i webhook configuration (upstream OME\'s own webhooks judge beside its controller)', async (mode, webhooks) => {
    const { client, created } = emptyCluster();
    const records: ClusterRecord[] = [];
    const steps = await registerCluster(client, { putCluster: async (record) => void records.push(record) }, await loadOnboardingManifests(), input(mode));
    expect(created.filter((object) => object.kind === 'ValidatingWebhookConfiguration')).toHaveLength(webhooks);
    expect(steps.find((step) => step.kind === 'ValidatingWebhookConfiguration')?.action).toBe(webhooks ? 'created' : 'skipped');
    expect(records).toMatchObject([{ id: 'edge-1', mode, omeNamespace: 'ome-system' }]);
  });

  it("creates the plane's namespace before anything in it, and deregister deletes it after everything in it", async () => {
    const { client, created } = emptyCluster();
    const manifests = await loadOnboardingManifests();
    await registerCluster(client, { putCluster: async () => undefined }, manifests, input('standalone'));
    const namespace = created.findIndex((object) => object.kind === 'Namespace');
    expect(created[namespace]?.metadata.name).toBe(SERVICE_ACCOUNT_NAMESPACE);
    expect(created.findIndex((object) => object.metadata.namespace === SERVICE_ACCOUNT_NAMESPACE)).toBeGreaterThan(namespace);

    const deleted: string[] = [];
    const deleting = { ...client, delete: async (type: { kind: string }, namespace?: string, name?: string) => void deleted.push(`${type.kind} ${namespace ?? ''}/${name ?? ''}`) } as unknown as AdminClusterClient;
    await deregisterCluster(deleting, { getCluster: async () => undefined, deleteCluster: async () => undefined }, manifests, { id: 'edge-1', deleteCrds: false });
    const inNamespace = deleted.filter((entry) => entry.includes(` ${SERVICE_ACCOUNT_NAMESPACE}/`));
    expect(inNamespace.length).toBeGreaterThan(0);
    expect(deleted.indexOf(`Namespace /${SERVICE_ACCOUNT_NAMESPACE}`)).toBeGreaterThan(deleted.indexOf(inNamespace.at(-1) ?? ''));
  });

  it('points the revision immutability policy at the cluster\'s OME namespace, as the webhook, and leaves the other policies as written', async () => {
    const { client, created } = emptyCluster();
    await registerCluster(client, { putCluster: async () => undefined }, await loadOnboardingManifests(), input('standalone'));
    const selectors = Object.fromEntries(
      created
        .filter((object) => object.kind === 'ValidatingAdmissionPolicy')
        .map((policy) => [policy.metadata.name, (policy.spec as { matchConstraints?: { namespaceSelector?: unknown } }).matchConstraints?.namespaceSelector]),
    );
    expect(selectors).toEqual({
      'ome-pinning-owned-deployments': undefined,
      'ome-pinning-revision-immutability': { matchLabels: { 'kubernetes.io/metadata.name': 'ome-system' } },
      'ome-pinning-plane-events': undefined,
    });
  });

  /** A cluster before Kubernetes 1.30: creating a ValidatingAdmissionPolicy(Binding) is a 404. */
  function clusterWithoutPolicies(): ReturnType<typeof emptyCluster> {
    const cluster = emptyCluster();
    const create = cluster.client.create.bind(cluster.client);
    cluster.client.create = (async (type: { plural: string }, object: KubeObject) => {
      if (type.plural.startsWith('validatingadmissionpolic')) throw new NotFoundError('the server could not find the requested resource');
      return create(type as never, object);
    }) as AdminClusterClient['create'];
    return cluster;
  }

  it('refuses a cluster that cannot take the admission policies, installing and recording nothing, and says what is lost', async () => {
    const { client, created } = clusterWithoutPolicies();
    const records: ClusterRecord[] = [];
    const refused = await registerCluster(client, { putCluster: async (record) => void records.push(record) }, await loadOnboardingManifests(), input('standalone')).catch((error: unknown) => error);
    expect(String(refused)).toBe(
      'CliError: validatingadmissionpolicies.admissionregistration.k8s.io is not served by this API server: the owned-Deployments, plane-Events and revision-immutability admission policies cannot be installed, so a leaked credential of pin, drift-check, repin-apply or rollout-run could write any Deployment in any namespace (one that runs as another ServiceAccount, privileged or on the host) and Events about any object in any namespace, and OME revisions are guarded only while the admission webhook answers. Use Kubernetes 1.30 or later, or pass --without-policy to register without it',
    );
    expect([created, records]).toEqual([[], []]);
  });

  it('registers such a cluster with --without-policy, the loss written in the skipped steps', async () => {
    const { client, created } = clusterWithoutPolicies();
    const records: ClusterRecord[] = [];
    const steps = await registerCluster(client, { putCluster: async (record) => void records.push(record) }, await loadOnboardingManifests(), { ...input('standalone'), withoutPolicy: true });
    const skipped = steps.filter((step) => step.kind.startsWith('ValidatingAdmissionPolicy'));
    expect(skipped.map((step) => `${step.kind} ${step.name} ${step.action}`).sort()).toEqual([
      'ValidatingAdmissionPolicy ome-pinning-owned-deployments skipped',
      'ValidatingAdmissionPolicy ome-pinning-plane-events skipped',
      'ValidatingAdmissionPolicy ome-pinning-revision-immutability skipped',
      'ValidatingAdmissionPolicyBinding ome-pinning-owned-deployments skipped',
      'ValidatingAdmissionPolicyBinding ome-pinning-plane-events skipped',
      'ValidatingAdmissionPolicyBinding ome-pinning-revision-immutability skipped',
    ]);
    expect(skipped[0]?.note).toContain('(--without-policy: the owned-Deployments, plane-Events and revision-immutability admission policies cannot be installed');
    expect(created.some((object) => object.kind === 'ClusterRole')).toBe(true);
    expect(records).toHaveLength(1);
  });
});
