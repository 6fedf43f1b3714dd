import { describe, expect, it } from 'vitest';
import {
  HINT_EVENT_SOURCE,
  HintDetailType,
  computeChangedFields,
  decideForwarding,
  deepEqual,
  hintEventKey,
  isWorthForwarding,
  readHintDetail,
  toHintEvent,
} from '../../shared/domain/hint-event.js';
import type { ObservedChange } from '../../shared/domain/hint-event.js';
import { InvalidInputError } from '../../shared/domain/errors.js';
import type { KubeObject } from '../../shared/ports/cluster.js';

const OBSERVED_AT = '2026-01-02T03:04:05.000Z';

function isvc(overrides: { rv?: string; uid?: string; annotations?: Record<string, string>; labels?: Record<string, string>; spec?: unknown; status?: unknown; managedFields?: unknown[] } = {}): KubeObject {
  return {
    apiVersion: 'ome.io/v1beta1',
    kind: 'InferenceService',
    metadata: {
      name: 'llama',
      namespace: 'team-a',
      uid: overrides.uid ?? 'uid-1',
      resourceVersion: overrides.rv ?? '10',
      generation: 3,
      ...(overrides.annotations ? { annotations: overrides.annotations } : {}),
      ...(overrides.labels ? { labels: overrides.labels } : {}),
      ...(overrides.managedFields ? { managedFields: overrides.managedFields } : {}),
    } as KubeObject['metadata'],
    spec: overrides.spec ?? { runtime: { name: 'srt', autoSync: false } },
    ...(overrides.status ? { status: overrides.status } : {}),
  };
}

function revision(overrides: { rv?: string; annotations?: Record<string, string>; labels?: Record<string, string>; data?: unknown } = {}): KubeObject {
  return {
    apiVersion: 'apps/v1',
    kind: 'ControllerRevision',
    metadata: {
      name: 'cr-srt-0123abcd',
      namespace: 'ome',
      uid: 'cr-uid',
      resourceVersion: overrides.rv ?? '5',
      ...(overrides.annotations ? { annotations: overrides.annotations } : {}),
      labels: overrides.labels ?? { 'ome.io/runtime-of': 'srt' },
    },
    data: overrides.data ?? { spec: { a: 1 } },
    revision: 1,
  };
}

