import { describe, expect, it } from 'vitest';
import { resolveLiveRuntime, resolveRuntimeChain, type RuntimeKey, type RuntimeRecord } from '../../shared/domain/runtime/inheritance';
import { strategicMergeSpec, stripJsonNulls } from '../../shared/domain/runtime/strategic-merge';
import type { JsonValue } from '../../shared/domain/runtime/go-json';

function lookupIn(runtimes: RuntimeRecord[]) {
  return (key: RuntimeKey) =>
    runtimes.find((r) => r.kind === key.kind && r.name === key.name && (key.kind === 'ClusterServingRuntime' || r.namespace === key.namespace));
}

function csr(name: string, parent?: string, spec: unknown = {}): RuntimeRecord {
  return { kind: 'ClusterServingRuntime', name, annotations: parent ? { 'ome.io/inherit-from': parent } : {}, spec };
}

function sr(name: string, namespace: string, parent?: string, spec: unknown = {}): RuntimeRecord {
  return { kind: 'ServingRuntime', name, namespace, annotations: parent ? { 'ome.io/inherit-from': parent } : {}, spec };
}

describe('resolveRuntimeChain', () => {
  it.each([
    ['a runtime without a parent', [csr('a')], csr('a'), { ok: true, chain: ['a'] }],
    ['a chain of five', [csr('b', 'c'), csr('c', 'd'), csr('d', 'e'), csr('e')], csr('a', 'b'), { ok: true, chain: ['e', 'd', 'c', 'b', 'a'] }],
    [
      'a chain of six',
      [csr('b', 'c'), csr('c', 'd'), csr('d', 'e'), csr('e', 'f'), csr('f')],
      csr('a', 'b'),
      { ok: false, reason: 'MaxDepthExceeded', message: 'inheritance chain exceeds max depth 5 (chain: [a b c d e])' },
    ],
    ['a cycle', [csr('b', 'a')], csr('a', 'b'), { ok: false, reason: 'InheritanceCycle', message: 'inheritance cycle detected: [a b a]' }],
    ['a self-reference', [], csr('a', 'a'), { ok: false, reason: 'InheritanceCycle', message: 'inheritance cycle detected: [a a]' }],
    ['a missing parent', [], csr('a', 'gone'), { ok: false, reason: 'ParentNotFound', message: 'inherit-from parent "gone" not found (chain so far: [a])' }],
    ['a ServingRuntime parent of a ClusterServingRuntime', [sr('p', 'ns')], csr('a', 'p'), { ok: false, reason: 'ParentNotFound' }],
    ['a ServingRuntime inheriting from its namespace', [sr('p', 'ns')], sr('a', 'ns', 'p'), { ok: true, chain: ['p', 'a'] }],
    ['a ServingRuntime inheriting from another namespace', [sr('p', 'other')], sr('a', 'ns', 'p'), { ok: false, reason: 'ParentNotFound' }],
    ['a ServingRuntime falling back to a ClusterServingRuntime', [csr('p')], sr('a', 'ns', 'p'), { ok: true, chain: ['p', 'a'] }],
  ])('%s', (_name, others, start, expected) => {
    expect(resolveRuntimeChain(start, lookupIn([start, ...others]))).toMatchObject(expected);
  });

  it('merges root first: the child wins, the parent fills gaps, disabled can be overridden', () => {
    const profile = csr('sglang-profile', undefined, {
      disabled: true,
      engineConfig: {
        volumes: [{ name: 'dshm', emptyDir: { medium: 'Memory' } }],
        runner: {
          name: 'ome-container',
          image: 'sglang:v1',
          command: ['python3', '-m', 'sglang.launch_server', '--host=0.0.0.0'],
          args: ['--tp-size=8'],
          ports: [{ containerPort: 8080, name: 'http1' }],
          volumeMounts: [{ name: 'dshm', mountPath: '/dev/shm' }],
          env: [{ name: 'A', value: '1' }, { name: 'B', value: '2' }],
        },
      },
    });
    const child = sr('sglang-llama-3-2-3b', 'llama-demo', 'sglang-profile', {
      disabled: false,
      engineConfig: {
        runner: {
          name: 'ome-container',
          args: ['--tp-size=1', '--mem-frac=0.9'],
          ports: [{ containerPort: 8080, name: 'http' }],
          volumeMounts: [{ name: 'dshm2', mountPath: '/dev/shm' }],
          env: [{ name: 'B', value: '3' }, { name: 'C', value: '4' }],
          resources: { limits: { cpu: '10' } },
        },
      },
    });
    const result = resolveRuntimeChain(child, lookupIn([profile, child]));
    if (!result.ok) throw new Error(result.message);
    const spec = result.spec as { disabled: boolean; engineConfig: { volumes: unknown; runner: Record<string, unknown> } };
    expect(result.chain).toEqual(['sglang-profile', 'sglang-llama-3-2-3b']);
    expect(spec.disabled).toBe(false);
    expect(spec.engineConfig.volumes).toEqual([{ name: 'dshm', emptyDir: { medium: 'Memory' } }]);
    expect(spec.engineConfig.runner).toMatchObject({
      image: 'sglang:v1',
      command: ['python3', '-m', 'sglang.launch_server', '--host=0.0.0.0'],
      args: ['--tp-size=1', '--mem-frac=0.9'],
      ports: [{ name: 'http', containerPort: 8080, protocol: 'TCP' }],
      volumeMounts: [{ name: 'dshm2', mountPath: '/dev/shm' }],
      env: [{ name: 'A', value: '1' }, { name: 'B', value: '3' }, { name: 'C', value: '4' }],
      resources: { limits: { cpu: '10' } },
    });
  });
});

