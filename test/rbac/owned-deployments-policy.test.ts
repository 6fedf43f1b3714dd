/**
 * The shipped ValidatingAdmissionPolicy (infra/k8s/policy-owned-deployments.yaml), as the
 * embedded server evaluates it: which Deployment writes by whom it lets through.
 */
import { describe, expect, it } from 'vitest';
import { FUNCTION_SERVICE_ACCOUNTS, SERVICE_ACCOUNT_NAMESPACE } from '../../infra/identities';
import type { AdmissionAttributes, AdmissionOperation } from '../../local/cluster/admission';
import { policyErrors } from '../../local/cluster/admission-policy';
import { ApiError } from '../../local/cluster/api-errors';
import { builtinResources } from '../../local/cluster/builtins';
import { serviceAccountUser, type UserInfo } from '../../local/cluster/rbac';
import type { KubeObject } from '../../local/cluster/registry';
import { admissionAttributes, policyAdmissionOf, readClusterManifest } from '../support/policy-admission';

const manifests = readClusterManifest('policy-owned-deployments.yaml');
const admission = policyAdmissionOf(manifests);
const deployments = builtinResources().find((def) => def.plural === 'deployments');
const configMaps = builtinResources().find((def) => def.plural === 'configmaps');

const PIN = serviceAccountUser(SERVICE_ACCOUNT_NAMESPACE, FUNCTION_SERVICE_ACCOUNTS.pin);
const ROLLOUT_RUN = serviceAccountUser(SERVICE_ACCOUNT_NAMESPACE, FUNCTION_SERVICE_ACCOUNTS['rollout-run']);
/** A ServiceAccount named like pin's in OME's namespace: not the plane's, so not matched. */
const NAMESAKE = serviceAccountUser('ome', FUNCTION_SERVICE_ACCOUNTS.pin);
const EKS_ROLE: UserInfo = { username: 'arn:aws:sts::123456789012:assumed-role/ome-pinning-pin/x', groups: ['ome-pinning:pin', 'system:authenticated'] };
const ALICE: UserInfo = { username: 'alice', groups: ['system:authenticated'] };

const OWNER = { apiVersion: 'ome.io/v1beta1', kind: 'InferenceService', name: 'llama', uid: 'u-1', controller: true };

function deployment(options: { labelled?: boolean; owners?: KubeObject['metadata']['ownerReferences'] } = {}): KubeObject {
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: {
      name: 'llama-engine',
      namespace: 'team-a',
      ...(options.labelled === false ? {} : { labels: { 'ome.io/inferenceservice': 'llama', 'ome.io/component': 'engine' } }),
      ...(options.owners === undefined ? { ownerReferences: [OWNER] } : options.owners.length > 0 ? { ownerReferences: options.owners } : {}),
    },
  };
}

const OURS = deployment();
const UNLABELLED = deployment({ labelled: false });
const UNOWNED = deployment({ owners: [] });
const NOT_CONTROLLER = deployment({ owners: [{ ...OWNER, controller: false }] });
const OTHER_OWNER = deployment({ owners: [{ ...OWNER, apiVersion: 'apps/v1', kind: 'ReplicaSet' }] });

function attrs(operation: AdmissionOperation, namespace: string, object?: KubeObject, oldObject?: KubeObject, def = deployments): AdmissionAttributes {
  return admissionAttributes(def, { operation, namespace, name: 'llama-engine', object, oldObject });
}

