import { describe, expect, it } from 'vitest';
import {
  HINT_EVENT_SOURCE,
  HintDetailType,
  decideForwarding,
  hintEventKey,
  isWorthForwarding,
  readHintDetail,
  toHintEvent,
} from '../../shared/events/hint-event.js';
import type { ObservedChange } from '../../shared/events/hint-event.js';
import { InvalidInputError } from '../../shared/errors.js';
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
        changed: { spec: true, runtimeSync: true, rolloutRepin: false, rolloutPromote: false, labels: true },
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
      { spec: true, runtimeSync: false, rolloutRepin: true, rolloutPromote: false, labels: true }],
    ['spec edit', 'MODIFIED', isvc({ rv: '11', spec: { runtime: { name: 'other' } } }), isvc(),
      { spec: true, runtimeSync: false, rolloutRepin: false, rolloutPromote: false, labels: false }],
    ['new runtime-sync token', 'MODIFIED', isvc({ rv: '11', annotations: { 'ome.io/runtime-sync': 't2' } }), isvc({ annotations: { 'ome.io/runtime-sync': 't1' } }),
      { spec: false, runtimeSync: true, rolloutRepin: false, rolloutPromote: false, labels: false }],
    ['same token again', 'MODIFIED', isvc({ rv: '11', annotations: { 'ome.io/runtime-sync': 't1' } }), isvc({ annotations: { 'ome.io/runtime-sync': 't1' } }),
      { spec: false, runtimeSync: false, rolloutRepin: false, rolloutPromote: false, labels: false }],
    ['repin request consumed (annotation removed)', 'MODIFIED', isvc({ rv: '11' }), isvc({ annotations: { 'ome.io/rollout-repin': 'rp1:abc' } }),
      { spec: false, runtimeSync: false, rolloutRepin: false, rolloutPromote: false, labels: false }],
    ['promote request', 'MODIFIED', isvc({ rv: '11', annotations: { 'ome.io/rollout-promote': 'rev-2' } }), isvc(),
      { spec: false, runtimeSync: false, rolloutRepin: false, rolloutPromote: true, labels: false }],
    ['label edit', 'MODIFIED', isvc({ rv: '11', labels: { team: 'b' } }), isvc(),
      { spec: false, runtimeSync: false, rolloutRepin: false, rolloutPromote: false, labels: true }],
    ['previous copy of another uid counts as unknown', 'ADDED', isvc({ uid: 'uid-2' }), isvc(),
      { spec: true, runtimeSync: false, rolloutRepin: false, rolloutPromote: false, labels: true }],
    ['delete reports nothing changed', 'DELETED', isvc({ annotations: { 'ome.io/runtime-sync': 't1' } }), isvc(),
      { spec: false, runtimeSync: false, rolloutRepin: false, rolloutPromote: false, labels: false }],
    ['revision data counts as spec', 'MODIFIED', revision({ rv: '6', data: { spec: { a: 2 } } }), revision(),
      { spec: true, runtimeSync: false, rolloutRepin: false, rolloutPromote: false, labels: false }],
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