describe('Function: toHintEvent', () => {
  it('carries identity and routing facts, never the object', () => {
    // Act
    const event = toHintEvent('prod-eu', 'ADDED', isvc({ annotations: { 'ome.io/runtime-sync': 't1' } }), undefined, { observedAt: OBSERVED_AT });
    // Assess
    expect(event).toEqual({
      source: HINT_EVENT_SOURCE,
      detailType: HintDetailType.objectChanged,
      detail: {
        clusterId: 'prod-eu',
        apiVersion: 'ome.io/v1beta1',
        kind: 'InferenceService',
        namespace: 'team-a',
        name: 'llama',
        uid: 'uid-1',
        resourceVersion: '10',
        generation: 3,
        change: 'added',
        changed: { spec: true, runtimeSync: true, rolloutRepin: false, rolloutPromote: false, labels: true, metadata: true, rollout: false, ready: false },
        observedAt: OBSERVED_AT,
      },
    });
    expect(JSON.stringify(event)).not.toContain('autoSync');
  });

  it('omits namespace for cluster-scoped kinds', () => {
    const csr: KubeObject = { apiVersion: 'ome.io/v1beta1', kind: 'ClusterServingRuntime', metadata: { name: 'srt', uid: 'u', resourceVersion: '1' }, spec: {} };
    expect(toHintEvent('c', 'MODIFIED', csr).detail).not.toHaveProperty('namespace');
  });

  it.each<[string, ObservedChange, KubeObject, KubeObject | undefined, Record<string, boolean>]>([
    ['relist without a previous copy', 'RELISTED', isvc({ annotations: { 'ome.io/rollout-repin': 'now' } }), undefined,
      { spec: true, runtimeSync: false, rolloutRepin: true, rolloutPromote: false, labels: true, metadata: true, rollout: false, ready: false }],
    ['spec edit', 'MODIFIED', isvc({ rv: '11', spec: { runtime: { name: 'other' } } }), isvc(),
      { spec: true, runtimeSync: false, rolloutRepin: false, rolloutPromote: false, labels: false, metadata: false, rollout: false, ready: false }],
    ['new runtime-sync token', 'MODIFIED', isvc({ rv: '11', annotations: { 'ome.io/runtime-sync': 't2' } }), isvc({ annotations: { 'ome.io/runtime-sync': 't1' } }),
      { spec: false, runtimeSync: true, rolloutRepin: false, rolloutPromote: false, labels: false, metadata: false, rollout: false, ready: false }],
    ['same token again', 'MODIFIED', isvc({ rv: '11', annotations: { 'ome.io/runtime-sync': 't1' } }), isvc({ annotations: { 'ome.io/runtime-sync': 't1' } }),
      { spec: false, runtimeSync: false, rolloutRepin: false, rolloutPromote: false, labels: false, metadata: false, rollout: false, ready: false }],
    ['repin request consumed (annotation removed)', 'MODIFIED', isvc({ rv: '11' }), isvc({ annotations: { 'ome.io/rollout-repin': 'rp1:abc' } }),
      { spec: false, runtimeSync: false, rolloutRepin: false, rolloutPromote: false, labels: false, metadata: false, rollout: false, ready: false }],
    ['promote request', 'MODIFIED', isvc({ rv: '11', annotations: { 'ome.io/rollout-promote': 'rev-2' } }), isvc(),
      { spec: false, runtimeSync: false, rolloutRepin: false, rolloutPromote: true, labels: false, metadata: false, rollout: false, ready: false }],
    ['label edit', 'MODIFIED', isvc({ rv: '11', labels: { team: 'b' } }), isvc(),
      { spec: false, runtimeSync: false, rolloutRepin: false, rolloutPromote: false, labels: true, metadata: true, rollout: false, ready: false }],
    ['previous copy of another uid counts as unknown', 'ADDED', isvc({ uid: 'uid-2' }), isvc(),
      { spec: true, runtimeSync: false, rolloutRepin: false, rolloutPromote: false, labels: true, metadata: true, rollout: false, ready: false }],
    ['delete reports nothing changed', 'DELETED', isvc({ annotations: { 'ome.io/runtime-sync': 't1' } }), isvc(),
      { spec: false, runtimeSync: false, rolloutRepin: false, rolloutPromote: false, labels: false, metadata: false, rollout: false, ready: false }],
    ['revision data counts as spec', 'MODIFIED', revision({ rv: '6', data: { spec: { a: 2 } } }), revision(),
      { spec: true, runtimeSync: false, rolloutRepin: false, rolloutPromote: false, labels: false, metadata: false, rollout: false, ready: false }],
  ])('changed flags: %s', (_name, type, object, previous, changed) => {
    expect(toHintEvent('c', type, object, previous, { observedAt: OBSERVED_AT }).detail.changed).toEqual(changed);
  });

  it('maps watch types to change types', () => {
    expect(toHintEvent('c', 'DELETED', isvc()).detail.change).toBe('deleted');
    expect(toHintEvent('c', 'RELISTED', isvc()).detail.change).toBe('relisted');
  });

  it('refuses an object without identity', () => {
    const broken = { ...isvc(), metadata: { name: 'x' } } as KubeObject;
    expect(() => toHintEvent('c', 'ADDED', broken)).toThrow(InvalidInputError);
  });
});