describe('ValidatingAdmissionPolicy ome-pinning-owned-deployments', () => {
  it('compiles with the embedded server', () => {
    const policy = manifests.find((m) => m.kind === 'ValidatingAdmissionPolicy');
    expect(policy && policyErrors(policy)).toEqual([]);
  });

  it.each<[string, UserInfo, AdmissionAttributes]>([
    ['pin creates the Deployment it renders', PIN, attrs('CREATE', 'team-a', OURS)],
    ['pin updates its Deployment', PIN, attrs('UPDATE', 'team-a', OURS, OURS)],
    ['rollout-run deletes a canary it owns', ROLLOUT_RUN, attrs('DELETE', 'team-a', undefined, OURS)],
    ['an EKS identity in a plane group writes an owned Deployment', EKS_ROLE, attrs('UPDATE', 'team-a', OURS, OURS)],
    ['people are not matched', ALICE, attrs('CREATE', 'kube-system', UNOWNED)],
    ["a namesake of pin's ServiceAccount outside the plane's namespace is not matched", NAMESAKE, attrs('CREATE', 'kube-system', UNOWNED)],
    ['other kinds are not matched', PIN, attrs('CREATE', 'kube-system', UNOWNED, undefined, configMaps)],
  ])('allows: %s', (_name, user, request) => {
    expect(admission.validate(request, user)).toEqual([]);
  });

  it.each<[string, UserInfo, AdmissionAttributes, string]>([
    ['a Deployment in kube-system, even one that looks ours', PIN, attrs('CREATE', 'kube-system', OURS), 'does not write Deployments in system namespaces'],
    ['a delete in kube-public', ROLLOUT_RUN, attrs('DELETE', 'kube-public', undefined, OURS), 'does not write Deployments in system namespaces'],
    ["a Deployment in the plane's own namespace, beside its ServiceAccounts", PIN, attrs('CREATE', SERVICE_ACCOUNT_NAMESPACE, OURS), 'does not write Deployments in its own namespace (ome-pinning-system) or OME\'s (ome)'],
    ["a Deployment in OME's namespace", PIN, attrs('CREATE', 'ome', OURS), 'does not write Deployments in its own namespace (ome-pinning-system) or OME\'s (ome)'],
    ["an update there through an EKS group", EKS_ROLE, attrs('UPDATE', 'ome', OURS, OURS), 'does not write Deployments in its own namespace (ome-pinning-system) or OME\'s (ome)'],
    ['a create without our label', PIN, attrs('CREATE', 'team-a', UNLABELLED), 'creates and updates only Deployments it owns'],
    ['a create without an owner', PIN, attrs('CREATE', 'team-a', UNOWNED), 'creates and updates only Deployments it owns'],
    ['an owner that is not the controller', PIN, attrs('CREATE', 'team-a', NOT_CONTROLLER), 'creates and updates only Deployments it owns'],
    ['an owner that is not an InferenceService', PIN, attrs('CREATE', 'team-a', OTHER_OWNER), 'creates and updates only Deployments it owns'],
    ['adopting an unowned Deployment by labelling it', PIN, attrs('UPDATE', 'team-a', OURS, UNOWNED), 'changes and deletes only Deployments it owns'],
    ['giving away one of ours', PIN, attrs('UPDATE', 'team-a', UNLABELLED, OURS), 'creates and updates only Deployments it owns'],
    ['deleting an unowned Deployment', ROLLOUT_RUN, attrs('DELETE', 'team-a', undefined, UNOWNED), 'changes and deletes only Deployments it owns'],
    ['the same through an EKS group', EKS_ROLE, attrs('DELETE', 'team-a', undefined, UNOWNED), 'changes and deletes only Deployments it owns'],
  ])('denies: %s', (_name, user, request, why) => {
    let denial: unknown;
    try {
      admission.validate(request, user);
    } catch (error) {
      denial = error;
    }
    expect(denial).toBeInstanceOf(ApiError);
    const status = (denial as ApiError).status;
    expect(status).toMatchObject({ code: 422, reason: 'Invalid' });
    expect(status.message).toMatch(
      /^deployments\.apps "llama-engine" is forbidden: ValidatingAdmissionPolicy 'ome-pinning-owned-deployments' with binding 'ome-pinning-owned-deployments' denied request: the OME pinning control plane /,
    );
    expect(status.message).toContain(why);
  });
});
