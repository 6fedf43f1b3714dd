/**
 * The built-in kinds the control plane uses, with the names, short names, field
 * selectors, strategic-merge keys and table columns of the real API server.
 */
import type { StrategicMergeKeys } from './patch';
import type { BuiltinTable, KubeObject, ResourceDef } from './registry';
import { ageCell, NAME_COLUMN } from './tables';

const META_KEYS: StrategicMergeKeys = {
  'metadata.ownerReferences': { mergeKey: 'uid' },
  'metadata.finalizers': { primitiveMerge: true },
  'metadata.managedFields': {},
  'status.conditions': { mergeKey: 'type' },
};

function podSpecKeys(prefix: string): StrategicMergeKeys {
  const keys: StrategicMergeKeys = {
    [`${prefix}.volumes`]: { mergeKey: 'name' },
    [`${prefix}.imagePullSecrets`]: { mergeKey: 'name' },
    [`${prefix}.hostAliases`]: { mergeKey: 'ip' },
  };
  for (const list of ['containers', 'initContainers', 'ephemeralContainers']) {
    keys[`${prefix}.${list}`] = { mergeKey: 'name' };
    keys[`${prefix}.${list}.env`] = { mergeKey: 'name' };
    keys[`${prefix}.${list}.ports`] = { mergeKey: 'containerPort' };
    keys[`${prefix}.${list}.volumeMounts`] = { mergeKey: 'mountPath' };
    keys[`${prefix}.${list}.volumeDevices`] = { mergeKey: 'devicePath' };
  }
  return keys;
}

const AGE_COLUMN = {
  name: 'Age',
  type: 'string',
  description: 'CreationTimestamp is a timestamp representing the server time when this object was created. It is not guaranteed to be set in happens-before order across separate operations. Clients may not set this value. It is represented in RFC3339 form and is in UTC.\n\nPopulated by the system. Read-only. Null for lists. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata',
};

function age(object: KubeObject, now: number): string {
  return ageCell(object.metadata.creationTimestamp, now);
}

function record(value: unknown): Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
}

const namespaceTable: BuiltinTable = {
  columns: [NAME_COLUMN, { name: 'Status', type: 'string', description: 'The status of the namespace' }, AGE_COLUMN],
  cells: (o, now) => [o.metadata.name, record(o.status).phase ?? 'Active', age(o, now)],
};

const configMapTable: BuiltinTable = {
  columns: [NAME_COLUMN, { name: 'Data', type: 'string', description: 'Data contains the configuration data.' }, AGE_COLUMN],
  cells: (o, now) => [o.metadata.name, Object.keys(record(o.data)).length + Object.keys(record(o.binaryData)).length, age(o, now)],
};

const secretTable: BuiltinTable = {
  columns: [
    NAME_COLUMN,
    { name: 'Type', type: 'string', description: 'Used to facilitate programmatic handling of secret data.' },
    { name: 'Data', type: 'string', description: 'Data contains the secret data.' },
    AGE_COLUMN,
  ],
  cells: (o, now) => [o.metadata.name, o.type ?? 'Opaque', Object.keys(record(o.data)).length, age(o, now)],
};

function involvedObjectText(o: KubeObject): string {
  const involved = record(o.involvedObject);
  return `${String(involved.kind ?? '').toLowerCase()}/${String(involved.name ?? '')}`;
}

function eventLastSeen(o: KubeObject, now: number): string {
  const series = record(o.series);
  if (typeof series.lastObservedTime === 'string') return ageCell(series.lastObservedTime, now);
  if (typeof o.lastTimestamp === 'string') return ageCell(o.lastTimestamp, now);
  if (typeof o.eventTime === 'string') return ageCell(o.eventTime, now);
  return '<unknown>';
}

function eventFirstSeen(o: KubeObject, now: number): string {
  if (typeof o.firstTimestamp === 'string') return ageCell(o.firstTimestamp, now);
  if (typeof o.eventTime === 'string') return ageCell(o.eventTime, now);
  return '<unknown>';
}

function eventSource(o: KubeObject): string {
  const source = record(o.source);
  const component = typeof source.component === 'string' ? source.component : (o.reportingComponent as string | undefined) ?? '';
  const host = typeof source.host === 'string' ? source.host : (o.reportingInstance as string | undefined) ?? '';
  return host === '' ? component : `${component}, ${host}`;
}

