/**
 * The embedded server's RBAC authorizer and request parsing, as tables: which rule allows
 * which request, which bindings count where, and the real server's 403 text.
 */
import { describe, expect, it } from 'vitest';
import { SERVICE_ACCOUNT_NAMESPACE } from '../../infra/identities';
import {
  authorize,
  forbiddenError,
  ruleAllows,
  serviceAccountUser,
  subjectMatches,
  type BindingObject,
  type PolicyRule,
  type RbacPolicySource,
  type RequestAttributes,
  type RoleObject,
  type UserInfo,
} from '../../local/cluster/rbac';
import { requestAttributesOf } from '../../local/cluster/request-info';

const PIN = serviceAccountUser(SERVICE_ACCOUNT_NAMESPACE, 'ome-pinning-pin');

function resource(verb: string, group: string, res: string, namespace = '', name = '', subresource = '', user: UserInfo = PIN): RequestAttributes {
  return { resourceRequest: true, user, verb, apiGroup: group, apiVersion: 'v1', resource: res, subresource, namespace, name };
}

function path(verb: string, url: string, user: UserInfo = PIN): RequestAttributes {
  return { resourceRequest: false, user, verb, path: url };
}

describe('Function: ruleAllows', () => {
  it.each<[string, PolicyRule, RequestAttributes, boolean]>([
    ['verb, group and resource listed', { verbs: ['get'], apiGroups: ['apps'], resources: ['deployments'] }, resource('get', 'apps', 'deployments', 'a', 'x'), true],
    ['another verb', { verbs: ['get'], apiGroups: ['apps'], resources: ['deployments'] }, resource('delete', 'apps', 'deployments', 'a', 'x'), false],
    ['another group', { verbs: ['get'], apiGroups: [''], resources: ['deployments'] }, resource('get', 'apps', 'deployments', 'a', 'x'), false],
    ['wildcards', { verbs: ['*'], apiGroups: ['*'], resources: ['*'] }, resource('patch', 'ome.io', 'inferenceservices', 'a', 'x', 'status'), true],
    ['the resource alone does not grant its subresource', { verbs: ['patch'], apiGroups: ['ome.io'], resources: ['inferenceservices'] }, resource('patch', 'ome.io', 'inferenceservices', 'a', 'x', 'status'), false],
    ['resource/subresource', { verbs: ['patch'], apiGroups: ['ome.io'], resources: ['inferenceservices/status'] }, resource('patch', 'ome.io', 'inferenceservices', 'a', 'x', 'status'), true],
    ['the subresource does not grant the resource', { verbs: ['patch'], apiGroups: ['ome.io'], resources: ['inferenceservices/status'] }, resource('patch', 'ome.io', 'inferenceservices', 'a', 'x'), false],
    ['*/subresource', { verbs: ['get'], apiGroups: ['apps'], resources: ['*/scale'] }, resource('get', 'apps', 'deployments', 'a', 'x', 'scale'), true],
    ['resourceNames naming the object', { verbs: ['get'], apiGroups: ['apps'], resources: ['deployments'], resourceNames: ['x'] }, resource('get', 'apps', 'deployments', 'a', 'x'), true],
    ['resourceNames naming another object', { verbs: ['get'], apiGroups: ['apps'], resources: ['deployments'], resourceNames: ['y'] }, resource('get', 'apps', 'deployments', 'a', 'x'), false],
    ['resourceNames never grant a list', { verbs: ['list'], apiGroups: ['apps'], resources: ['deployments'], resourceNames: ['x'] }, resource('list', 'apps', 'deployments', 'a'), false],
    ['a nonResourceURL', { verbs: ['get'], nonResourceURLs: ['/version'] }, path('get', '/version'), true],
    ['a nonResourceURL prefix', { verbs: ['get'], nonResourceURLs: ['/apis/*'] }, path('get', '/apis/ome.io/v1beta1'), true],
    ['a nonResourceURL for another path', { verbs: ['get'], nonResourceURLs: ['/version'] }, path('get', '/healthz'), false],
    ['a resource rule never grants a path', { verbs: ['*'], apiGroups: ['*'], resources: ['*'] }, path('get', '/version'), false],
  ])('%s', (_name, rule, request, allowed) => {
    expect(ruleAllows(rule, request)).toBe(allowed);
  });
});

