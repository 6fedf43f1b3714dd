/**
 * What a request asks, in the terms authorization uses (kube-apiserver's RequestInfo):
 * for `/api/...` and `/apis/<group>/<version>/...` paths naming a resource, the verb
 * (get, list, watch, create, update, patch, delete, deletecollection), API group,
 * resource, subresource, namespace and name; anything else (discovery, `/version`,
 * `/healthz`, OpenAPI) is a non-resource request whose verb is the lower-cased method.
 */
import type { RequestAttributes, UserInfo } from './rbac';

/** Subresources of a namespace that stay on the `namespaces` resource. */
const NAMESPACE_SUBRESOURCES = new Set(['status', 'finalize']);

function resourceVerb(method: string, name: string, query: URLSearchParams): string {
  switch (method) {
    case 'POST':
      return 'create';
    case 'PUT':
      return 'update';
    case 'PATCH':
      return 'patch';
    case 'DELETE':
      return name === '' ? 'deletecollection' : 'delete';
    default: {
      const watch = query.get('watch');
      if (watch === 'true' || watch === '1') return 'watch';
      return name === '' ? 'list' : 'get';
    }
  }
}

/** Parses a request the way the real server's RequestInfoFactory does. */
export function requestAttributesOf(user: UserInfo, method: string, path: string, query: URLSearchParams): RequestAttributes {
  const parts = path.split('/').filter(Boolean).map((part) => decodeURIComponent(part));
  const nonResource: RequestAttributes = { resourceRequest: false, user, verb: method.toLowerCase(), path };
  let apiGroup = '';
  let rest: string[];
  if (parts[0] === 'api' && parts.length >= 3) {
    rest = parts.slice(2);
  } else if (parts[0] === 'apis' && parts.length >= 4) {
    apiGroup = parts[1] ?? '';
    rest = parts.slice(3);
  } else {
    return nonResource;
  }
  const apiVersion = (parts[0] === 'api' ? parts[1] : parts[2]) ?? '';
  let namespace = '';
  if (rest[0] === 'namespaces' && rest.length > 1) {
    namespace = rest[1] ?? '';
    if (rest.length > 2 && !NAMESPACE_SUBRESOURCES.has(rest[2] ?? '')) rest = rest.slice(2);
  }
  const [resource = '', name = '', subresource = ''] = rest;
  return { resourceRequest: true, user, verb: resourceVerb(method, name, query), apiGroup, apiVersion, resource, subresource, namespace, name };
}
