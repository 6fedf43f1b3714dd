import { describe, expect, it } from 'vitest';
import { applyRuntimeSpecDefaults } from '../../shared/runtime/defaults';
import { normalizeGoJson } from '../../shared/runtime/go-json';
import { renderEngineDeployment } from '../../shared/runtime/workload';
import { buildSeedRuntimeSpec } from './fixtures/seed-runtime';

const isvc = { namespace: 'llama-demo', name: 'llama-3-2-3b-instruct', uid: 'uid-1', engine: { minReplicas: 1 } };
const spec = normalizeGoJson(applyRuntimeSpecDefaults(buildSeedRuntimeSpec('0.9')));

describe('renderEngineDeployment', () => {
  const rendered = renderEngineDeployment({ isvc, runtimeName: 'sglang-llama-3-2-3b', spec, revisionName: 'r-llama-demo-sglang-llama-3-2-3b-590753e8' });
  const podSpec = (rendered.spec as { template: { spec: { containers: Array<{ name: string; args: string[] }>; volumes: unknown; tolerations: unknown } } }).template.spec;

  it('renders the runner with the pinned args', () => {
    expect(podSpec.containers).toHaveLength(1);
    expect(podSpec.containers[0]?.name).toBe('ome-container');
    expect(podSpec.containers[0]?.args).toContain('--mem-frac=0.9');
    expect(podSpec.containers[0]?.args).toContain('--served-model-name=llama-3-2-3b-instruct');
    expect(podSpec.volumes).toEqual([{ name: 'dshm', emptyDir: { medium: 'Memory' } }]);
    expect(podSpec.tolerations).toEqual([{ key: 'nvidia.com/gpu', operator: 'Exists', effect: 'NoSchedule' }]);
  });

  it('names, labels and annotates the Deployment', () => {
    expect(rendered.metadata).toMatchObject({
      name: 'llama-3-2-3b-instruct-engine',
      namespace: 'llama-demo',
      labels: { 'ome.io/inferenceservice': 'llama-3-2-3b-instruct', 'ome.io/component': 'engine', 'serving-runtime': 'sglang-llama-3-2-3b' },
      annotations: { 'ome.io/rendered-from': 'r-llama-demo-sglang-llama-3-2-3b-590753e8' },
      ownerReferences: [{ kind: 'InferenceService', name: 'llama-3-2-3b-instruct', uid: 'uid-1', controller: true }],
    });
    expect(rendered.spec).toMatchObject({ selector: { matchLabels: { 'ome.io/inferenceservice': 'llama-3-2-3b-instruct', 'ome.io/component': 'engine' } } });
  });

  it.each([
    [{ minReplicas: 3 }, 3],
    [{ minReplicas: 0 }, 0],
    [{}, 1],
    [undefined, 1],
  ])('replicas for engine %j is %d', (engine, replicas) => {
    expect(renderEngineDeployment({ isvc: { ...isvc, engine }, runtimeName: 'rt', spec }).spec).toMatchObject({ replicas });
  });

  it('records live when rendered from the live runtime', () => {
    expect(renderEngineDeployment({ isvc, runtimeName: 'rt', spec }).metadata.annotations).toEqual({ 'ome.io/rendered-from': 'live' });
  });

  it('renders byte-identical output for the same input', () => {
    const again = renderEngineDeployment({ isvc: { ...isvc }, runtimeName: 'sglang-llama-3-2-3b', spec: JSON.parse(JSON.stringify(spec)), revisionName: 'r-llama-demo-sglang-llama-3-2-3b-590753e8' });
    expect(JSON.stringify(again)).toBe(JSON.stringify(rendered));
  });

  it('falls back to spec.containers when the engine has no runner', () => {
    const containerSpec = normalizeGoJson({ containers: [{ name: 'server', image: 'img', args: ['--x'] }] });
    const out = renderEngineDeployment({ isvc, runtimeName: 'rt', spec: containerSpec });
    expect((out.spec as { template: { spec: { containers: unknown[] } } }).template.spec.containers).toEqual([{ name: 'server', image: 'img', args: ['--x'], resources: {} }]);
  });
});