describe('Function: subjectMatches', () => {
  it.each<[string, Parameters<typeof subjectMatches>[0], string, boolean]>([
    ['the ServiceAccount', { kind: 'ServiceAccount', name: 'ome-pinning-pin', namespace: SERVICE_ACCOUNT_NAMESPACE }, '', true],
    ['a ServiceAccount of another namespace', { kind: 'ServiceAccount', name: 'ome-pinning-pin', namespace: 'ome' }, '', false],
    ['a ServiceAccount defaulting to the binding namespace', { kind: 'ServiceAccount', name: 'ome-pinning-pin' }, SERVICE_ACCOUNT_NAMESPACE, true],
    ['a ServiceAccount defaulting to another binding namespace', { kind: 'ServiceAccount', name: 'ome-pinning-pin' }, 'ome', false],
    ['its group', { kind: 'Group', name: `system:serviceaccounts:${SERVICE_ACCOUNT_NAMESPACE}` }, '', true],
    ['system:authenticated', { kind: 'Group', name: 'system:authenticated' }, '', true],
    ['a User named like it', { kind: 'User', name: `system:serviceaccount:${SERVICE_ACCOUNT_NAMESPACE}:ome-pinning-pin` }, '', true],
    ['another user', { kind: 'User', name: 'alice' }, '', false],
  ])('%s', (_name, subject, bindingNamespace, matches) => {
    expect(subjectMatches(subject, PIN, bindingNamespace)).toBe(matches);
  });
});

describe('Function: authorize', () => {
  const clusterRoles: RoleObject[] = [
    { metadata: { name: 'reader' }, rules: [{ verbs: ['get', 'list'], apiGroups: ['apps'], resources: ['deployments'] }] },
    { metadata: { name: 'writer' }, rules: [{ verbs: ['create'], apiGroups: ['apps'], resources: ['deployments'] }] },
  ];
  const roles: RoleObject[] = [{ metadata: { name: 'revisions', namespace: 'ome' }, rules: [{ verbs: ['create'], apiGroups: ['apps'], resources: ['controllerrevisions'] }] }];
  const pinSubject = [{ kind: 'ServiceAccount', name: 'ome-pinning-pin', namespace: SERVICE_ACCOUNT_NAMESPACE }];
  const clusterBindings: BindingObject[] = [{ metadata: { name: 'pin-reads' }, roleRef: { kind: 'ClusterRole', name: 'reader' }, subjects: pinSubject }];
  const bindings: BindingObject[] = [
    { metadata: { name: 'pin-revisions', namespace: 'ome' }, roleRef: { kind: 'Role', name: 'revisions' }, subjects: pinSubject },
    { metadata: { name: 'pin-writes', namespace: 'team-a' }, roleRef: { kind: 'ClusterRole', name: 'writer' }, subjects: pinSubject },
    // A RoleBinding to a Role of another namespace grants nothing.
    { metadata: { name: 'elsewhere', namespace: 'team-b' }, roleRef: { kind: 'Role', name: 'revisions' }, subjects: pinSubject },
  ];
  const policy: RbacPolicySource = {
    clusterRoleBindings: () => clusterBindings,
    roleBindings: (namespace) => bindings.filter((b) => b.metadata.namespace === namespace),
    clusterRole: (name) => clusterRoles.find((r) => r.metadata.name === name),
    role: (namespace, name) => roles.find((r) => r.metadata.namespace === namespace && r.metadata.name === name),
  };

  it.each<[string, RequestAttributes, boolean]>([
    ['a ClusterRoleBinding grants in every namespace', resource('get', 'apps', 'deployments', 'kube-system', 'x'), true],
    ['a ClusterRoleBinding grants at the cluster scope', resource('list', 'apps', 'deployments'), true],
    ['a RoleBinding to a Role grants in its namespace', resource('create', 'apps', 'controllerrevisions', 'ome'), true],
    ['a RoleBinding to a Role grants nowhere else', resource('create', 'apps', 'controllerrevisions', 'default'), false],
    ['a RoleBinding to a Role of another namespace grants nothing', resource('create', 'apps', 'controllerrevisions', 'team-b'), false],
    ['a RoleBinding to a ClusterRole grants in its namespace', resource('create', 'apps', 'deployments', 'team-a'), true],
    ['a RoleBinding to a ClusterRole grants nowhere else', resource('create', 'apps', 'deployments', 'kube-system'), false],
    ['nothing bound to another user', resource('get', 'apps', 'deployments', 'a', 'x', '', serviceAccountUser(SERVICE_ACCOUNT_NAMESPACE, 'ome-pinning-revision-gc')), false],
    ['system:masters may do anything', resource('delete', '', 'namespaces', '', 'kube-system', '', { username: 'admin', groups: ['system:masters'] }), true],
  ])('%s', (_name, request, allowed) => {
    expect(authorize(policy, request).allowed).toBe(allowed);
  });
});

