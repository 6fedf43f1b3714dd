/**
 * One identity per function: every function has its own ServiceAccount in infra/k8s, in the
 * plane's own namespace, bound to its own role, and the read-only functions' roles hold read
 * verbs only.
 */
import { describe, expect, it } from 'vitest';
import { FUNCTION_SERVICE_ACCOUNTS, SERVICE_ACCOUNT_NAMESPACE, isAccessManifest } from '../../infra/identities';
import { readManifests, type Manifest } from '../model/manifests';

const files = readManifests('k8s');
const documents = [...files.values()].flat();
const READ_VERBS = new Set(['get', 'list', 'watch']);

function rulesOf(kind: string, name: string): Array<{ verbs: string[] }> {
  const role = documents.find((d: Manifest) => d.kind === kind && d.metadata.name === name);
  return (role?.rules ?? []) as Array<{ verbs: string[] }>;
}

describe('function identities', () => {
  it("gives every function a distinct ServiceAccount, only in the plane's own namespace", () => {
    const accounts = Object.values(FUNCTION_SERVICE_ACCOUNTS);
    expect(new Set(accounts).size).toBe(accounts.length);
    expect(SERVICE_ACCOUNT_NAMESPACE).toBe('ome-pinning-system');
    for (const account of accounts) {
      expect(documents.filter((d) => d.kind === 'ServiceAccount' && d.metadata.name === account).map((d) => d.metadata.namespace)).toEqual([SERVICE_ACCOUNT_NAMESPACE]);
    }
    // Not in OME's namespace, where the plane writes revisions; and nothing else lives in theirs.
    expect(documents.filter((d) => d.kind === 'ServiceAccount' && d.metadata.namespace !== SERVICE_ACCOUNT_NAMESPACE)).toEqual([]);
    expect(documents.filter((d) => d.metadata.namespace === SERVICE_ACCOUNT_NAMESPACE).map((d) => d.kind)).toEqual(accounts.map(() => 'ServiceAccount'));
  });

  it('binds each ServiceAccount by its namespace, wherever the binding lives', () => {
    const subjects = documents
      .filter((d) => /Binding$/.test(d.kind))
      .flatMap((d) => (d.subjects ?? []) as Array<{ kind: string; name: string; namespace?: string }>)
      .filter((s) => s.kind === 'ServiceAccount');
    expect(subjects.length).toBeGreaterThan(0);
    for (const subject of subjects) expect(subject.namespace).toBe(SERVICE_ACCOUNT_NAMESPACE);
  });

  it("ships the plane's namespace first among the access manifests, labelled as the plane's", () => {
    const accessFiles = [...files.keys()].filter(isAccessManifest).sort();
    expect(accessFiles[0]).toBe('namespace.yaml');
    expect(files.get('namespace.yaml')).toEqual([
      { apiVersion: 'v1', kind: 'Namespace', metadata: { name: SERVICE_ACCOUNT_NAMESPACE, labels: { 'app.kubernetes.io/part-of': 'ome-pinning' } } },
    ]);
  });

  it('binds each ServiceAccount to its own roles only', () => {
    for (const account of Object.values(FUNCTION_SERVICE_ACCOUNTS)) {
      const bindings = documents.filter((d) => /Binding$/.test(d.kind) && ((d.subjects ?? []) as Array<{ kind: string; name: string }>).some((s) => s.kind === 'ServiceAccount' && s.name === account));
      expect(bindings.length).toBeGreaterThan(0);
      expect(bindings.map((b) => (b.roleRef as { name: string }).name)).toEqual(bindings.map(() => account));
    }
  });

  it.each(['admission-webhook', 'forward-watch-events'] as const)('keeps %s read-only', (fn) => {
    const account = FUNCTION_SERVICE_ACCOUNTS[fn];
    const verbs = [...rulesOf('ClusterRole', account), ...rulesOf('Role', account)].flatMap((rule) => rule.verbs);
    expect(verbs.length).toBeGreaterThan(0);
    expect(verbs.filter((verb) => !READ_VERBS.has(verb))).toEqual([]);
  });

  it.each(['policy-owned-deployments.yaml', 'policy-plane-events.yaml'])('ships %s among the access manifests the embedded server applies', (name) => {
    const accessFiles = [...files.keys()].filter(isAccessManifest);
    expect(accessFiles).toContain(name);
    expect(accessFiles).not.toContain('webhook.yaml');
    const kinds = (files.get(name) ?? []).map((d) => d.kind);
    expect(kinds).toEqual(['ValidatingAdmissionPolicy', 'ValidatingAdmissionPolicyBinding']);
  });
});