describe('strategicMergeSpec', () => {
  it.each([
    [
      'containers merge by name, new child items go before parent-only ones',
      { containers: [{ name: 'a', image: 'a1' }, { name: 'b', image: 'b1' }] },
      { containers: [{ name: 'c', image: 'c1' }] },
      { containers: [{ name: 'c', image: 'c1' }, { name: 'a', image: 'a1' }, { name: 'b', image: 'b1' }] },
    ],
    [
      'a matched item keeps its place among parent items',
      { containers: [{ name: 'a', image: 'a1' }, { name: 'b', image: 'b1' }] },
      { containers: [{ name: 'b', image: 'b2' }] },
      { containers: [{ name: 'a', image: 'a1' }, { name: 'b', image: 'b2' }] },
    ],
    [
      'tolerations are replaced',
      { engineConfig: { tolerations: [{ key: 'a' }] } },
      { engineConfig: { tolerations: [{ key: 'b' }] } },
      { engineConfig: { tolerations: [{ key: 'b' }] } },
    ],
    ['child nulls are stripped', { nodeSelector: { a: '1' } }, { nodeSelector: null, containers: null }, { nodeSelector: { a: '1' } }],
    ['maps merge by key', { nodeSelector: { a: '1', b: '1' } }, { nodeSelector: { b: '2' } }, { nodeSelector: { a: '1', b: '2' } }],
  ])('%s', (_name, parent, child, expected) => {
    expect(strategicMergeSpec(parent as JsonValue, child as JsonValue)).toEqual(expected);
  });
});

describe('resolveLiveRuntime', () => {
  const runtimes = [csr('shared'), sr('local', 'ns'), sr('both', 'ns'), csr('both'), csr('broken', 'gone')];

  it.each([
    [{ kind: 'ClusterServingRuntime', name: 'shared', namespace: 'ns' }, { status: 'found', runtime: { kind: 'ClusterServingRuntime' } }],
    [{ kind: 'ClusterServingRuntime', name: 'local', namespace: 'ns' }, { status: 'found', runtime: { kind: 'ServingRuntime' } }],
    [{ kind: 'ClusterServingRuntime', name: 'both', namespace: 'ns' }, { status: 'found', runtime: { kind: 'ClusterServingRuntime' } }],
    [{ kind: 'ServingRuntime', name: 'shared', namespace: 'ns' }, { status: 'not-found', message: 'ServingRuntime shared not found in namespace ns' }],
    [{ kind: 'ClusterServingRuntime', name: 'none', namespace: 'ns' }, { status: 'not-found', message: 'runtime none not found in namespace ns or at cluster scope' }],
    [{ kind: 'ClusterServingRuntime', name: 'broken', namespace: 'ns' }, { status: 'error', reason: 'ParentNotFound' }],
  ] as const)('%j', (ref, expected) => {
    expect(resolveLiveRuntime(ref, lookupIn(runtimes))).toMatchObject(expected);
  });
});

