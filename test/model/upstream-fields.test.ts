import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { UPSTREAM_FIELDS_FILE } from '../../infra/paths';
import type { JsonSchema } from '../../local/cluster/schema';
import { isUnder, listSchemaFields, type SchemaFieldList } from '../../local/cluster/schema-fields';
import { regenerateUpstreamFields, storageSchema, type UpstreamFieldData } from '../../scripts/upstream-fields';
import { readManifests } from './manifests';

const data = JSON.parse(readFileSync(UPSTREAM_FIELDS_FILE, 'utf8')) as UpstreamFieldData;
const crdFiles = readManifests('crds');

function ourSchema(file: string): JsonSchema {
  const [crd] = crdFiles.get(file) ?? [];
  if (!crd) throw new Error(`no CRD file ${file}`);
  return (crd.spec as { versions: Array<{ schema: { openAPIV3Schema: JsonSchema } }> }).versions[0]!.schema.openAPIV3Schema;
}

function parentOf(path: string): string {
  return path.replace(/(\.[^.[\]]+|\[\])$/, '');
}

/** Upstream's fields with the deliberate exceptions taken out, and what each exception requires of ours. */
function expectedFields(kind: string): { expected: SchemaFieldList; problems: string[] } {
  const entry = data.kinds[kind]!;
  const ours = listSchemaFields(ourSchema(entry.crd), entry.roots);
  const expected: SchemaFieldList = { ...entry.fields };
  const problems: string[] = [];
  for (const exception of entry.exceptions) {
    for (const path of Object.keys(expected)) if (isUnder(path, exception.path)) delete expected[path];
    const oursBelow = Object.keys(ours).filter((path) => isUnder(path, exception.path) && path !== exception.path);
    if (oursBelow.length > 0) problems.push(`${exception.path}: ours declares ${oursBelow.join(', ')}`);
    if (exception.kind === 'opaque') {
      expected[exception.path] = 'object preserve';
    } else {
      if (exception.path in ours) problems.push(`${exception.path}: ours declares it`);
      if (!ours[parentOf(exception.path)]?.includes('preserve')) problems.push(`${exception.path}: ${parentOf(exception.path)} does not keep unknown fields`);
    }
  }
  return { expected, problems };
}

describe('CRDs against upstream OME fields (infra/crds/upstream/fields.json)', () => {
  it('names its source: repository, commit and files', () => {
    expect(data.source.repo).toBe('ome-projects/ome');
    expect(data.source.commit).toMatch(/^[0-9a-f]{40}$/);
    expect(data.source.files.length).toBeGreaterThan(0);
    expect(Object.keys(data.kinds).sort()).toEqual(['ClusterServingRuntime', 'InferenceService', 'RolloutPolicy', 'ServingRuntime']);
  });

  it.each(Object.keys(data.kinds))('%s declares exactly upstream fields, apart from the listed exceptions', (kind) => {
    const entry = data.kinds[kind]!;
    const ours = listSchemaFields(ourSchema(entry.crd), entry.roots);
    const { expected, problems } = expectedFields(kind);
    expect(problems).toEqual([]);
    const missing = Object.keys(expected).filter((path) => !(path in ours));
    const extra = Object.keys(ours).filter((path) => !(path in expected));
    const differing = Object.keys(expected).filter((path) => path in ours && ours[path] !== expected[path]).map((path) => `${path}: ours "${ours[path]}", upstream "${expected[path]}"`);
    expect({ missing, extra, differing }).toEqual({ missing: [], extra: [], differing: [] });
  });

  it.each(Object.entries(data.kinds).flatMap(([kind, entry]) => entry.exceptions.map((exception) => [kind, exception.path, exception] as const)))(
    '%s exception %s names an upstream field and says why',
    (kind, path, exception) => {
      expect(data.kinds[kind]!.fields[path]).toBeDefined();
      expect(['undeclared', 'opaque']).toContain(exception.kind);
      expect(exception.reason.length).toBeGreaterThan(20);
    },
  );

  it.each([
    ['status.canary', 'object'],
    ['status.canary.currentStep', 'integer'],
    ['status.components.*.canary.observedTrafficWeight', 'integer'],
    ['status.components.*.rolloutPhase', 'string enum(Stable,Canarying,BlueGreenStandby,Pending,Paused,Promoting,RollingBack,RolledBack,Failed)'],
    ['status.rollout', 'object'],
    ['status.rollout.lastRun.outcome', 'string enum(Completed,RolledBack,Superseded)'],
    ['spec.rollout.groups[].canary.prometheus', 'object rules(1)'],
    ['spec.rollout.groups[].canary.steps[].analysis.onInconclusive', 'string enum(Hold,Rollback,RollbackOnStall)'],
  ])('types %s as upstream does (%s), with no place for fields upstream lacks', (path, descriptor) => {
    const fields = listSchemaFields(ourSchema('ome.io_inferenceservices.yaml'), data.kinds.InferenceService!.roots);
    expect(fields[path]).toBe(descriptor);
    expect(data.kinds.InferenceService!.fields[path]).toBe(descriptor);
  });

  it.each(['status.canary.finished', 'status.rollout.lastRun.runID', 'status.rollout.canaries'])('upstream has no %s', (path) => {
    expect(data.kinds.InferenceService!.fields[path]).toBeUndefined();
  });
});

describe('scripts/upstream-fields.ts', () => {
  const crd = (status: JsonSchema) => `spec:\n  versions:\n    - name: v1beta1\n      storage: true\n      schema:\n        openAPIV3Schema: ${JSON.stringify({ type: 'object', properties: { spec: { type: 'object' }, status } })}\n`;

  it('lists the fields under each root from the checkout, keeping roots and exceptions', () => {
    const previous: UpstreamFieldData = {
      source: { repo: 'ome-projects/ome', commit: 'old', files: [] },
      kinds: { Thing: { crd: 'ome.io_things.yaml', roots: ['status'], fields: {}, exceptions: [{ path: 'status.extra', kind: 'opaque', reason: 'kept opaque for the test' }] } },
    };
    const status: JsonSchema = {
      type: 'object',
      'x-kubernetes-preserve-unknown-fields': true,
      properties: { runs: { type: 'array', items: { type: 'object', properties: { outcome: { type: 'string', enum: ['A', 'B'] } } } }, labels: { type: 'object', additionalProperties: { type: 'string' } } },
    };
    const read = (file: string) => (file === 'ome.io_things.yaml' ? crd(status) : '');
    const next = regenerateUpstreamFields(previous, read, 'abc');
    expect(next.source).toEqual({ repo: 'ome-projects/ome', commit: 'abc', files: ['config/crd/full/ome.io_things.yaml'] });
    expect(next.kinds.Thing).toEqual({
      crd: 'ome.io_things.yaml',
      roots: ['status'],
      exceptions: previous.kinds.Thing!.exceptions,
      fields: { status: 'object preserve', 'status.labels': 'object', 'status.labels.*': 'string', 'status.runs': 'array', 'status.runs[]': 'object', 'status.runs[].outcome': 'string enum(A,B)' },
    });
  });

  it('refuses a CRD without a schema', () => {
    expect(() => storageSchema('spec:\n  versions: []\n', 'x.yaml')).toThrow('x.yaml: no openAPIV3Schema');
  });
});
