import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { SERVICE_ACCOUNT_NAMESPACE } from '../../infra/identities';
import { CLUSTER_MANIFEST_DIRECTORY, WEBHOOK_CONFIGURATION_TEMPLATE } from '../../infra/paths';
import { WEBHOOK_TIMEOUT_SECONDS } from '../../shared/domain/webhook/webhook-settings';
import { WebhookName } from '../../shared/domain/vocabulary';
import { readManifests, type Manifest } from './manifests';

interface Rule {
  apiGroups: string[];
  resources: string[];
  verbs: string[];
}

const documents = [...readManifests('k8s').values()].flat();
const find = (kind: string, name: string): Manifest | undefined =>
  documents.find((document) => document.kind === kind && document.metadata.name === name);

/** A role's rules as `group/resource` → sorted verbs, for table comparison. */
function grants(role: Manifest | undefined): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const rule of (role?.rules ?? []) as Rule[]) {
    for (const group of rule.apiGroups) {
      for (const resource of rule.resources) {
        const key = `${group || 'core'}/${resource}`;
        out[key] = [...new Set([...(out[key] ?? []), ...rule.verbs])].sort();
      }
    }
  }
  return out;
}

describe('cluster RBAC in infra/k8s', () => {
  it.each([
    [
      'ome-pinning-forwarder',
      {
        'ome.io/inferenceservices': ['get', 'list', 'watch'],
        'ome.io/servingruntimes': ['get', 'list', 'watch'],
        'ome.io/clusterservingruntimes': ['get', 'list', 'watch'],
        'ome.io/rolloutpolicies': ['get', 'list', 'watch'],
        'apps/deployments': ['get', 'list', 'watch'],
      },
      { 'apps/controllerrevisions': ['get', 'list', 'watch'] },
    ],
    [
      'ome-pinning-pin',
      {
        'ome.io/inferenceservices': ['get', 'list'],
        'ome.io/inferenceservices/status': ['patch', 'update'],
        'ome.io/servingruntimes': ['get', 'list'],
        'ome.io/clusterservingruntimes': ['get', 'list'],
        'ome.io/rolloutpolicies': ['get', 'list'],
        'apps/deployments': ['create', 'delete', 'get', 'patch', 'update'],
        'core/events': ['create', 'patch'],
      },
      { 'apps/controllerrevisions': ['create', 'get', 'list', 'patch'], 'core/configmaps': ['get'] },
    ],
    [
      'ome-pinning-drift-check',
      {
        'ome.io/inferenceservices': ['get', 'list'],
        'ome.io/inferenceservices/status': ['patch', 'update'],
        'ome.io/servingruntimes': ['get', 'list'],
        'ome.io/clusterservingruntimes': ['get', 'list'],
        'ome.io/rolloutpolicies': ['get', 'list'],
        'apps/deployments': ['create', 'delete', 'get', 'patch', 'update'],
        'core/events': ['create', 'patch'],
      },
      { 'apps/controllerrevisions': ['create', 'get', 'list', 'patch'], 'core/configmaps': ['get'] },
    ],
    [
      'ome-pinning-repin-apply',
      {
        'ome.io/inferenceservices': ['get', 'list', 'patch'],
        'ome.io/inferenceservices/status': ['get', 'patch', 'update'],
        'ome.io/rolloutpolicies': ['get', 'list'],
        'ome.io/rolloutpolicies/status': ['get', 'patch', 'update'],
        'apps/deployments': ['delete', 'get', 'patch', 'update'],
        'core/events': ['create', 'patch'],
      },
      { 'core/configmaps': ['get'] },
    ],
    [
      'ome-pinning-rollout-run',
      {
        'ome.io/inferenceservices': ['get', 'list', 'patch'],
        'ome.io/inferenceservices/status': ['get', 'patch', 'update'],
        'ome.io/rolloutpolicies': ['get', 'list'],
        'ome.io/rolloutpolicies/status': ['get', 'patch', 'update'],
        'apps/deployments': ['delete', 'get', 'patch', 'update'],
        'core/events': ['create', 'patch'],
      },
      { 'core/configmaps': ['get'] },
    ],
    [
      'ome-pinning-admission-webhook',
      { 'ome.io/servingruntimes': ['get'], 'ome.io/clusterservingruntimes': ['get'] },
      {},
    ],
    ['ome-pinning-revision-gc', { 'ome.io/inferenceservices': ['list'] }, { 'apps/controllerrevisions': ['delete', 'list', 'patch'] }],
  ])('%s grants exactly what its function needs, bound to its ServiceAccount', (name, clusterWide, inOme) => {
    expect(find('ServiceAccount', name)?.metadata.namespace).toBe(SERVICE_ACCOUNT_NAMESPACE);
    expect(grants(find('ClusterRole', name))).toEqual(clusterWide);
    expect(grants(find('Role', name))).toEqual(inOme);
    const bindings = documents.filter((document) => /Binding$/.test(document.kind) && document.metadata.name === name);
    expect(bindings).toHaveLength(Object.keys(inOme).length > 0 ? 2 : 1);
    for (const binding of bindings) {
      expect(binding.roleRef).toMatchObject({ name, kind: binding.kind === 'RoleBinding' ? 'Role' : 'ClusterRole' });
      expect(binding.subjects).toContainEqual({ kind: 'ServiceAccount', name, namespace: SERVICE_ACCOUNT_NAMESPACE });
    }
  });

  it('lets functions read only the inferenceservice-config ConfigMap, and Secrets only through the unbound analysis-secrets role (get, never list or watch)', () => {
    const rulesOf = (kind: string) => documents.filter((document) => document.kind === kind).flatMap((document) => ((document.rules ?? []) as (Rule & { resourceNames?: string[] })[]).map((rule) => ({ role: document.metadata.name, ...rule })));
    const configMaps = rulesOf('Role').filter((rule) => rule.resources.includes('configmaps'));
    expect(configMaps.map((rule) => rule.role).sort()).toEqual(['ome-pinning-drift-check', 'ome-pinning-pin', 'ome-pinning-repin-apply', 'ome-pinning-rollout-run']);
    for (const rule of configMaps) expect(rule).toMatchObject({ resourceNames: ['inferenceservice-config'], verbs: ['get'] });
    expect(rulesOf('ClusterRole').filter((rule) => rule.resources.includes('configmaps'))).toEqual([]);
    const secrets = [...rulesOf('ClusterRole'), ...rulesOf('Role')].filter((rule) => rule.resources.includes('secrets'));
    expect(secrets.map((rule) => [rule.role, rule.verbs])).toEqual([['ome-pinning-analysis-secrets', ['get']]]);
    // Bound only per namespace, by `kubectl ome admin analysis-secrets allow` (a RoleBinding), never by a manifest.
    expect(documents.filter((document) => /Binding$/.test(document.kind) && (document.roleRef as { name?: string } | undefined)?.name === 'ome-pinning-analysis-secrets')).toEqual([]);
  });

  it('gives kubectl ome users get/patch on InferenceServices and list on revisions in ome', () => {
    expect(grants(find('ClusterRole', 'ome-pinning-kubectl-ome'))).toMatchObject({ 'ome.io/inferenceservices': ['get', 'patch'] });
    expect(grants(find('Role', 'ome-pinning-kubectl-ome-revisions'))).toEqual({ 'apps/controllerrevisions': ['list'] });
    expect(find('Role', 'ome-pinning-kubectl-ome-revisions')?.metadata.namespace).toBe('ome');
  });

  it('grants no wildcards and keeps every Role in ome', () => {
    const rules = documents.flatMap((document) => (document.rules ?? []) as Rule[]);
    expect(rules.flatMap((rule) => [...rule.apiGroups, ...rule.resources, ...rule.verbs])).not.toContain('*');
    expect(new Set(documents.filter((document) => document.kind === 'Role' || document.kind === 'RoleBinding').map((document) => document.metadata.namespace))).toEqual(new Set(['ome']));
  });
});

