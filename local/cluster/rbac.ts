/**
 * The RBAC authorizer, as kube-apiserver evaluates `rbac.authorization.k8s.io/v1`: a
 * request is allowed when a rule of a role bound to the user allows it — ClusterRoleBindings
 * for every request, RoleBindings (to a Role of their namespace or to a ClusterRole) only
 * for requests in their namespace. Rules match on verbs, API groups, resources (with
 * `resource/subresource`, `*` and `*∕subresource`), resourceNames and, for requests
 * outside the REST API, nonResourceURLs (only through ClusterRoleBindings). Members of
 * `system:masters` are allowed everything before any rule is read, as the real server's
 * privileged-group authorizer does. Aggregated ClusterRoles are not expanded.
 */
import { ApiError } from './api-errors';

/** Who made a request, once authenticated (and after impersonation). */
export interface UserInfo {
  username: string;
  groups: string[];
  uid?: string;
}

export const MASTERS_GROUP = 'system:masters';
export const AUTHENTICATED_GROUP = 'system:authenticated';
export const UNAUTHENTICATED_GROUP = 'system:unauthenticated';
export const ANONYMOUS_USER = 'system:anonymous';
export const SERVICE_ACCOUNT_PREFIX = 'system:serviceaccount:';

/** The user and groups a ServiceAccount token authenticates as. */
export function serviceAccountUser(namespace: string, name: string): UserInfo {
  return {
    username: `${SERVICE_ACCOUNT_PREFIX}${namespace}:${name}`,
    groups: ['system:serviceaccounts', `system:serviceaccounts:${namespace}`, AUTHENTICATED_GROUP],
  };
}

/** What is asked: a verb on a resource (optionally one object, in one namespace), or on a path. */
export type RequestAttributes =
  | {
      resourceRequest: true;
      user: UserInfo;
      verb: string;
      apiGroup: string;
      apiVersion: string;
      resource: string;
      subresource: string;
      namespace: string;
      name: string;
    }
  | { resourceRequest: false; user: UserInfo; verb: string; path: string };

export interface PolicyRule {
  verbs?: string[];
  apiGroups?: string[];
  resources?: string[];
  resourceNames?: string[];
  nonResourceURLs?: string[];
}

export interface Subject {
  kind?: string;
  name?: string;
  namespace?: string;
}

export interface RoleRef {
  kind?: string;
  name?: string;
}

export interface RoleObject {
  metadata: { name?: string; namespace?: string };
  rules?: PolicyRule[];
}

export interface BindingObject {
  metadata: { name?: string; namespace?: string };
  roleRef?: RoleRef;
  subjects?: Subject[];
}

/** Where the authorizer reads the policy: the server's stored RBAC objects. */
export interface RbacPolicySource {
  clusterRoleBindings(): BindingObject[];
  roleBindings(namespace: string): BindingObject[];
  clusterRole(name: string): RoleObject | undefined;
  role(namespace: string, name: string): RoleObject | undefined;
}

export interface Decision {
  allowed: boolean;
  /** Why, for an allow: the binding and role that granted it. */
  reason: string;
}

const ALL = '*';

function listMatches(list: string[] | undefined, value: string): boolean {
  return (list ?? []).some((entry) => entry === ALL || entry === value);
}

function resourceMatches(rule: PolicyRule, resource: string, subresource: string): boolean {
  const combined = subresource === '' ? resource : `${resource}/${subresource}`;
  return (rule.resources ?? []).some(
    (entry) => entry === ALL || entry === combined || (subresource !== '' && entry === `*/${subresource}`),
  );
}

function resourceNameMatches(rule: PolicyRule, name: string): boolean {
  const names = rule.resourceNames ?? [];
  return names.length === 0 || (name !== '' && names.includes(name));
}

function nonResourceUrlMatches(rule: PolicyRule, path: string): boolean {
  return (rule.nonResourceURLs ?? []).some((entry) => entry === ALL || entry === path || (entry.endsWith('*') && path.startsWith(entry.slice(0, -1))));
}

/** Whether one rule allows the request (the RBAC authorizer's RuleAllows). */
export function ruleAllows(rule: PolicyRule, request: RequestAttributes): boolean {
  if (!listMatches(rule.verbs, request.verb)) return false;
  if (!request.resourceRequest) return nonResourceUrlMatches(rule, request.path);
  return (
    listMatches(rule.apiGroups, request.apiGroup) &&
    resourceMatches(rule, request.resource, request.subresource) &&
    resourceNameMatches(rule, request.name)
  );
}

