/** Strategic merge patch of built-in kinds, as kubectl and controllers send it. */
import { describe, expect, it } from 'vitest';
import { builtinResources } from '../../local/cluster/builtins';
import { applyStrategicMergePatch } from '../../local/cluster/patch';

const keys = builtinResources().find((d) => d.kind === 'Deployment')?.strategicMergeKeys ?? {};

const deployment = {
  spec: {
    template: {
      spec: {
        containers: [
          { name: 'engine', image: 'sglang:1', env: [{ name: 'A', value: '1' }, { name: 'B', value: '2' }], ports: [{ containerPort: 8080 }], args: ['--x'] },
          { name: 'sidecar', image: 'proxy:1' },
        ],
      },
    },
  },
  status: { conditions: [{ type: 'Available', status: 'False' }, { type: 'Progressing', status: 'True' }] },
};

describe('applyStrategicMergePatch', () => {
  it.each([
    [
      'merges containers and env by name, replaces args',
      { spec: { template: { spec: { containers: [{ name: 'engine', image: 'sglang:2', env: [{ name: 'B', value: '3' }, { name: 'C', value: '4' }], args: ['--y'] }] } } } },
      (r: typeof deployment) => {
        const engine = r.spec.template.spec.containers[0];
        expect(engine).toEqual({ name: 'engine', image: 'sglang:2', env: [{ name: 'A', value: '1' }, { name: 'B', value: '3' }, { name: 'C', value: '4' }], ports: [{ containerPort: 8080 }], args: ['--y'] });
        expect(r.spec.template.spec.containers[1]).toEqual({ name: 'sidecar', image: 'proxy:1' });
      },
    ],
    [
      'deletes a list item with $patch: delete and a field with null',
      { spec: { template: { spec: { containers: [{ name: 'sidecar', $patch: 'delete' }, { name: 'engine', env: [{ name: 'A', $patch: 'delete' }], ports: null }] } } } },
      (r: typeof deployment) => {
        expect(r.spec.template.spec.containers).toEqual([{ name: 'engine', image: 'sglang:1', env: [{ name: 'B', value: '2' }], args: ['--x'] }]);
      },
    ],
    [
      'orders by $setElementOrder and merges conditions by type',
      {
        spec: { template: { spec: { '$setElementOrder/containers': [{ name: 'sidecar' }, { name: 'engine' }] } } },
        status: { conditions: [{ type: 'Available', status: 'True' }] },
      },
      (r: typeof deployment) => {
        expect(r.spec.template.spec.containers.map((c) => c.name)).toEqual(['sidecar', 'engine']);
        expect(r.status.conditions).toEqual([{ type: 'Available', status: 'True' }, { type: 'Progressing', status: 'True' }]);
      },
    ],
    [
      'replaces a whole list with $patch: replace',
      { spec: { template: { spec: { containers: [{ $patch: 'replace' }, { name: 'only', image: 'x' }] } } } },
      (r: typeof deployment) => {
        expect(r.spec.template.spec.containers).toEqual([{ name: 'only', image: 'x' }]);
      },
    ],
  ])('%s', (_name, patch, check) => {
    const clean = JSON.parse(JSON.stringify(patch)) as unknown;
    check(applyStrategicMergePatch(deployment, clean, keys) as typeof deployment);
  });
});
