import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ApiError, ClusterApi } from '../../local/cluster/api';
import { DEFAULT_CRD_DIR } from '../../local/cluster';
import { applyManifestDirectory } from '../../local/cluster/manifests';
import type { KubeObject } from '../../local/cluster/registry';
import { applyStructuralSchema, validationErrors, type JsonSchema } from '../../local/cluster/schema';
import { readManifests } from '../model/manifests';

const schema: JsonSchema = {
  type: 'object',
  properties: {
    spec: {
      type: 'object',
      properties: {
        name: { type: 'string' },
        mode: { type: 'string', default: 'Auto' },
        labels: { type: 'object', additionalProperties: { type: 'object', properties: { value: { type: 'string' } } } },
        steps: { type: 'array', items: { type: 'object', properties: { weight: { type: 'integer' } } } },
        pod: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true, properties: { replicas: { type: 'integer' }, typed: { type: 'object', properties: { known: { type: 'string' } } } } },
        capacity: { 'x-kubernetes-int-or-string': true },
        anything: { 'x-kubernetes-preserve-unknown-fields': true },
      },
    },
    status: {
      type: 'object',
      'x-kubernetes-preserve-unknown-fields': true,
      properties: {
        canary: { type: 'object', properties: { currentStep: { type: 'integer' } } },
        nullable: { type: 'string', nullable: true },
      },
    },
  },
};

describe('Function: applyStructuralSchema (pruning)', () => {
  it.each<[string, Record<string, unknown>, Record<string, unknown>, string[]]>([
    ['drops a field a typed object does not declare', { spec: { name: 'a', extra: 1 } }, { spec: { name: 'a', mode: 'Auto' } }, ['spec.extra']],
    ['drops an unknown field at the top level', { spec: {}, other: {} }, { spec: { mode: 'Auto' } }, ['other']],
    ['keeps unknown fields where preserve-unknown-fields is set', { spec: { pod: { containers: [{ x: 1 }] } } }, { spec: { mode: 'Auto', pod: { containers: [{ x: 1 }] } } }, []],
    [
      'prunes inside a typed property below a preserving level (it does not inherit preserve)',
      { spec: { pod: { typed: { known: 'k', unknown: 'u' }, free: true } } },
      { spec: { mode: 'Auto', pod: { typed: { known: 'k' }, free: true } } },
      ['spec.pod.typed.unknown'],
    ],
    ['keeps a whole untyped preserving subtree', { spec: { anything: { a: { b: [1, { c: 2 }] } } } }, { spec: { mode: 'Auto', anything: { a: { b: [1, { c: 2 }] } } } }, []],
    [
      'walks the values of an additionalProperties map',
      { spec: { labels: { one: { value: 'v', extra: 'x' }, two: { value: 'w' } } } },
      { spec: { mode: 'Auto', labels: { one: { value: 'v' }, two: { value: 'w' } } } },
      ['spec.labels.one.extra'],
    ],
    [
      'walks every item of an array of objects',
      { spec: { steps: [{ weight: 1 }, { weight: 2, finished: true }] } },
      { spec: { mode: 'Auto', steps: [{ weight: 1 }, { weight: 2 }] } },
      ['spec.steps[1].finished'],
    ],
    [
      'keeps unknown fields at a preserving status level but prunes a typed object below it',
      { spec: {}, status: { anything: 1, canary: { currentStep: 2, finished: true } } },
      { spec: { mode: 'Auto' }, status: { anything: 1, canary: { currentStep: 2 } } },
      ['status.canary.finished'],
    ],
    ['drops a null the schema does not allow, and a default fills it', { spec: { name: null, mode: null } }, { spec: { mode: 'Auto' } }, []],
    ['keeps a null where nullable', { spec: {}, status: { nullable: null } }, { spec: { mode: 'Auto' }, status: { nullable: null } }, []],
  ])('%s', (_case, input, expected, pruned) => {
    const object = structuredClone(input);
    const outcome = applyStructuralSchema(object, schema);
    expect(object).toEqual(expected);
    expect(outcome.unknownFields).toEqual(pruned);
    expect(outcome.errors).toEqual([]);
  });

  it('does not prune metadata, apiVersion or kind at the root', () => {
    const object = { apiVersion: 'ome.io/v1beta1', kind: 'X', metadata: { name: 'x', anything: 1 }, spec: {} };
    expect(applyStructuralSchema(object, schema).unknownFields).toEqual([]);
    expect(object.metadata).toEqual({ name: 'x', anything: 1 });
  });
});