describe('admission webhooks in infra/k8s/webhook.yaml.tmpl', () => {
  const configuration = parse(readFileSync(WEBHOOK_CONFIGURATION_TEMPLATE, 'utf8')) as Manifest;
  const webhooks = configuration.webhooks as Array<Record<string, unknown> & { name: string; rules: Array<Record<string, string[] | string>> }>;

  it('registers the two upstream webhooks, failing closed with a time limit', () => {
    expect(configuration.apiVersion).toBe('admissionregistration.k8s.io/v1');
    expect(webhooks.map((webhook) => webhook.name)).toEqual([WebhookName.inferenceService, WebhookName.controllerRevisionImmutability]);
    for (const webhook of webhooks) {
      expect(webhook).toMatchObject({ failurePolicy: 'Fail', sideEffects: 'None', admissionReviewVersions: ['v1'] });
      // The function's timeout (serverless.yml) and its time budget are derived from this.
      expect(webhook.timeoutSeconds).toBe(WEBHOOK_TIMEOUT_SECONDS);
      expect((webhook.clientConfig as { url: string }).url).toMatch(/^https:\/\/ome-pinning-webhook\.invalid\//);
    }
  });

  it('is not a manifest that `kubectl apply -f infra/k8s/` would install', () => {
    // kubectl reads .json, .yaml and .yml files of a directory.
    const applied = readdirSync(CLUSTER_MANIFEST_DIRECTORY).filter((name) => /\.(json|ya?ml)$/.test(name));
    expect(applied).not.toContain('webhook.yaml.tmpl');
    expect(documents.filter((document) => document.kind === 'ValidatingWebhookConfiguration')).toEqual([]);
  });

  it('sends InferenceService creates and updates, and ControllerRevision updates', () => {
    expect(webhooks[0]!.rules).toEqual([
      { apiGroups: ['ome.io'], apiVersions: ['v1beta1'], operations: ['CREATE', 'UPDATE'], resources: ['inferenceservices'], scope: 'Namespaced' },
    ]);
    expect(webhooks[1]!.rules).toEqual([
      { apiGroups: ['apps'], apiVersions: ['v1'], operations: ['UPDATE'], resources: ['controllerrevisions'], scope: 'Namespaced' },
    ]);
  });
});