describe('Function: isWorthForwarding', () => {
  const withStatus = isvc({ rv: '11', status: { pinnedRevisionName: 'cr-srt-1' } });
  it.each<[string, ObservedChange | 'BOOKMARK', KubeObject, KubeObject | undefined, boolean]>([
    ['bookmark', 'BOOKMARK', isvc(), undefined, false],
    ['first sight', 'ADDED', isvc(), undefined, true],
    ['modification without a previous copy', 'MODIFIED', isvc(), undefined, true],
    ['delete', 'DELETED', isvc(), isvc(), true],
    ['ControllerRevision delete', 'DELETED', revision(), undefined, true],
    ['status-only write (our own)', 'MODIFIED', withStatus, isvc(), false],
    ['status change between two status writes', 'MODIFIED', isvc({ rv: '12', status: { x: 2 } }), isvc({ rv: '11', status: { x: 1 } }), false],
    ['managedFields and resourceVersion only', 'MODIFIED', isvc({ rv: '11', managedFields: [{ manager: 'ome' }] }), isvc(), false],
    ['relist of an unchanged object', 'RELISTED', isvc(), isvc(), false],
    ['relist of an object changed meanwhile', 'RELISTED', isvc({ rv: '12', spec: { runtime: { name: 'b' } } }), isvc(), true],
    ['recreated under the same name', 'ADDED', isvc({ uid: 'uid-2', rv: '20' }), isvc(), true],
    ['spec edit', 'MODIFIED', isvc({ rv: '11', spec: { runtime: { name: 'b' } } }), isvc(), true],
    ['new runtime-sync token', 'MODIFIED', isvc({ rv: '11', annotations: { 'ome.io/runtime-sync': 't' } }), isvc(), true],
    ['new repin request', 'MODIFIED', isvc({ rv: '11', annotations: { 'ome.io/rollout-repin': 'now' } }), isvc(), true],
    ['repin annotation removed by repin-apply', 'MODIFIED', isvc({ rv: '11' }), isvc({ annotations: { 'ome.io/rollout-repin': 'now' } }), false],
    ['promote annotation removed by the run', 'MODIFIED', isvc({ rv: '11' }), isvc({ annotations: { 'ome.io/rollout-promote': 'r' } }), false],
    ['another annotation edited by a user', 'MODIFIED', isvc({ rv: '11', annotations: { note: 'x' } }), isvc(), true],
    ['label edit', 'MODIFIED', isvc({ rv: '11', labels: { a: 'b' } }), isvc(), true],
    ['ControllerRevision GC mark', 'MODIFIED', revision({ rv: '6', annotations: { 'ome.io/gc-eligible-since': '2026-01-01T00:00:00Z' } }), revision(), false],
    ['ControllerRevision relabelled', 'MODIFIED', revision({ rv: '6', labels: { 'ome.io/runtime-of': 'x' } }), revision(), true],
  ])('%s → %s', (_name, type, object, previous, expected) => {
    expect(isWorthForwarding(type, object, previous)).toBe(expected);
  });

  it('explains its decision', () => {
    expect(decideForwarding('MODIFIED', withStatus, isvc()).reason).toContain('only status');
  });
});

describe('Function: readHintDetail', () => {
  const detail = toHintEvent('c', 'ADDED', isvc(), undefined, { observedAt: OBSERVED_AT }).detail;

  it('reads the detail from an EventBridge envelope', () => {
    expect(readHintDetail({ source: HINT_EVENT_SOURCE, detail })).toEqual(detail);
  });

  it.each<[string, unknown]>([
    ['no detail', { source: 'x' }],
    ['missing uid', { detail: { ...detail, uid: undefined } }],
    ['unknown change', { detail: { ...detail, change: 'renamed' } }],
    ['missing flags', { detail: { ...detail, changed: undefined } }],
  ])('rejects %s', (_name, event) => {
    expect(() => readHintDetail(event)).toThrow(InvalidInputError);
  });

  it('keys one change of one object stably', () => {
    expect(hintEventKey(detail)).toBe('c/uid-1/10/added');
  });
});