describe('Function: applyStructuralSchema (x-kubernetes-validations of the InferenceService and RolloutPolicy CRDs)', () => {
  const crd = (file: string) => {
    const [manifest] = readManifests('crds').get(file) ?? [];
    return (manifest!.spec as { versions: Array<{ schema: { openAPIV3Schema: JsonSchema } }> }).versions[0]!.schema.openAPIV3Schema;
  };
  const isvcSchema = crd('ome.io_inferenceservices.yaml');
  const policySchema = crd('ome.io_rolloutpolicies.yaml');
  const group = (extra: Record<string, unknown>) => ({ spec: { runtime: { name: 'srt' }, rollout: { groups: [{ components: ['engine'], ...extra }] } } });
  const prometheus = (body: Record<string, unknown>) => group({ canary: { steps: [{ capacity: '100%', traffic: 100 }], prometheus: body } });
  const AT_MOST_ONE_SOURCE = 'spec.rollout.groups[0].canary.prometheus: Invalid value: at most one of providerRef and serverAddress may be set';

  it.each<[string, JsonSchema, Record<string, unknown>, string[]]>([
    ['a provider reference alone', isvcSchema, prometheus({ providerRef: { name: 'fleet-prometheus' } }), []],
    ['a server address alone', isvcSchema, prometheus({ serverAddress: 'http://prometheus:9090' }), []],
    ['both a provider reference and a server address', isvcSchema, prometheus({ providerRef: { name: 'p' }, serverAddress: 'http://prometheus:9090' }), [AT_MOST_ONE_SOURCE]],
    ['two progressions on one group', isvcSchema, group({ blueGreen: {}, rollingUpdate: {} }), ['spec.rollout.groups[0]: Invalid value: at most one of canary, blueGreen, or rollingUpdate may be set on a rollout group']],
    ['an order naming a component outside the group', isvcSchema, group({ order: ['router'] }), ['spec.rollout.groups[0]: Invalid value: order must reference only Components listed in this group']],
    ['an order within the group', isvcSchema, group({ order: ['engine'] }), []],
    ['RollbackOnStall', isvcSchema, group({ canary: { steps: [{ capacity: 1, traffic: 10, analysis: { interval: '1m', failureLimit: 1, onInconclusive: 'RollbackOnStall', metrics: [{ name: 'e', query: 'q', operator: 'LT', threshold: '1' }] } }] } }), []],
    ['a policy with one progression', policySchema, { spec: { blueGreen: {} } }, []],
    ['a policy with none', policySchema, { spec: {} }, ['spec: Invalid value: exactly one of canary, blueGreen, or rollingUpdate must be set']],
    ['a policy whose prometheus names both sources', policySchema, { spec: { canary: { prometheus: { providerRef: { name: 'p' }, serverAddress: 'x' } } } }, ['spec.canary.prometheus: Invalid value: at most one of providerRef and serverAddress may be set']],
  ])('%s', (_case, schema, object, messages) => {
    expect(validationErrors([], applyStructuralSchema(structuredClone(object), schema)).map((error) => error.message)).toEqual(messages);
  });

  it('skips a rule outside the evaluator\'s subset rather than refusing the write', () => {
    const schema: JsonSchema = { type: 'object', properties: { spec: { type: 'object', 'x-kubernetes-validations': [{ rule: 'self.matches("^a")', message: 'never' }] } } };
    expect(applyStructuralSchema({ spec: {} }, schema).errors).toEqual([]);
  });
});

