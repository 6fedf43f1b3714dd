/**
 * A shipped ValidatingAdmissionPolicy manifest of infra/k8s, as the embedded server
 * evaluates it, and the admission attributes of one request: what the policy tests share.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { CLUSTER_MANIFEST_DIRECTORY } from '../../infra/paths';
import type { AdmissionAttributes, AdmissionOperation } from '../../local/cluster/admission';
import { PolicyAdmission } from '../../local/cluster/admission-policy';
import { parseManifests } from '../../local/cluster/manifests';
import type { KubeObject, ResourceDef } from '../../local/cluster/registry';

/** The objects of one manifest file of infra/k8s. */
export function readClusterManifest(fileName: string): KubeObject[] {
  const file = join(CLUSTER_MANIFEST_DIRECTORY, fileName);
  return parseManifests(readFileSync(file, 'utf8'), file);
}

/** The policies and bindings of `manifests`, each namespace labelled with its name only. */
export function policyAdmissionOf(manifests: readonly KubeObject[]): PolicyAdmission {
  return new PolicyAdmission({
    policies: () => manifests.filter((m) => m.kind === 'ValidatingAdmissionPolicy'),
    bindings: () => manifests.filter((m) => m.kind === 'ValidatingAdmissionPolicyBinding'),
    namespaceLabels: (name) => ({ 'kubernetes.io/metadata.name': name }),
  });
}

/** The attributes of one request for `def` named `name` in `namespace`. */
export function admissionAttributes(
  def: ResourceDef | undefined,
  request: { operation: AdmissionOperation; namespace: string; name: string; object?: KubeObject | undefined; oldObject?: KubeObject | undefined },
): AdmissionAttributes {
  if (!def) throw new Error('no definition');
  return {
    operation: request.operation,
    def,
    subresource: '',
    namespace: request.namespace,
    name: request.name,
    ...(request.object ? { object: request.object } : {}),
    ...(request.oldObject ? { oldObject: request.oldObject } : {}),
    dryRun: false,
    options: {},
  };
}