describe('Function: decideForwarding, each check with its reason', () => {
  const before = isvc({ rv: '10', annotations: { other: 'a' }, labels: { team: 'a' } });
  it.each<[string, ObservedChange | 'BOOKMARK', KubeObject, KubeObject | undefined, boolean, string]>([
    ['a bookmark', 'BOOKMARK', isvc(), before, false, 'bookmarks only move the checkpoint'],
    ['a delete', 'DELETED', isvc({ rv: '10' }), before, true, 'deletes always matter (GC, drift)'],
    ['a first sight', 'ADDED', isvc(), undefined, true, 'no earlier copy to compare with'],
    ['a recreated object', 'ADDED', isvc({ uid: 'uid-2', rv: '10' }), before, true, 'a new object under the same name'],
    ['the same resourceVersion again', 'RELISTED', isvc({ rv: '10', spec: { other: true } }), before, false, 'resourceVersion unchanged since last forwarded'],
    ['a new sync value', 'MODIFIED', isvc({ rv: '11', annotations: { other: 'a', 'ome.io/runtime-sync': 't' }, labels: { team: 'a' } }), before, true, 'a request annotation has a new value'],
    ['a new promote value', 'MODIFIED', isvc({ rv: '11', annotations: { other: 'a', 'ome.io/rollout-promote': 'h' }, labels: { team: 'a' } }), before, true, 'a request annotation has a new value'],
    ['a new repin value', 'MODIFIED', isvc({ rv: '11', annotations: { other: 'a', 'ome.io/rollout-repin': 'now' }, labels: { team: 'a' } }), before, true, 'a request annotation has a new value'],
    ['status only', 'MODIFIED', isvc({ rv: '11', annotations: { other: 'a' }, labels: { team: 'a' }, status: { x: 1 } }), before, false, 'only status, bookkeeping or our own annotations changed'],
    ['managedFields only', 'MODIFIED', isvc({ rv: '11', annotations: { other: 'a' }, labels: { team: 'a' }, managedFields: [{ manager: 'm' }] }), before, false, 'only status, bookkeeping or our own annotations changed'],
    ['the GC mark only', 'MODIFIED', isvc({ rv: '11', annotations: { other: 'a', 'ome.io/gc-eligible-since': '2026-01-01T00:00:00Z' }, labels: { team: 'a' } }), before, false, 'only status, bookkeeping or our own annotations changed'],
    ['another annotation', 'MODIFIED', isvc({ rv: '11', annotations: { other: 'b' }, labels: { team: 'a' } }), before, true, 'the object changed'],
    ['a label', 'MODIFIED', isvc({ rv: '11', annotations: { other: 'a' }, labels: { team: 'b' } }), before, true, 'the object changed'],
    ['the spec', 'MODIFIED', isvc({ rv: '11', annotations: { other: 'a' }, labels: { team: 'a' }, spec: { x: 1 } }), before, true, 'the object changed'],
  ])('%s', (_name, type, object, previous, forward, reason) => {
    expect(decideForwarding(type, object, previous)).toEqual({ forward, reason });
    expect(isWorthForwarding(type, object, previous)).toBe(forward);
  });
});