/**
 * Strategic merge by field, as apimachinery applies a child's spec onto its parent's:
 * lists tagged `patchStrategy:"merge"` merge item by item on their `patchMergeKey`
 * (containers and env by name, ports by containerPort, volumeMounts by mountPath);
 * untagged lists (args, command, tolerations) are replaced; structs and maps merge key
 * by key; scalars are replaced; a null in the child leaves the parent's value.
 */
describe('strategicMergeSpec: field by field', () => {
  it.each([
    [
      'env merges by name inside a merged container',
      { containers: [{ name: 'a', env: [{ name: 'X', value: '1' }, { name: 'Y', value: '1' }] }] },
      { containers: [{ name: 'a', env: [{ name: 'Y', value: '2' }] }] },
      { containers: [{ name: 'a', env: [{ name: 'X', value: '1' }, { name: 'Y', value: '2' }] }] },
    ],
    [
      'args are replaced, not merged',
      { containers: [{ name: 'a', args: ['--a', '--b'] }] },
      { containers: [{ name: 'a', args: ['--b'] }] },
      { containers: [{ name: 'a', args: ['--b'] }] },
    ],
    [
      'command is replaced, even by a longer list',
      { containers: [{ name: 'a', command: ['x'] }] },
      { containers: [{ name: 'a', command: ['x', 'y'] }] },
      { containers: [{ name: 'a', command: ['x', 'y'] }] },
    ],
    [
      'ports merge by containerPort',
      { containers: [{ name: 'a', ports: [{ containerPort: 80, name: 'http' }, { containerPort: 90, name: 'm' }] }] },
      { containers: [{ name: 'a', ports: [{ containerPort: 80, protocol: 'TCP' }] }] },
      { containers: [{ name: 'a', ports: [{ containerPort: 80, name: 'http', protocol: 'TCP' }, { containerPort: 90, name: 'm' }] }] },
    ],
    [
      'volumeMounts merge by mountPath',
      { containers: [{ name: 'a', volumeMounts: [{ mountPath: '/m', name: 'v1' }] }] },
      { containers: [{ name: 'a', volumeMounts: [{ mountPath: '/m', readOnly: true }, { mountPath: '/n', name: 'v2' }] }] },
      { containers: [{ name: 'a', volumeMounts: [{ mountPath: '/m', name: 'v1', readOnly: true }, { mountPath: '/n', name: 'v2' }] }] },
    ],
    [
      'a null inside a merged item keeps the parent value',
      { containers: [{ name: 'a', image: 'x' }] },
      { containers: [{ name: 'a', image: null, args: ['y'] }] },
      { containers: [{ name: 'a', image: 'x', args: ['y'] }] },
    ],
    [
      'a child item added amid matched ones goes before the parent items after them',
      { containers: [{ name: 'a' }, { name: 'b' }, { name: 'c' }] },
      { containers: [{ name: 'b', image: 'b2' }, { name: 'd' }] },
      { containers: [{ name: 'a' }, { name: 'b', image: 'b2' }, { name: 'd' }, { name: 'c' }] },
    ],
    [
      'matched items follow the child order',
      { containers: [{ name: 'a', image: 'a1' }, { name: 'b', image: 'b1' }] },
      { containers: [{ name: 'b' }, { name: 'a' }] },
      { containers: [{ name: 'b', image: 'b1' }, { name: 'a', image: 'a1' }] },
    ],
    [
      'an item without its merge key is added, not matched',
      { containers: [{ name: 'a', image: 'a1' }] },
      { containers: [{ image: 'z' }] },
      { containers: [{ image: 'z' }, { name: 'a', image: 'a1' }] },
    ],
    [
      'an embedded struct merges key by key',
      { engineConfig: { runner: { name: 'r', image: 'i1', args: ['--x'] } } },
      { engineConfig: { runner: { image: 'i2' } } },
      { engineConfig: { runner: { name: 'r', image: 'i2', args: ['--x'] } } },
    ],
    [
      'promoted fields of an embedded struct merge as their own type (engine volumes by name)',
      { engineConfig: { volumes: [{ name: 'v', emptyDir: {} }] } },
      { engineConfig: { volumes: [{ name: 'w', emptyDir: {} }] } },
      { engineConfig: { volumes: [{ name: 'w', emptyDir: {} }, { name: 'v', emptyDir: {} }] } },
    ],
    ['a scalar is replaced', { schedulerName: 'a' }, { schedulerName: 'b' }, { schedulerName: 'b' }],
    ['a key only the child has is added', { schedulerName: 'a' }, { hostIPC: true }, { schedulerName: 'a', hostIPC: true }],
    ['a key the parent holds as null takes the child value', { nodeSelector: null }, { nodeSelector: { a: '1' } }, { nodeSelector: { a: '1' } }],
    ['a map value the child gives as null is kept from the parent', { nodeSelector: { a: '1', b: '1' } }, { nodeSelector: { a: null, b: '2' } }, { nodeSelector: { a: '1', b: '2' } }],
    ['a child object over a parent scalar wins', { schedulerName: 'a' }, { schedulerName: { x: 1 } }, { schedulerName: { x: 1 } }],
    ['a child list over a parent object wins', { nodeSelector: { a: '1' } }, { nodeSelector: ['x'] }, { nodeSelector: ['x'] }],
    // A merge list given plain values merges as a set: the child's values in its order,
    // then the parent's others (apimachinery's rule for primitive lists). No Go field we
    // hash is such a list; decoded JSON can still carry one.
    ['plain values in a merge list merge as a set', { containers: ['b', 'c'] }, { containers: ['a', 'b'] }, { containers: ['a', 'b', 'c'] }],
    ['plain values already present are not repeated', { containers: ['a'] }, { containers: ['a'] }, { containers: ['a'] }],
    ['a child object over a parent merge list wins', { containers: [{ name: 'a' }] }, { containers: { name: 'b' } }, { containers: { name: 'b' } }],
    ['objects of a field the Go type lacks merge key by key', { unknown: { a: 1, n: { x: 1 } } }, { unknown: { b: 2, n: { y: 2 } } }, { unknown: { a: 1, b: 2, n: { x: 1, y: 2 } } }],
    ['a list of a field the Go type lacks is replaced', { unknown: [{ name: 'a', v: 1 }] }, { unknown: [{ name: 'a', w: 2 }] }, { unknown: [{ name: 'a', w: 2 }] }],
  ])('%s', (_name, parent, child, expected) => {
    expect(strategicMergeSpec(parent as JsonValue, child as JsonValue)).toEqual(expected);
  });

  it('does not change the parent or the child it was given', () => {
    const parent = { containers: [{ name: 'a', env: [{ name: 'X', value: '1' }] }] } as JsonValue;
    const child = { containers: [{ name: 'a', env: [{ name: 'X', value: '2' }] }] } as JsonValue;
    const copies = structuredClone([parent, child]);
    strategicMergeSpec(parent, child);
    expect([parent, child]).toEqual(copies);
  });

  it('replaces every list when merging values of an untyped (raw) field', () => {
    expect(strategicMergeSpec({ containers: [{ name: 'a' }] }, { containers: [{ name: 'b' }] }, 'raw')).toEqual({ containers: [{ name: 'b' }] });
  });

  it('merges the values of a map field by their own type', () => {
    expect(strategicMergeSpec({ a: { containers: [{ name: 'x', image: '1' }] } }, { a: { containers: [{ name: 'x', args: ['y'] }] } }, 'map[string]ome.ServingRuntimePodSpec')).toEqual({
      a: { containers: [{ name: 'x', image: '1', args: ['y'] }] },
    });
  });
});

describe('stripJsonNulls', () => {
  it('removes null object values at every depth, inside lists too, and keeps list items', () => {
    expect(stripJsonNulls({ a: null, b: { c: null, d: 1 }, e: [{ f: null, g: 2 }, null, 3] })).toEqual({ b: { d: 1 }, e: [{ g: 2 }, null, 3] });
  });
});
