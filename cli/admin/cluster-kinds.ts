/** The kinds `admin cluster` installs and removes, by kind name. */
import type { ResourceType } from '../../shared/ports/cluster';
import { Resources } from '../../shared/domain/model/resources';

const RBAC = { group: 'rbac.authorization.k8s.io', version: 'v1' } as const;

export const ONBOARDING_KINDS: Readonly<Record<string, ResourceType>> = {
  CustomResourceDefinition: Resources.customResourceDefinitions,
  ValidatingWebhookConfiguration: Resources.validatingWebhookConfigurations,
  Namespace: Resources.namespaces,
  ServiceAccount: { group: '', version: 'v1', plural: 'serviceaccounts', kind: 'ServiceAccount', namespaced: true },
  ClusterRole: { ...RBAC, plural: 'clusterroles', kind: 'ClusterRole', namespaced: false },
  ClusterRoleBinding: { ...RBAC, plural: 'clusterrolebindings', kind: 'ClusterRoleBinding', namespaced: false },
  Role: { ...RBAC, plural: 'roles', kind: 'Role', namespaced: true },
  RoleBinding: { ...RBAC, plural: 'rolebindings', kind: 'RoleBinding', namespaced: true },
  ValidatingAdmissionPolicy: {
    group: 'admissionregistration.k8s.io',
    version: 'v1',
    plural: 'validatingadmissionpolicies',
    kind: 'ValidatingAdmissionPolicy',
    namespaced: false,
  },
  ValidatingAdmissionPolicyBinding: {
    group: 'admissionregistration.k8s.io',
    version: 'v1',
    plural: 'validatingadmissionpolicybindings',
    kind: 'ValidatingAdmissionPolicyBinding',
    namespaced: false,
  },
};

export function resourceTypeOf(kind: string): ResourceType {
  const type = ONBOARDING_KINDS[kind];
  if (!type) throw new Error(`no resource type known for kind ${kind}`);
  return type;
}
