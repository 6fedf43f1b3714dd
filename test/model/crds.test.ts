import { describe, expect, it } from 'vitest';
import { Resources } from '../../shared/domain/model';
import { readManifests, type Manifest } from './manifests';

interface Schema {
  type?: string;
  properties?: Record<string, Schema>;
  items?: Schema;
  additionalProperties?: Schema | boolean;
  required?: string[];
  enum?: unknown[];
  default?: unknown;
  'x-kubernetes-preserve-unknown-fields'?: boolean;
  'x-kubernetes-int-or-string'?: boolean;
  [key: string]: unknown;
}

interface CrdVersion {
  name: string;
  served: boolean;
  storage: boolean;
  subresources?: { status?: object };
  additionalPrinterColumns?: Array<{ name: string; type: string; jsonPath: string }>;
  schema: { openAPIV3Schema: Schema };
}

interface Crd extends Manifest {
  spec: {
    group: string;
    scope: 'Namespaced' | 'Cluster';
    names: { kind: string; listKind: string; plural: string; singular: string; shortNames?: string[] };
    versions: CrdVersion[];
  };
}

const files = readManifests('crds');
const crds = new Map([...files.values()].flat().map((crd) => [(crd as Crd).spec.names.kind, crd as Crd]));
const schemaOf = (kind: string): Schema => crds.get(kind)!.spec.versions[0]!.schema.openAPIV3Schema;

/** Walks a schema to a dotted path of property names (`[]` steps into array items). */
function at(schema: Schema, path: string): Schema {
  let node: Schema | undefined = schema;
  for (const step of path.split('.')) {
    node = step === '[]' ? node?.items : node?.properties?.[step];
    if (!node) throw new Error(`no schema at ${path} (step ${step})`);
  }
  return node;
}

/** The rules of a structural schema that a real API server enforces on CRDs. */
function structuralProblems(schema: Schema, path = ''): string[] {
  const problems: string[] = [];
  const untyped = schema['x-kubernetes-preserve-unknown-fields'] === true || schema['x-kubernetes-int-or-string'] === true;
  if (!schema.type && !untyped) problems.push(`${path || '<root>'}: no type`);
  if (schema['x-kubernetes-preserve-unknown-fields'] === false) problems.push(`${path}: preserve-unknown-fields false`);
  if (schema.properties && typeof schema.additionalProperties === 'object') problems.push(`${path}: properties and additionalProperties`);
  if (schema.type === 'array' && !schema.items) problems.push(`${path}: array without items`);
  if (schema.enum && schema.default !== undefined && !schema.enum.includes(schema.default)) problems.push(`${path}: default outside enum`);
  for (const key of ['$ref', 'definitions', 'dependencies', 'patternProperties', 'id']) {
    if (key in schema) problems.push(`${path}: ${key} is not allowed`);
  }
  for (const [name, child] of Object.entries(schema.properties ?? {})) problems.push(...structuralProblems(child, `${path}.${name}`));
  if (schema.items) problems.push(...structuralProblems(schema.items, `${path}[]`));
  if (typeof schema.additionalProperties === 'object') problems.push(...structuralProblems(schema.additionalProperties, `${path}{}`));
  return problems;
}

function hasDefault(schema: Schema): boolean {
  return schema.default !== undefined || Object.values(schema.properties ?? {}).some(hasDefault) || (schema.items ? hasDefault(schema.items) : false);
}

