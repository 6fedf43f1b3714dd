/**
 * The request gate of the embedded server, in kube-apiserver's order: authenticate the
 * bearer token (401 for a token that is not valid; no token at all is `system:anonymous`,
 * as with kube-apiserver's default --anonymous-auth, which RBAC lets read only the public
 * health and version paths), apply `Impersonate-User`/`Impersonate-Group` headers when the
 * caller may impersonate (403 otherwise), then authorize the request by RBAC (403 with the
 * real server's message). SelfSubjectAccessReviews are answered here, from the same
 * authorizer, so `kubectl auth can-i` works. The admitted user is kept for the rest of
 * the request (admission policies read it through `currentRequestUser`).
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import type { IncomingMessage } from 'node:http';
import { badRequest } from './api-errors';
import { decodeProtobufObject, PROTOBUF_CONTENT_TYPE } from './protobuf';
import type { ObjectStore } from './store';
import { TokenAuthenticator } from './authentication';
import {
  ANONYMOUS_USER,
  AUTHENTICATED_GROUP,
  authorize,
  forbiddenError,
  SERVICE_ACCOUNT_PREFIX,
  UNAUTHENTICATED_GROUP,
  unauthorizedError,
  type BindingObject,
  type RbacPolicySource,
  type RequestAttributes,
  type RoleObject,
  type UserInfo,
} from './rbac';
import { requestAttributesOf } from './request-info';

/** Paths an unauthenticated client may read (the real server's anonymous health checks, plus `/version`). */
const SELF_SUBJECT_ACCESS_REVIEWS = '/apis/authorization.k8s.io/v1/selfsubjectaccessreviews';
const SELF_SUBJECT_REVIEWS = '/apis/authentication.k8s.io/v1/selfsubjectreviews';
const MAX_REVIEW_BYTES = 64 * 1024;

const requestUser = new AsyncLocalStorage<UserInfo>();

/** The user of the HTTP request being served; undefined for the server's own and in-process calls. */
export function currentRequestUser(): UserInfo | undefined {
  return requestUser.getStore();
}

/** Runs the rest of a request as `user`. */
export function runAsUser<T>(user: UserInfo, task: () => Promise<T>): Promise<T> {
  return requestUser.run(user, task);
}

/** The RBAC objects in the server's storage. */
export function storedPolicy(store: ObjectStore): RbacPolicySource {
  const group = 'rbac.authorization.k8s.io';
  return {
    clusterRoleBindings: () => store.list(`${group}/clusterrolebindings`).map(([, o]) => o as BindingObject),
    roleBindings: (namespace) => store.list(`${group}/rolebindings`, namespace).map(([, o]) => o as BindingObject),
    clusterRole: (name) => store.get(`${group}/clusterroles`, undefined, name) as RoleObject | undefined,
    role: (namespace, name) => store.get(`${group}/roles`, namespace, name) as RoleObject | undefined,
  };
}

/** One authorization decision, for tests that check who did what (kept in memory, no credentials). */
export interface AccessRecord {
  username: string;
  verb: string;
  /** `deployments.apps`, `inferenceservices.ome.io/status`, or the path of a non-resource request. */
  target: string;
  namespace: string;
  name: string;
  allowed: boolean;
  userAgent: string;
}

const ACCESS_LOG_LIMIT = 20_000;

function targetOf(attributes: RequestAttributes): string {
  if (!attributes.resourceRequest) return attributes.path;
  const resource = attributes.apiGroup === '' ? attributes.resource : `${attributes.resource}.${attributes.apiGroup}`;
  return attributes.subresource === '' ? resource : `${resource}/${attributes.subresource}`;
}

export type Admission = { user: UserInfo } | { answer: { code: number; body: unknown } };

function headerValues(value: string | string[] | undefined): string[] {
  if (value === undefined) return [];
  return (Array.isArray(value) ? value : [value]).flatMap((v) => v.split(',')).map((v) => v.trim()).filter(Boolean);
}

async function readJson(req: IncomingMessage): Promise<Record<string, unknown>> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_REVIEW_BYTES) throw badRequest('request body too large');
    chunks.push(chunk as Buffer);
  }
  const body = Buffer.concat(chunks);
  if ((req.headers['content-type'] ?? '').startsWith(PROTOBUF_CONTENT_TYPE)) return decodeProtobufObject(body);
  try {
    const parsed = JSON.parse(body.toString('utf8')) as unknown;
    if (parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed)) return parsed as Record<string, unknown>;
  } catch {
    // reported below
  }
  throw badRequest('a SelfSubjectAccessReview must be a JSON object');
}

function text(value: unknown): string {
  return typeof value === 'string' ? value : '';
}

export class AccessControl {
  readonly tokens: TokenAuthenticator;
  private readonly policy: RbacPolicySource;
  private readonly log: AccessRecord[] = [];

  constructor(private readonly store: ObjectStore) {
    this.tokens = new TokenAuthenticator((namespace, name) => store.get('/serviceaccounts', namespace, name) !== undefined);
    this.policy = storedPolicy(store);
  }