describe('Function: computeChangedFields', () => {
  const none = { spec: false, runtimeSync: false, rolloutRepin: false, rolloutPromote: false, labels: false, metadata: false, rollout: false, ready: false };
  const before = isvc({ annotations: { 'ome.io/runtime-sync': 't1' }, labels: { a: '1' } });
  it.each<[string, ObservedChange, KubeObject, KubeObject | undefined, typeof none]>([
    ['a delete changes nothing', 'DELETED', isvc({ annotations: { 'ome.io/runtime-sync': 't2' } }), undefined, none],
    ['nothing moved', 'MODIFIED', isvc({ rv: '11', annotations: { 'ome.io/runtime-sync': 't1' }, labels: { a: '1' } }), before, none],
    ['a sync value removed is no request', 'MODIFIED', isvc({ rv: '11', labels: { a: '1' } }), before, none],
    ['a new sync value', 'MODIFIED', isvc({ rv: '11', annotations: { 'ome.io/runtime-sync': 't2' }, labels: { a: '1' } }), before, { ...none, runtimeSync: true }],
    ['labels removed', 'MODIFIED', isvc({ rv: '11', annotations: { 'ome.io/runtime-sync': 't1' } }), before, { ...none, labels: true, metadata: true }],
    ['a previous copy of another uid counts as no copy', 'MODIFIED', isvc({ uid: 'uid-9', annotations: { 'ome.io/runtime-sync': 't1' }, labels: { a: '1' } }), before, { ...none, spec: true, labels: true, metadata: true, runtimeSync: true }],
    ['without a copy: spec, labels and every present request', 'ADDED', isvc({ annotations: { 'ome.io/rollout-repin': 'now', 'ome.io/rollout-promote': 'h' } }), undefined, { ...none, spec: true, labels: true, metadata: true, rolloutRepin: true, rolloutPromote: true }],
    // metadata: what pin reads, without the requests that have flags of their own or our marks.
    ['another annotation set', 'MODIFIED', isvc({ rv: '11', annotations: { 'ome.io/runtime-sync': 't1', 'ome.io/deploymentMode': 'RawDeployment' }, labels: { a: '1' } }), before, { ...none, metadata: true }],
    ['deletion started', 'MODIFIED', { ...before, metadata: { ...before.metadata, resourceVersion: '11', deletionTimestamp: '2026-01-01T00:00:00Z' } }, before, { ...none, metadata: true }],
    ['our GC mark set', 'MODIFIED', isvc({ rv: '11', annotations: { 'ome.io/runtime-sync': 't1', 'ome.io/gc-eligible-since': '2026-01-01T00:00:00Z' }, labels: { a: '1' } }), before, none],
    // rollout: the requests rollout-run acts on, and the inputs of a rollout.
    ['a rollback request', 'MODIFIED', isvc({ rv: '11', annotations: { 'ome.io/runtime-sync': 't1', 'ome.io/rollout-rollback': 'r1' }, labels: { a: '1' } }), before, { ...none, rollout: true }],
    ['a rollback request consumed', 'MODIFIED', before, isvc({ annotations: { 'ome.io/runtime-sync': 't1', 'ome.io/rollout-rollback': 'r1' }, labels: { a: '1' } }), none],
    ['paused', 'MODIFIED', isvc({ rv: '11', annotations: { 'ome.io/runtime-sync': 't1', 'ome.io/rollout-paused': 'true' }, labels: { a: '1' } }), before, { ...none, rollout: true }],
    ['resumed (paused removed)', 'MODIFIED', before, isvc({ annotations: { 'ome.io/runtime-sync': 't1', 'ome.io/rollout-paused': 'true' }, labels: { a: '1' } }), { ...none, rollout: true }],
    ['without a copy, paused', 'RELISTED', isvc({ annotations: { 'ome.io/rollout-paused': 'freeze' } }), undefined, { ...none, spec: true, labels: true, metadata: true, rollout: true }],
    ['without a copy, with a rollout in spec', 'ADDED', isvc({ spec: { runtime: { name: 'srt' }, rollout: { groups: [] } } }), undefined, { ...none, spec: true, labels: true, metadata: true, rollout: true }],
    ['a rollout plan edited', 'MODIFIED', isvc({ rv: '11', spec: { runtime: { name: 'srt' }, rollout: { groups: [{ name: 'b' }] } } }), isvc({ spec: { runtime: { name: 'srt' }, rollout: { groups: [{ name: 'a' }] } } }), { ...none, spec: true, rollout: true }],
    ['a component shape edited, with a rollout', 'MODIFIED', isvc({ rv: '11', spec: { runtime: { name: 'srt' }, engine: { minReplicas: 2 }, rollout: {} } }), isvc({ spec: { runtime: { name: 'srt' }, engine: { minReplicas: 1 }, rollout: {} } }), { ...none, spec: true, rollout: true }],
    ['spec.runtime edited, with a rollout', 'MODIFIED', isvc({ rv: '11', spec: { runtime: { name: 'srt', revision: 'r2' }, rollout: {} } }), isvc({ spec: { runtime: { name: 'srt', revision: 'r1' }, rollout: {} } }), { ...none, spec: true }],
    ['spec edited, with a run in status only', 'MODIFIED', isvc({ rv: '11', spec: { runtime: { name: 'srt' }, engine: {} }, status: { rollout: { activeRun: {} } } }), isvc({ spec: { runtime: { name: 'srt' } } }), { ...none, spec: true, rollout: true }],
    ['spec edited, with a plan condition only', 'MODIFIED', isvc({ rv: '11', spec: { runtime: { name: 'srt' }, engine: {} }, status: { conditions: [{ type: 'RolloutPlanReady', status: 'True' }] } }), isvc({ spec: { runtime: { name: 'srt' } } }), { ...none, spec: true, rollout: true }],
    ['spec edited, no rollout', 'MODIFIED', isvc({ rv: '11', spec: { runtime: { name: 'srt' }, engine: {} }, status: { conditions: [{ type: 'Ready', status: 'True' }] } }), isvc({ spec: { runtime: { name: 'srt' } } }), { ...none, spec: true }],
  ])('%s', (_name, type, object, previous, expected) => {
    expect(computeChangedFields(type, object, previous)).toEqual(expected);
  });

  const deployment = (rv: string): KubeObject => ({ apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'llama-engine', namespace: 'team-a', uid: 'd-1', resourceVersion: rv }, spec: { replicas: 1 } });
  it.each<[string, ObservedChange, KubeObject | undefined, boolean, boolean]>([
    ['seen first', 'ADDED', undefined, false, true],
    ['readiness moved, as the forwarder remembers it', 'MODIFIED', deployment('1'), true, true],
    ['only its spec moved', 'MODIFIED', deployment('1'), false, false],
  ])('a Deployment is ready-flagged when %s', (_name, type, previous, readinessMoved, ready) => {
    expect(computeChangedFields(type, deployment('2'), previous, readinessMoved).ready).toBe(ready);
  });

  it('flags readiness only on Deployments', () => {
    expect(computeChangedFields('MODIFIED', isvc({ rv: '11' }), isvc(), true).ready).toBe(false);
  });
});

