/**
 * Discovery (`/version`, `/api`, `/apis`, group-version resource lists with short names
 * and verbs) and OpenAPI v3. kubectl reads the OpenAPI group-version documents to learn
 * that a kind's `patch` operation exists (`x-kubernetes-group-version-kind`) and takes
 * `fieldValidation`, which it needs before a client-side `apply`. Built-in kinds do not
 * advertise strategic merge there, so kubectl computes it from its own compiled types.
 */
import { createHash } from 'node:crypto';
import type { ResourceDef, ResourceRegistry } from './registry';

export const SERVER_VERSION = {
  major: '1',
  minor: '32',
  gitVersion: 'v1.32.4',
  gitCommit: '59526cd4867447956156ae3a602fcbac10a2c335',
  gitTreeState: 'clean',
  buildDate: '2025-04-22T16:02:27Z',
  goVersion: 'go1.23.6',
  compiler: 'gc',
  platform: 'linux/amd64',
};

const VERBS = ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'];

export function coreVersions(serverAddress: string): unknown {
  return {
    kind: 'APIVersions',
    versions: ['v1'],
    serverAddressByClientCIDRs: [{ clientCIDR: '0.0.0.0/0', serverAddress }],
  };
}

function groupEntry(name: string, versions: string[]): Record<string, unknown> {
  const entries = versions.map((version) => ({ groupVersion: `${name}/${version}`, version }));
  return { name, versions: entries, preferredVersion: entries[0] };
}

export function groupList(registry: ResourceRegistry): unknown {
  const groups = [...registry.groups().entries()].filter(([name]) => name !== '').map(([name, versions]) => groupEntry(name, versions));
  return { kind: 'APIGroupList', apiVersion: 'v1', groups };
}

export function apiGroup(registry: ResourceRegistry, name: string): unknown | undefined {
  const versions = registry.groups().get(name);
  if (!versions || name === '') return undefined;
  return { kind: 'APIGroup', apiVersion: 'v1', ...groupEntry(name, versions) };
}

function storageVersionHash(def: ResourceDef): string {
  return createHash('sha256').update(`${def.group}/${def.version}/${def.kind}`).digest('base64').slice(0, 11);
}

export function resourceList(registry: ResourceRegistry, group: string, version: string): unknown | undefined {
  const defs = registry.inGroupVersion(group, version);
  if (defs.length === 0) return undefined;
  const resources: unknown[] = [];
  for (const def of defs) {
    const entry: Record<string, unknown> = {
      name: def.plural,
      singularName: def.singular,
      namespaced: def.namespaced,
      kind: def.kind,
      verbs: VERBS,
    };
    if (def.shortNames.length > 0) entry.shortNames = def.shortNames;
    if (def.categories.length > 0) entry.categories = def.categories;
    entry.storageVersionHash = storageVersionHash(def);
    resources.push(entry);
    if (def.statusSubresource) {
      resources.push({ name: `${def.plural}/status`, singularName: '', namespaced: def.namespaced, kind: def.kind, verbs: ['get', 'patch', 'update'] });
    }
  }
  return { kind: 'APIResourceList', apiVersion: 'v1', groupVersion: group === '' ? version : `${group}/${version}`, resources };
}

// ---- OpenAPI v3 ----------------------------------------------------------------------------

function gvPath(group: string, version: string): string {
  return group === '' ? `api/${version}` : `apis/${group}/${version}`;
}

/** `io.ome.v1beta1.InferenceService`, `io.k8s.api.apps.v1.Deployment`, as the server names schemas. */
function schemaName(def: ResourceDef): string {
  if (def.crdName !== undefined) return `${def.group.split('.').reverse().join('.')}.${def.version}.${def.kind}`;
  const group = def.group === '' ? 'core' : def.group.split('.')[0];
  return `io.k8s.api.${group}.${def.version}.${def.kind}`;
}

const QUERY = (name: string, description: string): Record<string, unknown> => ({
  name,
  in: 'query',
  description,
  schema: { type: 'string', uniqueItems: true },
});

const WRITE_PARAMETERS = [
  QUERY('dryRun', 'When present, indicates that modifications should not be persisted.'),
  QUERY('fieldManager', 'fieldManager is a name associated with the actor or entity that is making these changes.'),
  QUERY('fieldValidation', 'fieldValidation instructs the server on how to handle objects in the request containing unknown or duplicate fields. Valid values are: Ignore, Warn, Strict.'),
];

function operation(def: ResourceDef, action: string, id: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  const ref = { $ref: `#/components/schemas/${schemaName(def)}` };
  return {
    description: `${action} the specified ${def.kind}`,
    operationId: `${id}${def.kind}`,
    responses: { '200': { description: 'OK', content: { 'application/json': { schema: ref } } } },
    'x-kubernetes-action': action,
    'x-kubernetes-group-version-kind': { group: def.group, version: def.version, kind: def.kind },
    ...extra,
  };
}

