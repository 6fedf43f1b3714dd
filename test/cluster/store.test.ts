import { describe, expect, it } from 'vitest';
import { ObjectStore } from '../../local/cluster/store';

function seeded(): ObjectStore {
  const store = new ObjectStore(100);
  for (const [namespace, name] of [['a', 'x'], ['a', 'y'], ['ab', 'z'], ['b', 'x'], ['b', 'y'], ['c', 'q']]) {
    store.put('v1/configmaps', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { namespace, name } });
  }
  return store;
}

describe('Method: ObjectStore.scan', () => {
  it.each<[string, string | undefined, string | undefined, string[]]>([
    ['everything in key order', undefined, undefined, ['a/x', 'a/y', 'ab/z', 'b/x', 'b/y', 'c/q']],
    ['one namespace, not its prefix-sharing neighbour', 'a', undefined, ['a/x', 'a/y']],
    ['a page after a key inside the namespace', 'b', 'b/x', ['b/y']],
    ['a page after the last key', 'b', 'b/y', []],
    ['everything after a key that is gone', undefined, 'a/zz', ['ab/z', 'b/x', 'b/y', 'c/q']],
    ['a namespace with nothing in it', 'bb', undefined, []],
  ])('%s', (_case, namespace, after, expected) => {
    const store = seeded();
    expect([...store.scan('v1/configmaps', namespace, after)].map(([key]) => key)).toEqual(expected);
    expect(store.countRange('v1/configmaps', namespace, after)).toBe(expected.length);
  });
});