describe('Function: readHintDetail, messages', () => {
  const detail = toHintEvent('c1', 'MODIFIED', isvc(), undefined, { observedAt: OBSERVED_AT }).detail;
  it.each<[string, unknown, string]>([
    ['a string', 'x', 'hint event has no detail object'],
    ['null', null, 'hint event has no detail object'],
    ['fields missing or empty', { ...detail, uid: '', name: 3, clusterId: undefined }, 'hint event detail lacks clusterId, name, uid'],
    ['an unknown change', { ...detail, change: 'renamed' }, 'hint event detail has an unknown change type "renamed"'],
    ['no change', { ...detail, change: undefined }, 'hint event detail has an unknown change type undefined'],
    ['no changed flags', { ...detail, changed: [] }, 'hint event detail lacks changed flags'],
  ])('%s', (_name, event, message) => {
    expect(() => readHintDetail(event)).toThrow(new InvalidInputError(message));
  });

  it('reads a bare detail as well as an envelope', () => {
    expect(readHintDetail(detail)).toBe(detail);
    expect(readHintDetail({ detail })).toBe(detail);
  });
});

describe('Function: deepEqual', () => {
  it.each<[unknown, unknown, boolean]>([
    [{ a: 1, b: [1, { c: 2 }] }, { b: [1, { c: 2 }], a: 1 }, true],
    [{ a: 1, b: undefined }, { a: 1 }, true],
    [{ a: 1 }, { a: 1, b: 2 }, false],
    [{ a: 1, b: 2 }, { a: 1, c: 2 }, false],
    [[1, 2], [1, 2, 3], false],
    [[1, 2], [2, 1], false],
    [[1], { 0: 1 }, false],
    [{ 0: 1 }, [1], false],
    [null, {}, false],
    ['1', 1, false],
    [Number.NaN, Number.NaN, false],
  ])('%j vs %j -> %s', (a, b, expected) => {
    expect(deepEqual(a, b)).toBe(expected);
  });
});

describe('Function: toHintEvent, detail', () => {
  it('writes every field, and keys the hint by cluster, uid, version and change', () => {
    const event = toHintEvent('c1', 'RELISTED', isvc({ rv: '42' }), undefined, { observedAt: OBSERVED_AT });
    expect(event).toEqual({
      source: 'ome.pinning',
      detailType: 'Kubernetes Object Changed',
      detail: {
        clusterId: 'c1',
        apiVersion: 'ome.io/v1beta1',
        kind: 'InferenceService',
        namespace: 'team-a',
        name: 'llama',
        uid: 'uid-1',
        resourceVersion: '42',
        generation: 3,
        change: 'relisted',
        changed: { spec: true, runtimeSync: false, rolloutRepin: false, rolloutPromote: false, labels: true, metadata: true, rollout: false, ready: false },
        observedAt: OBSERVED_AT,
      },
    });
    expect(hintEventKey(event.detail)).toBe('c1/uid-1/42/relisted');
  });

  it('stamps the observation time when none is given', () => {
    const before = Date.now();
    const at = Date.parse(toHintEvent('c1', 'ADDED', isvc()).detail.observedAt);
    expect(at).toBeGreaterThanOrEqual(before);
    expect(at).toBeLessThanOrEqual(Date.now());
  });

  it('names the kind it cannot build a hint for', () => {
    const nameless = { ...isvc(), metadata: { ...isvc().metadata, name: '' } };
    expect(() => toHintEvent('c1', 'ADDED', nameless)).toThrow('cannot build a hint for InferenceService without metadata.name, uid and resourceVersion');
    expect(() => toHintEvent('c1', 'ADDED', { metadata: { name: 'x', uid: 'u' } } as KubeObject)).toThrow('cannot build a hint for object without');
  });
});