/** Whether a binding's subject is the user; `bindingNamespace` defaults a ServiceAccount's namespace. */
export function subjectMatches(subject: Subject, user: UserInfo, bindingNamespace: string): boolean {
  switch (subject.kind) {
    case 'User':
      return subject.name === user.username;
    case 'Group':
      return subject.name !== undefined && user.groups.includes(subject.name);
    case 'ServiceAccount': {
      const namespace = subject.namespace || bindingNamespace;
      return namespace !== '' && user.username === `${SERVICE_ACCOUNT_PREFIX}${namespace}:${subject.name ?? ''}`;
    }
    default:
      return false;
  }
}

function bound(binding: BindingObject, user: UserInfo): boolean {
  return (binding.subjects ?? []).some((subject) => subjectMatches(subject, user, binding.metadata.namespace ?? ''));
}

function roleOf(policy: RbacPolicySource, binding: BindingObject, namespace: string): RoleObject | undefined {
  const ref = binding.roleRef;
  if (ref?.kind === 'ClusterRole') return policy.clusterRole(ref.name ?? '');
  if (ref?.kind === 'Role' && namespace !== '') return policy.role(namespace, ref.name ?? '');
  return undefined;
}

function grantedBy(policy: RbacPolicySource, binding: BindingObject, request: RequestAttributes, namespace: string): RoleObject | undefined {
  if (!bound(binding, request.user)) return undefined;
  const role = roleOf(policy, binding, namespace);
  return role?.rules?.some((rule) => ruleAllows(rule, request)) ? role : undefined;
}

/** Decides a request as the RBAC authorizer (plus the privileged group) would. */
export function authorize(policy: RbacPolicySource, request: RequestAttributes): Decision {
  if (request.user.groups.includes(MASTERS_GROUP)) return { allowed: true, reason: `member of ${MASTERS_GROUP}` };
  for (const binding of policy.clusterRoleBindings()) {
    // A ClusterRoleBinding can only name a ClusterRole.
    const role = binding.roleRef?.kind === 'ClusterRole' ? grantedBy(policy, binding, request, '') : undefined;
    if (role) return { allowed: true, reason: `ClusterRoleBinding "${binding.metadata.name ?? ''}" of ClusterRole "${role.metadata.name ?? ''}"` };
  }
  // RoleBindings grant only requests in their namespace, and never non-resource paths.
  const namespace = request.resourceRequest ? request.namespace : '';
  if (namespace === '') return { allowed: false, reason: '' };
  for (const binding of policy.roleBindings(namespace)) {
    const role = grantedBy(policy, binding, request, namespace);
    if (role) return { allowed: true, reason: `RoleBinding "${binding.metadata.name ?? ''}/${namespace}" of ${binding.roleRef?.kind ?? ''} "${role.metadata.name ?? ''}"` };
  }
  return { allowed: false, reason: '' };
}

/** The text of the real server's 403 for a denied request (after `is forbidden: `). */
export function forbiddenMessage(request: RequestAttributes): string {
  const username = request.user.username;
  if (!request.resourceRequest) return `User ${JSON.stringify(username)} cannot ${request.verb} path ${JSON.stringify(request.path)}`;
  const resource = request.subresource === '' ? request.resource : `${request.resource}/${request.subresource}`;
  const scope = request.namespace === '' ? 'at the cluster scope' : `in the namespace ${JSON.stringify(request.namespace)}`;
  return `User ${JSON.stringify(username)} cannot ${request.verb} resource ${JSON.stringify(resource)} in API group ${JSON.stringify(request.apiGroup)} ${scope}`;
}

/**
 * The 403 Status the real server writes: `<resource>.<group> "<name>" is forbidden: …`
 * (no name when the URL names none, `forbidden: …` for a path outside the REST API).
 */
export function forbiddenError(request: RequestAttributes): ApiError {
  const message = forbiddenMessage(request);
  if (!request.resourceRequest) return new ApiError({ message: `forbidden: ${message}`, reason: 'Forbidden', details: {}, code: 403 });
  const qualified = request.apiGroup === '' ? request.resource : `${request.resource}.${request.apiGroup}`;
  const subject = request.name === '' ? qualified : `${qualified} ${JSON.stringify(request.name)}`;
  const details = {
    ...(request.name === '' ? {} : { name: request.name }),
    ...(request.apiGroup === '' ? {} : { group: request.apiGroup }),
    kind: request.resource,
  };
  return new ApiError({ message: `${subject} is forbidden: ${message}`, reason: 'Forbidden', details, code: 403 });
}

/** The 401 Status for a request without valid credentials. */
export function unauthorizedError(): ApiError {
  return new ApiError({ message: 'Unauthorized', reason: 'Unauthorized', code: 401 });
}
