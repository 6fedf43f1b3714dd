import { describe, expect, it } from 'vitest';
import { resolveLiveRuntime, resolveRuntimeChain, type RuntimeKey, type RuntimeRecord } from '../../shared/runtime/inheritance';
import { strategicMergeSpec } from '../../shared/runtime/strategic-merge';
import type { JsonValue } from '../../shared/runtime/go-json';

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