describe('Function: forbiddenError', () => {
  it.each<[RequestAttributes, string]>([
    [
      resource('create', 'apps', 'deployments', 'kube-system'),
      'deployments.apps is forbidden: User "system:serviceaccount:ome-pinning-system:ome-pinning-pin" cannot create resource "deployments" in API group "apps" in the namespace "kube-system"',
    ],
    [
      resource('patch', 'ome.io', 'inferenceservices', 'team-a', 'llama', 'status'),
      'inferenceservices.ome.io "llama" is forbidden: User "system:serviceaccount:ome-pinning-system:ome-pinning-pin" cannot patch resource "inferenceservices/status" in API group "ome.io" in the namespace "team-a"',
    ],
    [resource('list', '', 'namespaces'), 'namespaces is forbidden: User "system:serviceaccount:ome-pinning-system:ome-pinning-pin" cannot list resource "namespaces" in API group "" at the cluster scope'],
    [path('get', '/metrics'), 'forbidden: User "system:serviceaccount:ome-pinning-system:ome-pinning-pin" cannot get path "/metrics"'],
  ])('%j', (request, message) => {
    const error = forbiddenError(request);
    expect(error.status).toMatchObject({ kind: 'Status', status: 'Failure', reason: 'Forbidden', code: 403, message });
  });
});

describe('Function: requestAttributesOf', () => {
  const q = (text = ''): URLSearchParams => new URLSearchParams(text);
  it.each<[string, string, URLSearchParams, Partial<RequestAttributes>]>([
    ['GET', '/apis/apps/v1/namespaces/a/deployments/x', q(), { verb: 'get', apiGroup: 'apps', resource: 'deployments', namespace: 'a', name: 'x', subresource: '' }],
    ['GET', '/apis/apps/v1/namespaces/a/deployments', q(), { verb: 'list', resource: 'deployments', namespace: 'a', name: '' }],
    ['GET', '/apis/apps/v1/deployments', q('watch=true'), { verb: 'watch', resource: 'deployments', namespace: '' }],
    ['POST', '/api/v1/namespaces/a/events', q(), { verb: 'create', apiGroup: '', resource: 'events', namespace: 'a' }],
    ['PUT', '/apis/ome.io/v1beta1/namespaces/a/inferenceservices/x/status', q(), { verb: 'update', resource: 'inferenceservices', subresource: 'status', name: 'x' }],
    ['PATCH', '/apis/apps/v1/namespaces/a/deployments/x/scale', q(), { verb: 'patch', resource: 'deployments', subresource: 'scale' }],
    ['DELETE', '/apis/apps/v1/namespaces/ome/controllerrevisions', q(), { verb: 'deletecollection', resource: 'controllerrevisions', namespace: 'ome' }],
    ['GET', '/api/v1/namespaces/ome', q(), { verb: 'get', resource: 'namespaces', name: 'ome', namespace: 'ome' }],
    ['PUT', '/api/v1/namespaces/ome/finalize', q(), { verb: 'update', resource: 'namespaces', name: 'ome', subresource: 'finalize' }],
    ['GET', '/apis/ome.io/v1beta1', q(), { resourceRequest: false, verb: 'get', path: '/apis/ome.io/v1beta1' } as Partial<RequestAttributes>],
    ['GET', '/version', q(), { resourceRequest: false, verb: 'get', path: '/version' } as Partial<RequestAttributes>],
  ])('%s %s', (method, url, query, expected) => {
    expect(requestAttributesOf(PIN, method, url, query)).toMatchObject(expected);
  });
});
