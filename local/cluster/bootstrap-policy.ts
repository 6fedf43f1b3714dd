/**
 * The RBAC objects a fresh kube-apiserver creates for itself (its bootstrap policy),
 * reduced to what clients of this server rely on: `cluster-admin` for `system:masters`,
 * discovery and health/version paths for authenticated users (health and version for
 * anonymous ones too), and self access reviews (`kubectl auth can-i`) for everyone
 * authenticated.
 */
import type { KubeObject } from './registry';

const RBAC = 'rbac.authorization.k8s.io/v1';
const BOOTSTRAP_LABELS = { 'kubernetes.io/bootstrapping': 'rbac-defaults' };
const PUBLIC_INFO = ['/healthz', '/livez', '/readyz', '/version', '/version/'];

function clusterRole(name: string, rules: Array<Record<string, string[]>>): KubeObject {
  return { apiVersion: RBAC, kind: 'ClusterRole', metadata: { name, labels: BOOTSTRAP_LABELS }, rules };
}

function clusterRoleBinding(name: string, groups: string[]): KubeObject {
  return {
    apiVersion: RBAC,
    kind: 'ClusterRoleBinding',
    metadata: { name, labels: BOOTSTRAP_LABELS },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name },
    subjects: groups.map((group) => ({ apiGroup: 'rbac.authorization.k8s.io', kind: 'Group', name: group })),
  };
}

export function bootstrapPolicy(): KubeObject[] {
  return [
    clusterRole('cluster-admin', [
      { apiGroups: ['*'], resources: ['*'], verbs: ['*'] },
      { nonResourceURLs: ['*'], verbs: ['*'] },
    ]),
    clusterRoleBinding('cluster-admin', ['system:masters']),
    clusterRole('system:discovery', [
      { nonResourceURLs: ['/api', '/api/*', '/apis', '/apis/*', '/openapi', '/openapi/*', ...PUBLIC_INFO], verbs: ['get'] },
    ]),
    clusterRoleBinding('system:discovery', ['system:authenticated']),
    clusterRole('system:public-info-viewer', [{ nonResourceURLs: PUBLIC_INFO, verbs: ['get'] }]),
    clusterRoleBinding('system:public-info-viewer', ['system:authenticated', 'system:unauthenticated']),
    clusterRole('system:basic-user', [
      { apiGroups: ['authentication.k8s.io'], resources: ['selfsubjectreviews'], verbs: ['create'] },
      { apiGroups: ['authorization.k8s.io'], resources: ['selfsubjectaccessreviews', 'selfsubjectrulesreviews'], verbs: ['create'] },
    ]),
    clusterRoleBinding('system:basic-user', ['system:authenticated']),
  ];
}
