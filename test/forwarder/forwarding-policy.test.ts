import { describe, expect, it } from 'vitest';
import { computeChangedFields } from '../../shared/domain/hint-event';
import type { ObservedChange } from '../../shared/domain/hint-event';
import { decideObservedChange } from '../../shared/use-cases/forwarder/forwarding-policy';
import { ObjectMemory, reconstructPrevious } from '../../shared/use-cases/forwarder/object-memory';
import type { KubeObject } from '../../shared/ports/cluster';

function deployment(rv: string, options: { image?: string; ready?: number; generation?: number; grouped?: boolean } = {}): KubeObject {
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: {
      name: 'llama-engine',
      namespace: 'team-a',
      uid: 'd-1',
      resourceVersion: rv,
      generation: options.generation ?? 1,
      labels: { 'ome.io/inferenceservice': 'llama', ...(options.grouped === false ? {} : { 'ome.io/rollout-grouped': 'true' }) },
    },
    spec: { replicas: 1, template: { spec: { containers: [{ name: 'engine', image: options.image ?? 'sglang:v1' }] } } },
    status: { observedGeneration: options.generation ?? 1, replicas: 1, readyReplicas: options.ready ?? 1 },
  };
}

function revision(rv: string): KubeObject {
  return { apiVersion: 'apps/v1', kind: 'ControllerRevision', metadata: { name: 'cr-srt-1', namespace: 'ome', uid: 'cr-1', resourceVersion: rv }, data: { spec: {} }, revision: 1 };
}

function isvc(rv: string, spec: Record<string, unknown>): KubeObject {
  return { apiVersion: 'ome.io/v1beta1', kind: 'InferenceService', metadata: { name: 'llama', namespace: 'team-a', uid: 'i-1', resourceVersion: rv }, spec };
}

/** The decision for `current` after the forwarder saw `seen` (nothing when undefined), as the stream makes it. */
function decide(change: ObservedChange, current: KubeObject, seen?: KubeObject) {
  const memory = new ObjectMemory();
  if (seen) memory.remember(seen);
  const remembered = memory.get(current.metadata.uid ?? '');
  return decideObservedChange(change, current, reconstructPrevious(remembered, current), remembered);
}

describe('Function: decideObservedChange', () => {
  it.each<[string, ObservedChange, KubeObject, KubeObject | undefined, { forward: boolean; readinessMoved?: boolean }]>([
    ['a Deployment seen first', 'ADDED', deployment('1'), undefined, { forward: true }],
    ['a Deployment whose readiness moved', 'MODIFIED', deployment('2', { ready: 0 }), deployment('1'), { forward: true, readinessMoved: true }],
    ['a Deployment whose spec alone moved (our render)', 'MODIFIED', deployment('2', { image: 'sglang:v2' }), deployment('1'), { forward: false }],
    ['a Deployment whose observedGeneration alone moved (the controller after our render)', 'MODIFIED', deployment('3', { image: 'sglang:v2', generation: 2 }), deployment('1'), { forward: false }],
    ['a Deployment outside every rollout group, seen first', 'ADDED', deployment('1', { grouped: false }), undefined, { forward: false }],
    ['a Deployment outside every rollout group whose readiness moved', 'MODIFIED', deployment('2', { ready: 0, grouped: false }), deployment('1', { grouped: false }), { forward: false }],
    ['a Deployment deleted', 'DELETED', deployment('2'), deployment('1'), { forward: false }],
    ['a Deployment relisted unchanged', 'RELISTED', deployment('1'), deployment('1'), { forward: false }],
    ['a ControllerRevision added', 'ADDED', revision('1'), undefined, { forward: false }],
    ['a ControllerRevision marked', 'MODIFIED', { ...revision('2'), metadata: { ...revision('2').metadata, annotations: { other: 'x' } } }, revision('1'), { forward: false }],
    ['a ControllerRevision deleted', 'DELETED', revision('2'), revision('1'), { forward: true }],
    ['an InferenceService edited', 'MODIFIED', isvc('2', { runtime: { name: 'b' } }), isvc('1', { runtime: { name: 'a' } }), { forward: true }],
  ])('%s', (_name, change, current, seen, expected) => {
    const decision = decide(change, current, seen);
    expect(decision.forward).toBe(expected.forward);
    expect(decision.readinessMoved).toBe(expected.readinessMoved);
  });
});

describe('Function: reconstructPrevious', () => {
  const withRollout = (rv: string, revision: string, groups: unknown[]) => isvc(rv, { runtime: { name: 'srt', revision }, rollout: { groups } });

  it.each<[string, KubeObject, KubeObject, { spec: boolean; rollout: boolean }]>([
    ['spec.runtime alone moved: the spec moved, the rollout inputs did not', withRollout('2', 'r2', []), withRollout('1', 'r1', []), { spec: true, rollout: false }],
    ['the plan moved', withRollout('2', 'r1', [{ name: 'g' }]), withRollout('1', 'r1', []), { spec: true, rollout: true }],
    ['both moved', withRollout('2', 'r2', [{ name: 'g' }]), withRollout('1', 'r1', []), { spec: true, rollout: true }],
    ['nothing moved', withRollout('2', 'r1', []), withRollout('1', 'r1', []), { spec: false, rollout: false }],
  ])('from the memory\'s digests: %s', (_name, current, seen, expected) => {
    const memory = new ObjectMemory();
    memory.remember(seen);
    const changed = computeChangedFields('MODIFIED', current, reconstructPrevious(memory.get('i-1'), current));
    expect({ spec: changed.spec, rollout: changed.rollout }).toEqual(expected);
  });

  it('keeps no spec of its own: a previous spec is the current one or a stand-in', () => {
    const memory = new ObjectMemory();
    memory.remember(withRollout('1', 'r1', []));
    const previous = reconstructPrevious(memory.get('i-1'), withRollout('2', 'r2', []));
    expect(JSON.stringify(previous)).not.toContain('r1');
  });
});