const eventTable: BuiltinTable = {
  columns: [
    { name: 'Last Seen', type: 'string', description: 'The time at which the most recent occurrence of this event was recorded.' },
    { name: 'Type', type: 'string', description: 'Type of this event (Normal, Warning), new types could be added in the future' },
    { name: 'Reason', type: 'string', description: 'This should be a short, machine understandable string that gives the reason for the transition into the object\'s current status.' },
    { name: 'Object', type: 'string', description: 'The object that this event is about.' },
    { name: 'Subobject', type: 'string', priority: 1, description: 'If referring to a piece of an object instead of an entire object, this string should contain a valid JSON/Go field access statement.' },
    { name: 'Source', type: 'string', priority: 1, description: 'The component reporting this event. Should be a short machine understandable string.' },
    { name: 'Message', type: 'string', description: 'A human-readable description of the status of this operation.' },
    { name: 'First Seen', type: 'string', priority: 1, description: 'The time at which the event was first recorded. (Time of server receipt is in TypeMeta.)' },
    { name: 'Count', type: 'string', priority: 1, description: 'The number of times this event has occurred.' },
    { name: 'Name', type: 'string', format: 'name', priority: 1, description: NAME_COLUMN.description },
  ],
  cells: (o, now) => [
    eventLastSeen(o, now),
    o.type ?? '',
    o.reason ?? '',
    involvedObjectText(o),
    record(o.involvedObject).fieldPath ?? '',
    eventSource(o),
    typeof o.message === 'string' ? o.message.trim() : '',
    eventFirstSeen(o, now),
    String(o.count ?? 1),
    o.metadata.name,
  ],
};

function containers(o: KubeObject): Array<Record<string, unknown>> {
  const list = record(record(record(o.spec).template).spec).containers;
  return Array.isArray(list) ? (list as Array<Record<string, unknown>>) : [];
}

function selectorText(selector: unknown): string {
  const s = record(selector);
  const parts = Object.entries(record(s.matchLabels)).map(([k, v]) => `${k}=${String(v)}`);
  const exprs = Array.isArray(s.matchExpressions) ? (s.matchExpressions as Array<Record<string, unknown>>) : [];
  for (const e of exprs) {
    const values = Array.isArray(e.values) ? (e.values as string[]).join(',') : '';
    if (e.operator === 'In') parts.push(`${String(e.key)} in (${values})`);
    else if (e.operator === 'NotIn') parts.push(`${String(e.key)} notin (${values})`);
    else if (e.operator === 'Exists') parts.push(String(e.key));
    else parts.push(`!${String(e.key)}`);
  }
  return parts.length === 0 ? '<none>' : parts.join(',');
}

const deploymentTable: BuiltinTable = {
  columns: [
    NAME_COLUMN,
    { name: 'Ready', type: 'string', description: 'Number of the pod with ready state' },
    { name: 'Up-to-date', type: 'string', description: 'Total number of non-terminated pods targeted by this deployment that have the desired template spec.' },
    { name: 'Available', type: 'string', description: 'Total number of available pods (ready for at least minReadySeconds) targeted by this deployment.' },
    AGE_COLUMN,
    { name: 'Containers', type: 'string', priority: 1, description: 'Names of each container in the template.' },
    { name: 'Images', type: 'string', priority: 1, description: 'Images referenced by each container in the template.' },
    { name: 'Selector', type: 'string', priority: 1, description: 'Label selector for pods. Existing ReplicaSets whose pods are selected by this will be the ones affected by this deployment.' },
  ],
  cells: (o, now) => {
    const spec = record(o.spec);
    const status = record(o.status);
    const desired = typeof spec.replicas === 'number' ? spec.replicas : 1;
    return [
      o.metadata.name,
      `${Number(status.readyReplicas ?? 0)}/${desired}`,
      Number(status.updatedReplicas ?? 0),
      Number(status.availableReplicas ?? 0),
      age(o, now),
      containers(o).map((c) => String(c.name ?? '')).join(','),
      containers(o).map((c) => String(c.image ?? '')).join(','),
      selectorText(spec.selector),
    ];
  },
};

function controllerOf(o: KubeObject): string {
  const owner = (o.metadata.ownerReferences ?? []).find((ref) => ref.controller === true);
  if (!owner) return '<none>';
  const group = owner.apiVersion.includes('/') ? owner.apiVersion.split('/')[0] : '';
  const kind = owner.kind.toLowerCase();
  return `${group ? `${kind}.${group}` : kind}/${owner.name}`;
}

const controllerRevisionTable: BuiltinTable = {
  columns: [
    NAME_COLUMN,
    { name: 'Controller', type: 'string', description: 'Controller of the object' },
    { name: 'Revision', type: 'integer', description: 'Revision indicates the revision of the state represented by Data.' },
    AGE_COLUMN,
  ],
  cells: (o, now) => [o.metadata.name, controllerOf(o), Number(o.revision ?? 0), age(o, now)],
};