describe('CRDs in infra/crds', () => {
  it('holds one CustomResourceDefinition per file, for the five kinds', () => {
    expect([...files.values()].map((documents) => documents.length)).toEqual([1, 1, 1, 1, 1]);
    expect([...crds.keys()].sort()).toEqual(['ClusterBaseModel', 'ClusterServingRuntime', 'InferenceService', 'RolloutPolicy', 'ServingRuntime']);
  });

  it.each([...crds.values()].map((crd) => [crd.spec.names.kind, crd] as const))('%s: ome.io/v1beta1, served and stored, status subresource, structural', (_kind, crd) => {
    expect(crd.apiVersion).toBe('apiextensions.k8s.io/v1');
    expect(crd.metadata.name).toBe(`${crd.spec.names.plural}.ome.io`);
    expect(crd.spec.group).toBe('ome.io');
    expect(crd.spec.versions).toHaveLength(1);
    const [version] = crd.spec.versions;
    expect(version).toMatchObject({ name: 'v1beta1', served: true, storage: true, subresources: { status: {} } });
    const schema = version!.schema.openAPIV3Schema;
    expect(schema.properties!.metadata).toEqual({ type: 'object' });
    expect(structuralProblems(schema)).toEqual([]);
    for (const column of version!.additionalPrinterColumns ?? []) {
      expect(column.jsonPath.startsWith('.')).toBe(true);
      expect(['string', 'integer', 'number', 'boolean', 'date']).toContain(column.type);
    }
  });

  it.each([
    ['InferenceService', 'inferenceservices', 'inferenceservice', 'Namespaced', ['isvc']],
    ['ServingRuntime', 'servingruntimes', 'servingruntime', 'Namespaced', undefined],
    ['ClusterServingRuntime', 'clusterservingruntimes', 'clusterservingruntime', 'Cluster', undefined],
    ['ClusterBaseModel', 'clusterbasemodels', 'clusterbasemodel', 'Cluster', undefined],
    ['RolloutPolicy', 'rolloutpolicies', 'rolloutpolicy', 'Namespaced', undefined],
  ])('%s has upstream names and scope', (kind, plural, singular, scope, shortNames) => {
    const crd = crds.get(kind)!;
    expect(crd.spec.names).toEqual({ kind, listKind: `${kind}List`, plural, singular, ...(shortNames ? { shortNames } : {}) });
    expect(crd.spec.scope).toBe(scope);
  });

  it('agrees with the Resources table on where each kind is served', () => {
    for (const type of Object.values(Resources).filter((resource) => resource.group === 'ome.io')) {
      const crd = crds.get(type.kind)!;
      expect({ plural: crd.spec.names.plural, namespaced: crd.spec.scope === 'Namespaced', version: crd.spec.versions[0]!.name }).toEqual({
        plural: type.plural,
        namespaced: type.namespaced,
        version: type.version,
      });
    }
  });

  it('prints upstream columns', () => {
    const columns = (kind: string) => crds.get(kind)!.spec.versions[0]!.additionalPrinterColumns!.map((column) => column.name);
    expect(columns('InferenceService')).toEqual(['URL', 'Ready', 'BaseModel', 'Runtime', 'Prev', 'Latest', 'PrevRolledoutRevision', 'LatestReadyRevision', 'Age']);
    expect(columns('ServingRuntime')).toEqual(['Disabled', 'ModelFormat', 'ModelFramework', 'ModelFrameworkVersion', 'ModelArchitecture', 'ModelSizeMin', 'ModelSizeMax', 'Images', 'Age']);
    expect(columns('ClusterServingRuntime')).toEqual(columns('ServingRuntime'));
    expect(columns('RolloutPolicy')).toEqual(['Ready', 'Digest', 'Refs', 'Age']);
    expect(columns('ClusterBaseModel').at(-2)).toBe('Ready');
  });

  it('types spec.runtime with upstream defaults', () => {
    const runtime = at(schemaOf('InferenceService'), 'spec.runtime');
    expect(runtime.required).toEqual(['name']);
    // Upstream types kind without an enum; an unknown kind is refused where it is resolved.
    expect(at(runtime, 'kind')).toEqual({ type: 'string', default: 'ClusterServingRuntime' });
    expect(at(runtime, 'autoSync')).toMatchObject({ type: 'boolean', default: true });
    expect(at(runtime, 'apiGroup')).toMatchObject({ type: 'string', default: 'ome.io' });
    expect(at(runtime, 'revision').type).toBe('string');
  });

  it.each(['engine', 'decoder', 'router'])('types spec.%s replicas and keeps its pod spec', (component) => {
    const node = at(schemaOf('InferenceService'), `spec.${component}`);
    expect(node['x-kubernetes-preserve-unknown-fields']).toBe(true);
    expect(at(node, 'minReplicas').type).toBe('integer');
    expect(at(node, 'maxReplicas').type).toBe('integer');
  });

  it('types rollout groups with upstream key order', () => {
    const group = at(schemaOf('InferenceService'), 'spec.rollout.groups.[]');
    expect(Object.keys(group.properties!)).toEqual(['components', 'order', 'canary', 'blueGreen', 'rollingUpdate', 'policyRef', 'soak', 'maintainRatio']);
    expect(Object.keys(at(group, 'canary').properties!)).toEqual(['steps', 'prometheus', 'scaleDownDelaySeconds', 'readyTimeout']);
    expect(Object.keys(at(group, 'canary.steps.[]').properties!)).toEqual(['capacity', 'traffic', 'pause', 'analysis']);
    expect(at(group, 'canary.steps.[].capacity')['x-kubernetes-int-or-string']).toBe(true);
    // Upstream's ComponentType carries no enum in the CRD; admission names a bad component.
    expect(at(group, 'components.[]')).toEqual({ type: 'string' });
    expect(at(group, 'policyRef')).toMatchObject({ required: ['name', 'progression'] });
    expect(at(group, 'policyRef.progression').enum).toEqual(['canary', 'blueGreen', 'rollingUpdate']);
    expect(Object.keys(at(group, 'rollingUpdate').properties!)).toEqual(['maxSurge', 'maxUnavailable']);
    expect(at(group, 'maintainRatio.tolerance').type).toBe('integer');
  });

  it('gives RolloutPolicy the same progression schemas as an inline group', () => {
    const group = at(schemaOf('InferenceService'), 'spec.rollout.groups.[]').properties!;
    const policy = at(schemaOf('RolloutPolicy'), 'spec').properties!;
    expect(policy).toEqual({ canary: group.canary, blueGreen: group.blueGreen, rollingUpdate: group.rollingUpdate });
    expect(Object.keys(at(schemaOf('RolloutPolicy'), 'status').properties!)).toEqual(['observedGeneration', 'portableDigest', 'attachedGroups', 'conditions']);
  });

  it('types the pinning and rollout status the control plane writes', () => {
    const status = at(schemaOf('InferenceService'), 'status');
    expect(status['x-kubernetes-preserve-unknown-fields']).toBe(true);
    expect(at(status, 'pinnedRevisionName').type).toBe('string');
    expect(at(status, 'lastRuntimeSyncToken').type).toBe('string');
    expect(Object.keys(at(status, 'conditions.[]').properties!)).toEqual(['type', 'status', 'severity', 'lastTransitionTime', 'reason', 'message']);
    expect(Object.keys(at(status, 'rollout.activeRun').properties!)).toEqual(['runID', 'openedAt', 'pinnedAt', 'targetRevisions', 'plan']);
    expect(Object.keys(at(status, 'rollout.activeRun.targetRevisions.[]').properties!)).toEqual(['component', 'revision', 'stableRevision']);
    expect(at(status, 'rollout.lastRun.outcome').enum).toEqual(['Completed', 'RolledBack', 'Superseded']);
    expect(at(status, 'rollout.groups.[].source').enum).toEqual(['Inline', 'Policy']);
    expect(at(status, 'rollout.groups.[].observedDigest').type).toBe('string');
    expect(at(status, 'canary.observedTrafficWeight').type).toBe('integer');
  });

  it.each(['ServingRuntime', 'ClusterServingRuntime'])('%s defaults nothing in its spec, so a revision hashes what the user applied', (kind) => {
    const spec = at(schemaOf(kind), 'spec');
    expect(hasDefault(spec)).toBe(false);
    expect(spec['x-kubernetes-preserve-unknown-fields']).toBe(true);
    expect(at(spec, 'disabled').type).toBe('boolean');
    expect(at(spec, 'containers.[].image').type).toBe('string');
  });
});