function itemPaths(def: ResourceDef, base: string): Record<string, unknown> {
  const ref = { $ref: `#/components/schemas/${schemaName(def)}` };
  const patchContent: Record<string, unknown> = {
    'application/json-patch+json': { schema: { $ref: '#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.Patch' } },
    'application/merge-patch+json': { schema: { $ref: '#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.Patch' } },
    'application/apply-patch+yaml': { schema: { $ref: '#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.Patch' } },
  };
  const nameParam = { name: 'name', in: 'path', required: true, description: `name of the ${def.kind}`, schema: { type: 'string', uniqueItems: true } };
  const nsParam = { name: 'namespace', in: 'path', required: true, description: 'object name and auth scope', schema: { type: 'string', uniqueItems: true } };
  const parameters = def.namespaced ? [nameParam, nsParam] : [nameParam];
  const item = {
    get: operation(def, 'get', 'read'),
    put: operation(def, 'put', 'replace', { parameters: WRITE_PARAMETERS, requestBody: { content: { '*/*': { schema: ref } }, required: true } }),
    patch: operation(def, 'patch', 'patch', {
      parameters: [...WRITE_PARAMETERS, QUERY('force', 'Force is going to "force" Apply requests.')],
      requestBody: { content: patchContent, required: true },
    }),
    delete: operation(def, 'delete', 'delete', { parameters: [QUERY('dryRun', 'When present, indicates that modifications should not be persisted.')] }),
    parameters,
  };
  const paths: Record<string, unknown> = { [`${base}/{name}`]: item };
  if (def.statusSubresource) {
    paths[`${base}/{name}/status`] = {
      get: operation(def, 'get', 'read', { operationId: `read${def.kind}Status` }),
      put: operation(def, 'put', 'replace', { operationId: `replace${def.kind}Status`, parameters: WRITE_PARAMETERS }),
      patch: operation(def, 'patch', 'patch', { operationId: `patch${def.kind}Status`, parameters: WRITE_PARAMETERS, requestBody: { content: patchContent, required: true } }),
      parameters,
    };
  }
  return paths;
}

function collectionPaths(def: ResourceDef, prefix: string): Record<string, unknown> {
  const base = def.namespaced ? `${prefix}/namespaces/{namespace}/${def.plural}` : `${prefix}/${def.plural}`;
  const paths: Record<string, unknown> = {
    [base]: {
      get: operation(def, 'list', 'list'),
      post: operation(def, 'post', 'create', { parameters: WRITE_PARAMETERS }),
      delete: operation(def, 'deletecollection', 'deleteCollection'),
    },
    ...itemPaths(def, base),
  };
  if (def.namespaced) paths[`${prefix}/${def.plural}`] = { get: operation(def, 'list', 'list', { operationId: `list${def.kind}ForAllNamespaces` }) };
  return paths;
}

const OBJECT_META = {
  description: 'ObjectMeta is metadata that all persisted resources must have.',
  type: 'object',
  properties: {
    name: { type: 'string' },
    generateName: { type: 'string' },
    namespace: { type: 'string' },
    uid: { type: 'string' },
    resourceVersion: { type: 'string' },
    generation: { type: 'integer', format: 'int64' },
    creationTimestamp: { type: 'string', format: 'date-time' },
    deletionTimestamp: { type: 'string', format: 'date-time' },
    labels: { type: 'object', additionalProperties: { type: 'string', default: '' } },
    annotations: { type: 'object', additionalProperties: { type: 'string', default: '' } },
    finalizers: { type: 'array', items: { type: 'string', default: '' } },
    ownerReferences: { type: 'array', items: { type: 'object' } },
  },
};

function kindSchema(def: ResourceDef): Record<string, unknown> {
  const base: Record<string, unknown> = def.schema ? structuredClone(def.schema) : { type: 'object', 'x-kubernetes-preserve-unknown-fields': true };
  const properties = { ...((base.properties as Record<string, unknown> | undefined) ?? {}) };
  properties.apiVersion = { type: 'string' };
  properties.kind = { type: 'string' };
  properties.metadata = { allOf: [{ $ref: '#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta' }], default: {} };
  return { ...base, type: 'object', properties, 'x-kubernetes-group-version-kind': [{ group: def.group, kind: def.kind, version: def.version }] };
}

/** The OpenAPI v3 document of one group version. */
export function openApiGroupVersion(registry: ResourceRegistry, group: string, version: string): Record<string, unknown> | undefined {
  const defs = registry.inGroupVersion(group, version);
  if (defs.length === 0) return undefined;
  const prefix = `/${gvPath(group, version)}`;
  const paths: Record<string, unknown> = {};
  const schemas: Record<string, unknown> = {
    'io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta': OBJECT_META,
    'io.k8s.apimachinery.pkg.apis.meta.v1.Patch': { description: 'Patch is provided to give a concrete name and type to the Kubernetes PATCH request body.', type: 'object' },
  };
  for (const def of defs) {
    Object.assign(paths, collectionPaths(def, prefix));
    schemas[schemaName(def)] = kindSchema(def);
  }
  return { openapi: '3.0.0', info: { title: 'Kubernetes', version: SERVER_VERSION.gitVersion }, paths, components: { schemas } };
}

/** `/openapi/v3`: where each group version's document lives, with a hash that changes with it. */
export function openApiRoot(registry: ResourceRegistry): unknown {
  const paths: Record<string, unknown> = {};
  for (const [group, versions] of registry.groups()) {
    for (const version of versions) {
      const doc = openApiGroupVersion(registry, group, version);
      const hash = createHash('sha512').update(JSON.stringify(doc)).digest('hex').toUpperCase();
      const path = gvPath(group, version);
      paths[path] = { serverRelativeURL: `/openapi/v3/${path}?hash=${hash}` };
    }
  }
  return { paths };
}