describe('ClusterApi: pruning InferenceService writes by the CRDs of infra/crds', () => {
  let api: ClusterApi;
  const isvc = () => api.resolve('ome.io', 'v1beta1', 'inferenceservices');

  beforeEach(async () => {
    api = new ClusterApi({ watchWindow: 100, bookmarkIntervalMs: 60_000, workloadReadyDelayMs: 60_000 });
    await api.bootstrapNamespaces(['default']);
    await applyManifestDirectory(api, DEFAULT_CRD_DIR);
    await api.create(isvc(), 'default', {
      apiVersion: 'ome.io/v1beta1',
      kind: 'InferenceService',
      metadata: { name: 'llama' },
      spec: { runtime: { name: 'srt', autoSync: false, color: 'blue' }, engine: { minReplicas: 1, containers: [{ name: 'x' }] } },
      status: { pinnedRevisionName: 'ignored-on-create' },
    });
  });
  afterEach(() => api.stop());

  const statusWrite = async (status: Record<string, unknown>, options: { subresource?: string } = {}): Promise<KubeObject> => {
    const current = await api.get(isvc(), 'default', 'llama');
    const body = { ...current, status };
    return (await api.update(isvc(), 'default', 'llama', body, options.subresource ?? 'status')).object;
  };

  it('prunes unknown spec fields on create and drops status (the status subresource owns it)', async () => {
    const stored = await api.get(isvc(), 'default', 'llama');
    expect(stored.spec).toMatchObject({ runtime: { name: 'srt', autoSync: false, kind: 'ClusterServingRuntime', apiGroup: 'ome.io' }, engine: { minReplicas: 1, containers: [{ name: 'x' }] } });
    expect((stored.spec as { runtime: Record<string, unknown> }).runtime.color).toBeUndefined();
    expect(stored.status).toBeUndefined();
    expect(api.prunedWrites()).toEqual([{ kind: 'InferenceService', namespace: 'default', name: 'llama', subresource: '', fields: ['spec.runtime.color'] }]);
  });

  it('prunes the status fields upstream does not declare on a status write, and records them', async () => {
    const written = await statusWrite({
      pinnedRevisionName: 'cr-srt-0123abcd',
      someFutureField: { kept: true },
      canary: { currentStep: 2, observedTrafficWeight: 100, finished: true },
      components: { engine: { rolloutPhase: 'Stable', canary: { currentStep: 1, observedTrafficWeight: 50, finished: false }, lifecycle: { anything: 1 } } },
      rollout: {
        lastRun: { outcome: 'Completed', runID: 'llama-0123456789ab', targetRevisions: [{ component: 'engine', revision: 'a', note: 'x' }] },
        canaries: [{ index: 0, currentStep: 1 }],
      },
    });
    expect(written.status).toEqual({
      pinnedRevisionName: 'cr-srt-0123abcd',
      someFutureField: { kept: true },
      canary: { currentStep: 2, observedTrafficWeight: 100 },
      components: { engine: { rolloutPhase: 'Stable', canary: { currentStep: 1, observedTrafficWeight: 50 }, lifecycle: { anything: 1 } } },
      rollout: { lastRun: { outcome: 'Completed', targetRevisions: [{ component: 'engine', revision: 'a' }] } },
    });
    expect(api.prunedWrites().at(-1)).toEqual({
      kind: 'InferenceService',
      namespace: 'default',
      name: 'llama',
      subresource: 'status',
      // Sorted, as kube-apiserver reports the fields it pruned.
      fields: ['status.canary.finished', 'status.components.engine.canary.finished', 'status.rollout.canaries', 'status.rollout.lastRun.runID', 'status.rollout.lastRun.targetRevisions[0].note'],
    });
  });

  it('keeps the stored spec on a status write, and the stored status on a main-resource write', async () => {
    const current = await api.get(isvc(), 'default', 'llama');
    const spec = structuredClone(current.spec) as { engine: { minReplicas: number } };
    spec.engine.minReplicas = 5;
    await api.update(isvc(), 'default', 'llama', { ...current, spec, status: { pinnedRevisionName: 'cr-srt-0123abcd' } }, 'status');
    const afterStatus = await api.get(isvc(), 'default', 'llama');
    expect((afterStatus.spec as { engine: { minReplicas: number } }).engine.minReplicas).toBe(1);
    expect(afterStatus.status).toEqual({ pinnedRevisionName: 'cr-srt-0123abcd' });

    await api.update(isvc(), 'default', 'llama', { ...afterStatus, spec, status: { pinnedRevisionName: 'other' } });
    const afterMain = await api.get(isvc(), 'default', 'llama');
    expect((afterMain.spec as { engine: { minReplicas: number } }).engine.minReplicas).toBe(5);
    expect(afterMain.status).toEqual({ pinnedRevisionName: 'cr-srt-0123abcd' });
  });

  it('refuses a required status field left out, as upstream marks currentStep and observedTrafficWeight', async () => {
    await expect(statusWrite({ canary: { canaryRevisionHash: 'abc' } })).rejects.toMatchObject({ status: { code: 422 } });
  });

  it('refuses unknown fields in refuse mode, naming them', async () => {
    const strict = new ClusterApi({ watchWindow: 100, bookmarkIntervalMs: 60_000, workloadReadyDelayMs: 60_000, unknownFields: 'refuse' });
    try {
      await strict.bootstrapNamespaces(['default']);
      await applyManifestDirectory(strict, DEFAULT_CRD_DIR);
      const def = strict.resolve('ome.io', 'v1beta1', 'inferenceservices');
      const created = (await strict.create(def, 'default', { apiVersion: 'ome.io/v1beta1', kind: 'InferenceService', metadata: { name: 'llama' }, spec: { runtime: { name: 'srt' } } })).object;
      const write = strict.update(def, 'default', 'llama', { ...created, status: { canary: { currentStep: 0, observedTrafficWeight: 0, finished: true } } }, 'status');
      await expect(write).rejects.toBeInstanceOf(ApiError);
      await expect(write).rejects.toThrow('unknown field "status.canary.finished"');
      expect(strict.prunedWrites()).toEqual([]);
    } finally {
      strict.stop();
    }
  });
});