const crdTable: BuiltinTable = {
  columns: [NAME_COLUMN, { name: 'Created At', type: 'date', description: AGE_COLUMN.description }],
  cells: (o) => [o.metadata.name, o.metadata.creationTimestamp ?? ''],
};

const webhookConfigurationTable: BuiltinTable = {
  columns: [NAME_COLUMN, { name: 'Webhooks', type: 'integer', description: 'Webhooks is a list of webhooks and the affected resources and operations.' }, AGE_COLUMN],
  cells: (o, now) => [o.metadata.name, Array.isArray(o.webhooks) ? o.webhooks.length : 0, age(o, now)],
};

const nameAgeTable: BuiltinTable = {
  columns: [NAME_COLUMN, AGE_COLUMN],
  cells: (o, now) => [o.metadata.name, age(o, now)],
};

const roleTable: BuiltinTable = {
  columns: [NAME_COLUMN, { name: 'Created At', type: 'string', description: AGE_COLUMN.description }],
  cells: (o) => [o.metadata.name, o.metadata.creationTimestamp ?? ''],
};

function subjectsOf(o: KubeObject, kind: string): string {
  const subjects = Array.isArray(o.subjects) ? (o.subjects as Array<Record<string, unknown>>) : [];
  return subjects
    .filter((s) => s.kind === kind)
    .map((s) => (kind === 'ServiceAccount' ? `${String(s.namespace ?? '')}/${String(s.name ?? '')}` : String(s.name ?? '')))
    .join(', ');
}

const bindingTable: BuiltinTable = {
  columns: [
    NAME_COLUMN,
    { name: 'Role', type: 'string', description: 'RoleRef is the reference to the role the binding grants.' },
    AGE_COLUMN,
    { name: 'Users', type: 'string', priority: 1, description: 'Users in the binding' },
    { name: 'Groups', type: 'string', priority: 1, description: 'Groups in the binding' },
    { name: 'ServiceAccounts', type: 'string', priority: 1, description: 'ServiceAccounts in the binding' },
  ],
  cells: (o, now) => [
    o.metadata.name,
    `${String(record(o.roleRef).kind ?? '')}/${String(record(o.roleRef).name ?? '')}`,
    age(o, now),
    subjectsOf(o, 'User'),
    subjectsOf(o, 'Group'),
    subjectsOf(o, 'ServiceAccount'),
  ],
};

const RBAC_GROUP = 'rbac.authorization.k8s.io';

function str(value: unknown): string {
  return value === undefined || value === null ? '' : String(value);
}

const eventFields: Record<string, (o: KubeObject) => string> = {
  'involvedObject.kind': (o) => str(record(o.involvedObject).kind),
  'involvedObject.namespace': (o) => str(record(o.involvedObject).namespace),
  'involvedObject.name': (o) => str(record(o.involvedObject).name),
  'involvedObject.uid': (o) => str(record(o.involvedObject).uid),
  'involvedObject.apiVersion': (o) => str(record(o.involvedObject).apiVersion),
  'involvedObject.resourceVersion': (o) => str(record(o.involvedObject).resourceVersion),
  'involvedObject.fieldPath': (o) => str(record(o.involvedObject).fieldPath),
  reason: (o) => str(o.reason),
  reportingComponent: (o) => str(o.reportingComponent),
  source: (o) => str(record(o.source).component),
  type: (o) => str(o.type),
};

interface BuiltinSpec {
  group: string;
  version: string;
  plural: string;
  singular: string;
  kind: string;
  namespaced: boolean;
  shortNames?: string[];
  categories?: string[];
  statusSubresource?: boolean;
  tracksGeneration?: boolean;
  strategicMergeKeys?: StrategicMergeKeys;
  extraFields?: Record<string, (o: KubeObject) => string>;
  table: BuiltinTable;
}

function define(spec: BuiltinSpec): ResourceDef {
  return {
    group: spec.group,
    version: spec.version,
    plural: spec.plural,
    singular: spec.singular,
    kind: spec.kind,
    listKind: `${spec.kind}List`,
    namespaced: spec.namespaced,
    shortNames: spec.shortNames ?? [],
    categories: spec.categories ?? [],
    statusSubresource: spec.statusSubresource ?? false,
    tracksGeneration: spec.tracksGeneration ?? false,
    allowUnconditionalUpdate: true,
    strategicMergeKeys: { ...META_KEYS, ...(spec.strategicMergeKeys ?? {}) },
    extraFields: spec.extraFields ?? {},
    builtinTable: spec.table,
  };
}

