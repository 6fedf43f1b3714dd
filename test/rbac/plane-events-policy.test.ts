/**
 * The shipped ValidatingAdmissionPolicy infra/k8s/policy-plane-events.yaml, as the embedded
 * server evaluates it: which Event writes by whom it lets through.
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

const manifests = readClusterManifest('policy-plane-events.yaml');
const admission = policyAdmissionOf(manifests);
const events = builtinResources().find((def) => def.plural === 'events');
const configMaps = builtinResources().find((def) => def.plural === 'configmaps');

const PIN = serviceAccountUser(SERVICE_ACCOUNT_NAMESPACE, FUNCTION_SERVICE_ACCOUNTS.pin);
const ROLLOUT_RUN = serviceAccountUser(SERVICE_ACCOUNT_NAMESPACE, FUNCTION_SERVICE_ACCOUNTS['rollout-run']);
const EKS_ROLE: UserInfo = { username: 'arn:aws:sts::123456789012:assumed-role/ome-pinning-pin/x', groups: ['ome-pinning:pin', 'system:authenticated'] };
const ALICE: UserInfo = { username: 'alice', groups: ['system:authenticated'] };

const ISVC = { apiVersion: 'ome.io/v1beta1', kind: 'InferenceService', name: 'llama', namespace: 'team-a', uid: 'u-1' };

/** A core/v1 Event in team-a, as the recorder writes it, about `involvedObject`. */
function event(involvedObject: Record<string, unknown> = ISVC, namespace = 'team-a'): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'Event',
    metadata: { name: 'llama.1', namespace },
    involvedObject,
    reason: 'RuntimePinError',
    message: 'm',
    type: 'Warning',
  } as KubeObject;
}

const OURS = event();
const ABOUT_A_SECRET = event({ apiVersion: 'v1', kind: 'Secret', name: 'db', namespace: 'team-a' });
const ABOUT_A_POD = event({ apiVersion: 'v1', kind: 'Pod', name: 'llama-0', namespace: 'team-a' });
const LOOKALIKE = event({ ...ISVC, apiVersion: 'example.com/v1' });
const ELSEWHERE = event({ ...ISVC, namespace: 'team-b' });
const CLUSTER_SCOPED = event({ apiVersion: 'ome.io/v1beta1', kind: 'InferenceService', name: 'llama' });

function attrs(operation: AdmissionOperation, namespace: string, object?: KubeObject, oldObject?: KubeObject, def = events): AdmissionAttributes {
  return admissionAttributes(def, { operation, namespace, name: 'llama.1', object, oldObject });
}

describe('ValidatingAdmissionPolicy ome-pinning-plane-events', () => {
  it('compiles with the embedded server', () => {
    const policy = manifests.find((m) => m.kind === 'ValidatingAdmissionPolicy');
    expect(policy && policyErrors(policy)).toEqual([]);
  });

  it("names the plane's identities exactly as the owned-Deployments policy does", () => {
    const conditionOf = (objects: KubeObject[]): unknown => (objects.find((m) => m.kind === 'ValidatingAdmissionPolicy')?.spec as { matchConditions?: unknown } | undefined)?.matchConditions;
    expect(conditionOf(manifests)).toBeDefined();
    expect(conditionOf(manifests)).toEqual(conditionOf(readClusterManifest('policy-owned-deployments.yaml')));
  });

  it.each<[string, UserInfo, AdmissionAttributes]>([
    ['pin records an Event about an InferenceService', PIN, attrs('CREATE', 'team-a', OURS)],
    ['rollout-run bumps the count of its Event', ROLLOUT_RUN, attrs('UPDATE', 'team-a', { ...OURS, count: 2 } as KubeObject, OURS)],
    ['an EKS identity in a plane group records one', EKS_ROLE, attrs('CREATE', 'team-a', OURS)],
    ['people are not matched', ALICE, attrs('CREATE', 'kube-system', ABOUT_A_SECRET)],
    ['other kinds are not matched', PIN, attrs('CREATE', 'kube-system', ABOUT_A_SECRET, undefined, configMaps)],
  ])('allows: %s', (_name, user, request) => {
    expect(admission.validate(request, user)).toEqual([]);
  });

  it.each<[string, UserInfo, AdmissionAttributes, string]>([
    ['an Event in kube-system, even one that looks ours', PIN, attrs('CREATE', 'kube-system', event({ ...ISVC, namespace: 'kube-system' }, 'kube-system')), 'does not write Events in system namespaces'],
    ['an Event in kube-node-lease', ROLLOUT_RUN, attrs('UPDATE', 'kube-node-lease', OURS, OURS), 'does not write Events in system namespaces'],
    ['an Event about a Secret', PIN, attrs('CREATE', 'team-a', ABOUT_A_SECRET), 'writes only Events about an InferenceService'],
    ['an Event about a Pod', PIN, attrs('CREATE', 'team-a', ABOUT_A_POD), 'writes only Events about an InferenceService'],
    ['an InferenceService of another API group', PIN, attrs('CREATE', 'team-a', LOOKALIKE), 'writes only Events about an InferenceService'],
    ['an Event about an object in another namespace', PIN, attrs('CREATE', 'team-a', ELSEWHERE), "in the Event's own namespace"],
    ['an Event without the object\'s namespace', PIN, attrs('CREATE', 'team-a', CLUSTER_SCOPED), "in the Event's own namespace"],
    ['an Event without an involvedObject', PIN, attrs('CREATE', 'team-a', { apiVersion: 'v1', kind: 'Event', metadata: { name: 'x', namespace: 'team-a' } }), 'writes only Events about an InferenceService'],
    ['rewriting an Event about a Pod into one of ours', PIN, attrs('UPDATE', 'team-a', OURS, ABOUT_A_POD), 'changes only Events about an InferenceService'],
    ['the same through an EKS group', EKS_ROLE, attrs('CREATE', 'team-a', ABOUT_A_SECRET), 'writes only Events about an InferenceService'],
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
      /^events "llama\.1" is forbidden: ValidatingAdmissionPolicy 'ome-pinning-plane-events' with binding 'ome-pinning-plane-events' denied request: the OME pinning control plane /,
    );
    expect(status.message).toContain(why);
  });
});
