/**
 * The fan-out's runtime catalog: a runtime found at cluster scope is resolved once for
 * every namespace, and a name that resolves to a namespaced runtime still resolves per
 * namespace (the same name may be a different runtime in each).
 */
import { describe, expect, it } from 'vitest';
import { RuntimeCatalog, type RuntimeRef } from '../../shared/use-cases/pinning';
import type { RuntimeRecord } from '../../shared/domain/runtime';
import { RuntimeKind } from '../../shared/domain/vocabulary';
import { buildSeedRuntimeSpec } from '../runtime/fixtures/seed-runtime';

const records: RuntimeRecord[] = [
  { kind: RuntimeKind.cluster, name: 'shared', spec: buildSeedRuntimeSpec('0.9') },
  { kind: RuntimeKind.namespaced, name: 'local', namespace: 'team-a', spec: buildSeedRuntimeSpec('0.9') },
  { kind: RuntimeKind.namespaced, name: 'local', namespace: 'team-b', spec: buildSeedRuntimeSpec('0.85') },
];

const ref = (kind: RuntimeRef['kind'], name: string, namespace: string): RuntimeRef => ({ kind, name, namespace });

describe('RuntimeCatalog.resolve', () => {
  it.each([
    ['a cluster runtime, by default kind, from two namespaces', ref(RuntimeKind.cluster, 'shared', 'team-a'), ref(RuntimeKind.cluster, 'shared', 'team-b'), true],
    ['a name found only in each namespace, by default kind', ref(RuntimeKind.cluster, 'local', 'team-a'), ref(RuntimeKind.cluster, 'local', 'team-b'), false],
    ['a namespaced runtime, by its kind', ref(RuntimeKind.namespaced, 'local', 'team-a'), ref(RuntimeKind.namespaced, 'local', 'team-b'), false],
    ['a cluster name asked for as a namespaced runtime (not found, per namespace)', ref(RuntimeKind.namespaced, 'shared', 'team-a'), ref(RuntimeKind.namespaced, 'shared', 'team-b'), false],
  ] as const)('%s', (_case, first, second, shared) => {
    const catalog = new RuntimeCatalog(records);
    const a = catalog.resolve(first);
    const b = catalog.resolve(second);
    // The same resolution object when it is shared; otherwise each namespace's own.
    expect(a === b).toBe(shared);
    if (shared) expect(a).toMatchObject({ status: 'found', runtime: { kind: RuntimeKind.cluster, name: 'shared' } });
  });

  it('resolves each namespace to its own runtime of the same name', () => {
    const catalog = new RuntimeCatalog(records);
    expect(catalog.resolve(ref(RuntimeKind.cluster, 'local', 'team-a'))).toMatchObject({ status: 'found', runtime: { namespace: 'team-a' } });
    expect(catalog.resolve(ref(RuntimeKind.cluster, 'local', 'team-b'))).toMatchObject({ status: 'found', runtime: { namespace: 'team-b' } });
    expect(catalog.resolve(ref(RuntimeKind.namespaced, 'shared', 'team-a'))).toMatchObject({ status: 'not-found', message: 'ServingRuntime shared not found in namespace team-a' });
  });
});