export function builtinResources(): ResourceDef[] {
  return [
    define({
      group: '', version: 'v1', plural: 'namespaces', singular: 'namespace', kind: 'Namespace', namespaced: false,
      shortNames: ['ns'], statusSubresource: true, table: namespaceTable,
      extraFields: { 'status.phase': (o) => str(record(o.status).phase) },
    }),
    define({
      group: '', version: 'v1', plural: 'events', singular: 'event', kind: 'Event', namespaced: true,
      shortNames: ['ev'], table: eventTable, extraFields: eventFields,
    }),
    define({ group: '', version: 'v1', plural: 'configmaps', singular: 'configmap', kind: 'ConfigMap', namespaced: true, shortNames: ['cm'], table: configMapTable }),
    define({
      group: '', version: 'v1', plural: 'secrets', singular: 'secret', kind: 'Secret', namespaced: true, table: secretTable,
      extraFields: { type: (o) => str(o.type) },
    }),
    define({
      group: 'apps', version: 'v1', plural: 'deployments', singular: 'deployment', kind: 'Deployment', namespaced: true,
      shortNames: ['deploy'], categories: ['all'], statusSubresource: true, tracksGeneration: true,
      strategicMergeKeys: podSpecKeys('spec.template.spec'), table: deploymentTable,
    }),
    define({
      group: 'apps', version: 'v1', plural: 'controllerrevisions', singular: 'controllerrevision', kind: 'ControllerRevision',
      namespaced: true, table: controllerRevisionTable,
    }),
    define({ group: '', version: 'v1', plural: 'serviceaccounts', singular: 'serviceaccount', kind: 'ServiceAccount', namespaced: true, shortNames: ['sa'], table: nameAgeTable }),
    define({ group: RBAC_GROUP, version: 'v1', plural: 'clusterroles', singular: 'clusterrole', kind: 'ClusterRole', namespaced: false, table: roleTable }),
    define({ group: RBAC_GROUP, version: 'v1', plural: 'clusterrolebindings', singular: 'clusterrolebinding', kind: 'ClusterRoleBinding', namespaced: false, table: bindingTable }),
    define({ group: RBAC_GROUP, version: 'v1', plural: 'roles', singular: 'role', kind: 'Role', namespaced: true, table: roleTable }),
    define({ group: RBAC_GROUP, version: 'v1', plural: 'rolebindings', singular: 'rolebinding', kind: 'RoleBinding', namespaced: true, table: bindingTable }),
    // Answered by the authorizer, never stored (see access.ts).
    define({
      group: 'authorization.k8s.io', version: 'v1', plural: 'selfsubjectaccessreviews', singular: 'selfsubjectaccessreview',
      kind: 'SelfSubjectAccessReview', namespaced: false, table: nameAgeTable,
    }),
    define({
      group: 'authentication.k8s.io', version: 'v1', plural: 'selfsubjectreviews', singular: 'selfsubjectreview',
      kind: 'SelfSubjectReview', namespaced: false, table: nameAgeTable,
    }),
    define({
      group: 'apiextensions.k8s.io', version: 'v1', plural: 'customresourcedefinitions', singular: 'customresourcedefinition',
      kind: 'CustomResourceDefinition', namespaced: false, shortNames: ['crd', 'crds'], categories: ['api-extensions'],
      statusSubresource: true, tracksGeneration: true, table: crdTable,
    }),
    define({
      group: 'admissionregistration.k8s.io', version: 'v1', plural: 'validatingwebhookconfigurations',
      singular: 'validatingwebhookconfiguration', kind: 'ValidatingWebhookConfiguration', namespaced: false,
      categories: ['api-extensions'], tracksGeneration: true, table: webhookConfigurationTable,
      strategicMergeKeys: { webhooks: { mergeKey: 'name' } },
    }),
    define({
      group: 'admissionregistration.k8s.io', version: 'v1', plural: 'validatingadmissionpolicies',
      singular: 'validatingadmissionpolicy', kind: 'ValidatingAdmissionPolicy', namespaced: false,
      categories: ['api-extensions'], statusSubresource: true, tracksGeneration: true, table: nameAgeTable,
    }),
    define({
      group: 'admissionregistration.k8s.io', version: 'v1', plural: 'validatingadmissionpolicybindings',
      singular: 'validatingadmissionpolicybinding', kind: 'ValidatingAdmissionPolicyBinding', namespaced: false,
      categories: ['api-extensions'], tracksGeneration: true, table: nameAgeTable,
    }),
  ];
}