  /** Authenticates, impersonates and authorizes one request; throws the 401/403 ApiError to send. */
  async admit(req: IncomingMessage, path: string, query: URLSearchParams): Promise<Admission> {
    const method = (req.method ?? 'GET').toUpperCase();
    const authenticated = this.tokens.authenticate(req.headers.authorization);
    if (authenticated === null) throw unauthorizedError();
    const user = this.impersonate(authenticated ?? { username: ANONYMOUS_USER, groups: [UNAUTHENTICATED_GROUP] }, req);
    const attributes = requestAttributesOf(user, method === 'HEAD' ? 'GET' : method, path, query);
    const allowed = authorize(this.policy, attributes).allowed;
    this.record(attributes, allowed, req.headers['user-agent'] ?? '');
    if (!allowed) throw forbiddenError(attributes);
    if (method === 'POST' && path === SELF_SUBJECT_ACCESS_REVIEWS) return { answer: await this.review(user, req) };
    // `kubectl auth whoami`: who the server took the caller for, after impersonation.
    if (method === 'POST' && path === SELF_SUBJECT_REVIEWS) {
      return { answer: { code: 201, body: { kind: 'SelfSubjectReview', apiVersion: 'authentication.k8s.io/v1', metadata: { creationTimestamp: null }, status: { userInfo: { username: user.username, groups: user.groups } } } } };
    }
    return { user };
  }

  /** The latest authorization decisions, oldest first. */
  accessLog(): readonly AccessRecord[] {
    return this.log;
  }

  private record(attributes: RequestAttributes, allowed: boolean, userAgent: string): void {
    const scoped = attributes.resourceRequest ? { namespace: attributes.namespace, name: attributes.name } : { namespace: '', name: '' };
    this.log.push({ username: attributes.user.username, verb: attributes.verb, target: targetOf(attributes), ...scoped, allowed, userAgent });
    if (this.log.length > ACCESS_LOG_LIMIT) this.log.splice(0, this.log.length - ACCESS_LOG_LIMIT);
  }

  /** Whether `user` may do what `attributes` describe (for tests and reviews). */
  allowed(attributes: RequestAttributes): boolean {
    return authorize(this.policy, attributes).allowed;
  }

  private impersonate(user: UserInfo, req: IncomingMessage): UserInfo {
    const [username, ...extra] = headerValues(req.headers['impersonate-user']);
    const groups = headerValues(req.headers['impersonate-group']);
    if (username === undefined) {
      if (groups.length > 0) throw badRequest('requested impersonation of groups without impersonating a user');
      return user;
    }
    if (extra.length > 0) throw badRequest('only one Impersonate-User may be given');
    const check = (resource: string, name: string, namespace = ''): void => {
      const attributes: RequestAttributes = { resourceRequest: true, user, verb: 'impersonate', apiGroup: '', apiVersion: 'v1', resource, subresource: '', namespace, name };
      if (!authorize(this.policy, attributes).allowed) throw forbiddenError(attributes);
    };
    const impersonated: UserInfo = { username, groups: [] };
    if (username.startsWith(SERVICE_ACCOUNT_PREFIX)) {
      const [namespace = '', name = ''] = username.slice(SERVICE_ACCOUNT_PREFIX.length).split(':');
      check('serviceaccounts', name, namespace);
      impersonated.groups.push('system:serviceaccounts', `system:serviceaccounts:${namespace}`);
    } else {
      check('users', username);
    }
    for (const group of groups) {
      check('groups', group);
      if (!impersonated.groups.includes(group)) impersonated.groups.push(group);
    }
    if (username !== ANONYMOUS_USER && !impersonated.groups.includes(AUTHENTICATED_GROUP)) impersonated.groups.push(AUTHENTICATED_GROUP);
    return impersonated;
  }

  /** A SelfSubjectAccessReview: the spec echoed back with `status.allowed`. */
  private async review(user: UserInfo, req: IncomingMessage): Promise<{ code: number; body: unknown }> {
    const body = await readJson(req);
    const spec = (body.spec ?? {}) as Record<string, Record<string, unknown> | undefined>;
    const resource = spec.resourceAttributes;
    const nonResource = spec.nonResourceAttributes;
    let attributes: RequestAttributes;
    if (resource) {
      attributes = {
        resourceRequest: true,
        user,
        verb: text(resource.verb),
        apiGroup: text(resource.group),
        apiVersion: text(resource.version),
        resource: text(resource.resource),
        subresource: text(resource.subresource),
        namespace: text(resource.namespace),
        name: text(resource.name),
      };
    } else if (nonResource) {
      attributes = { resourceRequest: false, user, verb: text(nonResource.verb), path: text(nonResource.path) };
    } else {
      throw badRequest('spec.resourceAttributes or spec.nonResourceAttributes is required');
    }
    const decision = authorize(this.policy, attributes);
    const status = decision.allowed ? { allowed: true, reason: decision.reason } : { allowed: false };
    return {
      code: 201,
      body: { kind: 'SelfSubjectAccessReview', apiVersion: 'authorization.k8s.io/v1', metadata: { creationTimestamp: null }, spec: body.spec, status },
    };
  }
}
